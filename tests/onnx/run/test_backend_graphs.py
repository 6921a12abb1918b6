"""Split nodes inside If, Loop and Scan bodies and model-local functions run on splitops.

Proof by two means that cannot be faked by onnx.reference: op classes derived from splitops'
own count every node they run, and nodes that onnx.reference gets wrong (Split-1, which it
lacks; equal parts that do not divide, which it cuts unevenly without a word) give the spec's
answer. Expected values come from numpy slicing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, FunctionProto, GraphProto, ModelProto, TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from splitops import ModelInputError, SplitError, SplitTypeError, backend, reference_ops
from splitops.onnx.run import _reference as onnx_reference

FLOAT = TensorProto.FLOAT
X = np.arange(12, dtype=np.float32).reshape(2, 6)
LOCAL = "local.functions"


def value(name: str, element: int = FLOAT, rank: int | None = 2) -> onnx.ValueInfoProto:
    """A value of known rank and unknown dims (the checker wants a shape)."""
    return helper.make_tensor_value_info(name, element, None if rank is None else [None] * rank)


def model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[str],
    *,
    opset: int = 18,
    functions: Sequence[FunctionProto] = (),
    rank: int = 2,
) -> ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [value(o, rank=rank) for o in outputs])
    opsets = [helper.make_opsetid("", opset)]
    if functions:
        opsets.append(helper.make_opsetid(LOCAL, 1))
    # Local functions need IR version 8.
    ir_version = 3 if opset < 5 else max(helper.find_min_ir_version_for(opsets[:1]), 8)
    built = helper.make_model(
        graph, opset_imports=opsets, functions=list(functions), ir_version=ir_version
    )
    onnx.checker.check_model(built)
    return built


def branch(nodes: Sequence[onnx.NodeProto], outputs: Sequence[str], name: str) -> GraphProto:
    return helper.make_graph(nodes, name, [], [value(o) for o in outputs])


def counting_ops() -> tuple[list[type[OpRun]], Counter[str]]:
    """Op classes derived from splitops' own that count the nodes they run.

    The evaluator keys op classes by class name, so each subclass is named as its op.
    """
    calls: Counter[str] = Counter()
    split_base, sequence_base, position_reader = reference_ops()

    class Split(split_base):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            calls["Split"] += 1
            return super().run(*args, **kwargs)

    class SplitToSequence(sequence_base):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            calls["SplitToSequence"] += 1
            return super().run(*args, **kwargs)

    return [Split, SplitToSequence, position_reader], calls


def run_counting(built: ModelProto, feeds: dict[str, Any]) -> tuple[list[Any], Counter[str]]:
    ops, calls = counting_ops()
    return backend.SplitopsEvaluator(built, new_ops=ops).run(None, feeds), calls


def assert_parts(actual: Sequence[Any], expected: Sequence[np.ndarray[Any, Any]]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(a, e, strict=True)


# Models with Split-18 in each kind of body: x (2, 6) cut along axis 1 into 3 parts of 2.


def if_model(split: onnx.NodeProto, *extra: onnx.ValueInfoProto) -> ModelProto:
    then = branch([split], ["a", "b", "c"], "then")
    other = branch([helper.make_node("Identity", ["x"], [o]) for o in "abc"], ["a", "b", "c"], "e")
    node = helper.make_node("If", ["cond"], ["p", "q", "r"], then_branch=then, else_branch=other)
    inputs = [value("cond", TensorProto.BOOL, 0), value("x"), *extra]
    return model([node], inputs, ["p", "q", "r"])


def loop_model(split: onnx.NodeProto) -> ModelProto:
    """A Loop whose body cuts the 1-d x; each part becomes a scan output (one row per trip).

    The condition is given: onnx.reference runs no iteration when it is left out.
    """
    body = helper.make_graph(
        [split, helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [value("i", TensorProto.INT64, 0), value("cond_in", TensorProto.BOOL, 0)],
        [value("cond_out", TensorProto.BOOL, 0), *(value(o, rank=1) for o in "abc")],
    )
    node = helper.make_node("Loop", ["trips", "cond"], ["p", "q", "r"], body=body)
    inputs = [value("trips", TensorProto.INT64, 0), value("cond", TensorProto.BOOL, 0)]
    return model([node], [*inputs, value("x", rank=1)], ["p", "q", "r"])


def scan_model(split: onnx.NodeProto) -> ModelProto:
    """Scan over the rows of x: the body sees rows of shape (6,) and cuts them along axis 0."""
    body = helper.make_graph(
        [split], "body", [value("x", rank=1)], [value(o, rank=1) for o in "abc"]
    )
    node = helper.make_node("Scan", ["rows"], ["p", "q", "r"], body=body, num_scan_inputs=1)
    return model([node], [value("rows")], ["p", "q", "r"])


def function_model(split: onnx.NodeProto, **call_attributes: Any) -> ModelProto:
    attributes = [a.ref_attr_name for a in split.attribute if a.ref_attr_name]
    function = helper.make_function(
        LOCAL, "thirds", ["x"], ["a", "b", "c"], [split], [helper.make_opsetid("", 18)], attributes
    )
    call = helper.make_node("thirds", ["x"], ["p", "q", "r"], domain=LOCAL, **call_attributes)
    return model([call], [value("x")], ["p", "q", "r"], functions=[function])


def thirds(axis: int = 1) -> onnx.NodeProto:
    return helper.make_node("Split", ["x"], ["a", "b", "c"], axis=axis, num_outputs=3, name="cut")


THIRDS = [X[:, 0:2], X[:, 2:4], X[:, 4:6]]


def test_split_in_if_branch_runs_on_splitops() -> None:
    outputs, calls = run_counting(if_model(thirds()), {"cond": np.array(True), "x": X})
    assert_parts(outputs, THIRDS)
    assert calls == {"Split": 1}


def test_split_in_loop_body_runs_on_splitops_every_iteration() -> None:
    row = X[0]
    feeds = {"trips": np.array(3), "cond": np.array(True), "x": row}
    outputs, calls = run_counting(loop_model(thirds(axis=0)), feeds)
    assert_parts(outputs, [np.stack([row[i : i + 2]] * 3) for i in (0, 2, 4)])
    assert calls == {"Split": 3}


def test_a_loop_body_node_is_read_by_its_rules_once_not_every_iteration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: Counter[str] = Counter()
    read_node = onnx_reference.read_node

    def counting_read_node(node: onnx.NodeProto, opset: int) -> Any:
        reads[node.name] += 1
        return read_node(node, opset)

    monkeypatch.setattr(onnx_reference, "read_node", counting_read_node)
    row = X[0]
    feeds = {"trips": np.array(5), "cond": np.array(True), "x": row}
    outputs, calls = run_counting(loop_model(thirds(axis=0)), feeds)
    assert_parts(outputs, [np.stack([row[i : i + 2]] * 5) for i in (0, 2, 4)])
    assert calls == {"Split": 5}
    assert reads == {"cut": 1}


def test_split_in_scan_body_runs_on_splitops_for_every_row() -> None:
    outputs, calls = run_counting(scan_model(thirds(axis=0)), {"rows": X})
    assert_parts(outputs, THIRDS)
    assert calls == {"Split": 2}


def test_split_in_local_function_runs_on_splitops() -> None:
    outputs, calls = run_counting(function_model(thirds()), {"x": X})
    assert_parts(outputs, THIRDS)
    assert calls == {"Split": 1}


def test_split_in_if_inside_a_function_with_linked_attribute() -> None:
    """A ref_attr_name two levels down (function -> If branch -> Split) gets the call's value."""
    split = thirds()
    del split.attribute[:]
    split.attribute.extend([_ref("axis", "cut_axis", AttributeProto.INT), _int("num_outputs", 3)])
    inner = branch([split], ["a", "b", "c"], "then")
    node = helper.make_node(
        "If", ["cond"], ["a2", "b2", "c2"], then_branch=inner, else_branch=inner
    )
    body = [
        helper.make_node("Constant", [], ["cond"], value_int=1),
        helper.make_node("Cast", ["cond"], ["cond_b"], to=TensorProto.BOOL),
        node,
    ]
    body[2].input[0] = "cond_b"
    function = helper.make_function(
        LOCAL,
        "thirds",
        ["x"],
        ["a2", "b2", "c2"],
        body,
        [helper.make_opsetid("", 18)],
        ["cut_axis"],
    )
    call = helper.make_node("thirds", ["x"], ["p", "q", "r"], domain=LOCAL, cut_axis=0)
    built = model([call], [value("x")], ["p", "q", "r"], functions=[function])
    rows = np.arange(18, dtype=np.float32).reshape(6, 3)
    outputs, calls = run_counting(built, {"x": rows})
    assert_parts(outputs, [rows[0:2], rows[2:4], rows[4:6]])
    assert calls == {"Split": 1}


def _ref(name: str, ref: str, kind: int) -> AttributeProto:
    return AttributeProto(name=name, ref_attr_name=ref, type=kind)


def _int(name: str, number: int) -> AttributeProto:
    return helper.make_attribute(name, number)


def referencing_thirds() -> onnx.NodeProto:
    """Split-18 whose axis and num_outputs refer to the function's attributes."""
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], name="cut")
    node.attribute.extend(
        [
            _ref("axis", "cut_axis", AttributeProto.INT),
            _ref("num_outputs", "parts", AttributeProto.INT),
        ]
    )
    return node


def test_function_attributes_reach_split_through_ref_attr_name() -> None:
    built = function_model(referencing_thirds(), cut_axis=-1, parts=3)
    outputs, calls = run_counting(built, {"x": X})
    assert_parts(outputs, THIRDS)
    assert calls == {"Split": 1}


def test_function_attribute_left_out_by_the_call_leaves_the_attribute_out() -> None:
    """Without cut_axis the node has no axis attribute, so axis takes Split's default 0."""
    built = function_model(referencing_thirds(), parts=3)
    rows = np.arange(18, dtype=np.float32).reshape(6, 3)
    assert_parts(backend.run_model(built, {"x": rows}), [rows[0:2], rows[2:4], rows[4:6]])
    with pytest.raises(AttributeError, match="cut_axis"):
        ReferenceEvaluator(built, new_ops=reference_ops())


def test_function_attribute_default_applies_when_the_call_leaves_it_out() -> None:
    """FunctionProto.attribute_proto defaults, which onnx.reference alone ignores."""
    built = function_model(referencing_thirds(), parts=3)
    function = built.functions[0]
    function.attribute.remove("cut_axis")
    function.attribute_proto.append(helper.make_attribute("cut_axis", 1))
    assert_parts(backend.run_model(built, {"x": X}), THIRDS)
    # onnx.reference alone: the function body runs its own Split_18 (new_ops stop at the
    # function), which finds no value for the defaulted attribute.
    plain = ReferenceEvaluator(built, new_ops=reference_ops())
    with pytest.raises(ValueError, match=r"linked attribute 'axis'.*op_split\.Split_18"):
        plain.run(None, {"x": X})
    override = function_model(referencing_thirds(), parts=3, cut_axis=0)
    override.functions[0].CopyFrom(function)
    rows = np.arange(18, dtype=np.float32).reshape(6, 3)
    assert_parts(backend.run_model(override, {"x": rows}), [rows[0:2], rows[2:4], rows[4:6]])


def test_linked_attribute_of_the_wrong_type_is_reported_not_truncated() -> None:
    built = function_model(referencing_thirds(), cut_axis=1.0, parts=3)
    with pytest.raises(SplitTypeError, match=r"'cut' \(Split\).*'axis' must be INT; FLOAT"):
        backend.run_model(built, {"x": X})


# Nodes onnx.reference gets wrong.


def uneven_thirds(axis: int) -> onnx.NodeProto:
    """Split-13 without sizes on an axis of 7: the spec wants equal parts, 7 has none."""
    return helper.make_node("Split", ["x"], ["a", "b", "c"], axis=axis, name="uneven")


@pytest.mark.parametrize("build", [if_model, loop_model, function_model], ids=lambda f: f.__name__)
def test_uneven_equal_split_in_a_body_raises_where_onnx_reference_cuts_silently(build: Any) -> None:
    built = build(uneven_thirds(axis=-1))
    built.opset_import[0].version = 13
    if build is function_model:
        built.functions[0].opset_import[0].version = 13
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    x = x[0] if build is loop_model else x
    feeds = {"x": x, "cond": np.array(True), "trips": np.array(1)}
    feeds = {name: feeds[name] for name in (i.name for i in built.graph.input)}
    silent = ReferenceEvaluator(built).run(None, feeds)
    assert [np.shape(p)[-1] for p in silent] == [3, 3, 1]
    with pytest.raises(SplitError, match=r"node 'uneven' \(Split\): .*does not divide into 3"):
        backend.run_model(built, feeds)


def split1_if_model() -> ModelProto:
    """Split-1 taking its sizes from a second input of the input's type, in an If branch."""
    split = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1, name="old")
    then = helper.make_graph([split], "then", [], [value("a"), value("b")])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], [o]) for o in "ab"],
        "else",
        [],
        [value("a"), value("b")],
    )
    node = helper.make_node("If", ["cond"], ["p", "q"], then_branch=then, else_branch=other)
    inputs = [value("cond", TensorProto.BOOL, 0), value("x"), value("sizes", rank=1)]
    return model([node], inputs, ["p", "q"], opset=1)


def test_split1_in_if_branch_runs_on_splitops_where_onnx_reference_has_none() -> None:
    built = split1_if_model()
    feeds = {"cond": np.array(True), "x": X, "sizes": np.array([4.0, 2.0], np.float32)}
    with pytest.raises(RuntimeError, match="No implementation for operator 'Split'"):
        ReferenceEvaluator(built).run(None, feeds)
    outputs, calls = run_counting(built, feeds)
    assert_parts(outputs, [X[:, :4], X[:, 4:]])
    assert calls == {"Split": 1}


def test_split_type_error_in_a_body_reaches_the_caller_as_itself() -> None:
    """OpRun.run turns a TypeError in an If branch into a bare TypeError; the backend's
    evaluator hands the SplitTypeError on, while ReferenceEvaluator with reference_ops()
    alone shows the wrapping."""
    split = helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1, name="typed")
    built = if_model(split, value("sizes", TensorProto.INT32, 1))
    feeds = {"cond": np.array(True), "x": X, "sizes": np.array([2, 2, 2], np.int32)}
    with pytest.raises(SplitTypeError, match=r"node 'typed' \(Split\): .*int64; int32") as info:
        backend.run_model(built, feeds)
    assert type(info.value) is SplitTypeError
    with pytest.raises(TypeError) as wrapped:
        ReferenceEvaluator(built, new_ops=reference_ops()).run(None, feeds)
    assert not isinstance(wrapped.value, SplitError)
    assert isinstance(wrapped.value.__cause__, SplitTypeError)


def test_split_error_in_a_function_reaches_the_caller_as_itself() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=5, num_outputs=3, name="far")
    with pytest.raises(SplitError, match=r"node 'far' \(Split\): Split-18 axis 5 is out of range"):
        backend.run_model(function_model(node), {"x": X})


# reference_ops() for users of ReferenceEvaluator, and new_ops precedence.


def test_reference_ops_run_split_in_a_plain_reference_evaluator() -> None:
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="old")
    built = model([node], [value("x", rank=1), value("sizes", rank=1)], ["a", "b"], opset=1, rank=1)
    feeds = {"x": np.arange(5, dtype=np.float32), "sizes": np.array([1.0, 4.0], np.float32)}
    outputs = ReferenceEvaluator(built, new_ops=reference_ops()).run(None, feeds)
    assert_parts(outputs, [feeds["x"][:1], feeds["x"][1:]])


def test_new_ops_given_to_the_evaluator_take_precedence_and_reach_functions() -> None:
    """onnx.reference builds local functions without new_ops; the backend's evaluator does not."""
    built = function_model(thirds())
    ops, calls = counting_ops()
    ReferenceEvaluator(built, new_ops=ops).run(None, {"x": X})
    assert calls == {}
    backend.SplitopsEvaluator(built, new_ops=ops).run(None, {"x": X})
    assert calls == {"Split": 1}


def test_sequence_split_in_loop_body_runs_on_splitops() -> None:
    split = helper.make_node("SplitToSequence", ["x"], ["seq"], axis=1, keepdims=0, name="cols")
    first = helper.make_node("SequenceAt", ["seq", "zero"], ["a"])
    zero = helper.make_node("Constant", [], ["zero"], value_int=0)
    body = helper.make_graph(
        [split, zero, first, helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [value("i", TensorProto.INT64, 0), value("cond_in", TensorProto.BOOL, 0)],
        [value("cond_out", TensorProto.BOOL, 0), value("a", rank=1)],
    )
    node = helper.make_node("Loop", ["trips", "cond"], ["p"], body=body)
    inputs = [value("trips", TensorProto.INT64, 0), value("cond", TensorProto.BOOL, 0), value("x")]
    built = model([node], inputs, ["p"])
    outputs, calls = run_counting(built, {"trips": np.array(2), "cond": np.array(True), "x": X})
    assert_parts(outputs, [np.stack([X[:, 0]] * 2)])
    assert calls == {"SplitToSequence": 2}


@pytest.mark.parametrize(
    ("node", "x", "extra", "silent_shapes", "match"),
    [
        (
            helper.make_node("Split", ["x"], list("abcd"), num_outputs=4, name="five"),
            np.arange(5, dtype=np.float32),
            {},
            [(2,), (2,), (1,), (0,)],
            "cannot split a dim of 5 into 4 parts",
        ),
        (
            helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], name="short"),
            np.arange(5, dtype=np.float32),
            {"sizes": np.array([1, 2])},
            [[(1,), (2,)]],
            "sum to 3, but the axis length is 5",
        ),
    ],
    ids=["split18-5-into-4", "sequence-sizes-short-of-the-axis"],
)
def test_invalid_top_level_node_raises_where_onnx_reference_answers(
    node: onnx.NodeProto, x: Any, extra: dict[str, Any], silent_shapes: list[Any], match: str
) -> None:
    inputs = [value("x", rank=1), *(value(n, TensorProto.INT64, 1) for n in extra)]
    if node.op_type == "SplitToSequence":
        graph = helper.make_graph(
            [node], "g", inputs, [helper.make_tensor_sequence_value_info("seq", FLOAT, [None])]
        )
        built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    else:
        built = model([node], inputs, list(node.output), rank=1)
    feeds = {"x": x, **extra}
    silent = ReferenceEvaluator(built).run(None, feeds)
    shapes = [[p.shape for p in v] if isinstance(v, list) else v.shape for v in silent]
    assert shapes == silent_shapes
    with pytest.raises(SplitError, match=match):
        backend.run_model(built, feeds)


def test_more_arrays_than_the_model_has_inputs_is_a_model_input_error_naming_them() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)
    built = model([node], [value("x")], ["a", "b"])
    prepared = backend.prepare(built)
    with pytest.raises(ModelInputError, match=r"takes 1 input \['x'\]; 2 were given") as caught:
        prepared.run([X, X])
    assert not isinstance(caught.value, SplitError)
    np.testing.assert_array_equal(prepared.run([X])[1], X[:, 3:], strict=True)
