"""Every node a rewrite places has a name no other node has, and the model's own nodes keep
the names they came with (a rewrite touches only what is its own); the onnx2torch target
names every node, for onnx2torch keys the modules it converts by node name (two nodes
named alike, or unnamed, fail it with a KeyError)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

import splitops
from splitops.onnx.model.protobuf import model_graphs
from splitops.onnx.rewrite import TARGETS

F = TensorProto.FLOAT


def _names(model: ModelProto) -> list[str]:
    return [node.name for graph in model_graphs(model) for node in graph.node]


def _model(length: int | str = "N", *, branches: bool = True) -> ModelProto:
    """Unnamed nodes, a repeated name, a Split whose sizes lowering computes, a sequence read
    in an If's branch."""
    branch = helper.make_graph(
        [helper.make_node("SequenceAt", ["seq", "zero"], ["picked"])],
        "then",
        [],
        [helper.make_tensor_value_info("picked", F, None)],
    )
    other = helper.make_graph(
        [helper.make_node("SequenceAt", ["seq", "one"], ["other"])],
        "else",
        [],
        [helper.make_tensor_value_info("other", F, None)],
    )
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
        helper.make_node("Relu", ["a"], ["ra"], name="twice"),
        helper.make_node("Relu", ["b"], ["rb"], name="twice"),
        helper.make_node("SplitToSequence", ["x", "two"], ["seq"], axis=1),
        helper.make_node("If", ["flag"], ["y"], then_branch=branch, else_branch=other)
        if branches
        else helper.make_node("SequenceAt", ["seq", "one"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", F, [2, length]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info(n, F, None) for n in ("ra", "rb", "c", "y")],
        [
            numpy_helper.from_array(np.array(2, np.int64), "two"),
            numpy_helper.from_array(np.array(0, np.int64), "zero"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _placed(original: ModelProto, rewritten: ModelProto) -> list[str]:
    """The names of the nodes of ``rewritten`` that ``original`` has no node for: those
    whose outputs ``original``'s nodes do not write."""
    written = {tuple(node.output) for graph in model_graphs(original) for node in graph.node}
    return [
        node.name
        for graph in model_graphs(rewritten)
        for node in graph.node
        if tuple(node.output) not in written
    ]


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "onnx2torch"])
def test_every_node_a_lowering_places_has_a_name_of_its_own(target: str) -> None:
    model = _model()
    try:
        lowered = splitops.lower_model(model, target=target)  # type: ignore[arg-type]
    except splitops.SplitError:  # a target without sequences keeps none in a branch
        return
    placed = _placed(model, lowered)
    assert placed
    assert all(placed)
    names = Counter(_names(lowered))
    assert all(names[name] == 1 for name in placed)
    assert names["twice"] == 2  # the model's own names, repeated or not, stay as they came


def test_the_onnx2torch_target_names_every_node_once() -> None:
    lowered = splitops.lower_model(_model(branches=False), target="onnx2torch")
    names = _names(lowered)
    assert all(names)
    assert not [name for name, count in Counter(names).items() if count > 1]
    assert "twice" in names  # the last of a repeated name keeps it


@pytest.mark.parametrize("opset", [13, 18])
def test_the_split_a_conversion_writes_has_a_name_of_its_own(opset: int) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, split=[2, 2, 2]),
        helper.make_node("Relu", ["a"], ["ra"], name="twice"),
        helper.make_node("Relu", ["b"], ["rb"], name="twice"),
        helper.make_node("Unsqueeze", ["c"], ["cc"], axes=[0]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, 6])],
        [
            helper.make_tensor_value_info("ra", F, [2, 2]),
            helper.make_tensor_value_info("rb", F, [2, 2]),
            helper.make_tensor_value_info("cc", F, [1, 2, 2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    converted = splitops.convert_model(model, opset)
    names = Counter(_names(converted))
    # The Split is splitops' own to write; other operators are onnx.version_converter's,
    # named as it names them.
    (split,) = [node.name for node in converted.graph.node if node.op_type == "Split"]
    assert split
    assert names[split] == 1
    assert names["twice"] == 2
    assert {node.op_type for node in converted.graph.node} >= {"Split", "Unsqueeze"}


def test_the_onnx2torch_target_names_no_node_as_a_torch_module_attribute() -> None:
    """onnx2torch sets each converted module as an attribute of a ``torch.nn.Module`` named
    after its node: a node named ``half`` (a Div computing ``half``, named after its output)
    failed it, "attribute 'half' already exists"."""
    torch = pytest.importorskip("torch")
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Div", ["shape", "two"], ["half"]),
        helper.make_node("Concat", ["half", "half"], ["sizes"], axis=0),
        helper.make_node("Neg", ["x"], ["float"]),
        helper.make_node("Split", ["x", "sizes"], ["cuda", "eval"], axis=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info(n, F, None) for n in ("float", "cuda", "eval")],
        [numpy_helper.from_array(np.array([2], np.int64), "two")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    lowered = splitops.lower_model(model, target="onnx2torch")
    names = _names(lowered)
    assert all(names)
    assert len(set(names)) == len(names)
    assert not set(names) & set(dir(torch.nn.Module)), names


def test_nodes_named_alike_are_numbered_in_order_past_the_names_taken() -> None:
    # 300 Splits writing "a", and a node already named as the third of them would be.
    from splitops.onnx.model import name_nodes

    nodes = [helper.make_node("Split", ["x"], ["a", f"b{i}"], name="s") for i in range(300)]
    nodes.append(helper.make_node("Relu", ["x"], ["r"], name="Split_a_2"))
    model = helper.make_model(helper.make_graph(nodes, "g", [], []))
    assert name_nodes(model) == 299
    names = [node.name for node in model.graph.node]
    assert names[:4] == ["Split_a", "Split_a_1", "Split_a_3", "Split_a_4"]
    assert names[298:] == ["Split_a_299", "s", "Split_a_2"]  # the last "s" keeps its name
    assert len(set(names)) == len(names)
