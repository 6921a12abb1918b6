"""Inference is one pass: onnx infers a model once, whatever the number of Split nodes in a
chain, and splitops asks onnx about single nodes at most once each; the chains of the
benchmark come out as onnxruntime executes them; onnx is never run on a node that aborts it;
and the operators given their input's type without asking onnx are those onnx gives it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import onnx
import onnx.shape_inference
import pytest
from benchmarks.inference import chain_model, wide_model
from harness.shapes import KNOWN, WRONG, executed_shapes, split_dim_verdicts
from onnx import TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops import Rule, SplitError, infer_shapes
from splitops.onnx.inference import _engine
from splitops.onnx.inference._engine import SAME_TYPE_OPS
from splitops.onnx.model import _walk
from splitops.onnx.model._types import shape_text

F = TensorProto.FLOAT


@pytest.fixture
def onnx_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times onnx inferred a whole model, a node, a function call."""
    counts = {"infer_shapes": 0, "infer_node_outputs": 0, "infer_function_output_types": 0}
    for name in counts:
        original = getattr(onnx.shape_inference, name)

        def counted(*args: Any, __name: str = name, __f: Any = original, **kwargs: Any) -> Any:
            counts[__name] += 1
            return __f(*args, **kwargs)

        monkeypatch.setattr(onnx.shape_inference, name, counted)
    return counts


@pytest.mark.parametrize("axis", [0, 1], ids=["dynamic-axis", "static-axis"])
@pytest.mark.parametrize("links", [3, 60])
def test_onnx_infers_the_model_once_and_each_node_at_most_once(
    links: int, axis: int, onnx_calls: dict[str, int]
) -> None:
    model = chain_model(links, axis)
    infer_shapes(model)
    assert onnx_calls["infer_shapes"] == 1
    assert onnx_calls["infer_node_outputs"] <= len(model.graph.node)


def test_a_wide_model_is_one_pass_too(onnx_calls: dict[str, int]) -> None:
    model = wide_model(300)
    inferred = infer_shapes(model)
    assert onnx_calls["infer_shapes"] == 1
    assert onnx_calls["infer_node_outputs"] <= len(model.graph.node)
    types = {v.name: v.type for v in [*inferred.graph.value_info, *inferred.graph.output]}
    dims = [d.dim_param or d.dim_value for d in types["y"].tensor_type.shape.dim]
    assert dims == ["B", 32]


@pytest.mark.parametrize("axis", [0, 1], ids=["dynamic-axis", "static-axis"])
def test_chain_split_dims_are_the_executed_dims_and_no_fewer_than_onnx_knows(axis: int) -> None:
    model = chain_model(12, axis)
    feeds = [{"x": np.zeros((b, 64), np.float32)} for b in (6, 11)]
    shapes = executed_shapes(model, feeds)
    ours = split_dim_verdicts(infer_shapes(model), shapes)
    theirs = split_dim_verdicts(onnx.shape_inference.infer_shapes(model, data_prop=True), shapes)
    for name, row in ours.items():
        assert WRONG not in row
        assert row == [KNOWN, KNOWN], (name, row)  # every size: ceiling(B/2), B - ceiling(B/2)
        assert all(v != KNOWN or o == KNOWN for v, o in zip(theirs[name], row, strict=True))


def test_a_split_of_a_concat_of_halves_is_split_on_the_whole_again() -> None:
    # Concat adds the symbolic halves up to B, so every link splits B, not a new unknown.
    inferred = infer_shapes(chain_model(4))
    types = {v.name: v.type for v in inferred.graph.value_info}
    assert [types[f"c{i}"].tensor_type.shape.dim[0].dim_param for i in range(4)] == ["B"] * 4
    assert types["a3"] == types["a0"]


def _abort_case(outputs: int, num_outputs: int) -> str:
    return textwrap.dedent(
        f"""
        import onnx, splitops
        from onnx import TensorProto, helper
        node = helper.make_node("Split", ["x"], [f"o{{i}}" for i in range({outputs})],
                                num_outputs={num_outputs}, name="s")
        graph = helper.make_graph([node, helper.make_node("Relu", ["o0"], ["r"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 3])],
            [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        print([d.rule for d in splitops.check_model(model)])
        """
    )


@pytest.mark.parametrize(
    ("outputs", "num_outputs", "rule"),
    [(3, 2, "output-count"), (1, 2**31 - 1, "limit")],
    ids=["more-outputs-than-num_outputs", "num_outputs-2**31-1"],
)
def test_onnx_never_infers_a_split_that_aborts_or_exhausts_it(
    outputs: int, num_outputs: int, rule: str
) -> None:
    # onnx 1.23 aborts the process on the first and allocates 2**31 sizes for the second
    # (which splitops' max_parts limit refuses before planning): run in a child process, so
    # that a regression fails this test, not the whole run.
    done = subprocess.run(
        [sys.executable, "-c", _abort_case(outputs, num_outputs)],
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == repr([rule])


def _opset_of(op: str) -> int | None:
    """The first default-domain opset at or below 21 that has ``op``."""
    try:
        return int(onnx.defs.get_schema(op, 21, "").since_version)
    except onnx.defs.SchemaError:
        return None


@pytest.mark.parametrize("op", sorted(SAME_TYPE_OPS))
def test_same_type_ops_are_those_onnx_gives_their_input_type(op: str) -> None:
    opset = _opset_of(op)
    assert opset is not None, op
    schema = onnx.defs.get_schema(op, max(opset, 18), "")
    element = TensorProto.BOOL if op == "Not" else TensorProto.INT32 if "Bitwise" in op else F
    given = helper.make_tensor_type_proto(element, ["N", 3, "M"])
    node = helper.make_node(op, ["x"], ["y"])
    imports = [helper.make_opsetid("", max(opset, 18))]
    found = onnx.shape_inference.infer_node_outputs(
        schema, node, {"x": given}, opset_imports=imports
    )
    assert found["y"] == given


def test_the_input_model_is_not_modified() -> None:
    model = chain_model(5)
    model.graph.output[0].type.CopyFrom(helper.make_tensor_type_proto(F, [None, None]))
    before = model.SerializeToString()
    inferred = infer_shapes(model)
    assert model.SerializeToString() == before
    assert inferred.SerializeToString() != before


@pytest.mark.parametrize("overridable", [False, True], ids=["constant", "graph input"])
def test_large_weights_come_back_in_order_and_never_as_inputs(overridable: bool) -> None:
    """onnx's pass sees large weights as typed inputs; the inferred model has them back as
    they were: initializers in their order, graph inputs only where the model had them."""
    weights = [
        numpy_helper.from_array(np.full(size, i, np.float32), f"w{i}")
        for i, size in enumerate([2000, 8, 4000])
    ]
    nodes = [
        helper.make_node("Split", [t.name], [f"{t.name}a", f"{t.name}b"], num_outputs=2)
        for t in weights
    ]
    # Overridable: every large weight is also a graph input, so none is added as one.
    large = [t for t in weights if t.dims[0] > 1024]
    inputs = [
        helper.make_tensor_value_info(t.name, TensorProto.FLOAT, t.dims)
        for t in (large if overridable else [])
    ]
    outputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
        for node in nodes
        for name in node.output
    ]
    graph = helper.make_graph(nodes, "weights", inputs, outputs, weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    inferred = infer_shapes(model)
    assert list(inferred.graph.initializer) == weights
    assert [i.name for i in inferred.graph.input] == (["w0", "w2"] if overridable else [])
    halves = {
        o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in inferred.graph.output
    }
    assert halves == {
        "w0a": [1000],
        "w0b": [1000],
        "w1a": [4],
        "w1b": [4],
        "w2a": [2000],
        "w2b": [2000],
    }


def test_calls_alike_of_a_local_function_are_inferred_once(
    onnx_calls: dict[str, int],
) -> None:
    # Each level calls the one below twice: 2^12 calls, of 13 calls alike (one per level).
    from tests.malformed_models import _calling_twice

    records = _engine.infer_split_nodes(_calling_twice(12))
    assert onnx_calls["infer_shapes"] <= 2 * 14  # the model, each call alike (and its check)
    [record] = records
    assert record.graph == "function:local.F0"
    assert [(name, shape_text(t)) for name, t in record.outputs] == [("a", "[2]"), ("b", "[2]")]


def test_if_branches_alike_are_walked_once_and_every_split_gets_its_types(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Both branches of every If hold the If below: 2^12 Splits, and 13 graphs unlike.
    from tests.malformed_models import _if_tree

    walked = []
    original = _engine._Pass._walk

    def counted(self: Any, graph: Any) -> None:
        walked.append(graph.scope.label)
        original(self, graph)

    monkeypatch.setattr(_engine._Pass, "_walk", counted)
    records = _engine.infer_split_nodes(_if_tree(12))
    assert len(walked) <= 2 * 13
    assert len(records) == 2**12
    assert len({record.graph for record in records}) == 2**12
    assert all(shape_text(dict(r.outputs)["a"]) == "[2]" for r in records)


def test_inference_of_branches_alike_reads_each_node_a_few_times_at_any_depth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ifs nested 12 and 14 deep, both branches of each holding the If below: 8k and 32k
    # nodes, 13 and 15 graphs unlike. Finding the nodes onnx must not see (which counts
    # them) and placing the graphs alike read a node's attributes once each; the names a
    # graph reads outside are found once per graph walked, not once per graph around it.
    from tests.malformed_models import _if_tree

    reads: dict[int, int] = {}
    held = _walk._held_graphs

    def counted(node: onnx.NodeProto) -> list[tuple[str, int, onnx.GraphProto]]:
        reads[depth] += 1
        return held(node)

    monkeypatch.setattr(_walk, "_held_graphs", counted)
    for depth in (12, 14):
        reads[depth] = 0
        infer_shapes(_if_tree(depth))
        assert reads[depth] <= 2 * (2 ** (depth + 1) - 1)
    assert reads[14] <= 4.5 * reads[12]


@pytest.mark.parametrize(("limit", "refused"), [(2**4 - 2, True), (2**4 - 1, False)])
def test_a_model_of_too_many_nodes_in_its_subgraphs_is_refused_before_onnx_s_pass(
    monkeypatch: pytest.MonkeyPatch, limit: int, refused: bool
) -> None:
    # Ifs 3 deep: 7 Ifs and 8 Splits, all but one in subgraphs.
    from tests.malformed_models import _if_tree

    passes = []
    original = onnx.shape_inference.infer_shapes

    def counted(model: onnx.ModelProto, *args: Any, **kwargs: Any) -> onnx.ModelProto:
        passes.append(model)
        return original(model, *args, **kwargs)

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", counted)
    with splitops.limits(max_nodes=limit):
        if refused:
            with pytest.raises(SplitError, match="max_nodes") as caught:
                _engine.infer_split_nodes(_if_tree(3))
            assert caught.value.rule is Rule.LIMIT
            assert passes == []
        else:
            assert len(_engine.infer_split_nodes(_if_tree(3))) == 2**3
            assert len(passes) == 1


def test_each_split_of_a_node_holding_two_graphs_of_one_name_is_recorded_at_its_place() -> None:
    # An If whose else_branch is named then_branch too: both graphs lie at one path.
    from tests.malformed_models import _branch_twice

    records = _engine.infer_split_nodes(_branch_twice())
    assert [(record.graph, record.node.op_type) for record in records] == [
        ("main/if1.then_branch", "Split"),
        ("main/if1.then_branch/if0.else_branch", "Split"),
        ("main/if1.then_branch/if0.then_branch", "Split"),
    ]


def test_a_model_of_too_many_nodes_once_its_calls_are_counted_is_refused() -> None:
    from tests.malformed_models import _calling_twice

    with splitops.limits(max_nodes=2**12), pytest.raises(SplitError, match="max_nodes") as caught:
        _engine.infer_split_nodes(_calling_twice(12))
    assert caught.value.rule is Rule.LIMIT
