"""ONNX ``TypeProto`` and ``TensorProto`` element types, read through
:class:`~splitops.core.ElementType`'s table, and types as text.

>>> from onnx import TensorProto, helper
>>> element_of_code(TensorProto.BFLOAT16), code_of_dtype(numpy_dtype(ElementType.STRING))
(<ElementType.BFLOAT16: 'bfloat16'>, 8)
>>> sequence = helper.make_sequence_type_proto(
...     helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", None, 2]))
>>> type_text(sequence), shape_text(sequence)
('seq(tensor(float))', '[N, ?, 2]')
"""

from __future__ import annotations

from onnx import TensorProto, TensorShapeProto, TypeProto

from ..arrays import element_of, numpy_dtype
from ..core import ElementType, Rule, SplitTypeError

__all__ = [
    "code_of_dtype",
    "dim_of",
    "element_name",
    "element_of_code",
    "has_type",
    "numpy_dtype",
    "shape_text",
    "tensor_parts",
    "type_text",
]


def element_of_code(data_type: int) -> ElementType:
    """The element type of a ``TensorProto`` data type, or SplitTypeError for one that Split
    and SplitToSequence do not take."""
    element = ElementType.from_code(data_type)
    if element is None:
        raise SplitTypeError(
            f"ONNX element type {element_name(data_type)} is not one of the "
            f"{len(ElementType)} types Split and SplitToSequence take "
            f"({', '.join(sorted(e.onnx_name for e in ElementType))}).",
            rule=Rule.DTYPE,
        )
    return element


def code_of_dtype(dtype: object) -> int:
    """The ``TensorProto`` data type of an array dtype (numpy, torch, ...)."""
    element = element_of(dtype)
    if not isinstance(element, ElementType):
        raise SplitTypeError(f"dtype {dtype} has no ONNX element type.", rule=Rule.DTYPE)
    return element.code


def element_name(data_type: int) -> str:
    """The lower-case ONNX name of any ``TensorProto`` data type, ``float8e4m3fn`` included,
    or the number of a code that onnx does not know."""
    if data_type not in TensorProto.DataType.values():
        return str(data_type)
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
