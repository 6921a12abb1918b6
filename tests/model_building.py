"""Helpers that test modules share to build models (importable as ``tests.model_building``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import AttributeProto, ModelProto, TensorProto, helper, numpy_helper

from splitops.onnx.model.protobuf import model_graphs

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


#: The weight of :func:`weighted_model`: 64 x 48 floats, more than SMALL_TENSOR elements.
WEIGHT = np.arange(64 * 48, dtype=np.float32).reshape(64, 48) / 1000
#: Its small tensors: a floor, and the sizes a Split is cut by.
FLOOR = np.linspace(-1, 1, 48, dtype=np.float32)
SIZES = np.array([20, 28], dtype=np.int64)


def weighted_model() -> ModelProto:
    """max(x @ w, floor) cut two ways: Split-18 into 5 uneven parts (which ``lower`` gives
    constant sizes) and by the sizes of a small initializer; x is [batch, 64]."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Max", ["h", "floor"], ["y"]),
        helper.make_node(
            "Split", ["y"], [f"t{k}" for k in range(5)], axis=1, num_outputs=5, name="fifths"
        ),
        helper.make_node("Split", ["y", "sizes"], ["s0", "s1"], axis=1, name="sized"),
    ]
    widths = {f"t{k}": 10 for k in range(4)} | {"t4": 8, "s0": 20, "s1": 28}
    graph = helper.make_graph(
        nodes,
        "weighted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", width])
            for name, width in widths.items()
        ],
        [
            numpy_helper.from_array(WEIGHT, "w"),
            numpy_helper.from_array(FLOOR, "floor"),
            numpy_helper.from_array(SIZES, "sizes"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def save_with_external_data(
    model: ModelProto, folder: Path, name: str = "model.onnx", location: str = "weights.bin"
) -> Path:
    """``model`` saved as ``folder/name`` with every tensor in the external file
    ``location``; its path."""
    (folder / location).parent.mkdir(parents=True, exist_ok=True)
    path = folder / name
    onnx.save_model(
        model,
        path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=0,
    )
    return path


def sparse_weights_model(folder: Path, gib: int, name: str = "huge.onnx") -> Path:
    """A MatMul by a weight of ``gib`` GiB whose data is a sparse file (no disk used), then a
    Split-18 of its result into 3 uneven parts; saved as ``folder/name`` beside
    ``huge.bin``."""
    columns = 3 * 2**14
    weight = TensorProto(
        name="w",
        data_type=TensorProto.FLOAT,
        dims=[gib * 2**30 // (4 * columns), columns],
        data_location=TensorProto.EXTERNAL,
    )
    weight.external_data.add(key="location", value="huge.bin")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Split", ["h"], ["a", "b", "c"], axis=1, num_outputs=3, name="thirds"),
    ]
    graph = helper.make_graph(
        nodes,
        "huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, weight.dims[0]])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2**14]) for n in "abc"],
        [weight],
    )
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), folder / name)
    with (folder / "huge.bin").open("wb") as data:
        data.truncate(gib * 2**30)
    return folder / name
