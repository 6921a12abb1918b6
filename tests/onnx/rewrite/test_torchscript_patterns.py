"""The sequence patterns of torch's TorchScript exporter (torch 2.4 to 2.9 write them alike),
lowered for every target and run live on the runtimes installed here, against torch's own
outputs (a live export) or the spec's answer (splitops' engine on the original):

- ``unbind``: SplitToSequence of the scalar split 1 with ``keepdims=0``, the default split,
  whose parts lose the axis (torch's meaning, onnxruntime's reading);
- a position of shape [1] (``x.split(2, 1)[1]``), which onnxruntime reads as a position;
- a Loop over a split: ``SequenceAt(S, i)`` at the Loop's iteration number, the trip count
  ``SequenceLength(S)``;
- ConcatFromSequence of every part of a split whose number of parts is known only at run
  time: the input itself, moved.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.rewrite import TARGETS, lower_model_with_report
from splitops.onnx.rewrite._lower import FORMS
from splitops.onnx.run import RuntimeRunError, RuntimeWorkers, runtime_named

try:
    import torch
except ImportError:  # the tests that export with torch skip
    torch = None

F = TensorProto.FLOAT
#: The runtimes CI installs: onnx.reference and onnxruntime always, OpenVINO and tract.
HERE = [
    name
    for name in ("onnxruntime", "onnx.reference", "openvino", "tract")
    if runtime_named(name).is_installed()
]
#: What each runtime runs as its own target (onnx.reference runs onnxruntime's).
OWN = {"onnxruntime": "onnxruntime", "onnx.reference": "onnxruntime", "openvino": "openvino"}
OWN["tract"] = "tract"


def runs_on(target: str) -> list[str]:
    """Where a target's lowered model must give the spec's answer: onnxruntime (every
    lowered model computes the spec's answer there), and the runtimes the target is for,
    where installed: all of them for ``portable`` and ``no-sequences``."""
    if target in ("portable", "no-sequences"):
        return HERE
    return [
        "onnxruntime",
        *(name for name in HERE if name != "onnxruntime" and OWN[name] == target),
    ]


@pytest.fixture(scope="module")
def workers() -> Iterator[RuntimeWorkers]:
    with RuntimeWorkers(GUARD_SECONDS) as started:
        yield started


def _model(nodes: list[onnx.NodeProto], dims: list[Any], outputs: list[str], **kw: Any) -> Any:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, dims)],
        [helper.make_tensor_value_info(name, F, None) for name in outputs],
        initializer=kw.get("initializer", []),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", kw.get("opset", 13))])


def _const(name: str, value: Any) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.int64), name)
    )


def _unbind(keepdims: int = 0) -> list[onnx.NodeProto]:
    """torch's ``x.unbind(1)``: SplitToSequence of a Constant scalar 1, keepdims=0."""
    return [
        _const("one", 1),
        helper.make_node("SplitToSequence", ["x", "one"], ["s"], axis=1, keepdims=keepdims),
    ]


def _loop_over(sequence_nodes: list[onnx.NodeProto], part_rank: int) -> list[onnx.NodeProto]:
    """``acc = 0; for t in s: acc = acc * 0.5 + t``: a Loop whose body reads ``SequenceAt(s,
    i)`` at its iteration number, for ``SequenceLength(s)`` trips."""
    body = helper.make_graph(
        [
            helper.make_node("SequenceAt", ["s", "i"], ["t"]),
            _const_float("half", 0.5),
            helper.make_node("Mul", ["acc", "half"], ["scaled"]),
            helper.make_node("Add", ["scaled", "t"], ["acc_out"]),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", F, None),
        ],
    )
    start = helper.make_node("ConstantOfShape", ["first_shape"], ["zeros"])
    return [
        *sequence_nodes,
        helper.make_node("SequenceLength", ["s"], ["n"]),
        _const("zero", 0),
        helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
        helper.make_node("Shape", ["first"], ["first_shape"]),
        start,
        helper.make_node("Constant", [], ["true"], value_int=1),
        helper.make_node("Cast", ["true"], ["go"], to=TensorProto.BOOL),
        helper.make_node("Loop", ["n", "go", "zeros"], ["y"], body=body),
    ]


def _const_float(name: str, value: float) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.float32), name)
    )


def _spec(model: ModelProto, feeds: Any) -> list[Any]:
    """The spec's answer: splitops' engine on the original. The models here declare their
    outputs without shapes, which onnx.checker objects to (the engine warns, and runs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", splitops.ModelCheckWarning)
        return list(splitops.backend.run_model(model, feeds))


def _inputs(*shape: int) -> dict[str, np.ndarray[Any, Any]]:
    return {"x": np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7}


def _assert_runs_as(
    workers: RuntimeWorkers, runtime: str, model: ModelProto, feeds: dict[str, Any], want: Any
) -> None:
    got = workers.run(runtime_named(runtime), model.SerializeToString(), feeds)
    assert len(got) == len(want)
    for value, wanted in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(value), wanted, rtol=1e-5, atol=1e-6)


# --- unbind -------------------------------------------------------------------------------


def test_unbinds_scalar_1_drops_the_axis_in_every_layer() -> None:
    model = _model(
        [*_unbind(), _const("at", [2]), helper.make_node("SequenceAt", ["s", "at"], ["y"])],
        ["N", "M", 5],
        ["y"],
    )
    x = _inputs(4, 3, 5)["x"]
    (y,) = _spec(model, [x])
    np.testing.assert_array_equal(y, x[:, 2])
    node = model.graph.node[1]
    parts = splitops.run_node(node, [x, np.array(1)], opset=13)[0]
    assert [p.shape for p in parts] == [(4, 5)] * 3
    inferred = splitops.infer_shapes(model)
    sequence = next(v for v in inferred.graph.value_info if v.name == "s")
    assert len(sequence.type.sequence_type.elem_type.tensor_type.shape.dim) == 2
    rules = sorted((d.rule, d.severity) for d in splitops.check_model(model))
    assert rules == [("default-split", "warning"), ("position-shape", "warning")]


@pytest.mark.parametrize("dims", [[4, 3, 5], ["N", "M", 5]], ids=["static", "dynamic"])
@pytest.mark.parametrize("reader", ["at", "stack", "loop"])
@pytest.mark.parametrize("target", TARGETS)
def test_an_unbind_lowered_for_any_target_drops_the_axis_on_every_runtime(
    dims: list[Any], reader: str, target: str, workers: RuntimeWorkers
) -> None:
    """The parts of an unbind, read at a position of shape [1], stacked back on another axis,
    or read in a Loop: every target's lowering gives the spec's answer (the axis dropped)
    on onnxruntime, onnx.reference, OpenVINO and tract, where the target keeps the model and
    the runtime runs what it left (tract has no Loop)."""
    if reader == "at":
        nodes = [*_unbind(), _const("at", [1]), helper.make_node("SequenceAt", ["s", "at"], ["y"])]
    elif reader == "stack":
        nodes = [
            *_unbind(),
            helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=2, new_axis=1),
        ]
    else:
        nodes = _loop_over(_unbind(), 2)
    model = _model(nodes, dims, ["y"])
    feeds = _inputs(4, 3, 5)
    want = _spec(model, feeds)
    assert want[0].ndim == (3 if reader == "stack" else 2)
    if reader == "loop" and not FORMS[target].runs_loops and dims[1] == "M":  # type: ignore[index]
        # tract, TVM, tinygrad and onnx2torch run no Loop, and one of a run-time count
        # stays a Loop: their targets refuse it, naming it and why each form that removes a
        # Loop does not apply.
        with pytest.raises(splitops.SplitError, match="runs no Loop") as refused:
            lower_model_with_report(model, target=target)  # type: ignore[arg-type]
        said = str(refused.value)
        assert "loop-of-inserts-unrolled: its trip count is known only at run time" in said
        assert "list-recomputed: " in said
        return
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    assert next(row for row in report if row.op == "SplitToSequence").squeezed
    looped = any(node.op_type == "Loop" for node in lowered.graph.node)
    # Unrolled where the target's runtime runs no Loop and the axis is static.
    assert looped is (reader == "loop" and not (FORMS[target].unrolls and dims[1] == 3))
    for runtime in runs_on(target):
        if runtime == "tract" and looped:
            continue  # tract has no Loop (portable keeps one of a run-time count)
        _assert_runs_as(workers, runtime, lowered, feeds, want)


def test_declared_shapes_that_keep_the_unbound_axis_are_corrected() -> None:
    """torch declares what follows an unbind from onnx's inference, which keeps the axis:
    the lowering corrects those declarations (onnx's full check passes) and says so."""
    model = _model(
        [*_unbind(), helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=2, new_axis=1)],
        ["N", 3, 5],
        ["y"],
    )
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", F, ["N", 1, 5, 3]))
    lowered, report = lower_model_with_report(model, target="portable")
    onnx.checker.check_model(lowered, full_check=True)
    (output,) = lowered.graph.output
    assert len(output.type.tensor_type.shape.dim) == 3
    assert "the declared shapes of y corrected" in report[0].detail


# --- a Loop over a split --------------------------------------------------------------------


@pytest.mark.parametrize("split", [2, [2, 2, 2], None], ids=["chunks", "sizes", "ones"])
@pytest.mark.parametrize("target", ["portable", "onnxruntime", "openvino", "no-sequences"])
def test_a_loop_over_a_split_reads_slices_of_its_input(
    split: Any, target: str, workers: RuntimeWorkers
) -> None:
    """``for t in x.split(...)``: the body's SequenceAt at the iteration number becomes a
    Slice of the input in the body, the trip count the number of parts computed in the
    graph; no sequence is left (but where onnxruntime runs it)."""
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, name="cut")]
    if split is not None:
        nodes.insert(0, _const("split", split))
        nodes[1].input.append("split")
    model = _model(_loop_over(nodes, 3), [2, "M", 3], ["y"])
    feeds = _inputs(2, 6, 3)
    want = _spec(model, feeds)
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    ops = {node.op_type for node in lowered.graph.node}
    if target != "onnxruntime":
        assert "SplitToSequence" not in ops, report
        assert "in the Loop's body" in report[0].detail
    for runtime in runs_on(target):
        if runtime != "tract":  # tract has no Loop
            _assert_runs_as(workers, runtime, lowered, feeds, want)


def test_a_loop_running_past_the_parts_fails_as_sequenceat_does(workers: RuntimeWorkers) -> None:
    """A Loop whose trip count is not the sequence's length reads past the last part: the
    lowered body fails there, as SequenceAt does."""
    nodes = _loop_over(
        [_const("two", 2), helper.make_node("SplitToSequence", ["x", "two"], ["s"], axis=1)], 3
    )
    loop = nodes[-1]
    loop.input[0] = "trips"
    model = _model([*nodes, _const("trips", 9)], [2, "M", 3], ["y"])
    feeds = _inputs(2, 6, 3)
    with pytest.raises(splitops.OtherOperatorError):
        _spec(model, feeds)
    lowered = splitops.lower_model(model, target="portable")
    with pytest.raises(RuntimeRunError):
        workers.run(runtime_named("onnxruntime"), lowered.SerializeToString(), feeds)


# --- ConcatFromSequence of every part -------------------------------------------------------

#: (split, keepdims, axis, new_axis) of SplitToSequence along axis 1 of [2, 6, 3] read by one
#: ConcatFromSequence, whose number of parts is known only at run time.
JOINS = [
    (2, 1, 1, 0),  # chunks back along their axis: the input
    (2, 1, 2, 0),  # chunks along another axis
    (2, 1, 0, 1),  # chunks stacked
    (None, 0, 2, 1),  # unbind stacked on another axis
    (None, 0, 1, 1),  # unbind stacked back: the input
    (None, 0, -1, 0),  # unbind concatenated
    (1, 0, 0, 0),  # the scalar 1 with keepdims=0: unbind
    ([2, 4], 1, 1, 0),  # sizes given, back along their axis
]


@pytest.mark.parametrize(("split", "keepdims", "axis", "new_axis"), JOINS, ids=str)
@pytest.mark.parametrize("target", ["portable", "openvino", "no-sequences"])
def test_concat_of_every_part_is_the_input_moved(
    split: Any, keepdims: int, axis: int, new_axis: int, target: str, workers: RuntimeWorkers
) -> None:
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=keepdims)]
    if split is not None:
        nodes.insert(0, _const("split", split))
        nodes[1].input.append("split")
    nodes.append(helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis))
    model = _model(nodes, [2, "M", 3], ["y"])
    feeds = _inputs(2, 6, 3)
    want = _spec(model, feeds)
    lowered = splitops.lower_model(model, target=target)  # type: ignore[arg-type]
    assert not {"SplitToSequence", "ConcatFromSequence"} & {n.op_type for n in lowered.graph.node}
    for runtime in runs_on(target):
        if runtime == "tract" and split == 2 and axis != 1:
            continue  # tract fails a Reshape of computed dims: so does the Split-free control
        _assert_runs_as(workers, runtime, lowered, feeds, want)
    # An empty axis: an empty sequence, whose ConcatFromSequence fails (or sizes that do not
    # add up to it); so does the lowered model.
    empty = _inputs(2, 0, 3)
    with pytest.raises((splitops.OtherOperatorError, splitops.SplitError)):
        _spec(model, empty)
    with pytest.raises(RuntimeRunError):
        workers.run(runtime_named("onnxruntime"), lowered.SerializeToString(), empty)


def test_chunks_that_do_not_divide_the_axis_fail_to_join_along_another(
    workers: RuntimeWorkers,
) -> None:
    nodes = [
        _const("split", 4),
        helper.make_node("SplitToSequence", ["x", "split"], ["s"], axis=1),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=2),
    ]
    model = _model(nodes, [2, "M", 3], ["y"])
    uneven = _inputs(2, 6, 3)
    with pytest.raises(splitops.OtherOperatorError):
        _spec(model, uneven)
    lowered = splitops.lower_model(model, target="portable")
    with pytest.raises(RuntimeRunError):
        workers.run(runtime_named("onnxruntime"), lowered.SerializeToString(), uneven)
    even = _inputs(2, 8, 3)
    _assert_runs_as(workers, "onnxruntime", lowered, even, _spec(model, even))


# --- torch itself -----------------------------------------------------------------------------


class Unbound(torch.nn.Module if torch is not None else object):  # type: ignore[misc]
    """``x.unbind(1)`` read in a loop and stacked back on another axis, as users script it."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        total = torch.zeros_like(x[:, 0])
        for part in x.unbind(1):
            total = total * 0.5 + part
        return torch.stack(list(x.unbind(1)), 2), total


def test_torchs_own_unbind_exports_give_torchs_answer_once_lowered(
    tmp_path: Any, workers: RuntimeWorkers
) -> None:
    """A scripted module exported by torch's TorchScript exporter (dynamic axes), evaluated
    at other sizes than exported: each own target gives torch's outputs."""
    if torch is None:
        pytest.skip("torch is not installed here: pip install torch")
    path = tmp_path / "unbound.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            torch.jit.script(Unbound()),
            (torch.zeros(2, 3, 4),),
            str(path),
            dynamo=False,
            opset_version=13,
            input_names=["x"],
            dynamic_axes={"x": {0: "b", 1: "n"}},
        )
    model = onnx.load(str(path))
    assert any(node.op_type == "SplitToSequence" for node in model.graph.node)
    x = torch.arange(60, dtype=torch.float32).reshape(3, 5, 4) / 7
    want = [t.numpy() for t in Unbound()(x)]
    feeds = {"x": x.numpy()}
    for runtime in HERE:
        if runtime == "tract":
            continue  # the export holds a Loop, which tract has no
        lowered = splitops.lower_model(model, target=OWN[runtime])
        _assert_runs_as(workers, runtime, lowered, feeds, want)


@pytest.mark.parametrize("opset", [11, 13])
def test_a_0d_split_given_at_run_time_with_keepdims0_is_kept_exact_from_opset_13(
    opset: int, workers: RuntimeWorkers
) -> None:
    """The split of a kept sequence given at run time, with keepdims=0: from opset 13 an If
    of the default split (where it is 1, dropping the axis) and of the split; before it (If
    takes no sequence there), keepdims is dropped and the report says the parts keep the
    axis where the split is 1."""
    node = helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=1, keepdims=0)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", F, [2, 3]),
            helper.make_tensor_value_info("s", TensorProto.INT64, []),
        ],
        [helper.make_tensor_sequence_value_info("seq", F, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    lowered, report = lower_model_with_report(model, target="portable")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    if opset < 13:
        assert "a 0-d split given at run time as 1 keeps the axis" in report[0].detail
        return
    assert "an If of the default split" in report[0].detail
    for split in (1, 2):
        feeds = {"x": x, "s": np.array(split)}
        want = [p.shape for p in _spec(model, feeds)[0]]
        assert want == ([(2,)] * 3 if split == 1 else [(2, 2), (2, 1)])
        for runtime in ("onnxruntime", "onnx.reference"):
            got = workers.run(runtime_named(runtime), lowered.SerializeToString(), feeds)[0]
            assert [np.asarray(p).shape for p in got] == want


# --- a list of a run-time length, read by position -----------------------------------------


def _tensor_split_by(tails: int) -> ModelProto:
    """torch's ``torch.tensor_split(x, idx, dim=1)``, ``idx`` an input: a Loop of
    ``len(idx)`` trips appending ``x[:, c[i]:c[i + 1]]`` (``c`` is ``[0, *idx]``), then
    ``x[:, c[-1]:]`` appended after it, and ``tails - 1`` more values (twice the input);
    read by SequenceAt at positions 0 and -1, and by a Loop over SequenceLength that sums
    ``acc * 0.5 + sum(part)`` of the parts, which have unequal lengths."""
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["c", "i"], ["start"], axis=0),
            _const("step", 1),
            helper.make_node("Add", ["i", "step"], ["next"]),
            helper.make_node("Gather", ["c", "next"], ["end"], axis=0),
            helper.make_node("Slice", ["x", "start", "end", "axis_1"], ["part"]),
            helper.make_node("SequenceInsert", ["list_in", "part"], ["list_out"]),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "build",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, [1]),  # as torch declares
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("list_in", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("list_out", F, None),
        ],
    )
    reader = helper.make_graph(
        [
            helper.make_node("SequenceAt", ["parts", "j"], ["t"]),
            helper.make_node("ReduceSum", ["t"], ["total"], keepdims=0),
            _const_float("half", 0.5),
            helper.make_node("Mul", ["acc", "half"], ["scaled"]),
            helper.make_node("Add", ["scaled", "total"], ["acc_out"]),
            helper.make_node("Identity", ["go_in"], ["go_out"]),
        ],
        "read",
        [
            helper.make_tensor_value_info("j", TensorProto.INT64, []),
            helper.make_tensor_value_info("go_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", F, []),
        ],
        [
            helper.make_tensor_value_info("go_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", F, []),
        ],
    )
    appended = [
        helper.make_node("Gather", ["c", "minus_one"], ["last_start"], axis=0),
        helper.make_node("Shape", ["x"], ["dims"]),
        helper.make_node("Gather", ["dims", "axis_1"], ["length"], axis=0),
        helper.make_node("Slice", ["x", "last_start", "length", "axis_1"], ["tail_0"]),
        helper.make_node("SequenceInsert", ["built", "tail_0"], ["list_0"]),
    ]
    for k in range(1, tails):
        appended += [
            helper.make_node("Add", ["x", "x"], [f"tail_{k}"]),
            helper.make_node("SequenceInsert", [f"list_{k - 1}", f"tail_{k}"], [f"list_{k}"]),
        ]
    appended[-1].output[0] = "parts"
    nodes = [
        _const("zero_1d", [0]),
        _const("axis_1", [1]),
        _const("minus_one", [-1]),
        helper.make_node("Concat", ["zero_1d", "idx"], ["c"], axis=0),
        helper.make_node("Shape", ["idx"], ["trips"]),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
        helper.make_node("Constant", [], ["true"],
                         value=helper.make_tensor("t", TensorProto.BOOL, [], [True])),
        helper.make_node("Loop", ["trips", "true", "empty"], ["built"], body=body),
        *appended,
        _const("first_at", 0),
        _const("last_at", -1),
        helper.make_node("SequenceAt", ["parts", "first_at"], ["first"]),
        helper.make_node("SequenceAt", ["parts", "last_at"], ["last"]),
        helper.make_node("SequenceLength", ["parts"], ["count"]),
        _const_float("zero_f", 0.0),
        helper.make_node("Loop", ["count", "true", "zero_f"], ["summed"], body=reader),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", F, [2, "M", 3]),
            helper.make_tensor_value_info("idx", TensorProto.INT64, ["cuts"]),
        ],
        [
            helper.make_tensor_value_info("first", F, None),
            helper.make_tensor_value_info("last", F, None),
            helper.make_tensor_value_info("count", TensorProto.INT64, []),
            helper.make_tensor_value_info("summed", F, []),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("tails", [1, 2])
@pytest.mark.parametrize("target", ["no-sequences", "openvino", "portable"])
def test_a_list_of_a_run_time_length_is_computed_again_where_it_is_read(
    tails: int, target: str, workers: RuntimeWorkers
) -> None:
    """torch's ``tensor_split`` by a tensor of indices, its parts read by position: no
    sequence is left, and every runtime gives the spec's answer at every number of cuts."""
    model = _tensor_split_by(tails)
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    assert not {n.op_type for n in lowered.graph.node} & {"SequenceEmpty", "SequenceAt"}
    assert any("computed again where it is read" in row.detail for row in report)
    x = np.arange(2 * 7 * 3, dtype=np.float32).reshape(2, 7, 3)
    for idx in ([2, 5], [3], [1, 1, 6], [6, 2]):  # a repeated cut, and one going back
        feeds = {"x": x, "idx": np.array(idx, np.int64)}
        want = _spec(model, feeds)
        assert int(want[2]) == len(idx) + tails
        for runtime in runs_on(target):
            if runtime != "tract":  # tract has no Loop
                _assert_runs_as(workers, runtime, lowered, feeds, want)


def test_a_position_past_a_list_computed_again_fails_as_sequenceat_does(
    workers: RuntimeWorkers,
) -> None:
    model = _tensor_split_by(1)
    (position,) = [n for n in model.graph.node if list(n.output) == ["last_at"]]
    position.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(3, np.int64), "last_at"))
    feeds = {"x": np.ones((2, 7, 3), np.float32), "idx": np.array([2, 5], np.int64)}
    with pytest.raises(splitops.OtherOperatorError):
        _spec(model, feeds)  # three parts: position 3 lies past them
    lowered = splitops.lower_model(model, target="no-sequences")
    with pytest.raises(RuntimeRunError):
        workers.run(runtime_named("onnxruntime"), lowered.SerializeToString(), feeds)
    feeds["idx"] = np.array([2, 4, 5], np.int64)  # four parts: it reads the last
    want = _spec(model, feeds)
    _assert_runs_as(workers, "onnxruntime", lowered, feeds, want)
