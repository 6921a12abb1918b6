"""ONNX ``TensorProto`` element types and the numpy dtypes that hold them, in one table;
``TypeProto`` read and written as text.

>>> from onnx import TensorProto, helper
>>> numpy_dtype(TensorProto.BFLOAT16).name, tensor_type("bfloat16") == TensorProto.BFLOAT16
('bfloat16', True)
>>> element_type_of(TensorProto.STRING)
'string'
>>> sequence = helper.make_sequence_type_proto(
...     helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", None, 2]))
>>> type_text(sequence), shape_text(sequence)
('seq(tensor(float))', '[N, ?, 2]')
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from onnx import TensorProto, TensorShapeProto, TypeProto

from .dtypes import element_type
from .errors import SplitTypeError

__all__ = [
    "ONNX_ELEMENT_TYPES",
    "dim_of",
    "element_name",
    "element_type_of",
    "has_type",
    "numpy_dtype",
    "shape_text",
    "tensor_parts",
    "tensor_type",
    "tensor_type_of",
    "type_text",
]

#: ONNX element type name -> (TensorProto data type, numpy dtype that holds it).
ONNX_ELEMENT_TYPES: dict[str, tuple[int, np.dtype[Any]]] = {
    "bool": (TensorProto.BOOL, np.dtype(np.bool_)),
    "int8": (TensorProto.INT8, np.dtype(np.int8)),
    "int16": (TensorProto.INT16, np.dtype(np.int16)),
    "int32": (TensorProto.INT32, np.dtype(np.int32)),
    "int64": (TensorProto.INT64, np.dtype(np.int64)),
    "uint8": (TensorProto.UINT8, np.dtype(np.uint8)),
    "uint16": (TensorProto.UINT16, np.dtype(np.uint16)),
    "uint32": (TensorProto.UINT32, np.dtype(np.uint32)),
    "uint64": (TensorProto.UINT64, np.dtype(np.uint64)),
    "float16": (TensorProto.FLOAT16, np.dtype(np.float16)),
    "bfloat16": (TensorProto.BFLOAT16, np.dtype(ml_dtypes.bfloat16)),
    "float": (TensorProto.FLOAT, np.dtype(np.float32)),
    "double": (TensorProto.DOUBLE, np.dtype(np.float64)),
    "complex64": (TensorProto.COMPLEX64, np.dtype(np.complex64)),
    "complex128": (TensorProto.COMPLEX128, np.dtype(np.complex128)),
    "string": (TensorProto.STRING, np.dtype(object)),
}
_BY_TENSOR_TYPE = {code: name for name, (code, _) in ONNX_ELEMENT_TYPES.items()}


def element_type_of(data_type: int) -> str:
    """The ONNX name of a ``TensorProto`` data type, or SplitTypeError for one splitops lacks."""
    try:
        return _BY_TENSOR_TYPE[data_type]
    except KeyError:
        name = (
            TensorProto.DataType.Name(data_type)
            if data_type in TensorProto.DataType.values()
            else data_type
        )
        raise SplitTypeError(
            f"ONNX element type {name} is not one of the 16 types Split and SplitToSequence "
            f"take ({', '.join(sorted(ONNX_ELEMENT_TYPES))})."
        ) from None


def numpy_dtype(data_type: int) -> np.dtype[Any]:
    """The numpy dtype that holds a ``TensorProto`` data type."""
    return ONNX_ELEMENT_TYPES[element_type_of(data_type)][1]


def tensor_type(name: str) -> int:
    """The ``TensorProto`` data type of an ONNX element type name."""
    return ONNX_ELEMENT_TYPES[name][0]


def tensor_type_of(dtype: object) -> int:
    """The ``TensorProto`` data type of an array dtype (numpy, torch, ...)."""
    name = element_type(dtype)
    if name is None:
        raise SplitTypeError(f"dtype {dtype} has no ONNX element type.")
    return tensor_type(name)


def element_name(data_type: int) -> str:
    """The lower-case ONNX name of any ``TensorProto`` data type, ``float8e4m3fn`` included."""
    return str(TensorProto.DataType.Name(data_type)).lower()


def tensor_parts(
    type_proto: TypeProto | None,
) -> tuple[int, list[TensorShapeProto.Dimension] | None]:
    """A tensor type's element type (0 if unknown) and dims (``None`` if the rank is unknown)."""
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        return 0, None
    tensor = type_proto.tensor_type
    return tensor.elem_type, list(tensor.shape.dim) if tensor.HasField("shape") else None


def dim_of(dim: TensorShapeProto.Dimension) -> int | str | None:
    """A dim as an int, a dim_param, or ``None`` (unknown, or a negative value, which no
    tensor has)."""
    if dim.HasField("dim_value"):
        return int(dim.dim_value) if dim.dim_value >= 0 else None
    return str(dim.dim_param) if dim.dim_param else None


def has_type(type_proto: TypeProto) -> bool:
    """Whether ``type_proto`` says what the value is: a tensor's element type, or a sequence,
    map or optional."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return bool(type_proto.tensor_type.elem_type)
    return kind is not None


def type_text(type_proto: TypeProto | None) -> str | None:
    """``tensor(float)``, ``seq(tensor(int64))``, or ``None`` when the type is not known."""
    kind = None if type_proto is None else type_proto.WhichOneof("value")
    if type_proto is None or kind is None:
        return None
    if kind == "sequence_type":
        inner = type_text(type_proto.sequence_type.elem_type)
        return None if inner is None else f"seq({inner})"
    if kind != "tensor_type" or not type_proto.tensor_type.elem_type:
        return None
    return f"tensor({element_name(type_proto.tensor_type.elem_type)})"


def shape_text(type_proto: TypeProto | None) -> str | None:
    """``[N, ?, 2]`` (``?`` for an unknown dim; a sequence's element shape), or ``None`` when
    the rank is not known."""
    if type_proto is not None and type_proto.WhichOneof("value") == "sequence_type":
        return shape_text(type_proto.sequence_type.elem_type)
    _, dims = tensor_parts(type_proto)
    if dims is None:
        return None
    texts = ["?" if dim_of(d) is None else str(dim_of(d)) for d in dims]
    return f"[{', '.join(texts)}]"
