"""ONNX ``TensorProto`` element types and the numpy dtypes that hold them, in one table.

>>> from onnx import TensorProto
>>> numpy_dtype(TensorProto.BFLOAT16).name, tensor_type("bfloat16") == TensorProto.BFLOAT16
('bfloat16', True)
>>> element_type_of(TensorProto.STRING)
'string'
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from onnx import TensorProto

from .dtypes import element_type
from .errors import SplitTypeError

__all__ = ["ONNX_ELEMENT_TYPES", "element_type_of", "numpy_dtype", "tensor_type", "tensor_type_of"]

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
