"""What every installed runtime computes for each kind of Split and SplitToSequence, original
and lowered for each target, against the spec: the matrix of ``python -m
benchmarks.portability``.

The cases (:func:`cases`) are the kinds the spec allows: Split-1/2/11/13/18 with sizes, equal
parts and ``num_outputs`` (even, uneven, a zero-size last part, fewer outputs listed than
parts), negative axes, SplitToSequence with every reader (``SequenceAt`` from the front and
the back, ``SequenceLength``, ``ConcatFromSequence``, the latter through a
``SequenceErase``), with its sequence as an output, and with a chunk the graph computes
from ``Shape``, and what torch's exporter writes for ``chunk``, ``tensor_split`` (by a
count, and by indices: a Loop of SequenceInsert), ``split`` and ``unbind``;
each with a static axis and with an axis known only at run time, run at lengths the spec
accepts and at one it rejects. Each runs on onnxruntime, onnx.reference, OpenVINO, tract,
TVM, tinygrad and onnx2torch, where installed (each in a worker process:
:class:`~splitops.onnx.run.RuntimeWorkers`), as it is and as ``lower_model`` gives it for
each target. splitops' reference engine on the original gives what the spec says. A run is:

- **exact**: at every length, the spec's outputs (values, shapes, element types), and an
  error wherever the spec rejects the length;
- **accepts**: exact wherever the spec computes parts, but parts where it rejects the length;
- **wrong**: other outputs than the spec's at a length it accepts;
- **error**: an error (or a crash) at a length the spec accepts.

``python -m benchmarks.portability`` writes :func:`report` in ``portability.md``, with the
cost of lowering (timed in :mod:`benchmarks.portability`) and the real exports' section
(:mod:`harness.exports`) kept.

>>> [case.name for case in cases()][:3]
['split1-sizes', 'split2-sizes', 'split11-equal']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

import splitops
from splitops.onnx.rewrite import TARGETS, Target
from splitops.onnx.run import RUNTIMES, Runtime, RuntimeRunError, RuntimeWorkers

from .export_models import torch_split

F = TensorProto.FLOAT
VERDICTS = ("exact", "accepts", "wrong", "error")

#: A model built on an axis of a given length (``None``: known only at run time).
Builder = Callable[[int | str], ModelProto]


@dataclass(frozen=True)
class Case:
    """One kind of node: how to build it on an axis of a given length (``None``: known only
    at run time), and the lengths to run it at."""

    name: str
    build: Builder
    lengths: tuple[int, ...]
    #: The static length the static variant declares.
    static: int

    def models(self) -> list[tuple[str, ModelProto, tuple[int, ...]]]:
        """The static and the dynamic variant, with the lengths each runs at."""
        return [
            (f"{self.name} static", self.build(self.static), (self.static,)),
            (f"{self.name} dynamic", self.build("N"), self.lengths),
        ]


def _model(
    nodes: Sequence[NodeProto],
    length: int | str,
    outputs: Sequence[onnx.ValueInfoProto],
    *,
    opset: int,
    constants: dict[str, Any] | None = None,
) -> ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "case",
        [helper.make_tensor_value_info("x", F, [2, length])],
        list(outputs),
        [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (constants or {}).items()],
    )
    opsets = [helper.make_opsetid("", opset)]
    # The lowest IR version the opset allows (onnx's table starts at opset 7): older runtimes
    # refuse newer IR versions.
    ir_version = helper.find_min_ir_version_for(opsets) if opset >= 7 else 3
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def _parts(count: int) -> list[onnx.ValueInfoProto]:
    return [helper.make_tensor_value_info(f"y{i}", F, [2, None]) for i in range(count)]


def split_model(
    count: int,
    *,
    opset: int,
    axis: int = 1,
    split: list[int] | None = None,
    omitted: Sequence[int] = (),
    **attributes: Any,
) -> Builder:
    """A Split of ``x`` into ``count`` parts, leaving out the outputs at ``omitted``."""

    def build(length: int | str) -> ModelProto:
        inputs, constants = ["x"], {}
        if split is not None and opset >= 13:
            inputs.append("sizes")
            constants["sizes"] = split
        elif split is not None:
            attributes["split"] = split
        names = ["" if i in omitted else f"y{i}" for i in range(count)]
        node = helper.make_node("Split", inputs, names, axis=axis, **attributes)
        outputs = [p for p, name in zip(_parts(count), names, strict=True) if name]
        return _model([node], length, outputs, opset=opset, constants=constants)

    return build


def sizes_from_shape_model(length: int | str) -> ModelProto:
    """A Split-13 of axis 1 into halves whose sizes the graph computes from ``Shape``, as
    torch's ``tensor_split`` is exported on a run-time axis."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "one", "two"], ["n"]),
        helper.make_node("Div", ["n", "two"], ["half"]),
        helper.make_node("Sub", ["n", "half"], ["rest"]),
        helper.make_node("Concat", ["half", "rest"], ["sizes"], axis=0),
        helper.make_node("Split", ["x", "sizes"], ["y0", "y1"], axis=1),
    ]
    return _model(nodes, length, _parts(2), opset=13, constants={"one": [1], "two": [2]})


def split_then_model(kind: str) -> Builder:
    """A Split-18 by ``num_outputs`` on axis 1 whose parts other nodes read, as in a model:
    ``uneven-concat`` (three parts joined back in another order), ``chained`` (a part split
    again) or ``concat-add`` (halves swapped, then added to the input)."""

    def build(length: int | str) -> ModelProto:
        def split(x: str, outputs: list[str]) -> NodeProto:
            return helper.make_node("Split", [x], outputs, axis=1, num_outputs=len(outputs))

        if kind == "uneven-concat":
            nodes = [split("x", ["a", "b", "c"])]
            nodes.append(helper.make_node("Concat", ["c", "a", "b"], ["y0"], axis=1))
            count = 1
        elif kind == "chained":
            nodes = [split("x", ["y0", "h"]), split("h", ["y1", "y2"])]
            count = 3
        else:
            nodes = [split("x", ["a", "b"])]
            nodes.append(helper.make_node("Concat", ["b", "a"], ["c"], axis=1))
            nodes.append(helper.make_node("Add", ["c", "x"], ["y0"]))
            count = 1
        return _model(nodes, length, _parts(count), opset=18)

    return build


def sequence_model(
    readers: Sequence[str], *, split: Any = None, keepdims: int = 1, opset: int = 11
) -> Builder:
    """SplitToSequence on axis 1, read by ``readers``: ``at<i>`` (SequenceAt), ``len``,
    ``concat`` (ConcatFromSequence on axis 1), or ``out`` (the sequence is an output)."""

    def build(length: int | str) -> ModelProto:
        inputs, constants = ["x"], {}
        if split is not None:
            inputs.append("split")
            constants["split"] = split
        nodes = [helper.make_node("SplitToSequence", inputs, ["seq"], axis=1, keepdims=keepdims)]
        rank = 2 if split is not None or keepdims else 1
        outputs = []
        for reader in readers:
            if reader.startswith("at"):
                position = int(reader[2:])
                name = f"at{position}".replace("-", "m")
                constants[f"{name}_i"] = position
                nodes.append(helper.make_node("SequenceAt", ["seq", f"{name}_i"], [name]))
                outputs.append(helper.make_tensor_value_info(name, F, [None] * rank))
            elif reader == "len":
                nodes.append(helper.make_node("SequenceLength", ["seq"], ["n"]))
                outputs.append(helper.make_tensor_value_info("n", TensorProto.INT64, []))
            elif reader == "concat":
                nodes.append(helper.make_node("ConcatFromSequence", ["seq"], ["joined"], axis=1))
                outputs.append(helper.make_tensor_value_info("joined", F, [None] * rank))
            else:
                outputs.append(helper.make_tensor_sequence_value_info("seq", F, [None] * rank))
        return _model(nodes, length, outputs, opset=opset, constants=constants)

    return build


def computed_chunk_model(readers: Sequence[str]) -> Builder:
    """SplitToSequence-13 on axis 1 of chunks of ``ceil(N / 2)``, a scalar the graph
    computes from ``Shape``, read by ``readers`` (``at<i>`` or ``len``, as :func:`sequence_model`
    takes them)."""

    def build(length: int | str) -> ModelProto:
        model = sequence_model(readers, split=0, opset=13)(length)
        graph = model.graph
        del graph.initializer[[t.name for t in graph.initializer].index("split")]
        graph.initializer.extend(
            numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("c1", 1), ("c2", 2))
        )
        computed = [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Gather", ["shape", "c1"], ["axis_length"], axis=0),
            helper.make_node("Add", ["axis_length", "c1"], ["raised"]),
            helper.make_node("Div", ["raised", "c2"], ["split"]),
        ]
        nodes = [*computed, *graph.node]
        del graph.node[:]
        graph.node.extend(nodes)
        return model

    return build


def erased_sequence_model(length: int | str) -> ModelProto:
    """SplitToSequence of chunks of 3 on axis 1, its part 1 erased by SequenceErase, the
    rest concatenated by ConcatFromSequence."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "split"], ["seq"], axis=1),
        helper.make_node("SequenceErase", ["seq", "one"], ["rest"]),
        helper.make_node("ConcatFromSequence", ["rest"], ["joined"], axis=1),
    ]
    outputs = [helper.make_tensor_value_info("joined", F, [2, None])]
    return _model(nodes, length, outputs, opset=11, constants={"split": 3, "one": 1})


def torch_model(name: str) -> Builder:
    """A function of torch's, exported by its TorchScript exporter at opset 18 on ``[2, N]``
    (:func:`harness.export_models.torch_split`): ``name`` is ``chunk``, ``tensor_split``,
    ``tensor_split_indices`` (a Loop of SequenceInsert), ``split_sizes`` or ``unbind`` along
    axis 1."""

    def build(length: int | str) -> ModelProto:
        return onnx.load_from_string(torch_split(name, length))

    return build


def cases() -> list[Case]:
    """The kinds of node the matrix runs (see the module's documentation); torch's exports
    where torch is installed."""
    import importlib.util

    exported = []
    if importlib.util.find_spec("torch") is not None:
        exported = [
            Case(f"torch-{name}", torch_model(name), (7, 9), 7)
            for name in ("chunk", "tensor_split", "tensor_split_indices", "split_sizes", "unbind")
        ]
    return [*_spec_cases(), *exported]


def _spec_cases() -> list[Case]:
    return [
        Case("split1-sizes", split_model(3, opset=1, split=[2, 3, 2]), (7, 6), 7),
        Case("split2-sizes", split_model(3, opset=2, split=[2, 3, 2]), (7, 6), 7),
        Case("split11-equal", split_model(3, opset=11), (6, 9, 7), 6),
        Case("split13-equal", split_model(2, opset=13), (8, 2, 7), 8),
        Case("split13-sizes", split_model(3, opset=13, split=[1, 4, 2]), (7, 6), 7),
        Case("split13-sizes-from-shape", sizes_from_shape_model, (8, 7), 8),
        Case("split13-omitted", split_model(3, opset=13, split=[1, 4, 2], omitted=(1,)), (7, 6), 7),
        Case("split18-even", split_model(2, opset=18, num_outputs=2), (8, 7, 1), 8),
        Case("split18-uneven", split_model(3, opset=18, num_outputs=3), (7, 4, 8, 1), 7),
        Case("split18-zero-last", split_model(4, opset=18, num_outputs=4), (9, 6, 5), 9),
        Case("split18-fewer-listed", split_model(2, opset=18, num_outputs=4), (8, 7, 5), 8),
        Case("split18-omitted", split_model(3, opset=18, num_outputs=3, omitted=(0, 2)), (7, 6), 7),
        Case("split18-negative-axis", split_model(3, opset=18, axis=-1, num_outputs=3), (7, 6), 7),
        Case("split18-zero-size", split_model(2, opset=18, split=[0, 7]), (7, 6), 7),
        Case("split18-uneven-concat", split_then_model("uneven-concat"), (7, 4, 8, 1), 7),
        Case("split18-chained", split_then_model("chained"), (8, 7, 3, 1), 8),
        Case("split18-concat-add", split_then_model("concat-add"), (8, 7, 1), 8),
        Case("sts-ones-read", sequence_model(["at0", "at-1", "len"]), (5, 1), 5),
        Case("sts-ones-keepdims0", sequence_model(["at0", "at-1"], keepdims=0), (5, 1), 5),
        Case("sts-chunk-read", sequence_model(["at0", "at-1", "len"], split=3), (7, 6, 3), 7),
        Case("sts-sizes-read", sequence_model(["at1", "concat"], split=[2, 5]), (7, 6), 7),
        Case("sts-chunk-concat", sequence_model(["concat", "len"], split=2), (7, 4), 7),
        Case("sts-output", sequence_model(["out"], split=3), (7, 6), 7),
        Case("sts24-chunk-read", sequence_model(["at0", "len"], split=2, opset=24), (5, 4), 5),
        Case("sts-sizes-output", sequence_model(["out"], split=[2, 5]), (7, 6), 7),
        Case("sts-erase-concat", erased_sequence_model, (7, 6), 7),
        Case("sts-computed-chunk-read", computed_chunk_model(["at0", "at1"]), (7, 4, 0), 7),
        Case("sts-computed-chunk-len", computed_chunk_model(["at0", "len"]), (7, 4, 0), 7),
    ]


# --- running ------------------------------------------------------------------------------


def feeds_at(length: int) -> dict[str, Any]:
    return {"x": np.arange(2 * length, dtype=np.float32).reshape(2, length)}


def _spec(model: ModelProto, length: int) -> list[Any] | None:
    """What the spec gives (splitops' reference engine), or ``None`` where it rejects it."""
    try:
        return list(splitops.backend.run_model(model, feeds_at(length)))
    except splitops.SplitError:
        return None


def _same(got: Sequence[Any], want: Sequence[Any]) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if isinstance(w, list):
            if not isinstance(g, list | tuple) or not _same(list(g), w):
                return False
            continue
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype or not np.array_equal(g, w):
            return False
    return True


def verdict(wanted: Sequence[list[Any] | None], got: Sequence[list[Any] | RuntimeRunError]) -> str:
    """How a runtime did at every length (see the module's documentation)."""
    found = "exact"
    for want, outcome in zip(wanted, got, strict=True):
        if want is None:
            failed = isinstance(outcome, RuntimeRunError)
            found = found if failed else max(found, "accepts", key=VERDICTS.index)
        elif isinstance(outcome, RuntimeRunError):
            return "error"
        elif not _same(outcome, want):
            found = "wrong"
    return found


@dataclass
class Row:
    """One model (a case's variant) on one runtime: the original's verdict and the lowered
    one's per target (or the SplitError of a target that refuses it)."""

    model: str
    runtime: str
    original: str
    lowered: dict[str, str]
    detail: str


def run_matrix(
    runtimes: Sequence[Runtime],
    *,
    progress: Callable[[str], None] = lambda _: None,
    seconds: float | None = None,
    targets: Sequence[Target] = TARGETS,
    only: Callable[[str], bool] = lambda _: True,
) -> list[Row]:
    """Every case on every runtime, original and lowered for each target; ``seconds``: how
    long a worker may take to answer one run (the workers' own default otherwise);
    ``targets`` and ``only`` (which case names) narrow it."""
    rows: list[Row] = []
    with RuntimeWorkers() if seconds is None else RuntimeWorkers(seconds) as workers:
        for case in [case for case in cases() if only(case.name)]:
            for name, model, lengths in case.models():
                progress(name)
                wanted = [_spec(model, length) for length in lengths]
                feeds = [feeds_at(length) for length in lengths]
                variants: dict[Target, ModelProto | str] = {}
                for target in targets:
                    try:
                        variants[target] = splitops.lower_model(model, target=target)
                    except splitops.SplitError as refused:
                        variants[target] = f"refused: {refused}"
                for runtime in runtimes:
                    got = workers.run_each(runtime, model.SerializeToString(), feeds)
                    original = verdict(wanted, got)
                    detail = next((str(g) for g in got if isinstance(g, RuntimeRunError)), "")
                    lowered: dict[str, str] = {}
                    for made, variant in variants.items():
                        if isinstance(variant, str):
                            lowered[made] = "refused"
                            continue
                        again = workers.run_each(runtime, variant.SerializeToString(), feeds)
                        lowered[made] = verdict(wanted, again)
                    rows.append(Row(name, runtime.name, original, lowered, detail))
    return rows


# --- the report ---------------------------------------------------------------------------


def _counts(verdicts: Sequence[str]) -> str:
    found = Counter(verdicts)
    text = " / ".join(str(found[v]) for v in VERDICTS)
    refused = found["refused"]
    return text + (f" ({refused} refused)" if refused else "")


#: How a runtime runs a model here, and what its own target gives it, where the
#: module's documentation does not say (a runtime's own section of the report).
RUNTIME_NOTES = {
    "tinygrad": "`tinygrad.nn.onnx.OnnxRunner` on tinygrad's default device (CPU, which "
    "compiles with clang; its Python device where no device opens), a new runner for each run "
    "(a runner keeps the lengths of its first run). Its Split cuts "
    "`num_outputs`, and equal parts of an uneven axis, into balanced parts ([3, 2, 2] of 7, "
    "where the spec says [3, 3, 1]); it has no sequence operators. Target `tinygrad`: "
    "sizes computed in the graph, checked by a Reshape (an Expand to [-1] does not fail "
    "on tinygrad); no sequences.",
    "onnx2torch": "`onnx2torch.convert`, its `torch.fx.GraphModule` run on torch. It has "
    "no converter for Split-1, Split-18 (so none for any Split in a model of opset 18 or "
    "later), Slice-1, sequences, If, Loop, Scan or model-local functions, nor for Shape, "
    "Constant or ReduceMin at their newest opsets (24, 24, 18); its Split-13 cuts equal "
    "parts as `length // parts` without an error, and its CumSum sums from the back unless "
    "`reverse=0` is written out. Target `onnx2torch`: a Slice per part for every Split at "
    "opset 18 or later (constant bounds where the sizes are known, checked by a Reshape "
    "against an axis known only at run time), sizes computed in the graph for equal parts, "
    "sizes given at run time checked for none below 0 by a ReduceSum (not ReduceMin); no "
    "sequences; a model with control flow or function calls is refused (a `SplitError` "
    "naming the nodes). What no target can help: a Split-1 (no Split-1 or Slice-1 to cut "
    "it with) and a model of opset 24 that holds a Shape or a Constant (onnx2torch refuses "
    "a model of one such node: tests/onnx/rewrite/test_lower_targets.py).",
}


def report(rows: Sequence[Row], runtimes: Sequence[Runtime], seconds: float) -> str:
    versions = ", ".join(f"{r.name} {r.version()}" for r in runtimes)
    missing = [r.name for r in RUNTIMES if r not in runtimes]
    lines = [
        "# Portability: what each runtime computes, original and lowered",
        "",
        "Written by `python -m benchmarks.portability` (`harness/portability.py` defines the "
        f"cases and the verdicts) in {seconds:.0f} s, with {versions}"
        + (f"; not installed: {', '.join(missing)}" if missing else "")
        + f". {len(rows) // max(len(runtimes), 1)} models: each case with a static axis and "
        "with an axis known only at run time. `python -m benchmarks.portability --exports` "
        "writes the whole document, the real exports' section included.",
        "",
        "A verdict counts models: **exact** / **accepts** (parts where the spec rejects a "
        "length) / **wrong** / **error** (at a length the spec accepts). Each lowered column "
        "is `lower_model(model, target=...)`; a target that refuses a model (a sequence a "
        "runtime without sequences cannot keep) counts it as refused.",
        "",
        "| runtime | original | " + " | ".join(f"lowered `{t}`" for t in TARGETS) + " |",
        "|---" * (2 + len(TARGETS)) + "|",
    ]
    for runtime in runtimes:
        mine = [row for row in rows if row.runtime == runtime.name]
        cells = [_counts([row.original for row in mine])]
        cells += [_counts([row.lowered[target] for row in mine]) for target in TARGETS]
        lines.append(f"| {runtime.name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Each runtime's own target against the original, model by model (a regression would "
        "be an exact original that its lowering does not keep exact):",
        "",
        "| model | " + " | ".join(r.name for r in runtimes) + " |",
        "|---" * (1 + len(runtimes)) + "|",
    ]
    for name in dict.fromkeys(row.model for row in rows):
        cells = []
        for runtime in runtimes:
            row = next(r for r in rows if r.model == name and r.runtime == runtime.name)
            own = row.lowered.get(runtime.target, "-")
            portable = row.lowered["portable"]
            cells.append(f"{row.original} → {own} ({portable})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "A cell reads: the original's verdict → the verdict lowered for the runtime's own "
        "target (`onnx.reference` takes onnxruntime's) (lowered `portable`).",
        "",
    ]
    noted = [runtime for runtime in runtimes if runtime.name in RUNTIME_NOTES]
    if noted:
        lines += ["How these runtimes run a model, and what their own target gives them:", ""]
        lines += [f"- **{runtime.name}**: {RUNTIME_NOTES[runtime.name]}" for runtime in noted]
        lines.append("")
    lines += [
        "Why the original departs, where it does (the runtime's first error):",
        "",
    ]
    for row in rows:
        if row.original != "exact" and row.detail:
            lines.append(f"- {row.model}, {row.runtime}: {row.detail}")
    return "\n".join(lines) + "\n" + NOTES


#: What the matrix does not show by itself, written under it.
NOTES = """
## Notes

- **TVM and the shapes of parts.** TVM's importer follows shape arithmetic on 0-d values
  (`Gather` of a `Shape` at a 0-d index, `Add`, `Div`, `Unsqueeze`) as symbolic expressions,
  and cuts a Slice of such bounds into a part whose shape it knows. From bounds computed as
  `[1]` tensors it cuts parts of unknown shape; a `Shape` of such a part (a part split again)
  or a `Concat` of such parts then fails ("shape_of expects a tensor input", "CodeGenVM
  cannot emit this Relax operator"). So `portable` computes its bounds as 0-d values (the
  cases `split18-chained`, `split18-concat-add` and `split18-uneven-concat`), and leaves out
  the comparison nodes of a check it does not make: TVM fails a `Less` of a symbolic size
  even where nothing reads it.
- **TVM and sizes computed in the graph.** TVM refuses a Split whose sizes are not constant
  ("Dynamic Split not yet supported"), as torch's `tensor_split` exports it (a
  SplitToSequence of sizes computed from `Shape`, a Split once lowering removes the
  sequence). The `tvm` target cuts such parts with Slices, after checks of the sizes
  (one per output, none below 0, their sum the axis length) that fail on TVM where the
  spec does. The case `split13-sizes-from-shape dynamic` still fails on TVM lowered: its
  own arithmetic (a `Div` of a slice of `Shape`) fails TVM's import ("cannot handle
  ShapeExpr inputs"), before any Split.
- **`portable`'s check.** A check for `portable` must load and fail on onnxruntime,
  onnx.reference, OpenVINO, tract and TVM alike, on the 0-d bounds TVM needs. Each
  candidate below was run on a `num_outputs` split of 3 parts of an axis known only at run
  time (its last part checked >= 0; then its parts also joined back by a Concat), at
  lengths 7, 4, 8 (valid) and 1 (rejected). A runtime fails a check where it does not load
  it, loses the parts' shapes, or gives no error at 1. `bad` comes from a `Less`; `C` is
  `ConstantOfShape([x, 0])`, which fails where `x < 0` and allocates nothing:

  | check of a 0-d `v` | runtimes that fail it |
  |---|---|
  | `Reshape(v, [1 + bad])` | TVM (no `Less` of a symbolic size), tract, onnxruntime, OpenVINO |
  | `Expand(v, [1 - 2 bad])` | TVM (the same), tract (does not load) |
  | `Gather([v], bad)` | TVM (the same), tract ("DynSlice"), OpenVINO (no error) |
  | `v + Shape(C)[1]` | OpenVINO (folds `Shape(C)`: no error) |
  | `Expand` or `Tile` for `C` | TVM (no Expand to 0, no Tile of a shape), OpenVINO (the same) |
  | `v + ReduceSum(C)` | tract ("DynSlice"), TVM (parts of unknown shape) |
  | `Concat([v], C)[0]` | TVM (its Concat fails), OpenVINO (no error) |
  | part `p` as `Where(ReduceSum(C) != 0, p, p)` | TVM (allocates nothing for `C`: no error) |
  | the same, `C` as `ConstantOfShape([x])` | none |

  OpenVINO needs the check on the data's path, and TVM and tract need it off the bounds':
  `portable` checks the last part, as the last row does (the `part` check form). Its
  zeros are as many as the last part is long for the check of the last size, and none for
  the others (equal parts that divide the axis, constant sizes that add up to it). A part
  of an element type onnxruntime has no Where for (bool, int16, uint16, uint64, bfloat16)
  stays unchecked, and its report row says so.
- **tract's unchecked sizes.** tract cuts constant sizes from an axis known only at run
  time without checking that they add up (sizes [4, 4] of an axis of 9 give two parts of 4,
  where the spec fails), and loads no check form once a Slice's bounds are added to. The
  `tract` target keeps such a Split as it is, and its report row says so ("explicit sizes
  (unchecked on tract: sizes that do not add up to the axis cut parts)"): the one departure
  from the spec that a target keeps knowingly.
- **OpenVINO's check.** The `openvino` target's Expand check fails every invalid length of
  a `num_outputs` split on an axis known only at run time on OpenVINO 2026.4 (5 or 2 into
  4 parts, all listed or not), and cuts valid ones exactly: run live by
  `tests/onnx/rewrite/test_lower_targets.py`.
- **onnx2tf** is not in the matrix, and no target is made for it: no form has been run
  exactly on it. A Slice whose end comes from `Shape` on a dynamic batch dim, without any
  Split, is the smallest model to try it on:

  ```python
  import numpy as np
  from onnx import TensorProto, helper, numpy_helper

  ints = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)
  graph = helper.make_graph(
      [
          helper.make_node("Shape", ["x"], ["shape"]),
          helper.make_node("Slice", ["shape", "zero", "one"], ["batch"]),
          helper.make_node("Div", ["batch", "two"], ["half"]),
          helper.make_node("Slice", ["x", "half", "batch", "zero"], ["y"]),  # the second half
      ],
      "half_batch",
      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4])],
      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])],
      [ints("zero", [0]), ints("one", [1]), ints("two", [2])],
  )
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
  ```

  Zero-size batch dims there are reported as onnx2tf's own limit. They did not reproduce
  here: onnx2tf 1.29.24 with TensorFlow 2.19 (the newest onnx2tf for Python 3.11; onnx2tf
  2.x needs Python 3.12) converts this model, the same Slice from the start of the batch,
  one to the whole batch, and one slicing a dynamic second axis, and runs each exactly
  (against onnxruntime) at batches of 3 to 6, as Keras and as TFLite resized to the batch.
  onnx2tf 2.x was not run.
"""


def regressions(rows: Sequence[Row]) -> list[str]:
    """Each model a runtime ran exactly that its own target's lowering does not keep exact."""
    targets = {runtime.name: runtime.target for runtime in RUNTIMES}
    return [
        f"{row.model} on {row.runtime}: exact -> {row.lowered[targets[row.runtime]]}"
        for row in rows
        if row.original == "exact" and row.lowered[targets[row.runtime]] != "exact"
    ]


# --- models the lowering and its cost are timed on --------------------------------------------


def blocks_model(count: int) -> ModelProto:
    """``count`` blocks of 8 nodes, in the proportions of an exported transformer: Split-18 by
    num_outputs on the static feature axis (qkv, gate and up), every fourth block one on the
    runtime batch axis instead, and a SplitToSequence read by position (the torchscript
    exporter's chunk)."""
    nodes: list[NodeProto] = []
    current = "x"
    for i in range(count):
        a, b, c, s, p, q, r, o = (f"{n}{i}" for n in "abcspqro")
        axis = 0 if i % 4 == 3 else 1
        nodes += [
            helper.make_node("Split", [current], [a, b, c], axis=1, num_outputs=3),
            helper.make_node("Concat", [c, a, b], [r], axis=1),
            helper.make_node("Split", [r], [p, q], axis=axis, num_outputs=2),
            helper.make_node("Concat", [q, p], [o], axis=axis),
            helper.make_node("SplitToSequence", [o], [s], axis=1),
            helper.make_node("SequenceAt", [s, "zero"], [f"first{i}"]),
            helper.make_node("SequenceAt", [s, "one"], [f"second{i}"]),
            helper.make_node("Add", [o, f"first{i}"], [f"x{i}"]),
        ]
        current = f"x{i}"
    graph = helper.make_graph(
        nodes,
        "blocks",
        [helper.make_tensor_value_info("x", F, ["B", 12])],
        [helper.make_tensor_value_info(current, F, [None, None])],
        [numpy_helper.from_array(np.array(v), n) for n, v in (("zero", 0), ("one", 1))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def cost_chain(count: int = 400, parts: int = 2, relus: int = 8) -> ModelProto:
    """``count`` Split-18 ``num_outputs=parts`` on the runtime axis 1 of ``[B, N]``, each
    followed by a Concat (that gives the axis back) and ``relus`` Relu: every Split cuts the
    same ``N``."""
    nodes: list[NodeProto] = []
    current = "x"
    for i in range(count):
        outputs = [f"p{i}_{k}" for k in range(parts)]
        nodes.append(helper.make_node("Split", [current], outputs, axis=1, num_outputs=parts))
        nodes.append(helper.make_node("Concat", outputs[::-1], [f"c{i}_0"], axis=1))
        for k in range(relus):
            nodes.append(helper.make_node("Relu", [f"c{i}_{k}"], [f"c{i}_{k + 1}"]))
        current = f"c{i}_{relus}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", F, ["B", "N"])],
        [helper.make_tensor_value_info(current, F, ["B", "N"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
