"""The view's nodes carry their fields as values: domain, inputs and outputs as the view's
values, attributes as Python values (graphs as scopes); a value's uses are (node, input
position) pairs; types are frozen values under one dim rule."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from splitops.onnx.model import (
    Linked,
    ModelView,
    SequenceType,
    TensorType,
    value_type,
)

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _loop_model() -> onnx.ModelProto:
    """``x`` read twice by one Mul, and once inside a Loop's body; a node left unnamed; a
    Split leaving its second input out."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["x", "acc"], ["acc_out"], name="inner_add"),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", I64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", F, [2, 4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", F, [2, 4]),
        ],
    )
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["sq"], name="square"),
        helper.make_node("Loop", ["n", "", "sq"], ["summed"], body=body, name="loop"),
        helper.make_node(
            "Split", ["summed", ""], ["a", "", "b"], axis=-1, num_outputs=3, name="cut"
        ),
        helper.make_node("Cast", ["a"], ["a64"], to=TensorProto.DOUBLE),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", F, [2, 4]),
            helper.make_tensor_value_info("n", I64, []),
        ],
        [
            helper.make_tensor_value_info("a64", TensorProto.DOUBLE, [2, -1]),
            helper.make_tensor_value_info("b", F, ["N", None]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_node_gives_its_domain_inputs_and_outputs_as_values() -> None:
    view = ModelView.read(_loop_model())
    square, loop, cut, cast = view.main.nodes
    x = view.main.value("x")
    assert square.domain == ""
    assert square.name == "square"
    assert square.is_op("Mul")
    assert square.inputs == (x, x)
    assert [v.name for v in loop.inputs if v] == ["n", "sq"]
    assert loop.inputs[1] is None  # the condition, left out
    assert cut.inputs[1] is None
    a, missing, b = cut.outputs
    assert (a.name if a else None, missing, b.name if b else None) == ("a", None, "b")
    assert a is not None
    assert a.producer is cut
    assert cast.label == "a64"
    assert cast.where == "main/a64"


def test_uses_are_node_and_position_and_reach_into_subgraphs() -> None:
    view = ModelView.read(_loop_model())
    x = view.main.value("x")
    assert x is not None
    found = [(u.node.label, u.index, u.node.scope.label) for u in x.uses]
    assert found == [
        ("square", 0, "main"),
        ("square", 1, "main"),
        ("inner_add", 0, "main/loop.body"),
    ]
    assert [node.label for node in x.consumers] == ["square", "inner_add"]


def test_attributes_are_python_values_and_graphs_are_scopes() -> None:
    view = ModelView.read(_loop_model())
    _, loop, cut, cast = view.main.nodes
    assert dict(cut.attributes) == {"axis": -1, "num_outputs": 3}
    assert cast.attributes.get("to") == TensorProto.DOUBLE
    assert cut.attributes.get("split", ()) == ()
    body = loop.attributes["body"]
    assert body is loop.held[0]
    assert body.label == "main/loop.body"
    assert [node.label for node in body.nodes] == ["inner_add", "cond_out"]
    with pytest.raises(TypeError):
        loop.attributes["body"] = None  # type: ignore[index]


def test_attributes_of_every_kind() -> None:
    tensor = numpy_helper.from_array(np.array([3, 4], np.int64), "t")
    node = helper.make_node(
        "Custom",
        ["x"],
        ["y"],
        domain="d",
        f=0.5,
        fs=[1.5, 2.5],
        s="text",
        ss=["a", "b"],
        t=tensor,
        tp=helper.make_tensor_type_proto(F, ["N"]),
    )
    int_type = onnx.AttributeProto.INT
    linked = onnx.AttributeProto(name="axis", ref_attr_name="the_axis", type=int_type)
    node.attribute.append(linked)
    function = helper.make_function("d", "G", ["x"], ["y"], [node], [], ["the_axis"])
    model = helper.make_model(
        helper.make_graph([], "g", [], []),
        functions=[function],
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("d", 1)],
    )
    (found,) = ModelView.read(model).scopes[1].nodes
    values = found.attributes
    assert values["f"] == 0.5
    assert values["fs"] == (1.5, 2.5)
    assert values["s"] == "text"
    assert values["ss"] == ("a", "b")
    assert values["t"].tolist() == [3, 4]
    assert values["tp"] == TensorType(F, ("N",))
    assert values["axis"] == Linked("the_axis")
    assert found.domain == "d"
    assert not found.is_op("Custom")


def test_types_are_frozen_values_with_one_dim_rule() -> None:
    view = ModelView.read(_loop_model())
    main = view.main
    assert main.type_of("x") == TensorType(F, (2, 4))
    # A negative length says nothing: unknown, as in every reader of a dim.
    assert main.type_of("a64") == TensorType(TensorProto.DOUBLE, (2, None))
    assert main.type_of("b") == TensorType(F, ("N", None))
    assert main.dims("b") == [None, None]
    assert main.element("b") == F
    assert main.type_of("nothing") is None
    body = view.scopes[1]
    # A body sees the types of its ancestors' values, and gives its own.
    assert body.type_of("x") == TensorType(F, (2, 4))
    acc = body.value("acc")
    assert acc is not None
    assert acc.type == TensorType(F, (2, 4))


def test_a_sequence_type_is_a_value_too() -> None:
    proto = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2, -3]))
    found = value_type(proto)
    assert found == SequenceType(TensorType(F, (2, None)))
    assert found.shape_text() == "[2, ?]"


def test_a_scope_walks_its_nodes_and_those_it_holds_in_model_order() -> None:
    view = ModelView.read(_loop_model())
    labels = [node.label for node in view.main.walk()]
    assert labels == ["square", "loop", "inner_add", "cond_out", "cut", "a64"]
