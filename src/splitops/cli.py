"""The ``splitops`` command: check, infer, convert and run models, split one array, or write
and run the conformance pack.

Every command reads models through :func:`splitops.load_model` (external data stays in the
model's folder unless ``--trust-external-data``) and reports a problem as one line on
stderr, ``splitops: error: ...``, never a traceback. The exit status says what happened
(:class:`ExitCode`; each command's ``--help`` lists the codes it can give). A file the
command writes is written whole or not at all (a temporary name, then a rename), and before
anything else is printed: a reader that closes stdout early (``| head``) loses no file.

Each command imports what it uses when it runs: ``splitops --help`` loads no numpy and no
onnx.

>>> main(["split", "--help"])  # doctest: +ELLIPSIS
usage: splitops split ...
0
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import textwrap
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from enum import IntEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .core import (
    ModelInputError,
    ModelLoadError,
    OtherOperatorError,
    PackError,
    SplitError,
    report_progress,
)

if TYPE_CHECKING:
    from onnx import ModelProto

__all__ = ["EXIT_CODE_MEANINGS", "ExitCode", "build_parser", "main"]


class ExitCode(IntEnum):
    """What the process exit status means (see :data:`EXIT_CODE_MEANINGS`)."""

    OK = 0
    RULE_BROKEN = 1
    BAD_INPUT = 2
    OTHER_OPERATOR = 3
    INTERNAL = 4


EXIT_CODE_MEANINGS = {
    ExitCode.OK: "success (check: no problems found)",
    ExitCode.RULE_BROKEN: "a Split/SplitToSequence rule is broken (check found problems, or a "
    "node or the split cannot be run, inferred or converted as asked, or a runtime failed a "
    "conformance case)",
    ExitCode.BAD_INPUT: "unreadable, unsafe or wrong input (model, .npy file, conformance pack, "
    "option value, input that does not fit the model, output path)",
    ExitCode.OTHER_OPERATOR: "another operator stopped the command (onnx.version_converter, "
    "shape inference or onnx.reference failed on it, or wrote an invalid model)",
    ExitCode.INTERNAL: "a defect of splitops itself: please report it with the command "
    "(SPLITOPS_DEBUG=1 shows the traceback)",
}

#: What each command's exit codes mean, in its own help.
_COMMAND_CODES: dict[str, dict[ExitCode, str]] = {
    "check": {
        ExitCode.OK: "no problems found",
        ExitCode.RULE_BROKEN: "problems found (one line each)",
        ExitCode.BAD_INPUT: "the model cannot be read safely, or an option is wrong",
        ExitCode.OTHER_OPERATOR: "shape inference failed on another operator",
    },
    "infer": {
        ExitCode.OK: "every output printed (and the model written with -o)",
        ExitCode.RULE_BROKEN: "a Split/SplitToSequence node breaks a rule",
        ExitCode.BAD_INPUT: "the model cannot be read safely, an option is wrong, or -o "
        "cannot be written",
        ExitCode.OTHER_OPERATOR: "shape inference failed on another operator",
    },
    "convert": {
        ExitCode.OK: "converted and written",
        ExitCode.RULE_BROKEN: "a node cannot be expressed at the target opset (nothing written)",
        ExitCode.BAD_INPUT: "the model cannot be read safely, the opset is out of range, or -o "
        "cannot be written",
        ExitCode.OTHER_OPERATOR: "onnx.version_converter failed on another operator, or wrote "
        "a model onnx.checker rejects (nothing written)",
    },
    "lower": {
        ExitCode.OK: "lowered and written",
        ExitCode.RULE_BROKEN: "a node breaks a rule (reported as check reports it), or a "
        "sequence --target no-sequences cannot remove (or control flow --target onnx2torch "
        "cannot run); nothing written",
        ExitCode.BAD_INPUT: "the model cannot be read safely, an option is wrong, or -o "
        "cannot be written",
        ExitCode.OTHER_OPERATOR: "shape inference failed on another operator",
    },
    "run": {
        ExitCode.OK: "the model ran (and --out was written)",
        ExitCode.RULE_BROKEN: "a Split/SplitToSequence node breaks a rule on these inputs",
        ExitCode.BAD_INPUT: "the model or an input file cannot be read, an input does not fit "
        "the model, or an option is wrong",
        ExitCode.OTHER_OPERATOR: "onnx.reference failed on another operator",
    },
    "split": {
        ExitCode.OK: "split (and --out written)",
        ExitCode.RULE_BROKEN: "the split breaks a rule of the operator",
        ExitCode.BAD_INPUT: "the file is no readable .npy array, or an option is wrong",
    },
    "conformance": {
        ExitCode.OK: "the pack was written, or the runtime passed every case",
        ExitCode.RULE_BROKEN: "the runtime failed a case (one line each)",
        ExitCode.BAD_INPUT: "the folder is missing, is no pack, or cannot be written; the "
        "runtime is unknown or not installed",
    },
    "conformance write": {
        ExitCode.OK: "the pack was written",
        ExitCode.BAD_INPUT: "the folder cannot be written (a file, a folder holding other "
        "files, a pack beside files of yours)",
    },
    "conformance run": {
        ExitCode.OK: "the runtime failed no case (a case the spec says two ways is no failure)",
        ExitCode.RULE_BROKEN: "the runtime failed a case, or crashed on one (one line each)",
        ExitCode.BAD_INPUT: "the folder is missing, is no pack, is unsafe to read or its data do "
        "not fit its models, or the runtime is unknown or not installed",
    },
}


class _BadInputError(Exception):
    """An option value or data file the command cannot use (exit code 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    with _interruptible():
        try:
            return _main(argv)
        except _InterruptedError as stop:  # what the command had to say is moot now
            return stop.exit()


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        # An option the command does not take: its own usage, not the top level's.
        if extra:
            args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
        # check's --runtime chooses the runtimes of --portability (conformance run's is its
        # own option).
        if getattr(args, "runtime", None) and getattr(args, "portability", None) is False:
            args.parser.error("--runtime chooses the runtimes of --portability; add --portability")
    except SystemExit as stop:  # --help, --version, or argparse's own usage error (code 2)
        return int(stop.code or 0)
    command: Callable[[argparse.Namespace], ExitCode] = args.command
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = _guarded(command, args)
    for warning in caught:
        message = " ".join(str(warning.message).split())
        print(f"splitops: warning: {message}", file=sys.stderr)
    return code


class _InterruptedError(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP, raised where the command was, so that every ``with`` and
    ``finally`` on the way out runs (workers stopped, temporary files and folders removed).
    A ``KeyboardInterrupt``: code that catches ``Exception`` lets it through."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.number = number

    def exit(self) -> int:
        """The one line that says so, and the exit status a shell gives a process the
        signal ended: 128 + its number (130 for SIGINT, 143 for SIGTERM)."""
        import signal

        name = signal.Signals(self.number).name
        print(f"splitops: error: interrupted by {name}; stopped.", file=sys.stderr)
        return 128 + self.number


@contextmanager
def _interruptible() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise :class:`_InterruptedError` inside, once: a second
    signal while the command cleans up is ignored, so that the cleaning ends. Outside the
    main thread (where Python takes no signal handlers) nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    numbers = [signal.SIGINT, signal.SIGTERM] + (
        [signal.SIGHUP] if hasattr(signal, "SIGHUP") else []
    )
    raised: list[int] = []

    def interrupt(number: int, frame: object) -> None:
        if not raised:
            raised.append(number)
            raise _InterruptedError(number)

    previous = {number: signal.signal(number, interrupt) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _guarded(command: Callable[[argparse.Namespace], ExitCode], args: argparse.Namespace) -> int:
    """``command(args)``'s exit code, or the one its error means, said in one line."""
    from .core import Rule, limits

    chosen = {name: getattr(args, name) for name in _LIMIT_HELP if getattr(args, name, None)}
    try:
        with limits(**chosen), _TerminalProgress.shown(args.parser.prog):
            return int(command(args))
    except SplitError as error:
        # A limit refused the input before anything was allocated: unsafe input, not a rule.
        code = ExitCode.BAD_INPUT if error.rule is Rule.LIMIT else ExitCode.RULE_BROKEN
        return _fail(error, code)
    except (ModelLoadError, ModelInputError, PackError, _BadInputError) as error:
        return _fail(error, ExitCode.BAD_INPUT)
    except OtherOperatorError as error:
        return _fail(error, ExitCode.OTHER_OPERATOR)
    except ImportError as error:
        # An optional extra is missing (sympy for check and infer): say which, in one line.
        return _fail(error, ExitCode.BAD_INPUT)
    except OSError as error:
        where = f" {error.filename}" if error.filename else ""
        return _fail(f"cannot write{where}: {error.strerror or error}", ExitCode.BAD_INPUT)
    except MemoryError:
        return _fail(
            "out of memory: the model (or an input) needs more memory than this process may "
            "use. Lower a limit to refuse such input earlier (--max-external-bytes, "
            "--max-input-elements), or run it where more memory is available.",
            ExitCode.BAD_INPUT,
        )
    except Exception as error:
        if os.environ.get("SPLITOPS_DEBUG"):
            raise
        return _fail(
            f"internal error, a defect of splitops: {type(error).__name__}: {error}. Please "
            "report it with the command; SPLITOPS_DEBUG=1 shows the traceback.",
            ExitCode.INTERNAL,
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="splitops",
        description="Find, fix and run ONNX Split and SplitToSequence nodes.",
        epilog=_exit_codes(EXIT_CODE_MEANINGS)
        + "\n  130, 143  interrupted by SIGINT or SIGTERM (128 + the signal's number)"
        + "\n\nStart with `splitops run`: it runs an example model shipped with splitops.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"splitops {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    check = _command(commands, "check", _check, "validate every Split/SplitToSequence node")
    _model_arguments(check)
    check.add_argument("--json", action="store_true", help="print the problems as a JSON list")
    check.add_argument(
        "--portability",
        action="store_true",
        help="also run each node on the installed runtimes and say where they depart from "
        "the spec, and whether `splitops lower` fixes it",
    )
    check.add_argument(
        "--runtime",
        action="append",
        type=_runtime_name,
        metavar="NAME",
        help="with --portability, probe only this runtime (onnxruntime, onnx.reference, "
        "openvino, tract, tvm, tinygrad, onnx2torch; repeatable; default: every one installed)",
    )
    _limit_arguments(check, "max_model_parts", "max_input_elements")

    infer = _command(commands, "infer", _infer, "print the type and shape of every split output")
    _model_arguments(infer)
    infer.add_argument("--json", action="store_true", help="print the outputs as a JSON list")
    infer.add_argument(
        "-o", "--output", type=Path, help="also write the inferred model here (folders created)"
    )

    convert = _command(commands, "convert", _convert, "move Split nodes to another opset")
    _model_arguments(convert)
    convert.add_argument(
        "--opset", type=_target_opset, required=True, help="the target opset (1 to the newest)"
    )
    convert.add_argument(
        "-o", "--output", type=Path, required=True, help="where to write it (folders created)"
    )

    lower = _command(
        commands, "lower", _lower, "rewrite Split nodes into forms every runtime computes alike"
    )
    _model_arguments(lower)
    lower.add_argument(
        "-o", "--output", type=Path, required=True, help="where to write it (folders created)"
    )
    lower.add_argument(
        "--target",
        choices=[
            "portable",
            "no-sequences",
            "onnxruntime",
            "openvino",
            "tract",
            "tvm",
            "tinygrad",
            "onnx2torch",
        ],
        default="portable",
        help="the runtime the model is for, or portable (the default: forms every runtime "
        "runs exactly), or no-sequences (portable, refusing a SplitToSequence whose sequence "
        "cannot be removed); docs/portability.md says what each runtime gets",
    )
    lower.add_argument(
        "--release",
        type=_release,
        metavar="VERSION",
        help="the release of the target's runtime that will run the model, where its forms "
        "differ by release (onnxruntime 1.32 and later keeps a Split-18 by num_outputs, "
        "which it computes exactly); by default, forms for every release",
    )
    lower.add_argument("--json", action="store_true", help="print what became of each node as JSON")
    _limit_arguments(lower, "max_model_parts")

    run = _command(commands, "run", _run, "run a model (the shipped example by default)")
    _model_arguments(run, optional=True)
    # Kept as ``inputs`` and ``dims``: ``input`` and ``dim`` name protobuf fields, which no
    # name of splitops outside the model layer shares.
    run.add_argument(
        "--input",
        action="append",
        default=[],
        dest="inputs",
        metavar="NAME=FILE.npy",
        help="an input value",
    )
    run.add_argument(
        "--dim",
        action="append",
        default=[],
        dest="dims",
        metavar="SYMBOL=N",
        help="a symbolic dim's length",
    )
    run.add_argument("--seed", type=_seed, default=0, help="seed of the generated inputs (>= 0)")
    run.add_argument(
        "--engine",
        choices=["reference", "onnxruntime"],
        default="reference",
        help="reference (exact, slow: onnx.reference with Split on splitops) or onnxruntime "
        "(the model lowered, at onnxruntime's speed, with the same outputs)",
    )
    run.add_argument(
        "--out", type=Path, metavar="DIR", help="write each output as NAME.npy (folders created)"
    )
    _limit_arguments(run, "max_input_elements", "max_model_parts")

    split = _command(commands, "split", _split, "split one .npy array")
    split.add_argument("file", type=Path, metavar="FILE.npy")
    how = split.add_mutually_exclusive_group(required=True)
    how.add_argument("--sizes", type=_int_list, metavar="A,B,...", help="explicit part sizes")
    how.add_argument("--parts", type=int, metavar="N", help="Split: this many parts")
    how.add_argument("--chunk", type=int, metavar="N", help="SplitToSequence: chunks of N")
    split.add_argument("--axis", type=int, default=0, help="the axis to cut (default 0)")
    split.add_argument(
        "--op",
        choices=["Split", "SplitToSequence"],
        help="the operator (default: Split, or SplitToSequence with --chunk)",
    )
    split.add_argument(
        "--opset",
        type=_opset,
        help="its opset (default: 18 for Split, 24 for SplitToSequence)",
    )
    split.add_argument(
        "--out", type=Path, metavar="DIR", help="write the parts as .npy files (folders created)"
    )
    _limit_arguments(split, "max_parts", "max_input_elements")

    conformance = _command(
        commands, "conformance", None, "write the conformance pack, or run it on a runtime"
    )
    steps = conformance.add_subparsers(title="commands", metavar="COMMAND", required=True)
    write = _command(
        steps,
        "write",
        _conformance_write,
        "write the pack in ONNX's node-test layout",
        key="conformance write",
    )
    write.add_argument("folder", type=Path, metavar="DIR", help="the folder to write it to")
    run_pack = _command(
        steps, "run", _conformance_run, "run a pack on a runtime", key="conformance run"
    )
    run_pack.add_argument("folder", type=Path, metavar="DIR", help="a pack's folder")
    run_pack.add_argument(
        "--runtime",
        required=True,
        metavar="NAME",
        help="onnxruntime, onnx.reference, openvino, tract, tvm, tinygrad or onnx2torch",
    )
    return parser


def _exit_codes(meanings: dict[ExitCode, str]) -> str:
    return "exit codes:\n" + "\n".join(
        textwrap.fill(meaning, 88, initial_indent=f"  {code}  ", subsequent_indent="     ")
        for code, meaning in meanings.items()
    )


_EXAMPLES = {
    "check": """example:
  $ splitops check model.onnx
  main/split_1 (Split-18) [num_outputs]: ... Hint: ...
  $ splitops check model.onnx --json > problems.json""",
    "infer": """example:
  $ splitops infer model.onnx -o model.inferred.onnx
  main/quarters (Split-18) quarter_0: tensor(float) [batch, 2]
  $ splitops infer model.onnx --json > outputs.json""",
    "convert": """example:
  $ splitops convert model.onnx --opset 11 -o model.opset11.onnx
  Split-18's num_outputs becomes explicit sizes when the axis length is static; a node the
  target cannot express stops the conversion, and nothing is written unless the converted
  model passes onnx.checker (full check).""",
    "lower": """example:
  $ splitops lower model.onnx -o model.portable.onnx
  $ splitops lower model.onnx -o model.trt.onnx --target no-sequences
  Invalid nodes are reported as `splitops check` reports them, and nothing is written.""",
    "run": """example:
  $ splitops run
  $ splitops run model.onnx --input x=x.npy --dim batch=8 --out results/
  Inputs not given are generated from their declared types and shapes: random whole
  numbers (seeded), symbolic dims of length 1 unless --dim sets them.""",
    "split": """example:
  $ splitops split x.npy --parts 4 --axis 1
  $ splitops split x.npy --sizes 2,5 --axis 1 --out parts/
  $ splitops split x.npy --chunk 3 --axis 1""",
    "conformance": """example:
  $ splitops conformance write pack/
  $ splitops conformance run pack/ --runtime onnxruntime""",
    "conformance write": """example:
  $ splitops conformance write pack/
  A folder per case (model.onnx, test_data_set_0/input_<i>.pb, output_<i>.pb) and
  pack/cases.json; a pack already there, and nothing else, is replaced.""",
    "conformance run": """example:
  $ splitops conformance run pack/ --runtime onnx.reference
  One line per case it fails or reads one of two ways, with what the runtime returned, then
  `N passed, M failed` (and `, K read two ways`).""",
}


def _command(
    commands: Any,
    name: str,
    function: Callable[[argparse.Namespace], ExitCode] | None,
    summary: str,
    *,
    key: str | None = None,
) -> argparse.ArgumentParser:
    """A command's parser; ``key`` names its example and exit codes (default: ``name``), and
    a command of commands has no ``function`` of its own."""
    key = key or name
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog=_EXAMPLES[key] + "\n\n" + _exit_codes(_COMMAND_CODES[key]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(parser=parser)
    if function is not None:
        parser.set_defaults(command=function)
    return parser


def _model_arguments(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    parser.add_argument(
        "model",
        type=Path,
        nargs="?" if optional else None,
        metavar="MODEL.onnx",
        help="the shipped example model when left out" if optional else "the model file",
    )
    parser.add_argument(
        "--trust-external-data",
        action="store_true",
        help="follow external-data paths outside the model's folder (only for models you trust)",
    )
    _limit_arguments(parser, "max_parts", "max_tensor_elements", "max_external_bytes", "max_nodes")


#: The limits a command line may raise, each with what it bounds (see splitops.Limits).
_LIMIT_HELP = {
    "max_parts": "the most parts one split may make",
    "max_tensor_elements": "the most elements a tensor stored in the model may claim",
    "max_external_bytes": "the most bytes of external data the model may read in all",
    "max_input_elements": "the most elements generated inputs, or a .npy file, may hold",
    "max_nodes": "the most nodes the model may hold, each call of a local function counted "
    "as the nodes of its body",
    "max_model_parts": "the most parts the rewrites and probes of the model, or the sequences "
    "of one run, may make in all",
}


def _limit_arguments(parser: argparse.ArgumentParser, *names: str) -> None:
    from .core import current_limits

    for name in names:
        default = getattr(current_limits(), name)
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=_limit,
            metavar="N",
            help=f"{_LIMIT_HELP[name]} (default {default})",
        )


def _fail(error: object, code: ExitCode) -> int:
    message = " ".join(str(error).split())
    print(f"splitops: error: {message}", file=sys.stderr)
    return int(code)


class _TerminalProgress:
    """The step a command is at and the seconds it has spent, on one line of a terminal's
    stderr, written again in place each second and at each step (:func:`report_progress`),
    and erased before anything else is written there and when the command ends. A command
    whose stderr is no terminal (a pipe, a file) shows none."""

    #: The one shown now (the command runs in the main thread).
    current: _TerminalProgress | None = None

    def __init__(self, command: str, stream: IO[str]) -> None:
        import threading
        import time

        self.command, self.stream = command, stream
        self.step = "starting"
        self.began = time.monotonic()
        self.lock = threading.Lock()
        self.ended = threading.Event()
        self.shown_now = False
        self.ticker = threading.Thread(target=self._tick, daemon=True)

    @classmethod
    @contextmanager
    def shown(cls, command: str) -> Iterator[None]:
        from .core import progress_listener

        stream = sys.stderr
        try:
            terminal = stream.isatty()
        except (AttributeError, ValueError):
            terminal = False
        if not terminal:
            yield
            return
        progress = cls.current = cls(command, stream)
        progress.ticker.start()
        try:
            with progress_listener(progress.at):
                yield
        finally:
            progress.ended.set()
            progress.erase()
            cls.current = None

    def at(self, step: str) -> None:
        with self.lock:
            self.step = step
            self._draw()

    def erase(self) -> None:
        """The line erased, until the next step or second draws it again."""
        with self.lock:
            if self.shown_now:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self.shown_now = False

    def _tick(self) -> None:
        while not self.ended.wait(1.0):
            with self.lock:
                self._draw()

    def _draw(self) -> None:
        import shutil
        import time

        if self.ended.is_set():
            return
        seconds = int(time.monotonic() - self.began)
        text = (
            f"{self.command} ({seconds} s): {self.step}"
            if seconds
            else f"{self.command}: {self.step}"
        )
        width = shutil.get_terminal_size().columns
        self.stream.write("\r" + text[: max(width - 1, 1)] + "\x1b[K")
        self.stream.flush()
        self.shown_now = True


class _Output:
    """stdout that a reader may close early (``| head``): once it has, later lines are
    dropped and the command goes on, so that files it was asked to write are written."""

    def __init__(self) -> None:
        self.closed = False

    def __call__(self, line: str = "", *, stream: IO[str] | None = None) -> None:
        if self.closed and stream is None:
            return
        if _TerminalProgress.current is not None:
            _TerminalProgress.current.erase()
        try:
            print(line, file=stream or sys.stdout, flush=True)
        except BrokenPipeError:
            # Point stdout at /dev/null, so that Python's own flush at exit fails no more.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            self.closed = True

    def lines(self, lines: Iterable[str]) -> None:
        """Each of ``lines``, written at once (a line at a time, a model of 65,536 split
        nodes took a second to print)."""
        shown = list(lines)
        if shown:
            self("\n".join(shown))


def _load(args: argparse.Namespace, *, weights: bool = True) -> ModelProto:
    """The model of ``args``; with ``weights=False`` its external data is checked, not read
    (check and infer read shapes, not weights)."""
    from .onnx import load_model

    report_progress("reading the model")
    model: ModelProto = load_model(
        args.model, trust_external_data=args.trust_external_data, load_external_data=weights
    )
    return model


def _check(args: argparse.Namespace) -> ExitCode:
    from .onnx import check_model_counted

    if args.portability:
        return _check_portability(args)
    say = _Output()
    model = _load(args, weights=False)
    report_progress("checking every Split/SplitToSequence node")
    diagnostics, count = check_model_counted(model)
    if args.json:
        say(json.dumps([d.as_dict() for d in diagnostics], indent=2))
    else:
        say.lines(map(str, diagnostics))
        say(
            f"{args.model}: {count} Split/SplitToSequence node(s), {_found(diagnostics)}.",
            stream=sys.stderr,
        )
    return _check_code(diagnostics)


def _found(diagnostics: Sequence[Any]) -> str:
    """``no problems``, ``2 problem(s)``, ``1 problem(s), 1 warning(s)``."""
    errors = sum(1 for d in diagnostics if d.is_error)
    warnings = len(diagnostics) - errors
    found = f"{errors} problem(s)" if errors else "no problems"
    return f"{found}, {warnings} warning(s)" if warnings else found


def _check_code(diagnostics: Sequence[Any]) -> ExitCode:
    """A broken rule fails ``check``; a warning (a departure runtimes read two ways) does
    not."""
    return ExitCode.RULE_BROKEN if any(d.is_error for d in diagnostics) else ExitCode.OK


def _infer(args: argparse.Namespace) -> ExitCode:
    from .onnx import ModelView, infer_shapes, split_output_rows

    model = _load(args, weights=args.output is not None)
    # Another operator's failure is infer_shapes' OtherOperatorError; anything else is a defect.
    report_progress("inferring the types")
    inferred = infer_shapes(model, strict=True)
    if args.output is not None:
        _write_model(inferred, args.output)
    say = _Output()
    rows = split_output_rows(ModelView.read(inferred))
    if args.json:
        say(json.dumps([row.as_dict() for row in rows], indent=2))
    else:
        say.lines(map(str, rows))
    if args.output is not None:
        say(f"wrote {args.output}", stream=sys.stderr)
    return ExitCode.OK


def _convert(args: argparse.Namespace) -> ExitCode:
    from .onnx import ModelView, convert_model, rewrite_file, split_nodes

    counts: list[tuple[int, int | None]] = []  # the Split nodes, the opset converted from

    def convert(model: ModelProto) -> ModelProto:
        source = ModelView.read(model).main.opset
        converted = convert_model(model, args.opset)
        counts.append((sum(1 for _ in split_nodes(converted)), source))
        return converted

    # The weights stay where they lie: external data beside the output, inline ones inline.
    rewrite_file(args.model, args.output, convert, trust_external_data=args.trust_external_data)
    count, source = counts[0]
    _Output()(
        f"converted {count} Split/SplitToSequence node(s) from opset {source} to {args.opset}; "
        f"wrote {args.output}"
    )
    return ExitCode.OK


def _write_model(model: ModelProto, path: Path) -> None:
    from .onnx import save_model

    save_model(model, path)


def _run(args: argparse.Namespace) -> ExitCode:
    import numpy as np

    from . import backend
    from .examples import EXAMPLE_MODEL
    from .onnx import ModelView, describe_array, describe_split_nodes, model_feeds, write_arrays

    # The options first, and the engine: what stops the command stops it before it prints.
    given = dict(_pair(text, "--input", "NAME=FILE.npy") for text in args.inputs)
    dims = {name: _length(value, f"--dim {name}") for name, value in map(_dim_pair, args.dims)}
    if args.engine == "onnxruntime":
        from .onnx import import_onnxruntime

        import_onnxruntime()  # the ImportError that says how to install it
    say = _Output()
    if args.model is None:
        args.model = EXAMPLE_MODEL
        say(f"model: {EXAMPLE_MODEL} (the example shipped with splitops)")
    else:
        say(f"model: {args.model}")
    model = _load(args)
    view = ModelView.read(model)
    say.lines(describe_split_nodes(view))
    feeds, origins = model_feeds(view, given, dims, seed=args.seed)
    outputs = view.main.output_names()
    # The view is read for the description, the feeds and the outputs' names; the engine
    # reads the model itself.
    del view
    for name, value in feeds.items():
        say(f"input {name}: {describe_array(value)} ({origins[name]})")
    # Another operator's failure is the engine's OtherOperatorError; anything else is a defect.
    report_progress(f"running the model (engine {args.engine})")
    results = _prepared(backend, model, args.engine).run(feeds)
    lines: list[str] = []
    files: list[tuple[str, np.ndarray[Any, Any]]] = []
    for name, value in zip(outputs, results, strict=True):
        if isinstance(value, list):
            lines.append(f"output {name}: sequence of {len(value)}")
            for index, item in enumerate(value):
                lines.append(f"  [{index}] {describe_array(np.asarray(item))}")
                files.append((f"{name}_{index}", np.asarray(item)))
        else:
            lines.append(f"output {name}: {describe_array(np.asarray(value))}")
            files.append((name, np.asarray(value)))
    if args.out is not None:
        write_arrays(args.out, files)
    say.lines(lines)
    if args.out is not None:
        say(f"wrote {len(files)} .npy file(s) to {args.out}")
    return ExitCode.OK


def _prepared(backend: Any, model: ModelProto, engine: str) -> Any:
    """``backend.prepare(model, engine=engine)``; the onnxruntime engine's notes (where the
    reference engine runs instead) as one line each on stderr."""
    if engine == "reference":
        return backend.prepare(model)
    from .onnx import session_version

    _Output()(f"engine: onnxruntime {session_version()}", stream=sys.stderr)
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", backend.EngineFallbackWarning)
        rep = backend.prepare(model, engine=engine)
    for note in notes:
        _Output()(f"splitops: note: {' '.join(str(note.message).split())}", stream=sys.stderr)
    return _NotingRep(rep, backend.EngineFallbackWarning)


class _NotingRep:
    """A prepared model whose run prints the engine's fallback notes as one line each."""

    def __init__(self, rep: Any, kind: type[Warning]) -> None:
        self.rep, self.kind = rep, kind

    def run(self, feeds: Any) -> Any:
        with warnings.catch_warnings(record=True) as notes:
            warnings.simplefilter("always", self.kind)
            results = self.rep.run(feeds)
        for note in notes:
            _Output()(f"splitops: note: {' '.join(str(note.message).split())}", stream=sys.stderr)
        return results


def _lower(args: argparse.Namespace) -> ExitCode:
    """``splitops lower``: every Split and SplitToSequence rewritten for every runtime."""
    from .core import Rule
    from .onnx import Lowering, check_model, lower_model_with_report, rewrite_file

    say = _Output()
    report: list[Lowering] = []

    def lower(model: ModelProto) -> ModelProto:
        lowered, rows = lower_model_with_report(model, target=args.target, release=args.release)
        report.extend(rows)
        return lowered

    try:
        # The weights stay where they lie: external data beside the output, inline ones inline.
        rewrite_file(args.model, args.output, lower, trust_external_data=args.trust_external_data)
    except SplitError as error:
        if error.rule is Rule.LIMIT:
            raise
        diagnostics = check_model(_load(args, weights=False))
        if not diagnostics:  # what the target cannot keep (a sequence, control flow): one line
            raise
        _print_problems(say, args, diagnostics)
        say(f"{args.model}: {len(diagnostics)} problem(s); nothing written.", stream=sys.stderr)
        return ExitCode.RULE_BROKEN
    if args.json:
        say(json.dumps([row.as_dict() for row in report], indent=2))
    else:
        say.lines(map(str, report))
    outcomes = Counter(row.outcome for row in report)
    counts = ", ".join(f"{outcomes[o]} {o}" for o in ("rewritten", "removed", "kept", "unchanged"))
    # The report also holds the Loops of SequenceInsert (torch's tensor_split by indices)
    # that a target without sequences unrolls: counted apart, as what they are.
    splits = sum(row.op in ("Split", "SplitToSequence") for row in report)
    loops = len(report) - splits
    what = f"{splits} Split/SplitToSequence node(s)"
    if loops:
        what += f" and {loops} Loop(s) of SequenceInsert"
    say(
        f"lowered {what} for target {args.target} ({counts}); wrote {args.output}",
        stream=sys.stderr,
    )
    return ExitCode.OK


def _check_portability(args: argparse.Namespace) -> ExitCode:
    """``splitops check --portability``: the problems as ``check`` prints them, then where
    each installed runtime departs from the spec, and whether ``lower`` fixes it."""
    from .onnx import RUNTIMES, RuntimeWorkers, check_model, check_portability, split_nodes

    say = _Output()
    model = _load(args)
    with RuntimeWorkers() as workers:
        # Where there are nodes to probe, the workers start first, so that their imports
        # overlap the model's check.
        if next(split_nodes(model), None) is not None:
            workers.start(
                [
                    runtime
                    for runtime in RUNTIMES
                    if (args.runtime is None or runtime.name in args.runtime)
                    and runtime.is_installed()
                ]
            )
        report_progress("checking every Split/SplitToSequence node")
        diagnostics = check_model(model)
        found = check_portability(model, runtimes=args.runtime, workers=workers)
    if args.json:
        document = {
            "problems": [d.as_dict() for d in diagnostics],
            "departures": [d.as_dict() for d in found.departures],
            "not_probed": [{"node": n, "why": why} for n, why in found.not_probed],
            "runtimes": found.runtimes,
            "not_installed": [{"runtime": r, "install": how} for r, how in found.not_installed],
        }
        say(json.dumps(document, indent=2))
    else:
        _print_problems(say, args, diagnostics)
        say.lines(map(str, found.departures))
        for node, why in found.not_probed:
            say(f"{node}: not probed: {why}", stream=sys.stderr)
        for runtime, how in found.not_installed:
            say(f"{runtime}: not probed: it is not installed; {how}", stream=sys.stderr)
        fixed = sum(1 for d in found.departures if d.fixed_by_lower)
        say(
            f"{args.model}: {_found(diagnostics)}; {found.probed} node(s) probed on "
            f"{', '.join(found.runtimes)}: {len(found.departures)} departure(s), {fixed} fixed "
            "by lower.",
            stream=sys.stderr,
        )
    return _check_code(diagnostics)


def _print_problems(say: _Output, args: argparse.Namespace, diagnostics: Sequence[Any]) -> None:
    """The problems as ``splitops check`` prints them (a JSON list with ``--json``)."""
    if args.json:
        say(json.dumps([d.as_dict() for d in diagnostics], indent=2))
        return
    say.lines(map(str, diagnostics))


def _split(args: argparse.Namespace) -> ExitCode:
    import numpy as np

    from .arrays import split, split_to_sequence
    from .core import opset_rule
    from .onnx import describe_array, load_npy, write_arrays

    x = load_npy(args.file)
    op = args.op or ("SplitToSequence" if args.chunk is not None else "Split")
    parts: Sequence[Any]
    if op == "Split":
        if args.chunk is not None:
            raise _BadInputError(
                "--chunk is SplitToSequence's chunk length; Split takes --sizes or --parts."
            )
        opset = 18 if args.opset is None else args.opset
        parts = split(x, args.sizes, axis=args.axis, num_outputs=args.parts, opset=opset)
    else:
        if args.parts is not None:
            raise _BadInputError(
                "--parts is Split's part count; SplitToSequence takes --sizes or --chunk."
            )
        opset = 24 if args.opset is None else args.opset
        given = args.sizes if args.sizes is not None else args.chunk
        parts = split_to_sequence(x, given, axis=args.axis, opset=opset)
    arrays = [np.asarray(part) for part in parts]
    if args.out is not None:
        stem = args.file.stem
        write_arrays(args.out, [(f"{stem}_{i}", part) for i, part in enumerate(arrays)])
    say = _Output()
    say(f"{args.file}: {describe_array(x)}")
    say(f"{opset_rule(op, opset).name} along axis {args.axis}: {len(arrays)} part(s)")
    for index, part in enumerate(arrays):
        say(f"  part {index}: {describe_array(part)}")
    if args.out is not None:
        say(f"wrote {len(arrays)} .npy file(s) to {args.out}")
    return ExitCode.OK


def _conformance_write(args: argparse.Namespace) -> ExitCode:
    """``splitops conformance write DIR``: the pack, in ONNX's node-test layout."""
    from .conformance import CASES, write_pack

    count = write_pack(args.folder)
    valid = sum(case.valid for case in CASES)
    rejected = sum(case.rejected for case in CASES)
    _Output()(
        f"wrote {count} case(s) to {args.folder}: {valid} valid, {rejected} that the spec "
        f"rejects, {count - valid - rejected} that it says two ways"
    )
    return ExitCode.OK


def _conformance_run(args: argparse.Namespace) -> ExitCode:
    """``splitops conformance run DIR --runtime NAME``: a line per case the runtime fails or
    reads one of two ways, then the counts."""
    from .conformance import run_pack, summary
    from .onnx import RUNTIMES

    names = [runtime.name for runtime in RUNTIMES]
    if args.runtime not in names:
        raise _BadInputError(
            f"--runtime {args.runtime!r} is no runtime splitops runs; choose one of "
            f"{', '.join(names)}."
        )
    say = _Output()
    failed: list[str] = []

    def show(result: Any) -> None:
        if not result.passed:
            say(str(result))
        if result.failed:
            failed.append(result.name)

    results = run_pack(args.folder, args.runtime, progress=show)
    say(summary(results))
    return ExitCode.RULE_BROKEN if failed else ExitCode.OK


def _int_list(text: str) -> list[int]:
    try:
        return [int(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas; got {text!r}"
        ) from None


def _whole(text: str, what: str, *, low: int, high: int | None = None) -> int:
    """``text`` as a whole number in ``[low, high]``, or argparse's error (exit 2)."""
    if not re.fullmatch(r"-?[0-9]+", text.strip()):
        raise argparse.ArgumentTypeError(f"{what} must be a whole number; got {text!r}")
    value = int(text)
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f">= {low}"
        raise argparse.ArgumentTypeError(f"{what} must be {bound}; got {value}")
    return value


def _runtime_name(text: str) -> str:
    """A runtime ``check --portability`` knows, or argparse's error (exit 2)."""
    from .onnx import RUNTIMES

    names = [runtime.name for runtime in RUNTIMES]
    if text not in names:
        raise argparse.ArgumentTypeError(
            f"no runtime is called {text!r}; the runtimes are {', '.join(names)}"
        )
    return text


def _release(text: str) -> str:
    """A runtime release (a version such as ``1.32.0``), or argparse's error (exit 2)."""
    from .onnx import target_forms

    try:
        target_forms("portable", text)
    except SplitError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _target_opset(text: str) -> int:
    import onnx

    return _whole(text, "the target opset", low=1, high=onnx.defs.onnx_opset_version())


def _opset(text: str) -> int:
    return _whole(text, "the opset", low=1)


def _limit(text: str) -> int:
    return _whole(text, "a limit", low=1, high=2**62)


def _seed(text: str) -> int:
    return _whole(text, "the seed", low=0, high=2**63 - 1)


def _pair(text: str, option: str, form: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise _BadInputError(f"{option} {text!r}: expected {form}.")
    return name, value


def _dim_pair(text: str) -> tuple[str, str]:
    return _pair(text, "--dim", "SYMBOL=N, e.g. batch=8")


def _length(text: str, option: str) -> int:
    try:
        return _whole(text, option, low=0, high=2**62)
    except argparse.ArgumentTypeError as error:
        raise _BadInputError(f"{error}.") from None
