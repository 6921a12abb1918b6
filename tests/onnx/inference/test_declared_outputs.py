"""Types the model declares for its values (graph outputs, ``value_info``, as exporters
write them) meet the inferred ones as onnx merges them: an unknown dim takes the inferred
dim, a declared name stays unless a value is inferred, two values must agree. A Split
output whose declared type contradicts the inferred one is a ``declared-shape`` problem."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
from harness.shapes import KNOWN, executed_shapes, split_dim_verdicts
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import ModelProto, TensorProto, helper, shape_inference

from splitops import SplitError, check_model, infer_shapes
from splitops.onnx.inference._engine import SplitInferenceWarning
from splitops.onnx.model._types import conflicts, declared_type

F = TensorProto.FLOAT
MakeModel = Callable[..., ModelProto]
Shapes = Callable[[ModelProto], dict[str, Any]]


def _halves(make_model: MakeModel, dims: list[Any], declared: list[Any] | None) -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2, name="s")
    model = make_model([node], {"x": (F, dims)}, opset=18)
    if declared is not None:
        for output in model.graph.output:
            output.type.CopyFrom(helper.make_tensor_type_proto(F, declared))
    return model


def test_declared_unknown_dims_of_split_outputs_are_filled_as_onnx_fills_them(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    model = _halves(make_model, [2, 4], [None, None])
    theirs = value_shapes(shape_inference.infer_shapes(model))
    ours = value_shapes(infer_shapes(model))
    assert theirs["a"] == theirs["b"] == ("tensor", F, [1, 4])
    assert ours["a"] == ours["b"] == theirs["a"]


def test_declared_unknown_dims_take_the_symbolic_sizes_that_execution_confirms(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    pytest.importorskip("onnxruntime")
    declared = _halves(make_model, ["N", 4], [None, None])
    shapes = executed_shapes(declared, [{"x": np.zeros((n, 4), np.float32)} for n in (5, 8)])
    verdicts = split_dim_verdicts(infer_shapes(declared), shapes)
    assert verdicts == {"a": [KNOWN, KNOWN], "b": [KNOWN, KNOWN]}
    undeclared = value_shapes(infer_shapes(_halves(make_model, ["N", 4], None)))
    assert value_shapes(infer_shapes(declared)) == undeclared


def test_declared_value_info_entries_are_filled_too(
    make_model: MakeModel, value_shapes: Shapes
) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2),
        helper.make_node("Relu", ["a"], ["r"]),
    ]
    model = make_model(nodes, {"x": (F, ["N", 6])}, opset=18, outputs=["b", "r"])
    model.graph.value_info.append(helper.make_tensor_value_info("a", F, ["M", None]))
    inferred = infer_shapes(model)
    (entry,) = [v for v in inferred.graph.value_info if v.name == "a"]
    assert [d.dim_param or d.dim_value for d in entry.type.tensor_type.shape.dim] == ["M", 3]


@pytest.mark.parametrize("strict", [True, False])
def test_a_declared_dim_that_contradicts_a_split_output_is_an_error_naming_both(
    make_model: MakeModel, value_shapes: Shapes, strict: bool
) -> None:
    model = _halves(make_model, [4, 3], [3, 3])
    if strict:
        with pytest.raises(SplitError, match=r"node 's' .*declared .*\[3, 3\].*\[2, 3\]") as e:
            infer_shapes(model)
        assert e.value.rule == "declared-shape"
        assert "dim 0 is declared 3 and inferred 2" in str(e.value)
    else:
        with pytest.warns(SplitInferenceWarning, match="declared"):
            shapes = value_shapes(infer_shapes(model, strict=False))
        assert shapes["a"] == ("tensor", F, [3, 3])  # the declaration is kept
    assert [d.rule for d in check_model(model)] == ["declared-shape"] * 2


def test_a_declared_element_type_or_rank_that_contradicts_is_an_error(
    make_model: MakeModel,
) -> None:
    model = _halves(make_model, [4, 3], None)
    model.graph.output[0].type.CopyFrom(helper.make_tensor_type_proto(TensorProto.INT64, None))
    model.graph.output[1].type.CopyFrom(helper.make_tensor_type_proto(F, [2, 3, 1]))
    messages = [d.message for d in check_model(model)]
    assert len(messages) == 2
    assert "element type is declared int64 and inferred float" in messages[0]
    assert "rank is declared 3 and inferred 2" in messages[1]


# --- the merge is onnx's ----------------------------------------------------------------------

dims = st.one_of(st.none(), st.integers(0, 4), st.sampled_from(["M", "N"]))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3).flatmap(lambda n: st.tuples(*[st.tuples(dims, dims)] * n)))
def test_declared_and_inferred_dims_merge_as_onnx_merges_them(
    pairs: tuple[tuple[Any, Any], ...],
) -> None:
    declared = helper.make_tensor_type_proto(F, [d for d, _ in pairs])
    inferred = helper.make_tensor_type_proto(F, [i for _, i in pairs])
    if list(conflicts(declared, inferred)):
        return  # onnx keeps a contradicting declaration silently; splitops reports it
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_value_info("x", inferred)],
        [helper.make_value_info("y", declared)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (theirs,) = shape_inference.infer_shapes(model).graph.output
    assert _said(declared_type(declared, inferred)) == _said(theirs.type)


def _said(type_proto: onnx.TypeProto) -> list[Any]:
    """The dims, with onnx's fresh placeholders for unknown dims read as unknown."""
    found = []
    for dim in type_proto.tensor_type.shape.dim:
        name = dim.dim_param
        unknown = not dim.HasField("dim_value") and (not name or name.startswith("unk__"))
        found.append(None if unknown else dim.dim_value if dim.HasField("dim_value") else name)
    return found


def test_onnx_placeholders_in_a_declaration_declare_nothing() -> None:
    # onnx would keep "unk__3"; it names a dim that an earlier pass of onnx could not tell.
    declared = helper.make_tensor_type_proto(F, ["unk__3", 4])
    inferred = helper.make_tensor_type_proto(F, ["ceiling(N/2)", 4])
    assert declared_type(declared, inferred) == inferred
    assert list(conflicts(declared, onnx.TypeProto())) == []
