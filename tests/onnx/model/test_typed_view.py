"""The view holding the user's model and onnx's typed copy, scope by scope, by identity; and
what inference asks of it: a node read alone, the names a scope reads from outside, its
digest, the model's own declarations, onnx's inference of one node or one call, a model of
one call, and the inferred types written back into the typed copy."""

from __future__ import annotations

import gc

import numpy as np
import onnx
import pytest
from onnx import TensorProto, TypeProto, helper, numpy_helper

from splitops import SplitError, limits
from splitops.onnx.model import (
    Linked,
    ModelView,
    Node,
    OtherType,
    SequenceType,
    TensorType,
    check_node_count,
)
from splitops.onnx.model._types import shape_text
from splitops.onnx.model._walk import expanded_node_count
from splitops.onnx.model.protobuf import (
    call_model,
    call_output,
    infer_call_outputs,
    infer_node,
    inline_call,
    named_placeholders,
    onnx_takes,
    rename_all,
    renamed,
    typed_copy,
    unnamed_placeholders,
    with_functions,
    write_types,
)

F, I64 = TensorProto.FLOAT, TensorProto.INT64
_OPSETS = [helper.make_opsetid("", 18)]


def _branch(name: str, node: onnx.NodeProto) -> onnx.GraphProto:
    return helper.make_graph(
        [node], name, [], [helper.make_value_info(node.output[0], TypeProto())]
    )


def _two_then_branches() -> onnx.ModelProto:
    """An If whose else_branch is named then_branch too: two graphs at one key, the first
    computing a Relu of ``x`` (float), the second a Cast of it to int64."""
    first = _branch("a", helper.make_node("Relu", ["x"], ["r"]))
    second = _branch("b", helper.make_node("Cast", ["x"], ["c"], to=I64))
    node = helper.make_node("If", ["cond"], ["y"], name="if0")
    node.attribute.extend(
        [helper.make_attribute("then_branch", first), helper.make_attribute("then_branch", second)]
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", F, [3])],
        [helper.make_value_info("y", TypeProto())],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=_OPSETS)


def test_each_of_two_graphs_at_one_key_reads_its_own_typed_graph() -> None:
    """Two graphs of one attribute name share a key; each scope's types are those of the
    same graph in onnx's typed copy (onnx types the last one only), not the last graph of
    that name."""
    model = _two_then_branches()
    view = ModelView.read(model)
    first, second = view.main.held(0)
    assert first.key == second.key
    typed = onnx.shape_inference.infer_shapes(model)
    view.take_types(typed)
    assert second.type_of("c") == TensorType(I64, (3,))
    assert first.type_of("c") is None
    assert first.digest() != second.digest()


def test_taking_types_keeps_the_scopes_nodes_and_values_and_forgets_the_types_read() -> None:
    model = _two_then_branches()
    view = ModelView.read(model)
    scope = view.main.held(0)[1]
    node = scope.nodes[0]
    assert scope.type_of("c") is None  # the model declares it untyped
    view.take_types(onnx.shape_inference.infer_shapes(model))
    assert view.main.held(0)[1] is scope
    assert scope.nodes[0] is node
    assert scope.type_of("c") == TensorType(I64, (3,))
    assert scope.declared("c") is None  # what the model itself declares stays


def test_a_scope_that_is_a_branch_and_one_that_is_a_body() -> None:
    body = helper.make_graph([], "body", [], [])
    loop = helper.make_node("Loop", ["n", ""], [], body=body, name="loop")
    model = _two_then_branches()
    model.graph.node.append(loop)
    view = ModelView.read(model)
    assert [s.is_branch for s in view.main.held(0)] == [True, True]
    assert not view.main.held(1)[0].is_branch
    assert not view.main.is_branch


def test_a_node_read_alone_gives_its_fields_and_no_scope() -> None:
    proto = helper.make_node("Split", ["x", ""], ["a", "b"], axis=1, num_outputs=2)
    node = Node.alone(proto)
    assert (node.op_type, node.domain, node.input_names, node.output_names) == (
        "Split", "", ("x", ""), ("a", "b")
    )  # fmt: skip
    assert node.attribute("axis") == 1
    assert node.attribute("split", "none") == "none"
    assert node.held == []
    with pytest.raises(ReferenceError, match="alone"):
        _ = node.scope


def test_one_attribute_read_alone_is_the_mapping_s_value() -> None:
    """:meth:`Node.attribute` reads one attribute without the others, as the mapping reads
    it: the last of two of one name, a linked one as :class:`Linked`."""
    proto = helper.make_node("Concat", ["a", "b"], ["c"], axis=0)
    proto.attribute.append(helper.make_attribute("axis", 1))
    proto.attribute.append(onnx.AttributeProto(name="k", ref_attr_name="kk", type=2))
    alone, mapped = Node.alone(proto), Node.alone(proto)
    assert alone.attribute("axis") == mapped.attributes["axis"] == 1
    assert alone.attribute("k") == mapped.attributes["k"] == Linked("kk")


def test_a_node_s_attributes_hold_no_reference_cycle() -> None:
    model = _two_then_branches()
    gc.collect()
    gc.disable()
    try:
        view = ModelView.read(model)
        node = view.main.nodes[0]
        assert node.attributes["then_branch"] is view.main.held(0)[-1]
        del view, node
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        ours = [o for o in gc.garbage if type(o).__module__.startswith("splitops")]
        assert not ours, ours
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_node_names_the_function_it_calls_by_its_identity() -> None:
    proto = helper.make_node("F", ["x"], ["y"], domain="d", overload="fast")
    assert Node.alone(proto).function_id == ("d", "F", "fast")


def test_the_names_a_scope_reads_from_outside_itself() -> None:
    inner = helper.make_graph(
        [helper.make_node("Add", ["a", "k"], ["b"]), helper.make_node("Neg", ["b"], ["o"])],
        "inner", [helper.make_tensor_value_info("i", I64, [])],
        [helper.make_value_info("o", TypeProto()), helper.make_value_info("w", TypeProto())],
        initializer=[numpy_helper.from_array(np.zeros(1, np.float32), "w")],
    )  # fmt: skip
    loop = helper.make_node("Loop", ["n", "", "a"], ["y"], body=inner, name="loop")
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["a"]), loop], "g", [], [])
    view = ModelView.read(helper.make_model(graph, opset_imports=_OPSETS))
    body = view.main.held(1)[0]
    assert body.free_names() == ["a", "k"]  # its input, initializer and nodes' outputs not
    assert view.main.free_names() == ["x", "n", "k"]


def test_graphs_of_one_digest_read_the_names_found_for_one_of_them() -> None:
    """If branches alike have one digest; the names the one asked first reads are those of
    the other, which is not read again."""
    model = _two_then_branches()
    same = model.graph.node[0].attribute[0].g
    model.graph.node[0].attribute[1].g.CopyFrom(same)
    view = ModelView.read(model)
    first, second = view.main.held(0)
    assert first.digest() == second.digest()
    assert first.free_names() == ["x"]
    second.proto.node[0].input[0] = "changed"  # what is read after the digest is not
    assert second.free_names() == ["x"]


def test_a_scope_s_split_nodes_and_those_of_the_view() -> None:
    split = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    model = _two_then_branches()
    model.graph.node[0].attribute[0].g.node.append(split)
    view = ModelView.read(model)
    first, second = view.main.held(0)
    assert [n.op_type for n in first.split_nodes()] == ["Split"]
    assert second.split_nodes() == []
    assert second._nodes is None  # not read: it holds none
    assert [n.op_type for n in view.split_nodes()] == ["Split"]


def test_the_view_s_functions_opsets_and_declared_dim_names() -> None:
    function = helper.make_function(
        "d", "F", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])], _OPSETS
    )
    function.value_info.append(helper.make_tensor_value_info("y", F, ["M"]))
    other = helper.make_function("d", "F", ["x"], ["y"], [], _OPSETS, overload="v2")
    graph = helper.make_graph(
        [helper.make_node("F", ["x"], ["y"], domain="d")], "g",
        [helper.make_tensor_value_info("x", F, ["N", 2])],
        [helper.make_tensor_value_info("y", F, ["N", "K"])],
        value_info=[helper.make_tensor_value_info("t", F, ["T"])],
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[*_OPSETS, helper.make_opsetid("d", 1)], functions=[function, other]
    )
    view = ModelView.read(model)
    assert set(view.functions) == {("d", "F", ""), ("d", "F", "v2")}
    assert view.functions[("d", "F", "")].proto is model.functions[0]
    assert view.opsets == {"": 18, "d": 1}
    assert view.dim_names() == {"N", "K", "T", "M"}


def test_the_node_count_counts_each_call_as_its_body() -> None:
    from tests.malformed_models import _calling_twice

    # The main graph calls F6 once, each Fk calls F(k-1) twice, F0 holds 2 nodes: 2^7 - 1
    # calls at the 7 levels above F0's bodies, and 2^6 bodies of 2 nodes.
    model = _calling_twice(6)
    count = 2**7 - 1 + 2**6 * 2
    assert expanded_node_count(model, cap=10**6) == count
    assert expanded_node_count(model, cap=100) == 100
    with limits(max_nodes=count - 1), pytest.raises(SplitError, match="max_nodes"):
        check_node_count(model)
    with limits(max_nodes=count):
        check_node_count(model)


@pytest.mark.parametrize(
    ("listed", "attributes", "takes"),
    [
        (3, {"num_outputs": 3}, True),
        (3, {}, True),  # sizes from an input, or Split-13
        (3, {"num_outputs": 2}, False),  # more outputs than num_outputs: onnx aborts
        (2, {"num_outputs": 4096}, True),
        (2, {"num_outputs": 4097}, False),  # onnx allocates num_outputs sizes
        (5000, {"num_outputs": 5000}, True),
    ],
)
def test_onnx_takes_every_split_but_one_it_aborts_on_or_allocates_for(
    listed: int, attributes: dict[str, int], takes: bool
) -> None:
    outputs = [f"o{i}" for i in range(listed)]
    assert onnx_takes(Node.alone(helper.make_node("Split", ["x"], outputs, **attributes))) is takes
    other = helper.make_node("Split", ["x"], outputs, domain="elsewhere", **attributes)
    assert onnx_takes(Node.alone(other))  # not onnx's Split


def test_hidden_calls_are_out_of_onnx_s_pass_and_back_in_its_copy() -> None:
    """A call of a function named is moved to a domain onnx does not know for its pass: its
    outputs get no types, and the typed copy holds it as it was, with no opset of that
    domain."""
    body = [helper.make_node("Relu", ["x"], ["y"])]
    function = helper.make_function("d", "F", ["x"], ["y"], body, _OPSETS)
    nodes = [helper.make_node("F", ["x"], ["r"], domain="d"), helper.make_node("Neg", ["r"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_value_info("y", TypeProto())],
    )  # fmt: skip
    opsets = [*_OPSETS, helper.make_opsetid("d", 1)]
    model = helper.make_model(graph, opset_imports=opsets, functions=[function])
    given, typed = typed_copy(model, [("d", "F", "")])
    assert given is model  # nothing to drop: onnx was given the model itself
    assert [(n.op_type, n.domain) for n in typed.graph.node] == [("F", "d"), ("Neg", "")]
    assert sorted(o.domain for o in typed.opset_import) == ["", "d"]
    view = ModelView.read(given)
    view.take_types(typed)
    assert view.main.type_of("r") is None
    assert view.main.type_of("y") is None
    view.take_types(typed_copy(model)[1])
    assert view.main.type_of("y") == TensorType(F, (2,))


def test_value_info_of_negative_dims_is_dropped_from_the_model_onnx_is_given() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "g",
        [helper.make_tensor_value_info("x", F, [2])], [],
        value_info=[helper.make_tensor_value_info("r", F, [-1]),
                    helper.make_tensor_value_info("s", F, [3])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=_OPSETS)
    given, typed = typed_copy(model)
    assert [e.name for e in given.graph.value_info] == ["s"]
    assert [e.name for e in model.graph.value_info] == ["r", "s"]  # the model is left as it is
    assert {e.name: shape_text(e.type) for e in typed.graph.value_info}["r"] == "[2]"


def test_onnx_s_inference_of_one_node_from_types_and_values_given() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    graph = helper.make_graph(nodes, "g", [], [])
    view = ModelView.read(helper.make_model(graph, opset_imports=_OPSETS))
    node = view.main.nodes[0]
    types = {"x": TensorType(F, (2, 6)), "shape": TensorType(I64, (2,))}
    assert infer_node(node, types, {}) == {"y": TensorType(F, (None, None))}
    given = {"shape": np.array([3, 4], np.int64)}
    assert infer_node(node, types, given) == {"y": TensorType(F, (3, 4))}
    unknown = helper.make_node("Nothing", ["x"], ["y"], domain="nowhere")
    view = ModelView.read(helper.make_model(helper.make_graph([unknown], "g", [], [])))
    assert infer_node(view.main.nodes[0], types, {}) == {}


def _function_model() -> onnx.ModelProto:
    body = [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, axis=0)]
    function = helper.make_function("d", "Halves", ["x"], ["a", "b"], body, _OPSETS)
    calls = [
        helper.make_node(
            "Halves",
            [
                "x",
            ],
            ["p", "q"],
            domain="d",
            name="first",
        ),
        helper.make_node("Halves", ["z"], ["r", ""], domain="d", name="second"),
    ]
    graph = helper.make_graph(
        calls, "g",
        [helper.make_tensor_value_info("x", F, [4]), helper.make_tensor_value_info("z", F, [6])],
        [helper.make_value_info(n, TypeProto()) for n in "pqr"],
    )  # fmt: skip
    opsets = [*_OPSETS, helper.make_opsetid("d", 1)]
    return helper.make_model(graph, opset_imports=opsets, functions=[function])


def test_a_call_s_outputs_by_onnx_s_inference_of_its_function() -> None:
    view = ModelView.read(_function_model())
    function = view.functions[("d", "Halves", "")]
    found = infer_call_outputs(function, view.main.nodes[0], [TensorType(F, (4,))])
    assert found == [TensorType(F, (2,)), TensorType(F, (2,))]


def test_a_model_of_one_call_names_its_values_by_position() -> None:
    """Calls alike (the same input types and constants, the same attributes) have one model
    whatever their names; a constant input is an initializer, a typed one an input."""
    view = ModelView.read(_function_model())
    function = view.functions[("d", "Halves", "")]
    first, second = view.main.nodes

    def typed(name: str) -> tuple[TensorType, None]:
        return TensorType(F, (4,)), None

    made, key = call_model(function, first, typed)
    again, key_again = call_model(function, second, typed)
    assert [i.name for i in made.graph.input] == ["call_in0"]
    assert list(made.graph.node[0].output) == [call_output(0), call_output(1)]
    assert list(again.graph.node[0].output) == [call_output(0), ""]
    assert key != key_again  # the second call leaves an output out
    constant, _ = call_model(
        function, first, lambda name: (TensorType(F, (4,)), np.arange(4, dtype=np.float32))
    )
    assert [t.name for t in constant.graph.initializer] == ["call_in0"]
    inlined = inline_call(with_functions(made, view), function)
    assert inlined is not None
    assert [n.op_type for n in inlined.graph.node] == ["Split"]


def test_a_call_nobody_makes_gives_the_function_s_inputs_and_defaults() -> None:
    view = ModelView.read(_function_model())
    function = view.functions[("d", "Halves", "")]
    function.proto.attribute_proto.append(helper.make_attribute("k", 3))
    made, _ = call_model(function, None, lambda name: (None, None))
    node = made.graph.node[0]
    assert (node.op_type, node.domain) == ("Halves", "d")
    assert [a.name for a in node.attribute] == ["k"]
    assert [i.name for i in made.graph.input] == ["call_in0"]
    assert not made.graph.input[0].type.HasField("tensor_type")


def test_written_types_merge_into_declarations_and_name_placeholders() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, ["N", 2])],
        [helper.make_tensor_value_info("y", F, ["M", None])],
        value_info=[helper.make_tensor_value_info("u", F, ["unk__0"])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=_OPSETS)
    view = ModelView.read(model)
    typed = typed_copy(model)[1]
    view.take_types(typed)
    write_types(
        view.main,
        {"y": TensorType(F, (5, "unk__0")), "r": TensorType(F, ("unk__0", 2))},
        {"unk__0": "ceiling(N/2)"},
    )
    declared = {e.name: shape_text(e.type) for e in typed.graph.output}
    infos = {e.name: shape_text(e.type) for e in typed.graph.value_info}
    assert declared["y"] == "[5, ceiling(N/2)]"  # a length for the name M, as onnx merges
    assert infos["r"] == "[ceiling(N/2), 2]"
    assert infos["u"] == "[ceiling(N/2)]"  # a placeholder named wherever onnx wrote it
    assert [e.name for e in model.graph.value_info] == ["u"]  # the model is left alone


def test_a_type_written_as_none_leaves_only_what_the_model_declared() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"])], "g",
        [helper.make_tensor_value_info("x", F, [2])], [],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=_OPSETS)
    view = ModelView.read(model)
    typed = typed_copy(model)[1]
    assert [e.name for e in typed.graph.value_info] == ["r"]
    view.take_types(typed)
    write_types(view.main, {"r": None}, {})
    assert [e.name for e in typed.graph.value_info] == []


def test_placeholders_of_frozen_types() -> None:
    base = SequenceType(TensorType(F, ("unk__1", 4, "unk__2")))
    ours = SequenceType(TensorType(F, ("ceiling(N/2)", 4, None)))
    assert list(named_placeholders(base, ours)) == [("unk__1", "ceiling(N/2)")]
    assert list(named_placeholders(base, TensorType(F, (1, 4, 2)))) == []  # another kind
    assert unnamed_placeholders(base, {"unk__1"})
    assert not unnamed_placeholders(base, {"unk__1", "unk__2"})
    assert renamed(base, {"unk__2": 7}) == SequenceType(TensorType(F, ("unk__1", 4, 7)))
    assert renamed(base, {"unk__9": 7}) is base


def test_rename_all_names_placeholders_in_entries_of_every_kind() -> None:
    entry = helper.make_tensor_sequence_value_info("s", F, ["unk__1", 3])
    tensor = helper.make_tensor_value_info("t", F, ["unk__1", "unk__2"])
    rename_all([entry, tensor], {"unk__1": 5, "unk__2": "N"})
    assert (shape_text(entry.type), shape_text(tensor.type)) == ("[5, 3]", "[5, N]")


def test_a_type_of_another_kind_is_hashable_by_its_bytes() -> None:
    optional = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    found = OtherType("optional_type", optional)
    copy = TypeProto()
    copy.CopyFrom(optional)
    assert {found: 1}[OtherType("optional_type", copy)] == 1
