"""The examples in README.md and docs/*.md, run: the documents cannot drift from the code.

:func:`read_examples` collects every fenced block tagged ``python``, ``console`` or ``bash``.
A ``python`` block followed by a line ``prints`` and a ``text`` block has an expected output;
a ``console`` block shows each command's output under its ``$ `` line. The rules:

1. A ``python`` block with an expected output runs in a fresh namespace, and what it prints
   must equal the ``text`` block exactly. Where that text holds a traceback, the block must
   raise: the lines before ``Traceback (most recent call last):`` are what it prints first,
   the line ``  ...`` stands for the frames, and the rest is the exception as Python prints
   it (``splitops.SplitError: message``).
2. A ``python`` block without an expected output runs, and must not raise, when it is
   self-contained: it names no ``.onnx`` file (the reader's own model, as in
   ``onnx.load("model.onnx")``) and reads no name that it does not define. Any other is
   compiled only, and each name it reads without defining must be defined by an earlier
   ``python`` block of the same document (the block goes on from there).
3. A ``console`` block in which some command shows output runs. The console blocks of one
   document are one shell session: they run in the document's order, in one temporary folder
   that starts with ``split_tour.onnx`` (shipped in the package) and the models that
   ``docs/examples/cli_models.py`` writes. Each command must print exactly the lines under it.
   The commands understood are ``splitops ...`` (run in this process; stdout and stderr in
   the order written), ``python -c CODE``, ``echo $?``, ``ls FOLDER`` (the names on one line,
   as a wide terminal shows them), and pipes into ``head -N`` or ``sed -n A,Bp``, which filter
   stdout only (stderr shows first, as it does when Python's stdout is a pipe). Any other
   command fails the test. The folder holding the package prints as ``...``.
4. A ``console`` block that shows no output, and every ``bash`` block, is compiled only:
   each command line must split into words, and each ``splitops`` command in it must parse
   with the command's own argument parser. These blocks install things or read the reader's
   own files.

A block that imports a library not installed here is skipped, naming it. Each test is named
by its document and the line of the block's opening fence, e.g. ``README.md:47``.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib.util
import io
import os
import re
import runpy
import shlex
import shutil
import symtable
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

import splitops
from splitops.cli import build_parser
from splitops.cli import main as splitops_main
from splitops.examples import EXAMPLE_MODEL

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLI_MODELS = ROOT / "docs" / "examples" / "cli_models.py"
PACKAGE_FOLDER = str(Path(splitops.__file__).resolve().parents[1])
FENCE = re.compile(r"```([\w-]*)\s*")
TRACEBACK = "Traceback (most recent call last):\n  ...\n"


@dataclass(frozen=True)
class Example:
    """One fenced block: where it is, its language, its text, and the output shown for it."""

    document: str
    line: int
    language: str
    source: str
    expected: str | None = None

    def __str__(self) -> str:
        return f"{self.document}:{self.line}"


def read_examples(document: Path) -> list[Example]:
    """The ``python``, ``console`` and ``bash`` blocks of a Markdown document, in order.

    A ``python`` block followed by a line ``prints`` takes the next block, which must be a
    ``text`` block, as its expected output.
    """
    name = document.relative_to(ROOT).as_posix()
    lines = document.read_text(encoding="utf-8").splitlines()
    fences = [
        (index, match[1]) for index, line in enumerate(lines) if (match := FENCE.fullmatch(line))
    ]
    if len(fences) % 2 or any(language for _, language in fences[1::2]):
        raise ValueError(f"{name}: a fenced block is not closed by a bare ``` line")
    blocks = [
        (start, end, language, "".join(f"{line}\n" for line in lines[start + 1 : end]))
        for (start, language), (end, _) in zip(fences[::2], fences[1::2], strict=True)
    ]
    examples = []
    followers: list[Any] = [*blocks[1:], None] if blocks else []
    for (start, end, language, text), following in zip(blocks, followers, strict=True):
        expected = None
        between = lines[end + 1 : following[0]] if following else lines[end + 1 :]
        if "\n".join(between).strip() == "prints":
            if language != "python" or following is None or following[2] != "text":
                raise ValueError(
                    f"{name}:{start + 1}: 'prints' must join a python block to a text block"
                )
            expected = following[3]
        if language in ("python", "console", "bash"):
            examples.append(Example(name, start + 1, language, text, expected))
    return examples


EXAMPLES = [example for document in DOCUMENTS for example in read_examples(document)]


def command_lines(example: Example) -> list[tuple[str, str]]:
    """Each command of a shell block with the output shown under it (none in a bash block)."""
    if example.language == "bash":
        return [(line, "") for line in example.source.splitlines() if line.strip()]
    commands: list[tuple[str, str]] = []
    for line in example.source.splitlines(keepends=True):
        if line.startswith("$ "):
            commands.append((line[2:].rstrip("\n"), ""))
        elif commands:
            command, shown = commands[-1]
            commands[-1] = (command, shown + line)
        else:
            raise ValueError(f"{example}: a console block starts with a '$ ' command")
    return commands


def _shows_output(example: Example) -> bool:
    return example.language == "console" and any(shown for _, shown in command_lines(example))


def _skip_absent_libraries(example: Example) -> None:
    """Skip a block that imports a library this machine lacks (cupy without CUDA, say)."""
    tree = ast.parse(example.source)
    modules = [alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names]
    modules += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    for module in modules:
        if importlib.util.find_spec(module.partition(".")[0]) is None:
            pytest.skip(f"{module} is not installed")


def _compile(example: Example) -> CodeType:
    """The block compiled so that its tracebacks name the document and its line numbers."""
    return compile("\n" * example.line + example.source, example.document, "exec")


def _run_python(example: Example) -> tuple[str, str]:
    """What the block prints, with its exception as the document shows one; and the traceback."""
    code = _compile(example)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            exec(code, {"__name__": "__main__"})
        except Exception as error:
            raised = "".join(traceback.format_exception_only(type(error), error))
            return printed.getvalue() + TRACEBACK + raised, traceback.format_exc()
    return printed.getvalue(), ""


def _onnx_files(example: Example) -> list[str]:
    """The ``.onnx`` files a block names: the reader's own models."""
    return [
        n.value
        for n in ast.walk(ast.parse(example.source))
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(".onnx")
    ]


def _names(example: Example) -> tuple[set[str], set[str]]:
    """The names a block defines at its top level, and those it reads without defining."""
    module = symtable.symtable(example.source, str(example), "exec")
    defined = {s.get_name() for s in module.get_symbols() if s.is_assigned() or s.is_imported()}
    read: set[str] = set()
    tables = [module]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        read |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and s.is_global()}
    return defined, read - defined - set(dir(builtins))


PRINTING = [e for e in EXAMPLES if e.language == "python" and e.expected is not None]
SILENT = [e for e in EXAMPLES if e.language == "python" and e.expected is None]
SELF_CONTAINED = [e for e in SILENT if not _onnx_files(e) and not _names(e)[1]]
READERS_OWN = [e for e in SILENT if e not in SELF_CONTAINED]
SESSIONS = [e for e in EXAMPLES if _shows_output(e)]
COMMANDS_ONLY = [e for e in EXAMPLES if e.language in ("console", "bash") and not _shows_output(e)]


@pytest.mark.parametrize("example", PRINTING, ids=str)
def test_python_example_prints_what_the_document_shows(example: Example) -> None:
    _skip_absent_libraries(example)
    shown, raised = _run_python(example)
    assert shown == example.expected, raised


@pytest.mark.parametrize("example", SELF_CONTAINED, ids=str)
def test_self_contained_python_example_runs(example: Example) -> None:
    _skip_absent_libraries(example)
    _, raised = _run_python(example)
    assert not raised, raised


@pytest.mark.parametrize("example", READERS_OWN, ids=str)
def test_python_example_on_the_readers_files_compiles_and_goes_on_from_earlier_ones(
    example: Example,
) -> None:
    _compile(example)
    earlier = [
        e
        for e in EXAMPLES
        if e.document == example.document and e.language == "python" and e.line < example.line
    ]
    defined_earlier = set().union(*(_names(e)[0] for e in earlier))
    assert _names(example)[1] <= defined_earlier


def _words(command: str) -> list[list[str]]:
    """A command line's simple commands, split at pipes, ``&&`` and ``;``, comments dropped."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    simple: list[list[str]] = [[]]
    for word in lexer:
        if word in ("|", "&&", ";"):
            simple.append([])
        elif word and set(word) <= set(lexer.punctuation_chars):
            raise ValueError(f"{command!r}: {word!r} is not understood here")
        else:
            simple[-1].append(word)
    return simple


@pytest.mark.parametrize("example", COMMANDS_ONLY, ids=str)
def test_shell_example_parses(example: Example) -> None:
    commands = [words for command, _ in command_lines(example) for words in _words(command)]
    for program, *args in filter(None, commands):
        if program == "splitops":
            errors = io.StringIO()
            with contextlib.redirect_stderr(errors), contextlib.suppress(SystemExit):
                build_parser().parse_args(args)
            assert not errors.getvalue(), f"{example}: splitops {shlex.join(args)}"


def _filter(lines: list[str], words: list[str]) -> list[str]:
    match words:
        case ["head", count] if re.fullmatch(r"-\d+", count):
            return lines[: int(count[1:])]
        case ["sed", "-n", span] if bounds := re.fullmatch(r"(\d+),(\d+)p", span):
            return lines[int(bounds[1]) - 1 : int(bounds[2])]
    raise ValueError(f"no rule filters through {shlex.join(words)!r} (see the module docstring)")


def _shell(command: str, status: int) -> tuple[str, int]:
    """Run one command line of a console block as rule 3 says; its output and exit status."""
    program, *filters = _words(command)
    stdout = io.StringIO()
    stderr = io.StringIO() if filters else stdout
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        match program:
            case ["splitops", *args]:
                status = splitops_main(args)
            case ["python", "-c", code]:
                exec(compile(code, "<python -c>", "exec"), {"__name__": "__main__"})
                status = 0
            case ["echo", "$?"]:
                print(status)
            case ["ls", folder]:
                print("  ".join(sorted(os.listdir(folder))))
                status = 0
            case _:
                raise ValueError(f"no rule runs {command!r} (see the module docstring)")
    lines = stdout.getvalue().splitlines(keepends=True)
    for words in filters:
        lines = _filter(lines, words)
    shown = (stderr.getvalue() if filters else "") + "".join(lines)
    return shown.replace(PACKAGE_FOLDER, "..."), status


def _run_session(document: str, folder: Path) -> dict[Example, str]:
    """Run a document's console blocks in order in ``folder``; each block's transcript."""
    shutil.copy(EXAMPLE_MODEL, folder)
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(str(CLI_MODELS))["main"](folder)
    transcripts = {}
    status = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        for example in (e for e in SESSIONS if e.document == document):
            transcript = ""
            for command, _ in command_lines(example):
                try:
                    shown, status = _shell(command, status)
                except Exception:
                    shown, status = traceback.format_exc(), 1
                transcript += f"$ {command}\n{shown}"
            transcripts[example] = transcript
    return transcripts


@pytest.fixture(scope="module")
def session_transcript(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Example], str]:
    """What a console block prints when its document's session runs (once per document)."""
    sessions: dict[str, dict[Example, str]] = {}

    def transcript(example: Example) -> str:
        if example.document not in sessions:
            folder = tmp_path_factory.mktemp("session")
            sessions[example.document] = _run_session(example.document, folder)
        return sessions[example.document][example]

    return transcript


@pytest.mark.parametrize("example", SESSIONS, ids=str)
def test_console_example_prints_what_the_document_shows(
    example: Example, session_transcript: Callable[[Example], str]
) -> None:
    assert session_transcript(example) == example.source
