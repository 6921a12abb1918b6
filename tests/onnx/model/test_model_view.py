"""The model view: one reading of a model's scopes, values, uses, constants and names, by
ONNX's scoping rules; and the contract every rewrite keeps (inputs, outputs, what it
computes)."""

from __future__ import annotations

import gc

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

import splitops
from splitops.onnx.model import ScopePlace
from splitops.onnx.model._edits import ModelEdits
from splitops.onnx.model._view import ModelView, is_overridable
from splitops.onnx.rewrite._contract import RewriteError, check_rewrite

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _constant(name: str, values: list[int]) -> onnx.NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(np.array(values, np.int64), name)
    )


def _branch(name: str, k: list[int]) -> onnx.GraphProto:
    """A branch that defines its own ``k`` and reads the outer ``x``."""
    nodes = [_constant("k", k), helper.make_node("Split", ["x", "k"], [f"{name}_a", f"{name}_b"])]
    return helper.make_graph(
        nodes, name, [], [helper.make_tensor_value_info(f"{name}_a", F, [None])]
    )


def _if_model(ir_version: int = 8) -> ModelProto:
    node = helper.make_node(
        "If", ["c"], ["y"], then_branch=_branch("t", [2, 4]), else_branch=_branch("e", [5, 1])
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", F, [6]),
        ],
        [helper.make_tensor_value_info("y", F, [None])],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=ir_version
    )


def test_sibling_branches_each_see_their_own_constant() -> None:
    view = ModelView.read(_if_model())
    then_scope, else_scope = (s for s in view.scopes if s.parent is view.main)
    assert then_scope.constant("k").tolist() in ([2, 4], [5, 1])
    assert {tuple(then_scope.constant("k")), tuple(else_scope.constant("k"))} == {(2, 4), (5, 1)}
    assert then_scope.value("k") is not else_scope.value("k")


def test_a_subgraph_sees_its_ancestors_and_the_main_graph_not_its_subgraphs() -> None:
    view = ModelView.read(_if_model())
    branch = view.scopes[1]
    assert branch.value("x") is view.main.value("x")
    assert view.main.value("k") is None
    assert view.main.value("t_a") is None
    assert view.main.value("e_a") is None


def test_uses_of_an_outer_value_include_the_nodes_of_its_subgraphs() -> None:
    view = ModelView.read(_if_model())
    x = view.main.value("x")
    assert x is not None
    labels = sorted(usage.node.scope.label for usage in x.uses)
    assert labels == sorted(s.label for s in view.scopes[1:])
    c = view.main.value("c")
    assert c is not None
    assert [(usage.node.op_type, usage.index) for usage in c.uses] == [("If", 0)]


def test_each_split_reads_its_own_branch_constant() -> None:
    view = ModelView.read(_if_model())
    found = {node.scope.label: node.input_value(1) for node in view.split_nodes()}
    assert len(found) == 2
    values = {label: value.constant().tolist() for label, value in found.items() if value}
    assert sorted(values.values()) == [[2, 4], [5, 1]]


def test_a_function_sees_only_itself() -> None:
    function = helper.make_function(
        "local",
        "f",
        ["x"],
        ["a"],
        [_constant("k", [1, 5]), helper.make_node("Split", ["x", "k"], ["a", "b"])],
        opset_imports=[helper.make_opsetid("", 13)],
    )
    graph = helper.make_graph(
        [_constant("k", [3, 3]), helper.make_node("f", ["x"], ["y"], domain="local")],
        "g",
        [helper.make_tensor_value_info("x", F, [6])],
        [helper.make_tensor_value_info("y", F, [None])],
    )
    model = helper.make_model(
        graph,
        functions=[function],
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
    )
    view = ModelView.read(model)
    function_scope = next(s for s in view.scopes if s.is_function)
    assert function_scope.parent is None
    assert function_scope.constant("k").tolist() == [1, 5]
    assert view.main.constant("k").tolist() == [3, 3]


@pytest.mark.parametrize(("ir_version", "constant"), [(3, True), (4, False), (8, False)])
def test_an_initializer_listed_as_input_is_a_constant_only_before_ir4(
    ir_version: int, constant: bool
) -> None:
    graph = helper.make_graph(
        [helper.make_node("Split", ["x", "s"], ["a", "b"])],
        "g",
        [helper.make_tensor_value_info("x", F, [6]), helper.make_tensor_value_info("s", I64, [2])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "ab"],
        [numpy_helper.from_array(np.array([2, 4], np.int64), "s")],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=ir_version
    )
    view = ModelView.read(model)
    value = view.main.value("s")
    assert value is not None
    assert value.is_input
    assert value.initializer is not None
    assert value.overridable is not constant
    assert (view.main.constant("s") is not None) is constant
    assert is_overridable(ir_version, ["x", "s"], "s") is not constant
    # The inputs a caller must feed: only x, whatever the IR version.
    assert [entry.name for entry in view.fed_inputs()] == ["x"]


def test_fresh_names_are_unique_across_every_scope() -> None:
    view = ModelView.read(_if_model())
    names = [view.fresh_name("k"), view.fresh_name("k"), view.fresh_name("t_a")]
    assert names == ["k_1", "k_2", "t_a_1"]


def test_graph_outputs_are_known_per_scope() -> None:
    view = ModelView.read(_if_model())
    branch = view.scopes[1]
    out = branch.output_names()[0]
    value = branch.value(out)
    assert value is not None
    assert value.output_of == [branch]
    assert view.main.value("y") is not None
    assert view.main.value("y").output_of == [view.main]


def test_edits_drop_an_unread_constant_but_never_a_graph_input() -> None:
    graph = helper.make_graph(
        [
            helper.make_node("Split", ["x", "s"], ["a", "b"]),
            _constant("t", [1, 5]),
            helper.make_node("Split", ["x", "t"], ["c", "d"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [6]), helper.make_tensor_value_info("s", I64, [2])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "abcd"],
        [numpy_helper.from_array(np.array([2, 4], np.int64), "s")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=3)
    view = ModelView.read(model)
    first, second = view.split_nodes()
    edits = ModelEdits(view)
    for node in (first, second):
        new = helper.make_node("Split", ["x"], list(node.proto.output), split=[3, 3])
        edits.replace(node, [new])
        edits.drop(node.input_value(1))
    edits.apply()
    assert [entry.name for entry in model.graph.input] == ["x", "s"]
    assert [t.name for t in model.graph.initializer] == ["s"]
    assert [n.op_type for n in model.graph.node] == ["Split", "Split"]


def test_a_rewrite_that_changes_the_graph_inputs_is_an_internal_error() -> None:
    model = _if_model()
    changed = ModelProto()
    changed.CopyFrom(model)
    changed.graph.input[1].type.tensor_type.elem_type = TensorProto.DOUBLE
    with pytest.raises(RewriteError, match="inputs: their types changed"):
        check_rewrite(model, changed, "lowering", before=ModelView.read(model))


def test_a_rewrite_that_changes_a_static_size_is_an_internal_error() -> None:
    graph = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=[2, 4], name="s")],
        "g",
        [helper.make_tensor_value_info("x", F, [6])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "ab"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    wrong = ModelProto()
    wrong.CopyFrom(model)
    wrong.graph.node[0].attribute[1].ints[:] = [3, 3]
    before = ModelView.read(model, types=onnx.shape_inference.infer_shapes(model))
    with pytest.raises(RewriteError, match=r"main/s computes: of 'a', dim 0 is 2 before"):
        check_rewrite(model, wrong, "lowering", before=before)


def _info(name: str, dims: list[int | None]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, F, dims)


def test_the_contract_finds_a_wrong_size_in_a_branch_moved_by_the_edits() -> None:
    """Edits that put nodes before an If move its branches (their index in the main graph
    changes): the contract compares each edited scope with the graph where it now lies,
    and names the branch's node whose sizes changed."""
    branch = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=[2, 4], name="cut")],
        "then",
        [],
        [helper.make_tensor_value_info("a", F, [None])],
    )
    nodes = [
        helper.make_node("Neg", ["x"], ["y"], name="first"),
        helper.make_node("If", ["c"], ["o"], then_branch=branch, else_branch=branch, name="pick"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []), _info("x", [6])],
        [_info("o", [None]), _info("y", [6])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    edited = ModelProto()
    edited.CopyFrom(model)
    view = ModelView.read(edited, types=onnx.shape_inference.infer_shapes(model))
    edits = ModelEdits(view)
    first = view.main.nodes[0]
    edits.replace(first, [helper.make_node("Identity", ["x"], ["x2"]), first.proto])
    branch_scope = next(s for s in view.scopes if s.label == "main/pick.then_branch")
    wrong = helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=[3, 3], name="cut")
    edits.replace(branch_scope.nodes[0], [wrong])
    edits.apply()
    assert [n.op_type for n in edited.graph.node] == ["Identity", "Neg", "If"]
    assert edits.key_after(branch_scope.key) == (None, ((2, "then_branch", -1),))
    with pytest.raises(
        RewriteError, match=r"main/pick.then_branch/cut computes: of 'a', dim 0 is 2 before"
    ):
        check_rewrite(model, edited, "lowering", before=view, edits=edits)


def test_lowering_keeps_an_input_that_only_an_unread_sequence_read_and_its_check() -> None:
    graph = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x", "k"], ["seq"]),
            helper.make_node("Neg", ["x"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [6]), helper.make_tensor_value_info("k", I64, [])],
        [helper.make_tensor_value_info("y", F, [6])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    lowered = splitops.lower_model(model)
    assert [entry.name for entry in lowered.graph.input] == ["x", "k"]
    # No sequence is left, but k is still checked as the spec checks it at run time.
    assert "SplitToSequence" not in [node.op_type for node in lowered.graph.node]
    assert lowered.graph.node[-1].op_type == "Neg"
    assert any(node.name.endswith("chunk_length_must_be_at_least_1") for node in lowered.graph.node)


def test_lowering_at_ir3_keeps_initializers_that_are_inputs() -> None:
    graph = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x", "s"], ["seq"]),
            helper.make_node("SequenceAt", ["seq", "i"], ["p"]),
        ],
        "g",
        [
            helper.make_tensor_value_info("x", F, [6]),
            helper.make_tensor_value_info("s", I64, []),
            helper.make_tensor_value_info("i", I64, []),
        ],
        [helper.make_tensor_value_info("p", F, [None])],
        [
            numpy_helper.from_array(np.array(4, np.int64), "s"),
            numpy_helper.from_array(np.array(1, np.int64), "i"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=3)
    onnx.checker.check_model(model)
    lowered = splitops.lower_model(model)
    onnx.checker.check_model(lowered, full_check=True)
    assert [entry.name for entry in lowered.graph.input] == ["x", "s", "i"]
    assert {t.name for t in lowered.graph.initializer} >= {"s", "i"}
    x = np.arange(6, dtype=np.float32)
    from onnx.reference import ReferenceEvaluator

    (part,) = ReferenceEvaluator(lowered).run(None, {"x": x})
    assert part.tolist() == [4.0, 5.0]


def test_a_view_and_the_tools_reading_through_it_leave_no_reference_cycle() -> None:
    """A view points back to its owners weakly, so the memory of a model a tool copied (its
    weights too) goes back when the result dies, not at the next run of the cycle collector:
    a cycle held a lowered model of 256 MiB of weights while the next tool made its own."""
    model = _if_model()
    model.graph.initializer.append(numpy_helper.from_array(np.zeros(2048, np.float32), "w"))
    tools = (splitops.lower_model, splitops.infer_shapes, lambda m: splitops.convert_model(m, 13))
    gc.collect()
    gc.disable()
    try:
        view = ModelView.read(model)
        assert view.scopes[1].parent is view.main
        del view
        for tool in tools:
            tool(model)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        # Ours only: a library imported earlier (torch after torch.compile) may leave cycles
        # of its own whenever it is asked whether an array is one of its tensors.
        ours = [
            type(o).__qualname__
            for o in gc.garbage
            if type(o).__module__.split(".")[0] in ("splitops", "onnx", "google")
        ]
        assert not ours, ours
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_a_node_of_a_dropped_view_says_so() -> None:
    node = next(ModelView.read(_if_model()).split_nodes())
    with pytest.raises(ReferenceError, match="the ModelView this belongs to is gone"):
        _ = node.scope


def test_a_scope_asked_for_by_its_identity_is_the_one_the_whole_walk_finds() -> None:
    from tests.malformed_models import _if_tree

    model = _if_tree(3)
    lazy = ModelView.read(model)
    deep = (None, ((0, "else_branch", -1), (0, "then_branch", -1), (0, "else_branch", -1)))
    found = lazy.scope(deep)
    assert found is not None
    assert found.label == "main/if2.else_branch/if1.then_branch/if0.else_branch"
    assert found.parent is lazy.scope((None, deep[1][:2]))
    # the walk of every scope finds the same objects, in depth-first order
    assert found in lazy.scopes
    assert [s.key for s in lazy.scopes] == [s.key for s in ModelView.read(model).scopes]
    assert len(lazy.scopes) == 2**4 - 1
    assert lazy.scope((None, ((0, "no_branch", -1),))) is None
    assert lazy.scope((None, ((7, "then_branch", -1),))) is None


def test_the_places_of_scopes_say_what_the_scopes_say_and_make_them_only_when_asked() -> None:
    from tests.malformed_models import _if_tree

    # Ifs 3 deep, and a Loop whose body holds the tree: branches inside a body, and a body
    # inside no branch.
    tree = _if_tree(3).graph
    loop = helper.make_node("Loop", ["", "c"], ["z"], body=tree, name="loop")
    model = helper.make_model(
        helper.make_graph([*tree.node, loop], "g", [], []),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    view = ModelView.read(model)
    places, stack = [], [ScopePlace.of(view.main)]
    while stack:
        place = stack.pop()
        places.append(place)
        below = [held for index in range(len(place.proto.node)) for held in place.held(index)]
        stack += reversed(below)
    made = ModelView.read(model).scopes
    assert [(p.label, p.key, p.opset, p.in_branch) for p in places] == [
        (s.label, s.key, s.opset, s.in_branch) for s in made
    ]
    assert [p.proto for p in places] == [s.proto for s in made]
    assert sum(p.in_branch for p in places) == 2 * (2**4 - 2)  # all but the main, the body
    assert [p.key for p in ModelView.read(model).places()] == [s.key for s in made]
    deep = places[3]
    assert deep.key[1] == ((0, "else_branch", -1),) * 3  # onnx sorts attributes by name
    assert view.main._held is None  # no scope made below the main graph yet
    assert deep.scope is view.scope(deep.key)
    assert deep.op_type(0) == "Split"
    assert deep.node_proto(0).name == "halves"


def test_the_types_at_a_place_are_its_scope_s_whether_its_graph_types_a_name_or_not() -> None:
    # The branch types "a" itself, and "b" not: the main graph types a "b" of its own.
    branch = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="s")],
        "then",
        [],
        [helper.make_tensor_value_info("a", F, [2])],
    )
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, None)],
        value_info=[helper.make_tensor_value_info("b", I64, [7])],
    )
    view = ModelView.read(helper.make_model(graph))
    place = next(p for p in view.places() if p.key[1])
    type_of = view.place_types(place)
    other = ModelView.read(helper.make_model(graph))
    scope = other.main.held(0)[0]
    assert [type_of(n) for n in "abx"] == [scope.type_of(n) for n in "abx"]
    assert [str(type_of(n)) for n in "ab"] == [
        "TensorType(element=1, dims=(2,))",
        "TensorType(element=7, dims=(7,))",
    ]


def test_a_scope_knows_its_holder_and_whether_a_branch_holds_it() -> None:
    view = ModelView.read(_if_model())
    assert view.main.holder is None
    assert not view.main.in_branch
    then_scope = view.main.held(0)[1]
    assert then_scope.label == "main/y.then_branch"
    assert then_scope.holder is view.main.nodes[0]
    assert then_scope.attribute_name in ("then_branch", "else_branch")
    assert then_scope.in_branch
    # depth first, in the order the node holds its graphs
    names = [attribute.name for attribute in view.main.proto.node[0].attribute]
    assert [s.label for s in view.main.below()] == ["main"] + [f"main/y.{n}" for n in names]
