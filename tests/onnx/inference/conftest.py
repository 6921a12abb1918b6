"""Fixtures shared by the inference tests: small models around Split nodes, and the shape
of a value as onnx records it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from onnx import (
    FunctionProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    helper,
    numpy_helper,
)

#: An ONNX dim as a test reads it: an int, a dim_param text, or None (unknown).
Dim = int | str | None
#: (kind, element type, dims): kind is "tensor" or "seq"; dims None for an unknown rank.
Shape = tuple[str, int, list[Dim] | None]


def _make_model(
    nodes: Sequence[NodeProto],
    inputs: dict[str, tuple[int, Sequence[Dim] | None]],
    *,
    opset: int,
    constants: dict[str, np.ndarray[Any, Any]] | None = None,
    outputs: Sequence[str] | None = None,
    functions: Sequence[FunctionProto] = (),
) -> ModelProto:
    """A model of ``nodes``: typed graph inputs, constants as initializers, and untyped
    graph outputs (by default the outputs of the last node)."""
    names = list(nodes[-1].output) if outputs is None else list(outputs)
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_value_info(n, TypeProto()) for n in names if n],
        initializer=[numpy_helper.from_array(v, n) for n, v in (constants or {}).items()],
    )
    imports = [helper.make_opsetid("", opset)]
    imports += [helper.make_opsetid(d, 1) for d in sorted({f.domain for f in functions})]
    return helper.make_model(graph, opset_imports=imports, functions=list(functions))


def _if_model(then_node: NodeProto, dims: Sequence[Dim], *, opset: int) -> ModelProto:
    """``out = If(c)``: ``then_node`` (reading ``x``) in the then branch, which returns its
    first output; ``Identity(x)`` in the else branch."""
    then_branch = helper.make_graph(
        [then_node], "then", [], [helper.make_value_info(then_node.output[0], TypeProto())]
    )
    identity = helper.make_node("Identity", ["x"], ["y"])
    else_branch = helper.make_graph(
        [identity], "else", [], [helper.make_value_info("y", TypeProto())]
    )
    branch = helper.make_node(
        "If", ["c"], ["out"], then_branch=then_branch, else_branch=else_branch, name="if"
    )
    inputs = {"x": (TensorProto.FLOAT, dims), "c": (TensorProto.BOOL, [])}
    return _make_model([branch], inputs, opset=opset, outputs=["out"])


def _shape_of(type_proto: TypeProto | None) -> Shape | None:
    if type_proto is None:
        return None
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        inner = _shape_of(type_proto.sequence_type.elem_type)
        return None if inner is None else ("seq", inner[1], inner[2])
    if kind != "tensor_type" or not type_proto.tensor_type.elem_type:
        return None
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return "tensor", tensor.elem_type, None
    dims: list[Dim] = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(int(dim.dim_value))
        else:
            dims.append(dim.dim_param or None)
    return "tensor", tensor.elem_type, dims


def _value_shapes(model: ModelProto) -> dict[str, Shape | None]:
    """The shape of every value that a model's main graph types."""
    entries = [*model.graph.input, *model.graph.value_info, *model.graph.output]
    return {v.name: _shape_of(v.type) for v in entries}


@pytest.fixture(scope="session")
def make_model() -> Callable[..., ModelProto]:
    """``make_model(nodes, {name: (elem_type, dims)}, opset=..., constants=..., ...)``."""
    return _make_model


@pytest.fixture(scope="session")
def if_model() -> Callable[..., ModelProto]:
    """``if_model(then_node, x_dims, opset=...)``: ``then_node`` inside an If named "if"."""
    return _if_model


@pytest.fixture(scope="session")
def shape_of() -> Callable[[TypeProto | None], Shape | None]:
    """``shape_of(type_proto)``: (kind, elem_type, dims) or None when untyped."""
    return _shape_of


@pytest.fixture(scope="session")
def value_shapes() -> Callable[[ModelProto], dict[str, Shape | None]]:
    """``value_shapes(model)``: the shape of every typed value of the main graph."""
    return _value_shapes
