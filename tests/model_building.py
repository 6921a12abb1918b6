"""Helpers that test modules share to build models (importable as ``tests.model_building``)."""

from __future__ import annotations

import onnx
from onnx import ModelProto


def with_inferred_outputs(model: ModelProto) -> ModelProto:
    """``model`` with each graph output's declared type replaced by what onnx infers for it,
    where onnx infers a type of known rank and no negative dim: onnx.checker's full check
    (which ``convert`` runs) then finds the declarations consistent."""
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
