"""``splitops.infer_shapes`` on whole models: where types are written, how they reach the
nodes after a Split, subgraphs and local functions, constants, strictness, and the text
rows for people."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import ModelProto, TensorProto, helper, numpy_helper, shape_inference

import splitops
from splitops import SplitError, SplitTypeError, infer_shapes
from splitops.onnx.inference._engine import (
    SplitInferenceWarning,
    SplitOutputDescription,
    describe_split_outputs,
    infer_split_nodes,
)
from splitops.onnx.inference._symbolic import DimParams

sympy = pytest.importorskip("sympy")

F = TensorProto.FLOAT
MakeModel = Callable[..., ModelProto]
Shapes = Callable[[ModelProto], dict[str, Any]]


def _halves() -> list[onnx.NodeProto]:
    return [helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2, name="s")]


def test_infer_shapes_is_exposed_lazily_and_returns_a_copy(make_model: MakeModel) -> None:
    assert splitops.infer_shapes is infer_shapes
    model = make_model(_halves(), {"x": (F, ["N", 3])}, opset=18)
    before = model.SerializeToString()
    inferred = infer_shapes(model)
    assert model.SerializeToString() == before
    assert inferred is not model


def test_graph_outputs_without_a_shape_get_one_and_declared_shapes_stay(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    model = make_model(_halves(), {"x": (F, ["N", 3])}, opset=18)
    model.graph.output[1].type.CopyFrom(helper.make_tensor_type_proto(F, ["M", 3]))
    shapes = value_shapes(infer_shapes(model))
    assert shapes["a"] == ("tensor", F, ["ceiling(N/2)", 3])
    assert shapes["b"] == ("tensor", F, ["M", 3])


def test_intermediate_outputs_go_to_value_info_and_reach_later_nodes(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [*_halves(), helper.make_node("Relu", ["b"], ["r"])]
    model = make_model(nodes, {"x": (F, ["N", 3])}, opset=18)
    inferred = infer_shapes(model)
    assert {v.name for v in inferred.graph.value_info} >= {"a", "b"}
    assert value_shapes(inferred)["r"] == ("tensor", F, ["N - ceiling(N/2)", 3])


def test_a_chain_of_splits_is_inferred_through(make_model: MakeModel, value_shapes: Shapes) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=[6, 3]),
        helper.make_node("Split", ["a"], ["c", "d"], axis=0),
        helper.make_node("Split", ["d"], ["e", "f"], axis=1, split=[1, 2]),
    ]
    model = make_model(nodes, {"x": (F, [9, 3])}, opset=11, outputs=list("bcef"))
    shapes = value_shapes(infer_shapes(model))
    assert [shapes[n][2] for n in "abcdef"] == [[6, 3], [3, 3], [3, 3], [3, 3], [3, 1], [3, 2]]


def test_stale_shapes_of_split_outputs_are_replaced(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [*_halves(), helper.make_node("Relu", ["b"], ["r"])]
    model = shape_inference.infer_shapes(make_model(nodes, {"x": (F, ["N"])}, opset=18))
    assert value_shapes(model)["b"] == ("tensor", F, ["unk__1"])
    shapes = value_shapes(infer_shapes(model))
    assert shapes["b"] == ("tensor", F, ["N - ceiling(N/2)"])


def test_a_constant_node_is_a_constant_split(make_model: MakeModel, value_shapes: Shapes) -> None:
    sizes = numpy_helper.from_array(np.array([1, 4], np.int64))
    nodes = [
        helper.make_node("Constant", [], ["sizes"], value=sizes),
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
    ]
    model = make_model(nodes, {"x": (F, [2, "N"])}, opset=13)
    shapes = value_shapes(infer_shapes(model))
    assert (shapes["a"][2], shapes["b"][2]) == ([2, 1], [2, 4])


def test_an_initializer_that_is_also_an_input_is_no_constant(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0)
    constants = {"sizes": np.array([1, 4], np.int64)}
    model = make_model([node], {"x": (F, [5]), "sizes": (TensorProto.INT64, [2])}, opset=13)
    model.graph.initializer.extend(numpy_helper.from_array(v, n) for n, v in constants.items())
    shapes = value_shapes(infer_shapes(model))
    assert (shapes["a"], shapes["b"]) == (("tensor", F, [None]), ("tensor", F, [None]))


def test_split_to_sequence_gives_a_sequence_type(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        helper.make_node("SplitToSequence", ["x"], ["ones"], axis=1),
        helper.make_node("SplitToSequence", ["x", "k"], ["chunks"], axis=1),
    ]
    model = make_model(
        nodes,
        {"x": (F, ["N", "M"])},
        opset=11,
        constants={"k": np.array(2, np.int64)},
        outputs=["rows", "ones", "chunks"],
    )
    shapes = value_shapes(infer_shapes(model))
    assert shapes["rows"] == ("seq", F, ["M"])
    assert shapes["ones"] == ("seq", F, ["N", 1])
    assert shapes["chunks"] == ("seq", F, ["N", None])


@pytest.mark.parametrize(
    ("length", "split", "element"),
    [
        ("N", None, [1, 3]),  # parts of 1, however many
        ("N", 1, [1, 3]),
        ("N", 2, [None, 3]),  # a shorter last part if N is odd
        ("N", [2, 2], [2, 3]),
        ("N", [2, 3], [None, 3]),
        (6, 2, [2, 3]),
        (7, 2, [None, 3]),
        (1, 2, [1, 3]),  # one part, all that is left
        (0, None, [1, 3]),
    ],
)
def test_sequence_element_shape_names_the_length_every_part_shares(
    length: int | str, split: Any, element: list[Any], make_model: MakeModel, value_shapes: Shapes
) -> None:
    inputs = ["x"] if split is None else ["x", "k"]
    constants = {} if split is None else {"k": np.array(split, np.int64)}
    node = helper.make_node("SplitToSequence", inputs, ["parts"], axis=0)
    model = make_model(
        [node], {"x": (F, [length, 3])}, opset=11, constants=constants, outputs=["parts"]
    )
    assert value_shapes(infer_shapes(model))["parts"] == ("seq", F, element)


def test_an_opaque_dim_param_passes_through_but_derives_nothing(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["whole"], axis=0, num_outputs=1),
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2),
    ]
    model = make_model(nodes, {"x": (F, ["batch size"])}, opset=18, outputs=["whole", "a", "b"])
    shapes = value_shapes(infer_shapes(model))
    assert shapes["whole"] == ("tensor", F, ["batch size"])
    assert shapes["a"] == ("tensor", F, [None])


def test_strict_inference_raises_naming_graph_and_node(make_model: MakeModel) -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=3, name="bad")
    model = make_model([node], {"x": (F, [4, 2])}, opset=13)
    with pytest.raises(SplitError, match=r"^main: node 'bad' \(Split\): Split-13 axis 3"):
        infer_shapes(model)


def test_strict_inference_raises_a_type_error_for_a_dtype(make_model: MakeModel) -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, name="bad")
    model = make_model([node], {"x": (TensorProto.INT32, [4])}, opset=1)
    with pytest.raises(SplitTypeError, match="int32"):
        infer_shapes(model)


def test_non_strict_inference_warns_and_leaves_the_outputs_unshaped(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, name="bad"),
        helper.make_node("Relu", ["a"], ["r"]),
    ]
    model = make_model(nodes, {"x": (F, [5])}, opset=11, outputs=["b", "r"])
    with pytest.warns(SplitInferenceWarning, match=r"node 'bad' .* does not divide into 2"):
        shapes = value_shapes(infer_shapes(model, strict=False))
    assert (shapes["b"], shapes["r"]) == (None, None)


def _branch(name: str, outputs: list[str]) -> onnx.GraphProto:
    node = helper.make_node("Split", ["x"], outputs, axis=0, num_outputs=2, name=name)
    return helper.make_graph([node], name, [], [helper.make_tensor_value_info(outputs[0], F, None)])


def test_nodes_in_subgraphs_are_inferred_and_feed_their_parent(
    make_model: MakeModel, shape_of: Callable[..., Any], value_shapes: Shapes
) -> None:
    branch = helper.make_node(
        "If",
        ["cond"],
        ["out"],
        then_branch=_branch("inner", ["a", "b"]),
        else_branch=_branch("other", ["c", "d"]),
        name="if",
    )
    inputs = {"x": (F, [3, "N"]), "cond": (TensorProto.BOOL, [])}
    model = make_model([branch], inputs, opset=18, outputs=["out"])
    inferred = infer_shapes(model)
    branches = {a.name: a.g for a in inferred.graph.node[0].attribute}
    assert shape_of(branches["then_branch"].output[0].type) == ("tensor", F, [2, "N"])
    assert shape_of(branches["else_branch"].output[0].type) == ("tensor", F, [2, "N"])
    assert value_shapes(inferred)["out"] == ("tensor", F, [2, "N"])
    records = infer_split_nodes(model)
    assert [(r.graph, r.label) for r in records] == [
        ("main/if.else_branch", "other"),
        ("main/if.then_branch", "inner"),
    ]


def _function_model(make_model: MakeModel, dims: dict[str, list[Any]]) -> ModelProto:
    split = helper.make_node("Split", ["t"], ["u", "v"], num_outputs=2, name="f")
    split.attribute.append(helper.make_attribute_ref("axis", onnx.AttributeProto.INT))
    split.attribute[-1].ref_attr_name = "along"
    body = [split, helper.make_node("Relu", ["u"], ["w"])]
    function = helper.make_function(
        "local",
        "FirstHalf",
        ["t"],
        ["w"],
        body,
        opset_imports=[helper.make_opsetid("", 18)],
        attributes=["along"],
    )
    calls = [
        helper.make_node("FirstHalf", [name], [f"{name}_half"], domain="local", along=1)
        for name in dims
    ]
    inputs = {name: (F, shape) for name, shape in dims.items()}
    outputs = [f"{name}_half" for name in dims]
    return make_model(calls, inputs, opset=18, outputs=outputs, functions=[function])


def test_a_function_call_is_inferred_with_its_attributes(
    make_model: MakeModel, shape_of: Callable[..., Any], value_shapes: Shapes
) -> None:
    model = _function_model(make_model, {"x": ["B", 7]})
    inferred = infer_shapes(model)
    assert value_shapes(inferred)["x_half"] == ("tensor", F, ["B", 4])
    info = {v.name: shape_of(v.type) for v in inferred.functions[0].value_info}
    assert info == {"u": ("tensor", F, ["B", 4]), "v": ("tensor", F, ["B", 3])}


def test_a_function_keeps_the_types_its_call_sites_agree_on(
    make_model: MakeModel, shape_of: Callable[..., Any], value_shapes: Shapes
) -> None:
    model = _function_model(make_model, {"x": ["B", 7], "y": ["B", 8]})
    inferred = infer_shapes(model)
    assert value_shapes(inferred)["y_half"] == ("tensor", F, ["B", 4])
    info = {v.name: shape_of(v.type) for v in inferred.functions[0].value_info}
    assert info == {"u": ("tensor", F, ["B", 4]), "v": ("tensor", F, ["B", None])}
    (record,) = infer_split_nodes(model)
    assert (record.graph, record.label, record.opset) == ("function:local.FirstHalf", "f", 18)


def test_describe_split_outputs_gives_text_rows(make_model: MakeModel) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3, name="s"),
        helper.make_node("SplitToSequence", ["x"], ["seq"], axis=0, name="q"),
    ]
    model = make_model(nodes, {"x": (F, ["N", 7])}, opset=18, outputs=["a", "b", "c", "seq"])
    rows = describe_split_outputs(model)
    assert rows == [
        SplitOutputDescription("main", "s", "a", "tensor(float)", "[N, 3]", ""),
        SplitOutputDescription("main", "s", "b", "tensor(float)", "[N, 3]", ""),
        SplitOutputDescription("main", "s", "c", "tensor(float)", "[N, 1]", ""),
        SplitOutputDescription("main", "q", "seq", "seq(tensor(float))", "[1, 7]", ""),
    ]


def test_describe_split_outputs_reports_an_invalid_node(make_model: MakeModel) -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, name="s")
    model = make_model([node], {"x": (F, [3])}, opset=13)
    rows = describe_split_outputs(model)
    assert [(r.output, r.type, r.shape) for r in rows] == [
        ("a", "unknown", "unknown"),
        ("b", "unknown", "unknown"),
    ]
    assert "does not divide into 2" in rows[0].error


NAMES = [
    "N",
    "N - N",
    "4",
    "ceiling(N/4)",
    "((batch + 1)//2)",
    "batch size",
    "-3",
    "N/0",
    "x**99",
    "__import__('os').getcwd()",
    "lambda: 1",
    "(" * 300 + "N" + ")" * 300,
]


@pytest.mark.parametrize("text", NAMES)
def test_a_dim_param_is_a_name_never_arithmetic(text: str) -> None:
    params = DimParams()
    name = params.read(text)
    assert name.is_Symbol
    assert name.name == text
    assert params.write(name) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40).filter(bool))
def test_any_dim_param_reads_as_its_own_name(text: str) -> None:
    name = DimParams().read(text)
    assert name.is_Symbol
    assert name.name == text


@pytest.mark.parametrize("text", ["N - N", "4", "batch size", "ceiling(N/4)", "floor", "if"])
def test_an_expression_over_a_name_of_another_syntax_is_not_written(text: str) -> None:
    # Written out, ceiling(4/2) would read as 2, and "N - N - 1" as -1.
    params = DimParams()
    name = params.read(text)
    assert params.write(sympy.ceiling(name / 2)) is None
    assert params.write(name - 1) is None


def test_an_expression_written_is_read_back_as_itself_in_the_same_inference() -> None:
    params = DimParams()
    n = params.read("N")
    quarter = sympy.ceiling(n / 4)
    assert params.write(quarter) == "ceiling(N/4)"
    assert params.read("ceiling(N/4)") == quarter
    assert DimParams().read("ceiling(N/4)").is_Symbol  # another inference: a name


def test_an_expression_whose_text_is_a_name_of_the_model_is_not_written() -> None:
    # The model names a dim "ceiling(N/4)": writing that text for a size would claim that
    # the two dims are equal.
    params = DimParams(taken={"ceiling(N/4)"})
    assert params.write(sympy.ceiling(params.read("N") / 4)) is None


def test_an_expression_whose_text_a_branch_of_the_model_names_is_not_written(
    value_shapes: Shapes,
) -> None:
    # Only the If's branch names "ceiling(N/4)": the model's names are found in every graph.
    branch = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["z"])],
        "branch",
        [],
        [helper.make_tensor_value_info("z", F, ["ceiling(N/4)"])],
    )
    nodes = [
        helper.make_node("Split", ["x"], list("abcd"), axis=0, num_outputs=4),
        helper.make_node("If", ["c"], ["w"], then_branch=branch, else_branch=branch),
    ]
    inputs = [
        helper.make_tensor_value_info("x", F, ["N"]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
    ]
    outputs = [helper.make_tensor_value_info(n, F, None) for n in "abcd"]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    shapes = value_shapes(infer_shapes(model))
    assert [shapes[n] for n in "abcd"] == [
        ("tensor", F, [None]),
        ("tensor", F, [None]),
        ("tensor", F, [None]),
        ("tensor", F, ["N - 3*ceiling(N/4)"]),
    ]


def test_a_dim_param_that_looks_like_arithmetic_is_split_as_a_name(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    # "N - N" is no dim of 0, "4" no dim of 4 (a Split-18 into 3 would reject 4 at once).
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2),
        helper.make_node("Split", ["y"], ["c", "d", "e"], axis=0, num_outputs=3),
    ]
    inputs = {"x": (F, ["N - N", 3]), "y": (F, ["4", 2])}
    model = make_model(nodes, inputs, opset=18, outputs=list("abcde"))
    assert splitops.check_model(model) == []
    shapes = value_shapes(infer_shapes(model))
    assert [shapes[n] for n in "abcde"] == [
        ("tensor", F, [None, 3]),
        ("tensor", F, [None, 3]),
        ("tensor", F, [None, 2]),
        ("tensor", F, [None, 2]),
        ("tensor", F, [None, 2]),
    ]


def test_two_dims_with_the_same_dim_param_are_equal(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [
        helper.make_node("Shape", ["y"], ["n"], start=0, end=1),
        helper.make_node("Split", ["x", "n"], ["a"], axis=0),
    ]
    model = make_model(nodes, {"x": (F, ["N - N", 3]), "y": (F, ["N - N"])}, opset=13)
    assert value_shapes(infer_shapes(model))["a"] == ("tensor", F, ["N - N", 3])


def test_a_model_inferred_again_keeps_its_dims_and_reads_them_as_names(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2),
        helper.make_node("Concat", ["a", "b"], ["c"], axis=0),
        helper.make_node("Split", ["c"], ["d", "e"], axis=0, num_outputs=2),
    ]
    model = make_model(nodes, {"x": (F, ["N", 3])}, opset=18, outputs=["d", "e"])
    once = infer_shapes(model)
    twice = infer_shapes(once)
    assert value_shapes(twice) == value_shapes(once)
    assert value_shapes(once)["e"] == ("tensor", F, ["N - ceiling(N/2)", 3])
    # The Split of "ceiling(N/2)", a name now, splits a name.
    more = helper.make_node("Split", ["a"], ["f", "g"], axis=0, num_outputs=2)
    once.graph.node.append(more)
    once.graph.output.extend(helper.make_value_info(n, onnx.TypeProto()) for n in "fg")
    shapes = value_shapes(infer_shapes(once))
    assert shapes["a"] == ("tensor", F, ["ceiling(N/2)", 3])
    assert shapes["f"] == ("tensor", F, [None, 3])


def test_an_invalid_node_in_an_if_branch_only_warns_even_when_strict(
    if_model: MakeModel, shape_of: Callable[..., Any]
) -> None:
    bad = helper.make_node("Split", ["x"], list("abcd"), axis=0, num_outputs=4, name="bad")
    model = if_model(bad, [5], opset=18)
    with pytest.warns(SplitInferenceWarning, match=r"main/if.then_branch: node 'bad'"):
        inferred = infer_shapes(model, strict=True)
    branches = {a.name: a.g for a in inferred.graph.node[0].attribute}
    assert shape_of(branches["then_branch"].output[0].type) is None
    assert shape_of(branches["else_branch"].output[0].type) == ("tensor", F, [5])
    (record,) = infer_split_nodes(model)
    assert record.in_branch
