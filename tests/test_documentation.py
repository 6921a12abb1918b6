"""The examples in README.md and docs/*.md, run: the documents cannot drift from the code.

:func:`read_examples` collects every fenced block tagged ``python``, ``console`` or ``bash``.
A ``python`` block followed by a line ``prints`` and a ``text`` block has an expected output;
a ``console`` block shows each command's output under its ``$ `` line. Every block that runs
runs in a temporary folder holding what a reader's folder holds in the documents: the
example model ``split_tour.onnx`` (shipped in the package) and the models that
``docs/examples/cli_models.py`` writes (``broken.onnx``, ``chunks.onnx``, ...). The rules:

1. A ``python`` block with an expected output runs in a fresh namespace, and what it prints
   must equal the ``text`` block exactly. Where that text holds a traceback, the block must
   raise: the lines before ``Traceback (most recent call last):`` are what it prints first,
   the line ``  ...`` stands for the frames, and the rest is the exception as Python prints
   it (``splitops.SplitError: message``).
2. A ``python`` block without an expected output runs, and must not raise. There are no
   fragments: a block that reads a name it does not define, or a file the folder does not
   hold, fails; make it whole.
3. A ``console`` block in which some command shows output runs. The console blocks of one
   document are one shell session: they run in the document's order, in one folder. Each
   command must print the lines under it, where ``...`` in a shown line stands for any text
   (a version, the package's folder, a detail cut short). The commands understood are
   ``splitops ...`` (run in this process; stdout and stderr in the order written), ``python
   -c CODE``, ``echo $?``, ``ls FOLDER`` (the names on one line, as a wide terminal shows
   them), and pipes into ``head -N`` or ``sed -n A,Bp``, which filter stdout only (stderr
   shows first, as it does when Python's stdout is a pipe). Any other command fails the test.
4. A ``console`` block that shows no output, and every ``bash`` block, is compiled only: each
   command line must split into words, each ``splitops`` command in it must parse with the
   command's own argument parser, and each ``python FILE`` or ``python -m MODULE`` must name
   a file or module of the repository (such blocks run in the root of a clone, and the
   document says so). These blocks install things or read the reader's own files.

A block that imports a library not installed here is skipped, naming it. Each test is named
by its document and the line of the block's opening fence, e.g. ``README.md:47``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import runpy
import shlex
import shutil
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

from splitops.cli import build_parser
from splitops.cli import main as splitops_main
from splitops.examples import EXAMPLE_MODEL

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLI_MODELS = ROOT / "docs" / "examples" / "cli_models.py"
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
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        # Other libraries' deprecations (torch's exporter) are for a reader to see and
        # ignore; splitops' own warnings, of other classes, stay errors.
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            exec(code, {"__name__": "__main__"})
        except Exception as error:
            raised = "".join(traceback.format_exception_only(type(error), error))
            return printed.getvalue() + TRACEBACK + raised, traceback.format_exc()
    return printed.getvalue(), ""


PRINTING = [e for e in EXAMPLES if e.language == "python" and e.expected is not None]
SILENT = [e for e in EXAMPLES if e.language == "python" and e.expected is None]
SESSIONS = [e for e in EXAMPLES if _shows_output(e)]
COMMANDS_ONLY = [e for e in EXAMPLES if e.language in ("console", "bash") and not _shows_output(e)]


def _reader_folder(folder: Path) -> Path:
    """``folder``, holding what the documents' examples read."""
    shutil.copy(EXAMPLE_MODEL, folder)
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(str(CLI_MODELS))["main"](folder)
    return folder


@pytest.fixture
def in_reader_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder prepared as :func:`_reader_folder` says, as the working folder."""
    monkeypatch.chdir(_reader_folder(tmp_path))
    return tmp_path


@pytest.mark.usefixtures("in_reader_folder")
@pytest.mark.parametrize("example", PRINTING, ids=str)
def test_python_example_prints_what_the_document_shows(example: Example) -> None:
    _skip_absent_libraries(example)
    shown, raised = _run_python(example)
    assert shown == example.expected, raised


@pytest.mark.usefixtures("in_reader_folder")
@pytest.mark.parametrize("example", SILENT, ids=str)
def test_python_example_runs(example: Example) -> None:
    _skip_absent_libraries(example)
    _, raised = _run_python(example)
    assert not raised, raised


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
        if program == "python" and args[:1] == ["-m"]:
            module = args[1]
            found = importlib.util.find_spec(module.partition(".")[0]) is not None
            path = ROOT.joinpath(*module.split("."))
            assert found or path.with_suffix(".py").is_file() or path.is_dir(), module
        elif program == "python" and args and not args[0].startswith("-"):
            assert (ROOT / args[0]).is_file(), f"{example}: no file {args[0]} in the repository"


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
    return shown, status


def _run_session(document: str, folder: Path) -> dict[Example, str]:
    """Run a document's console blocks in order in ``folder``; each block's transcript."""
    _reader_folder(folder)
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


def shows(expected: str, transcript: str) -> bool:
    """Whether ``transcript`` is what ``expected`` shows, line by line, where ``...`` in a
    line of ``expected`` stands for any text.

    >>> shows("a ... c\\n", "a b b c\\n"), shows("a ... c\\n", "a b\\n")
    (True, False)
    """
    wanted, got = expected.splitlines(), transcript.splitlines()
    if len(wanted) != len(got):
        return False
    for pattern, line in zip(wanted, got, strict=True):
        regex = ".*".join(re.escape(piece) for piece in pattern.split("..."))
        if not re.fullmatch(regex, line):
            return False
    return True


@pytest.mark.parametrize("example", SESSIONS, ids=str)
def test_console_example_prints_what_the_document_shows(
    example: Example, session_transcript: Callable[[Example], str]
) -> None:
    transcript = session_transcript(example)
    assert shows(example.source, transcript), transcript


#: How an example names a file it writes: ``.save("x.onnx")``, ``save_model(m, "x.onnx")``,
#: or a command's ``-o``/``--output``/``--out``.
WRITES = re.compile(
    r"""(?:\.save\(|save_model\([^,()]+,\s*|onnx\.save\([^,()]+,\s*)["']([^"']+)["']"""
    r"""|(?:^|\s)(?:-o|--output|--out)\s+(\S+)"""
)


def test_no_example_overwrites_a_file_the_readers_folder_holds(tmp_path: Path) -> None:
    """A reader runs the documents' examples in one folder: an example writing a model
    another one reads (``chunks.onnx`` twice, once by torch) breaks the second."""
    held = {path.relative_to(tmp_path).as_posix() for path in _reader_folder(tmp_path).rglob("*")}
    written = {
        (str(example), next(name for name in match if name))
        for example in EXAMPLES
        for match in WRITES.findall(example.source)
    }
    assert written, "the pattern finds the files examples write"
    assert sorted((where, name) for where, name in written if name in held) == []


#: What a merge left unresolved writes at the start of a line.
CONFLICT = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)


def test_no_text_holds_what_an_unresolved_merge_leaves() -> None:
    folders = ("src", "benchmarks", "harness")
    texts = [*DOCUMENTS, *(p for folder in folders for p in ROOT.glob(f"{folder}/**/*.py"))]
    marked = [str(p.relative_to(ROOT)) for p in texts if CONFLICT.search(p.read_text())]
    assert not marked
    assert CONFLICT.search("text\n=======\nmore")
    assert CONFLICT.search(">>>>>>> branch\n")
