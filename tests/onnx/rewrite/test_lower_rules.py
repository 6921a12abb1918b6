"""lower_model, rule by rule: each rewrite, the sizes computed in a graph at every axis length
(where the spec rejects the split, the lowered graph fails on every runtime), subgraphs and
functions, what stays, and what lowering refuses. Oracles: splitops' planner and run_node,
onnxruntime and onnx.reference, run live."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from harness.portability import blocks_model
from onnx import FunctionProto, ModelProto, NodeProto, TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import splitops
from splitops import Rule, SplitError, lower_model, sequence_sizes, split_sizes
from splitops.onnx.rewrite._lower import lower_model_with_report

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT
LOCAL = "local.functions"


def make(
    nodes: Sequence[NodeProto],
    x: Sequence[int | str | None] | None,
    outputs: Sequence[tuple[str, int, int | None]],
    *,
    opset: int = 18,
    initializers: dict[str, Any] | None = None,
    inputs: Sequence[onnx.ValueInfoProto] = (),
    functions: Sequence[FunctionProto] = (),
) -> ModelProto:
    """A model of ``nodes`` reading ``x`` (float, of those dims); ``outputs`` as (name, element
    type, rank)."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info("x", F, x), *inputs],
        [
            helper.make_tensor_value_info(n, t, None if r is None else [None] * r)
            for n, t, r in outputs
        ],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()],
    )
    imports = [helper.make_opsetid("", opset)]
    if functions:
        imports.append(helper.make_opsetid(LOCAL, 1))
    ir_version = max(helper.find_min_ir_version_for(imports[:1]), 8)
    return helper.make_model(
        graph, opset_imports=imports, functions=list(functions), ir_version=ir_version
    )


def session(model: ModelProto) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def shapes(values: Sequence[Any]) -> list[tuple[int, ...]]:
    return [tuple(np.asarray(v).shape) for v in values]


def ops(model: ModelProto) -> list[str]:
    return [node.op_type for node in model.graph.node]


# --- Sizes computed in the graph, at every length ------------------------------------------


#: The targets whose lowered nodes check lengths at run time, and the words onnx.reference
#: fails with in each one's check form (a Reshape of one element into two; an Expand to -1).
CHECKED_TARGETS = {"onnxruntime": "cannot reshape", "openvino": "negative dimensions"}


@pytest.mark.parametrize("target", CHECKED_TARGETS)
@pytest.mark.parametrize(("count", "listed"), [(1, 1), (2, 2), (3, 3), (4, 4), (4, 2), (7, 3)])
def test_num_outputs_on_a_runtime_axis_gives_the_planners_sizes_at_every_length(
    count: int, listed: int, target: str
) -> None:
    """Split-18 num_outputs on an axis known only at run time: at each length from 0 to 40
    the lowered graph cuts the planner's sizes on onnxruntime and onnx.reference, and where
    the planner rejects the length (a last part below 0), both fail in the check node."""
    outputs = [f"y{i}" for i in range(listed)]
    node = helper.make_node("Split", ["x"], outputs, axis=1, num_outputs=count, name="cut")
    lowered = lower_model(make([node], [2, "N"], [(o, F, 2) for o in outputs]), target=target)
    assert {"Split", "Slice", "Identity"} & set(ops(lowered))
    assert not any(a.name == "num_outputs" for n in lowered.graph.node for a in n.attribute)
    runtime, reference = session(lowered), ReferenceEvaluator(lowered)
    rejected = 0
    for length in range(41):
        x = np.arange(2 * length, dtype=np.float32).reshape(2, length)
        try:
            planned = split_sizes(length, num_outputs=count)
        except SplitError:
            rejected += 1
            with pytest.raises(Exception, match="cut/last_part_must_not_be_negative"):
                runtime.run(None, {"x": x})
            with pytest.raises(ValueError, match=CHECKED_TARGETS[target]):
                reference.run(None, {"x": x})
            continue
        wanted = [(2, size) for size in planned[:listed]]
        parts = splitops.run_node(node, [x], opset=18)
        for got in (runtime.run(None, {"x": x}), reference.run(None, {"x": x})):
            assert shapes(got) == wanted
            for part, spec in zip(got, parts, strict=True):
                np.testing.assert_array_equal(part, spec, strict=True)
    assert rejected == sum(1 for d in range(41) if d and (-(-d // count)) * (count - 1) > d)


@pytest.mark.parametrize(("count", "listed"), [(2, 2), (3, 3), (4, 2), (7, 3)])
def test_portable_num_outputs_on_a_runtime_axis_is_a_slice_per_part_checked_on_a_part(
    count: int, listed: int
) -> None:
    """Portable: a Slice per listed part, which every runtime loads; the planner's sizes at
    every length it accepts, and an error where it rejects one: the last part's check (a
    ConstantOfShape of the last size, which fails where it is negative), where one can
    fire."""
    outputs = [f"y{i}" for i in range(listed)]
    node = helper.make_node("Split", ["x"], outputs, axis=1, num_outputs=count, name="cut")
    lowered, report = lower_model_with_report(make([node], [2, "N"], [(o, F, 2) for o in outputs]))
    assert ops(lowered).count("Slice") == listed
    assert "Split" not in ops(lowered)
    assert "unchecked" not in report[0].detail
    assert ("ConstantOfShape" in ops(lowered)) == (count > 2)
    runtime = session(lowered)
    for length in range(20):
        x = np.arange(2 * length, dtype=np.float32).reshape(2, length)
        try:
            planned = split_sizes(length, num_outputs=count)
        except SplitError:
            with pytest.raises(Exception, match="cut/last_part_must_not_be_negative"):
                runtime.run(None, {"x": x})
            continue
        assert shapes(runtime.run(None, {"x": x})) == [(2, s) for s in planned[:listed]]


def test_portable_leaves_a_part_unchecked_where_onnxruntime_has_no_where_for_its_type() -> None:
    """``portable``'s check takes the last part through a Where, which onnxruntime has no
    kernel for on bool (nor int16, uint16, uint64, bfloat16): a bool Split stays unchecked,
    says so, and loads; a float one is checked."""
    node = helper.make_node("Split", ["b"], ["y0", "y1", "y2"], axis=0, num_outputs=3, name="cut")
    model = make(
        [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BOOL), node],
        ["N"],
        [(f"y{i}", TensorProto.BOOL, 1) for i in range(3)],
    )
    lowered, report = lower_model_with_report(model)
    assert "Where" not in ops(lowered)
    assert report[-1].detail.endswith("(unchecked: an invalid length cuts parts)")
    x = np.array([0, 1, 2, 0, 3], dtype=np.float32)
    got = session(lowered).run(None, {"x": x})
    assert [part.tolist() for part in got] == [[False, True], [True, False], [True]]
    floats = make([node], ["N"], [(f"y{i}", F, 1) for i in range(3)])
    floats.graph.node[0].input[0] = "x"
    assert "Where" in ops(lower_model(floats))


@pytest.mark.parametrize("target", ["onnxruntime", "openvino"])
def test_equal_parts_stay_where_the_runtime_cuts_and_checks_them(target: str) -> None:
    """onnxruntime (1.31 and 1.32) and OpenVINO cut equal parts by output count as the spec
    says, and refuse a count that does not divide the axis: the node stays."""
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, name="eq")
    model = make([node], ["N"], [(o, F, 1) for o in "ab"], opset=13)
    lowered, report = lower_model_with_report(model, target=target)
    assert ops(lowered) == ["Split"]
    assert report[0].outcome == "unchanged"
    runtime = session(lowered)
    assert shapes(runtime.run(None, {"x": np.zeros(4, np.float32)})) == [(2,), (2,)]
    with pytest.raises(Exception, match="split evenly"):
        runtime.run(None, {"x": np.zeros(5, np.float32)})


@pytest.mark.parametrize("target", ["tvm"])
@pytest.mark.parametrize("count", [2, 3, 5])
def test_equal_parts_on_a_runtime_axis_fail_where_the_count_does_not_divide(
    count: int, target: str
) -> None:
    """Split-13 without sizes, for TVM (which does not check them): a Slice per part, the
    count checked in the graph."""
    outputs = [f"y{i}" for i in range(count)]
    node = helper.make_node("Split", ["x"], outputs, axis=0, name="eq")
    model = make([node], ["N"], [(o, F, 1) for o in outputs], opset=13)
    lowered = lower_model(model, target=target)
    runtime, reference = session(lowered), ReferenceEvaluator(lowered)
    for length in range(16):
        x = np.arange(length, dtype=np.float32)
        if length % count:
            with pytest.raises(SplitError):
                split_sizes(length, num_outputs=count, opset=13)
            with pytest.raises(Exception, match="eq/equal_parts_must_divide_the_axis"):
                runtime.run(None, {"x": x})
            with pytest.raises(ValueError, match="negative dimensions"):
                reference.run(None, {"x": x})
            continue
        planned = split_sizes(length, num_outputs=count, opset=13)
        assert shapes(runtime.run(None, {"x": x})) == [(s,) for s in planned]
        assert shapes(reference.run(None, {"x": x})) == [(s,) for s in planned]


def _chunk_readers(positions: Sequence[int]) -> ModelProto:
    """SplitToSequence of ``x`` (length N) by a chunk length given at run time, read at
    ``positions`` and by SequenceLength."""
    nodes = [helper.make_node("SplitToSequence", ["x", "s"], ["seq"], name="chunks")]
    outputs: list[tuple[str, int, int | None]] = []
    initializers = {}
    for position in positions:
        index = f"i{position}".replace("-", "m")
        initializers[index] = np.array(position, np.int64)
        nodes.append(helper.make_node("SequenceAt", ["seq", index], [f"at_{index}"]))
        outputs.append((f"at_{index}", F, 1))
    nodes.append(helper.make_node("SequenceLength", ["seq"], ["n"]))
    outputs.append(("n", TensorProto.INT64, 0))
    chunk = helper.make_tensor_value_info("s", TensorProto.INT32, [])
    return make(nodes, ["N"], outputs, opset=11, initializers=initializers, inputs=[chunk])


def test_chunks_of_a_runtime_length_read_by_position_equal_the_planners_at_every_length() -> None:
    """A chunk length known only at run time and a runtime axis (lowered with checks, for
    OpenVINO): each SequenceAt reads the
    planner's part, a position past the parts fails as SequenceAt does, a chunk length below
    1 fails as the spec says, and SequenceLength counts the parts."""
    positions = [0, 1, 3, -1, -2]
    lowered = lower_model(_chunk_readers(positions), target="openvino")
    assert not [op for op in ops(lowered) if "Sequence" in op]
    runtime, reference = session(lowered), ReferenceEvaluator(lowered)
    for length in range(12):
        x = np.arange(length, dtype=np.float32)
        for chunk in range(5):
            feeds = {"x": x, "s": np.array(chunk, np.int32)}
            try:
                planned = sequence_sizes(length, chunk, opset=11)
            except SplitError:
                with pytest.raises(Exception, match="chunks/chunk_length_must_be_at_least_1"):
                    runtime.run(None, feeds)
                with pytest.raises(ValueError, match="negative dimensions"):
                    reference.run(None, feeds)
                continue
            starts = np.cumsum((0, *planned))
            parts = [x[a:b] for a, b in itertools.pairwise(starts)]
            if not all(-len(parts) <= p < len(parts) for p in positions):
                with pytest.raises(Exception, match="sequence_position_out_of_range"):
                    runtime.run(None, feeds)
                with pytest.raises(ValueError, match="negative dimensions"):
                    reference.run(None, feeds)
                continue
            wanted = [*(parts[p] for p in positions), np.array(len(parts), np.int64)]
            for got in (runtime.run(None, feeds), reference.run(None, feeds)):
                for actual, expected in zip(got, wanted, strict=True):
                    np.testing.assert_array_equal(actual, expected, strict=True)


def test_sizes_of_unknown_number_read_by_position_are_checked_as_the_spec_checks_them() -> None:
    """1-d sizes computed at run time, of a number unknown when lowering (with checks, for
    OpenVINO): each SequenceAt
    reads its part by the sizes' running sum; sizes that do not add up to the axis, or that
    are negative, fail in the check node."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "s"], ["seq"], name="cut"),
        helper.make_node("SequenceAt", ["seq", "i1"], ["second"]),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
    ]
    sizes = helper.make_tensor_value_info("s", TensorProto.INT64, ["K"])
    model = make(
        nodes,
        ["N"],
        [("second", F, 1), ("n", TensorProto.INT64, 0)],
        opset=11,
        initializers={"i1": np.array(1)},
        inputs=[sizes],
    )
    lowered = lower_model(model, target="openvino")
    assert "CumSum" in ops(lowered)
    assert not [op for op in ops(lowered) if "Sequence" in op]
    runtime, reference = session(lowered), ReferenceEvaluator(lowered)
    x = np.arange(6, dtype=np.float32)
    for given in ([2, 3, 1], [0, 6], [6, 0, 0, 0]):
        feeds = {"x": x, "s": np.array(given)}
        wanted = [x[given[0] : given[0] + given[1]], np.array(len(given))]
        for got in (runtime.run(None, feeds), reference.run(None, feeds)):
            for actual, expected in zip(got, wanted, strict=True):
                np.testing.assert_array_equal(actual, expected, strict=True)
    for wrong in ([2, 3], [7, -1]):
        feeds = {"x": x, "s": np.array(wrong)}
        with pytest.raises(SplitError):
            sequence_sizes(6, wrong, opset=11)
        with pytest.raises(Exception, match="cut/sizes_must_be_non_negative_and_add_up"):
            runtime.run(None, feeds)
        with pytest.raises(ValueError, match="negative dimensions"):
            reference.run(None, feeds)
    # One part: SequenceAt(1) is past the end, and Gather says so.
    with pytest.raises(Exception, match="Gather"):
        runtime.run(None, {"x": x, "s": np.array([6])})
    with pytest.raises(IndexError):
        reference.run(None, {"x": x, "s": np.array([6])})


# --- Each rewrite -----------------------------------------------------------------------


def test_uneven_num_outputs_on_a_static_axis_become_the_planners_constant_sizes() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b", "c", "d"], axis=1, num_outputs=4)
    model = make([node], [2, 9], [(n, F, 2) for n in "abcd"])
    lowered = lower_model(model)
    (split,) = lowered.graph.node
    sizes = numpy_helper.to_array(lowered.graph.initializer[0]).tolist()
    assert sizes == list(split_sizes(9, num_outputs=4)) == [3, 3, 3, 0]
    assert list(split.input) == ["x", lowered.graph.initializer[0].name]
    x = np.arange(18, dtype=np.float32).reshape(2, 9)
    assert shapes(session(lowered).run(None, {"x": x})) == [(2, 3), (2, 3), (2, 3), (2, 0)]


def test_fewer_outputs_than_num_outputs_keep_their_sizes_and_one_unused_output_takes_the_rest() -> (
    None
):
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=4, name="s")
    lowered = lower_model(make([node], [8], [("a", F, 1), ("b", F, 1)]))
    (split,) = lowered.graph.node
    assert list(split.output)[:2] == ["a", "b"]
    assert len(split.output) == 3
    assert numpy_helper.to_array(lowered.graph.initializer[0]).tolist() == [2, 2, 4]
    x = np.arange(8, dtype=np.float32)
    got = session(lowered).run(None, {"x": x})
    assert [g.tolist() for g in got] == [[0, 1], [2, 3]]


def test_one_part_becomes_an_identity() -> None:
    node = helper.make_node("Split", ["x"], ["a"], axis=1, num_outputs=1)
    lowered = lower_model(make([node], [2, "N"], [("a", F, 2)]))
    assert ops(lowered) == ["Identity"]
    empty = np.zeros((2, 0), np.float32)
    assert shapes(session(lowered).run(None, {"x": empty})) == [(2, 0)]


def _split1_model() -> ModelProto:
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0)
    model = make(
        [node],
        [5],
        [("a", F, 1), ("b", F, 1)],
        opset=1,
        initializers={"sizes": np.array([2.0, 3.0], np.float32)},
    )
    model.ir_version = 3
    return model


@pytest.mark.parametrize("target", ["portable", "openvino", "tract", "tvm"])
def test_split1_sizes_from_a_constant_second_input_become_the_attribute(target: str) -> None:
    """OpenVINO, tract and TVM run Split-1 (TVM fails Slice-1): every target but
    onnxruntime's keeps it, its sizes as the attribute."""
    lowered = lower_model(_split1_model(), target=target)  # type: ignore[arg-type]
    (split,) = lowered.graph.node
    assert list(split.input) == ["x"]
    assert helper.get_attribute_value(split.attribute[-1]) == [2, 3]
    assert not lowered.graph.initializer
    x = np.arange(5, dtype=np.float32)
    assert [p.tolist() for p in splitops.backend.run_model(lowered, [x])] == [[0, 1], [2, 3, 4]]


def test_split1_of_static_sizes_becomes_a_slice_per_part_that_onnxruntime_runs() -> None:
    """Neither onnxruntime nor onnx.reference has Split-1 (both refuse the original): the
    onnxruntime target cuts its parts with Slice-1, which both run."""
    model = _split1_model()
    with pytest.raises(Exception, match="Split"):
        session(model)
    lowered = lower_model(model, target="onnxruntime")
    assert [n.op_type for n in lowered.graph.node] == ["Slice", "Slice"]
    assert not lowered.graph.initializer
    x = np.arange(5, dtype=np.float32)
    assert [p.tolist() for p in session(lowered).run(None, {"x": x})] == [[0, 1], [2, 3, 4]]
    reference = ReferenceEvaluator(lowered).run(None, {"x": x})
    assert [np.asarray(p).tolist() for p in reference] == [[0, 1], [2, 3, 4]]


def test_split2_equal_parts_on_a_static_axis_become_the_attribute() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0)
    lowered = lower_model(make([node], [6], [(n, F, 1) for n in "abc"], opset=9))
    (split,) = lowered.graph.node
    assert helper.get_attribute_value(split.attribute[-1]) == [2, 2, 2]


def test_a_runtime_split_input_must_give_one_size_per_output() -> None:
    """onnxruntime takes an empty split input for an absent one and cuts equal parts; the
    spec needs one size per output: the lowered graph fails there."""
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")
    sizes = helper.make_tensor_value_info("s", TensorProto.INT64, ["K"])
    model = make([node], [4], [("a", F, 1), ("b", F, 1)], opset=13, inputs=[sizes])
    x = np.arange(4, dtype=np.float32)
    empty = {"x": x, "s": np.zeros(0, np.int64)}
    assert shapes(session(model).run(None, empty)) == [(2,), (2,)]
    with pytest.raises(SplitError, match="at least one size"):
        splitops.run_node(node, [x, empty["s"]], opset=13)
    lowered = lower_model(model)
    with pytest.raises(Exception, match="cut/one_size_per_output"):
        session(lowered).run(None, empty)
    right = {"x": x, "s": np.array([1, 3])}
    assert shapes(session(lowered).run(None, right)) == [(1,), (3,)]


def test_a_kept_scalar_split_becomes_1d_and_loses_keepdims() -> None:
    """onnxruntime applies keepdims=0 to a scalar split, which the spec ignores there."""
    node = helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=0, keepdims=0)
    model = make([node], [5, 2], [], opset=11, initializers={"s": np.array(2)})
    model.graph.output.append(helper.make_tensor_sequence_value_info("seq", F, [None, 2]))
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    with pytest.raises(Exception):  # noqa: B017, PT011 (onnxruntime's own error)
        session(model).run(None, {"x": x})
    lowered, report = lower_model_with_report(model)
    (kept,) = lowered.graph.node
    assert not any(a.name == "keepdims" for a in kept.attribute)
    assert numpy_helper.to_array(lowered.graph.initializer[0]).tolist() == [2, 2, 1]
    assert report[0].outcome == "kept"
    assert "output of main" in report[0].detail
    (parts,) = session(lowered).run(None, {"x": x})
    assert shapes(parts) == [(2, 2), (2, 2), (1, 2)]


def test_a_sequence_read_at_constant_positions_becomes_split_and_squeeze() -> None:
    """The unbind pattern: chunks of 1 with keepdims=0, read by SequenceAt."""
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["seq"], axis=1, keepdims=0),
        helper.make_node("SequenceAt", ["seq", "first"], ["q"]),
        helper.make_node("SequenceAt", ["seq", "last"], ["v"]),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
    ]
    model = make(
        nodes,
        ["B", 3, 4],
        [("q", F, 2), ("v", F, 2), ("n", TensorProto.INT64, 0)],
        opset=13,
        initializers={"first": np.array(0), "last": np.array(-1, np.int32)},
    )
    lowered = lower_model(model)
    # The count is a Constant node: some converters (onnx2tf) drop an output that is an
    # initializer.
    assert sorted(set(ops(lowered))) == ["Constant", "Split", "Squeeze"]
    assert [n.output[0] for n in lowered.graph.node if n.op_type == "Constant"] == ["n"]
    assert [i.name for i in lowered.graph.initializer if i.name in ("first", "last", "n")] == []
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    q, v, n = session(lowered).run(None, {"x": x})
    np.testing.assert_array_equal(q, x[:, 0])
    np.testing.assert_array_equal(v, x[:, 2])
    assert n.shape == ()
    assert n == 3


@pytest.mark.parametrize(("element", "kept"), [(F, True), (TensorProto.INT8, False)])
def test_the_onnxruntime_target_keeps_only_sequences_onnxruntime_has_a_kernel_for(
    element: int, kept: bool
) -> None:
    """Chunks of 1 on an axis known only at run time: onnxruntime runs the float sequence as
    the spec says; it has no SplitToSequence kernel for int8, so that one goes."""
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["seq"], axis=0),
        helper.make_node("SequenceAt", ["seq", "first"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", element, ["N", 2])],
        [helper.make_tensor_value_info("y", element, [None, None])],
        [numpy_helper.from_array(np.array(0), "first")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)
    lowered = lower_model(model, target="onnxruntime")
    assert ("SplitToSequence" in ops(lowered)) == kept
    assert "SplitToSequence" not in ops(lower_model(model))
    x = np.arange(6).reshape(3, 2).astype(helper.tensor_dtype_to_np_dtype(element))
    (y,) = session(lowered).run(None, {"x": x})
    np.testing.assert_array_equal(y, x[:1], strict=True)


def test_a_sequence_nothing_reads_is_removed() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["seq"]),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    lowered = lower_model(make(nodes, ["N"], [("y", F, 1)], opset=11))
    assert ops(lowered) == ["Relu"]


@pytest.mark.parametrize(
    ("split", "value", "fails"),
    [
        (helper.make_tensor_value_info("s", TensorProto.INT64, [2]), [2, 4], False),
        (helper.make_tensor_value_info("s", TensorProto.INT64, [2]), [-4, 10], True),
        (helper.make_tensor_value_info("s", TensorProto.INT64, [2]), [3, 4], True),
        (helper.make_tensor_value_info("s", TensorProto.INT64, []), 4, False),
        (helper.make_tensor_value_info("s", TensorProto.INT64, []), 0, True),
    ],
    ids=["sizes", "negative-size", "wrong-sum", "chunk", "chunk-of-0"],
)
def test_a_sequence_nothing_reads_keeps_the_checks_the_spec_makes_at_run_time(
    split: onnx.ValueInfoProto, value: Any, fails: bool
) -> None:
    # onnx.reference and onnxruntime run a node nobody reads and fail where it fails: the
    # lowered model must fail there too, with no sequence left.
    nodes = [
        helper.make_node("SplitToSequence", ["x", "s"], ["seq"], name="unread"),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    model = make(nodes, [6], [("y", F, 1)], inputs=[split])
    lowered = lower_model(model, target="no-sequences")
    assert "SplitToSequence" not in ops(lowered)
    feeds = {"x": np.arange(6, dtype=np.float32), "s": np.array(value, np.int64)}
    for run in (
        lambda m: session(m).run(None, feeds),
        lambda m: splitops.backend.prepare(m).run(feeds),
    ):
        if fails:
            with pytest.raises(Exception):  # noqa: B017, PT011 (each runtime its own class)
                run(lowered)
            with pytest.raises(Exception):  # noqa: B017, PT011
                run(model)
        else:
            np.testing.assert_array_equal(run(lowered)[0], run(model)[0])


def test_the_parts_lowering_writes_are_bounded_for_the_whole_model() -> None:
    # Each sequence of 3000 parts becomes a Split of 3000 outputs: two of them pass 5000.
    def model(count: int) -> ModelProto:
        nodes = []
        for k in range(count):
            nodes += [
                helper.make_node("SplitToSequence", ["x"], [f"s{k}"], name=f"rows{k}"),
                helper.make_node("ConcatFromSequence", [f"s{k}"], [f"y{k}"], axis=0),
            ]
        return make(nodes, [3000], [(f"y{k}", F, 1) for k in range(count)])

    with splitops.limits(max_model_parts=5000):
        lower_model(model(1))
        with pytest.raises(SplitError, match=r"write 6000 parts in all.*max_model_parts") as caught:
            lower_model(model(2))
    assert caught.value.rule is Rule.LIMIT


def test_an_axis_longer_than_onnx_checks_gets_its_sizes_computed_in_the_graph() -> None:
    # onnx 1.23 reads Split's axis as 32 bits: constant sizes on [2**31] fail its own check.
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    lowered, report = lower_model_with_report(make([node], [2**31], [("a", F, 1), ("b", F, 1)]))
    assert report[0].detail == "num_outputs=2 -> a Slice per part"
    onnx.checker.check_model(lowered, full_check=True)


# --- Where lowering stops -----------------------------------------------------------------


def test_no_sequences_names_the_node_and_what_reads_its_sequence() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["seq"], name="rows"),
        helper.make_node("SequenceInsert", ["seq", "x"], ["more"], name="grow"),
    ]
    model = make(nodes, ["N"], [], opset=11)
    model.graph.output.append(helper.make_tensor_sequence_value_info("more", F, None))
    with pytest.raises(SplitError, match=r"'rows' \(SplitToSequence\).*SequenceInsert 'grow'") as e:
        lower_model(model, target="no-sequences")
    assert e.value.rule is Rule.CONVERSION
    lowered = lower_model(model)
    assert ops(lowered) == ["SplitToSequence", "SequenceInsert"]


def test_an_invalid_node_stops_lowering_as_check_model_reports_it() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b", "c", "d"], num_outputs=4, name="bad")
    model = make([node], [5], [(n, F, 1) for n in "abcd"])
    (diagnostic,) = splitops.check_model(model)
    with pytest.raises(SplitError) as error:
        lower_model(model)
    assert error.value.rule.id == diagnostic.rule
    assert diagnostic.message in str(error.value)
    assert "'bad'" in str(error.value)


def test_the_target_must_be_one_lowering_knows() -> None:
    model = make([helper.make_node("Relu", ["x"], ["y"])], [2], [("y", F, 1)])
    with pytest.raises(SplitError, match="portable, no-sequences"):
        lower_model(model, target="tensorrt")  # type: ignore[arg-type]


def test_the_model_given_is_left_as_it_was() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    model = make([node], [4], [("a", F, 1), ("b", F, 1)])
    before = model.SerializeToString()
    lower_model(model)
    assert model.SerializeToString() == before


# --- Subgraphs and functions ----------------------------------------------------------------


def test_splits_in_if_branches_and_local_functions_are_lowered() -> None:
    halves = helper.make_node("Split", ["v"], ["l", "r"], num_outputs=2, axis=0)
    function = helper.make_function(
        LOCAL,
        "Halves",
        ["v"],
        ["l", "r"],
        [halves],
        [helper.make_opsetid("", 18)],
    )
    branch_split = helper.make_node("Split", ["x"], ["t0", "t1", "t2"], num_outputs=3, axis=0)
    then = helper.make_graph(
        [branch_split, helper.make_node("Concat", ["t2", "t0"], ["picked"], axis=0)],
        "then",
        [],
        [helper.make_tensor_value_info("picked", F, [None])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["same"])],
        "else",
        [],
        [helper.make_tensor_value_info("same", F, [None])],
    )
    nodes = [
        helper.make_node("Halves", ["x"], ["left", "right"], domain=LOCAL),
        helper.make_node("If", ["flag"], ["chosen"], then_branch=then, else_branch=other),
    ]
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [])
    model = make(
        nodes,
        ["N"],
        [("left", F, 1), ("right", F, 1), ("chosen", F, 1)],
        inputs=[flag],
        functions=[function],
    )
    lowered, report = lower_model_with_report(model)
    assert [(r.graph, r.outcome, r.detail) for r in report] == [
        (
            "main/chosen.then_branch",
            "rewritten",
            "num_outputs=3 -> a Slice per part",
        ),
        ("function:local.functions.Halves", "rewritten", "num_outputs=2 -> a Slice per part"),
    ]
    body = lowered.functions[0].node
    assert any(n.op_type == "Constant" for n in body)
    assert not any(a.name == "num_outputs" for n in body for a in n.attribute)
    onnx.checker.check_model(lowered, full_check=True)
    for length in (5, 6, 7):
        x = np.arange(length, dtype=np.float32)
        feeds = {"x": x, "flag": np.array(True)}
        expected = splitops.backend.run_model(model, feeds)
        got = session(lowered).run(None, feeds)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a, b, strict=True)


def test_a_node_whose_attributes_come_from_the_call_is_left_as_it_is() -> None:
    split = helper.make_node("Split", ["v"], ["l", "r"])
    split.attribute.append(helper.make_attribute_ref("num_outputs", onnx.AttributeProto.INT))
    function = helper.make_function(
        LOCAL, "Parts", ["v"], ["l", "r"], [split], [helper.make_opsetid("", 18)], ["num_outputs"]
    )
    call = helper.make_node("Parts", ["x"], ["a", "b"], domain=LOCAL, num_outputs=2)
    model = make([call], [4], [("a", F, 1), ("b", F, 1)], functions=[function])
    lowered, report = lower_model_with_report(model)
    assert [r.outcome for r in report] == ["unchanged"]
    assert lowered.functions[0].node[0] == function.node[0]


# --- Time ------------------------------------------------------------------------------------


def test_lowering_work_grows_linearly_with_the_model() -> None:
    """Four times the nodes: four times the nodes added, sizes shared per axis length (its
    time is measured by ``python -m benchmarks.portability``, not here)."""
    small, large = lower_model(blocks_model(125)), lower_model(blocks_model(500))
    assert len(blocks_model(500).graph.node) == 4000
    assert not [op for op in ops(large) if "Sequence" in op]
    added = [len(m.graph.node) - n for m, n in ((small, 1000), (large, 4000))]
    assert added[1] <= 4 * added[0] + 16
