"""The ``splitops`` command: check, infer, convert and run models, or split one array.

Every command reads models through :func:`splitops.model_io.load_model` (external data
stays in the model's folder unless ``--trust-external-data``) and reports a problem as one
line on stderr, ``splitops: error: ...``, never a traceback. The exit status says what
happened (:class:`ExitCode`, listed in every command's ``--help``).

>>> main(["split", "--help"])  # doctest: +ELLIPSIS
usage: splitops split ...
0
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import textwrap
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto, TensorProto, TypeProto, ValueInfoProto

from .core import ModelLoadError, OtherOperatorError, SplitError
from .onnx._graphs import constant_value, default_opset, fed_inputs, split_nodes, value_types
from .onnx._node import node_label, read_node

__all__ = ["EXIT_CODE_MEANINGS", "ExitCode", "build_parser", "main"]

#: The most elements ``splitops run`` generates for all inputs together (64 MB of float32).
MAX_GENERATED_ELEMENTS = 2**24


class ExitCode(IntEnum):
    """What the process exit status means (see :data:`EXIT_CODE_MEANINGS`)."""

    OK = 0
    RULE_BROKEN = 1
    BAD_INPUT = 2
    OTHER_OPERATOR = 3


EXIT_CODE_MEANINGS = {
    ExitCode.OK: "success (check: no problems found)",
    ExitCode.RULE_BROKEN: "a Split/SplitToSequence rule is broken (check found problems, or a "
    "node or the split cannot be run, inferred or converted as asked)",
    ExitCode.BAD_INPUT: "unreadable, unsafe or wrong input (model, .npy file, option value, "
    "output path)",
    ExitCode.OTHER_OPERATOR: "another operator stopped the command (onnx.version_converter, "
    "shape inference or onnx.reference failed on it)",
}


class _BadInputError(Exception):
    """An option value or data file the command cannot use (exit code 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, or argparse's own usage error (code 2)
        return int(stop.code or 0)
    command: Callable[[argparse.Namespace], ExitCode] = args.command
    try:
        return int(command(args))
    except (ModelLoadError, _BadInputError) as error:
        return _fail(error, ExitCode.BAD_INPUT)
    except OtherOperatorError as error:
        return _fail(error, ExitCode.OTHER_OPERATOR)
    except SplitError as error:
        return _fail(error, ExitCode.RULE_BROKEN)
    except ImportError as error:
        # An optional extra is missing (sympy for check and infer): say which, in one line.
        return _fail(error, ExitCode.BAD_INPUT)
    except BrokenPipeError:
        # The reader (e.g. `| head`) stopped early: what it read is all it wanted.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return int(ExitCode.OK)
    except OSError as error:
        where = f" {error.filename}" if error.filename else ""
        return _fail(f"cannot write{where}: {error.strerror or error}", ExitCode.BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(
        prog="splitops",
        description="Find, fix and run ONNX Split and SplitToSequence nodes.",
        epilog=_EXIT_CODES + "\n\nStart with `splitops run`: it runs an example model shipped "
        "with splitops.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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

    infer = _command(commands, "infer", _infer, "print the type and shape of every split output")
    _model_arguments(infer)
    infer.add_argument("-o", "--output", type=Path, help="also write the inferred model here")

    convert = _command(commands, "convert", _convert, "move Split nodes to another opset")
    _model_arguments(convert)
    convert.add_argument("--opset", type=int, required=True, help="the target opset (1 and up)")
    convert.add_argument("-o", "--output", type=Path, required=True, help="where to write it")

    lower = _command(
        commands, "lower", _lower, "rewrite Split nodes into forms every runtime computes alike"
    )
    _model_arguments(lower)
    lower.add_argument("-o", "--output", type=Path, required=True, help="where to write it")
    lower.add_argument(
        "--target",
        choices=["portable", "no-sequences"],
        default="portable",
        help="no-sequences: refuse a SplitToSequence whose sequence cannot be removed "
        "(default: portable, which keeps it in a form onnxruntime runs as the spec says)",
    )
    lower.add_argument("--json", action="store_true", help="print what became of each node as JSON")

    run = _command(commands, "run", _run, "run a model (the shipped example by default)")
    _model_arguments(run, optional=True)
    run.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input value"
    )
    run.add_argument(
        "--dim", action="append", default=[], metavar="SYMBOL=N", help="a symbolic dim's length"
    )
    run.add_argument("--seed", type=int, default=0, help="seed of the generated inputs")
    run.add_argument(
        "--engine",
        choices=["reference", "onnxruntime"],
        default="reference",
        help="reference (exact, slow: onnx.reference with Split on splitops) or onnxruntime "
        "(the model lowered, at onnxruntime's speed, with the same outputs)",
    )
    run.add_argument("--out", type=Path, metavar="DIR", help="write each output as NAME.npy")

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
        "--opset", type=int, help="its opset (default: 18 for Split, 24 for SplitToSequence)"
    )
    split.add_argument("--out", type=Path, metavar="DIR", help="write the parts as .npy files")
    return parser


_EXIT_CODES = "exit codes:\n" + "\n".join(
    textwrap.fill(meaning, 88, initial_indent=f"  {code}  ", subsequent_indent="     ")
    for code, meaning in EXIT_CODE_MEANINGS.items()
)

_EXAMPLES = {
    "check": """example:
  $ splitops check model.onnx
  main/split_1 (Split-18) [num_outputs]: ... Hint: ...
  $ splitops check model.onnx --json > problems.json""",
    "infer": """example:
  $ splitops infer model.onnx -o model.inferred.onnx
  main/quarters (Split-18) quarter_0: tensor(float) [batch, 2]""",
    "convert": """example:
  $ splitops convert model.onnx --opset 11 -o model.opset11.onnx
  Split-18's num_outputs becomes explicit sizes when the axis length is static; a node the
  target cannot express stops the conversion and nothing is written.""",
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
}


def _command(
    commands: Any, name: str, function: Callable[[argparse.Namespace], ExitCode], summary: str
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog=_EXAMPLES[name] + "\n\n" + _EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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


def _fail(error: object, code: ExitCode) -> int:
    message = " ".join(str(error).split())
    print(f"splitops: error: {message}", file=sys.stderr)
    return int(code)


def _load(args: argparse.Namespace) -> ModelProto:
    from .onnx._io import load_model

    return load_model(args.model, trust_external_data=args.trust_external_data)


def _check(args: argparse.Namespace) -> ExitCode:
    import splitops

    if args.portability:
        return _check_portability(args)
    model = _load(args)
    diagnostics = splitops.check_model(model)
    if args.json:
        print(json.dumps([d.as_dict() for d in diagnostics], indent=2))
    else:
        for diagnostic in diagnostics:
            print(diagnostic)
        count = sum(1 for _ in split_nodes(model))
        found = f"{len(diagnostics)} problem(s)" if diagnostics else "no problems"
        print(f"{args.model}: {count} Split/SplitToSequence node(s), {found}.", file=sys.stderr)
    return ExitCode.RULE_BROKEN if diagnostics else ExitCode.OK


def _infer(args: argparse.Namespace) -> ExitCode:
    import splitops

    model = _load(args)
    try:
        inferred = splitops.infer_shapes(model, strict=True)
    except (SplitError, ImportError):
        raise
    except Exception as error:
        raise OtherOperatorError(f"shape inference failed: {error}") from error
    for line in split_output_types(inferred):
        print(line)
    if args.output is not None:
        from .onnx._io import save_model

        save_model(inferred, args.output)
        print(f"wrote {args.output}", file=sys.stderr)
    return ExitCode.OK


def split_output_types(model: ModelProto) -> list[str]:
    """One line per output of every Split and SplitToSequence node: its type and shape.

    >>> from onnx import TensorProto, helper, shape_inference
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2, name="s")], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
    ...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    >>> print("\\n".join(split_output_types(shape_inference.infer_shapes(model))))
    main/s (Split-18) a: tensor(float) [N, 2]
    main/s (Split-18) b: tensor(float) [N, 2]
    """
    from .core import opset_rule

    types = value_types(model)
    lines = []
    for body, node in split_nodes(model):
        version = f"{node.op_type}-?"
        if body.opset is not None:
            with contextlib.suppress(SplitError):
                version = opset_rule(node.op_type, body.opset).name
        for output in node.output:
            if output:
                described = describe_type(types.get(body.root, {}).get(output))
                lines.append(f"{body.label}/{node_label(node)} ({version}) {output}: {described}")
    return lines


def describe_type(type_proto: TypeProto | None) -> str:
    """``tensor(float) [N, 2]``, ``seq(tensor(float)) [N, ?]``, or ``?`` when unknown.

    >>> from onnx import TensorProto, helper
    >>> describe_type(helper.make_tensor_type_proto(TensorProto.INT64, [2, "N", None]))
    'tensor(int64) [2, N, ?]'
    >>> describe_type(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    'tensor(float) ?'
    """
    from .onnx._types import shape_text, type_text

    name = type_text(type_proto)
    return "?" if name is None else f"{name} {shape_text(type_proto) or '?'}"


def _element_name(data_type: int) -> str:
    from .onnx._types import element_name

    return "?" if data_type == TensorProto.UNDEFINED else element_name(data_type)


def _convert(args: argparse.Namespace) -> ExitCode:
    from .onnx._convert import convert_model
    from .onnx._io import save_model

    model = _load(args)
    converted = convert_model(model, args.opset)
    save_model(converted, args.output)
    count = sum(1 for _ in split_nodes(converted))
    print(
        f"converted {count} Split/SplitToSequence node(s) from opset "
        f"{default_opset(model.opset_import)} to {args.opset}; wrote {args.output}"
    )
    return ExitCode.OK


def _run(args: argparse.Namespace) -> ExitCode:
    from .examples import EXAMPLE_MODEL

    if args.model is None:
        args.model = EXAMPLE_MODEL
        print(f"model: {EXAMPLE_MODEL} (the example shipped with splitops)")
    else:
        print(f"model: {args.model}")
    model = _load(args)
    for line in _describe_split_nodes(model):
        print(line)
    feeds = _feeds(model, args)
    from .onnx import backend

    try:
        results = _prepared(backend, model, args.engine).run(feeds)
    except (SplitError, ImportError):
        raise
    except Exception as error:
        raise OtherOperatorError(
            f"the model failed to run: {type(error).__name__}: {error}"
        ) from error
    outputs = [output.name for output in model.graph.output]
    files: list[tuple[str, np.ndarray]] = []
    for name, value in zip(outputs, results, strict=True):
        if isinstance(value, list):
            print(f"output {name}: sequence of {len(value)}")
            for index, item in enumerate(value):
                print(f"  [{index}] {_describe_array(np.asarray(item))}")
                files.append((f"{name}_{index}", np.asarray(item)))
        else:
            print(f"output {name}: {_describe_array(np.asarray(value))}")
            files.append((name, np.asarray(value)))
    if args.out is not None:
        _write_arrays(args.out, files)
    return ExitCode.OK


def _prepared(backend: Any, model: ModelProto, engine: str) -> Any:
    """``backend.prepare(model, engine=engine)``; the onnxruntime engine's notes (where the
    reference engine runs instead) as one line each on stderr."""
    if engine == "reference":
        return backend.prepare(model)
    from .onnx._ort import session_version

    version = session_version()
    if version is None:  # prepare raises the ImportError that says how to install it
        return backend.prepare(model, engine=engine)
    print(f"engine: onnxruntime {version}", file=sys.stderr)
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", backend.EngineFallbackWarning)
        rep = backend.prepare(model, engine=engine)
    for note in notes:
        print(f"splitops: note: {' '.join(str(note.message).split())}", file=sys.stderr)
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
            print(f"splitops: note: {' '.join(str(note.message).split())}", file=sys.stderr)
        return results


def _lower(args: argparse.Namespace) -> ExitCode:
    """``splitops lower``: every Split and SplitToSequence rewritten for every runtime."""
    import splitops

    from .onnx._io import save_model
    from .onnx._lower import lower_model_with_report

    model = _load(args)
    try:
        lowered, report = lower_model_with_report(model, target=args.target)
    except SplitError:
        diagnostics = splitops.check_model(model)
        if not diagnostics:  # a sequence --target no-sequences cannot remove: one line
            raise
        _print_problems(args, diagnostics)
        print(f"{args.model}: {len(diagnostics)} problem(s); nothing written.", file=sys.stderr)
        return ExitCode.RULE_BROKEN
    save_model(lowered, args.output)
    if args.json:
        print(json.dumps([row.as_dict() for row in report], indent=2))
    else:
        for row in report:
            print(row)
    outcomes = Counter(row.outcome for row in report)
    counts = ", ".join(f"{outcomes[o]} {o}" for o in ("rewritten", "removed", "kept", "unchanged"))
    print(
        f"lowered {len(report)} Split/SplitToSequence node(s) for target {args.target} "
        f"({counts}); wrote {args.output}",
        file=sys.stderr,
    )
    return ExitCode.OK


def _check_portability(args: argparse.Namespace) -> ExitCode:
    """``splitops check --portability``: the problems as ``check`` prints them, then where
    each installed runtime departs from the spec, and whether ``lower`` fixes it."""
    import splitops

    from .onnx._portability import check_portability

    model = _load(args)
    diagnostics = splitops.check_model(model)
    found = check_portability(model)
    if args.json:
        document = {
            "problems": [d.as_dict() for d in diagnostics],
            "departures": [d.as_dict() for d in found.departures],
            "not_probed": [{"node": n, "why": why} for n, why in found.not_probed],
            "runtimes": found.runtimes,
        }
        print(json.dumps(document, indent=2))
    else:
        _print_problems(args, diagnostics)
        for departure in found.departures:
            print(departure)
        for node, why in found.not_probed:
            print(f"{node}: not probed: {why}", file=sys.stderr)
        fixed = sum(1 for d in found.departures if d.fixed_by_lower)
        print(
            f"{args.model}: {len(diagnostics)} problem(s); {found.probed} node(s) probed on "
            f"{', '.join(found.runtimes)}: {len(found.departures)} departure(s), {fixed} fixed "
            "by lower.",
            file=sys.stderr,
        )
    return ExitCode.RULE_BROKEN if diagnostics else ExitCode.OK


def _print_problems(args: argparse.Namespace, diagnostics: Sequence[Any]) -> None:
    """The problems as ``splitops check`` prints them (a JSON list with ``--json``)."""
    if args.json:
        print(json.dumps([d.as_dict() for d in diagnostics], indent=2))
        return
    for diagnostic in diagnostics:
        print(diagnostic)


def _describe_split_nodes(model: ModelProto) -> list[str]:
    """``node main/quarters: Split-18 axis=1 num_outputs=4``, for each split node."""
    initializers = {t.name: t for t in model.graph.initializer}
    lines = []
    for body, node in split_nodes(model):
        try:
            spec = read_node(node, body.opset or 0)
        except SplitError as error:
            lines.append(f"node {body.label}/{node_label(node)}: invalid: {error}")
            continue
        how = [f"axis={spec.axis}"]
        if spec.split_attribute is not None:
            how.append(f"split={list(spec.split_attribute)}")
        if spec.split_input is not None:
            source = initializers.get(spec.split_input) if body.label == "main" else None
            value = None if source is None else constant_value(source)
            shown = "?" if value is None else value.tolist()
            how.append(f"split={shown} (input {spec.split_input!r})")
        if spec.num_outputs is not None:
            how.append(f"num_outputs={spec.num_outputs}")
        lines.append(f"node {body.label}/{spec.label}: {spec.rule.name} {' '.join(how)}")
    return lines


def _feeds(model: ModelProto, args: argparse.Namespace) -> dict[str, np.ndarray]:
    declared = {entry.name: entry for entry in fed_inputs(model.graph)}
    given = dict(_pair(text, "--input", "NAME=FILE.npy") for text in args.input)
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise _BadInputError(
            f"--input {unknown[0]}: the model has no input of that name; its inputs are "
            f"{sorted(declared)}."
        )
    dims = {name: _positive(value, f"--dim {name}") for name, value in map(_dim_pair, args.dim)}
    symbols = {
        d.dim_param for i in declared.values() for d in i.type.tensor_type.shape.dim if d.dim_param
    }
    unused = sorted(set(dims) - symbols)
    if unused:
        raise _BadInputError(
            f"--dim {unused[0]}: no input has a symbolic dim of that name; the symbols are "
            f"{sorted(symbols) or 'none'}."
        )
    shapes = {
        name: _generated_shape(info, dims) for name, info in declared.items() if name not in given
    }
    total = sum(int(np.prod(shape, dtype=object)) for shape in shapes.values())
    if total > MAX_GENERATED_ELEMENTS:
        raise _BadInputError(
            f"the generated inputs would have {total} elements in all ({shapes}), over "
            f"{MAX_GENERATED_ELEMENTS}: give smaller --dim values, or pass inputs with "
            "--input NAME=FILE.npy."
        )
    rng = np.random.default_rng(args.seed)
    feeds = {}
    for name, info in declared.items():
        if name in given:
            feeds[name] = _given_input(info, Path(given[name]))
            origin = f"from {given[name]}"
        else:
            feeds[name] = _generated_input(info, shapes[name], rng)
            origin = "generated"
        print(f"input {name}: {_describe_array(feeds[name])} ({origin})")
    return feeds


def _given_input(info: ValueInfoProto, file: Path) -> np.ndarray:
    array = _load_npy(file)
    declared = info.type.tensor_type
    if not info.type.HasField("tensor_type"):
        return array
    from .arrays import element_of

    wanted, got = _element_name(declared.elem_type), str(element_of(array.dtype))
    got = getattr(element_of(array.dtype), "onnx_name", got)
    if declared.elem_type and got != wanted:
        raise _BadInputError(
            f"--input {info.name}: the model declares {wanted}, but {file} holds "
            f"{got}. Cast the array to {wanted} first."
        )
    if declared.HasField("shape"):
        dims = declared.shape.dim
        fits = len(dims) == array.ndim and all(
            not d.HasField("dim_value") or d.dim_value == n
            for d, n in zip(dims, array.shape, strict=True)
        )
        if not fits:
            raise _BadInputError(
                f"--input {info.name}: the model declares shape {describe_type(info.type)}, "
                f"but {file} holds shape {list(array.shape)}."
            )
    return array.astype(object) if array.dtype.kind == "U" else array


def _generated_shape(info: ValueInfoProto, dims: dict[str, int]) -> tuple[int, ...]:
    tensor = info.type.tensor_type
    if not info.type.HasField("tensor_type") or not tensor.HasField("shape"):
        raise _BadInputError(
            f"input {info.name} is {describe_type(info.type)}: splitops generates tensors of "
            "known rank only. Pass it with --input NAME=FILE.npy."
        )
    return tuple(
        d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param, 1)
        for d in tensor.shape.dim
    )


#: The words generated string inputs are made of.
_WORDS = np.array(
    ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"], dtype=object
)


def _generated_input(
    info: ValueInfoProto, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    """Seeded random values: whole numbers from -9 to 9 (0 to 9 unsigned), bools, words."""
    from .onnx._types import element_of_code, numpy_dtype

    try:
        dtype = numpy_dtype(element_of_code(info.type.tensor_type.elem_type))
    except SplitError as error:
        raise _BadInputError(f"input {info.name}: {error} Pass it with --input.") from error
    if dtype.kind == "O":
        return rng.choice(_WORDS, shape)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    low = 0 if dtype.kind == "u" else -9
    return rng.integers(low, 10, shape).astype(dtype)


def _split(args: argparse.Namespace) -> ExitCode:
    from .arrays import split, split_to_sequence
    from .core import opset_rule

    x = _load_npy(args.file)
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
    rule = opset_rule(op, opset)
    print(f"{args.file}: {_describe_array(x)}")
    print(f"{rule.name} along axis {args.axis}: {len(parts)} part(s)")
    for index, part in enumerate(parts):
        print(f"  part {index}: {_describe_array(np.asarray(part))}")
    if args.out is not None:
        stem = args.file.stem
        _write_arrays(args.out, [(f"{stem}_{i}", np.asarray(p)) for i, p in enumerate(parts)])
    return ExitCode.OK


def _load_npy(file: Path) -> np.ndarray:
    try:
        array = np.load(file, allow_pickle=False)
    except FileNotFoundError:
        raise _BadInputError(f"cannot read {file}: no such file.") from None
    except (OSError, ValueError, EOFError) as error:
        raise _BadInputError(f"cannot read {file} as a .npy array: {error}") from error
    if not isinstance(array, np.ndarray):
        array.close()
        raise _BadInputError(f"{file} is an .npz archive; pass one .npy array.")
    return array


def _write_arrays(folder: Path, arrays: list[tuple[str, np.ndarray]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    for name, array in arrays:
        # Output names are the model author's: keep them to safe file names inside folder.
        safe = base = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "output"
        while safe.lower() in used:
            safe = f"{base}_{len(used)}"
        used.add(safe.lower())
        np.save(folder / f"{safe}.npy", _savable(array), allow_pickle=False)
    print(f"wrote {len(arrays)} .npy file(s) to {folder}")


def _savable(array: np.ndarray) -> np.ndarray:
    """``.npy`` holds no bfloat16 and no object arrays: those become float32 and str."""
    if array.dtype.kind == "O":
        return array.astype(str)
    if array.dtype.name == "bfloat16":
        return array.astype(np.float32)
    return array


def _describe_array(array: np.ndarray) -> str:
    flat = array.reshape(-1)
    shown = flat[:8]
    if shown.dtype.name == "bfloat16":
        shown = shown.astype(np.float32)
    if shown.dtype.kind in "OUS":
        values = ", ".join(repr(str(v)) for v in shown)
    else:
        values = np.array2string(shown, precision=3, separator=", ")[1:-1]
        values = " ".join(values.split())
    more = ", ..." if flat.size > shown.size else ""
    return f"{array.dtype} {tuple(array.shape)} [{values}{more}]"


def _int_list(text: str) -> list[int]:
    try:
        return [int(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas; got {text!r}"
        ) from None


def _pair(text: str, option: str, form: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise _BadInputError(f"{option} {text!r}: expected {form}.")
    return name, value


def _dim_pair(text: str) -> tuple[str, str]:
    return _pair(text, "--dim", "SYMBOL=N, e.g. batch=8")


def _positive(text: str, option: str) -> int:
    if not text.isdigit():
        raise _BadInputError(f"{option}={text}: the length must be a whole number >= 0.")
    return int(text)
