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

from onnx import TensorProto, TensorShapeProto, TypeProto, helper

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
    "tensor_problem",
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


#: Element types narrower than a byte, by their bits: packed in ``raw_data``.
_NARROW_BITS = {
    TensorProto.INT4: 4,
    TensorProto.UINT4: 4,
    TensorProto.FLOAT4E2M1: 4,
    **{getattr(TensorProto, name): bits for name, bits in (("INT2", 2), ("UINT2", 2))},
    **{getattr(TensorProto, name): 6 for name in ("FLOAT6E2M3", "FLOAT6E3M2")},
}


def tensor_problem(tensor: TensorProto, max_elements: int) -> str | None:
    """What makes ``tensor`` unreadable, in words, or ``None``: an unknown or undefined data
    type, a negative dim, more than ``max_elements`` elements, or data of another length than
    its dims claim (data kept outside the model is measured when it is read).

    >>> tensor = TensorProto(name="w", data_type=TensorProto.INT64, dims=[2**40], int64_data=[1])
    >>> tensor_problem(tensor, 2**31)
    'it claims 1099511627776 elements, over the max_tensor_elements limit of 2147483648'
    >>> tensor_problem(helper.make_tensor("s", TensorProto.INT64, [3], [1, 2, 3]), 2**31)
    """
    code = tensor.data_type
    if code == TensorProto.UNDEFINED or code not in TensorProto.DataType.values():
        return f"its data type {element_name(code)} is no ONNX element type"
    if any(dim < 0 for dim in tensor.dims):
        return f"its dims {list(tensor.dims)} hold a negative length"
    count = 1
    for dim in tensor.dims:
        count *= dim
    if count > max_elements:
        return f"it claims {count} elements, over the max_tensor_elements limit of {max_elements}"
    if tensor.data_location == TensorProto.EXTERNAL or tensor.HasField("segment"):
        return None
    bits = _NARROW_BITS.get(code)
    if tensor.HasField("raw_data"):
        itemsize = helper.tensor_dtype_to_np_dtype(code).itemsize
        needed = -(-count * bits // 8) if bits else count * itemsize
        if len(tensor.raw_data) != needed:
            return (
                f"its dims {list(tensor.dims)} need {needed} bytes of raw_data, and it holds "
                f"{len(tensor.raw_data)}"
            )
        return None
    if bits:
        return None  # packed in int32_data: left to the operators that read such types
    if code == TensorProto.STRING:
        for index, text in enumerate(tensor.string_data):
            try:
                text.decode("utf-8")
            except UnicodeDecodeError:
                return f"its string {index} is not UTF-8 ({text[:20]!r})"
    field = helper.tensor_dtype_to_field(code)
    per_element = 2 if code in (TensorProto.COMPLEX64, TensorProto.COMPLEX128) else 1
    held = len(getattr(tensor, field))
    if held != count * per_element:
        needed = count * per_element
        return f"its dims {list(tensor.dims)} need {needed} {field} values, and it holds {held}"
    return None
