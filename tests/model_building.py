"""Helpers that test modules share to build models (importable as ``tests.model_building``)."""

from __future__ import annotations

import onnx
from onnx import AttributeProto, ModelProto

from splitops.onnx.model import model_graphs

#: The most parts a Split may ask for (``num_outputs``) for onnx to infer the model here:
#: onnx's inference builds every part's size, some 8 bytes each (7.9 GB and 30 s for a
#: billion). Models asking for more are built to be refused before anything is inferred.
ONNX_INFERS_UP_TO_PARTS = 2**16


def with_inferred_outputs(model: ModelProto) -> ModelProto:
    """``model`` with each graph output's declared type replaced by what onnx infers for it,
    where onnx infers a type of known rank and no negative dim: onnx.checker's full check
    (which ``convert`` runs) then finds the declarations consistent.

    A model with a Split asking for more than :data:`ONNX_INFERS_UP_TO_PARTS` parts keeps its
    declarations: no test asks onnx for gigabytes."""
    if asked_parts(model) > ONNX_INFERS_UP_TO_PARTS:
        return model
    bare = ModelProto()
    bare.CopyFrom(model)
    for output in bare.graph.output:
        _drop_shape(output.type)
    try:
        inferred = onnx.shape_inference.infer_shapes(bare)
    except onnx.shape_inference.InferenceError:
        return model
    found = {v.name: v.type for v in [*inferred.graph.value_info, *inferred.graph.output]}
    for output in model.graph.output:
        kind = found.get(output.name)
        if kind is not None and _usable(kind):
            output.type.CopyFrom(kind)
    return model


def asked_parts(model: ModelProto) -> int:
    """The most parts any node of ``model`` (subgraphs and functions included) asks for
    with ``num_outputs``."""
    return max(
        (
            attribute.i
            for proto in model_graphs(model)
            for node in proto.node
            for attribute in node.attribute
            if attribute.name == "num_outputs" and attribute.type == AttributeProto.INT
        ),
        default=0,
    )


def _usable(type_proto: onnx.TypeProto) -> bool:
    if type_proto.HasField("sequence_type"):
        return _usable(type_proto.sequence_type.elem_type)
    tensor = type_proto.tensor_type
    return tensor.HasField("shape") and all(d.dim_value >= 0 for d in tensor.shape.dim)


def _drop_shape(type_proto: onnx.TypeProto) -> None:
    if type_proto.HasField("sequence_type"):
        _drop_shape(type_proto.sequence_type.elem_type)
    elif type_proto.HasField("tensor_type"):
        type_proto.tensor_type.ClearField("shape")
