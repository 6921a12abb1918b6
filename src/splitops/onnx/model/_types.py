"""ONNX ``TypeProto`` and ``TensorProto`` element types, read through
:class:`~splitops.core.ElementType`'s table, and types as text.

>>> from onnx import TensorProto, helper
>>> element_of_code(TensorProto.BFLOAT16), code_of_dtype(numpy_dtype(ElementType.STRING))
(<ElementType.BFLOAT16: 'bfloat16'>, 8)

Types that Split does not take (float8, int4, float4e2m1, ...) are arrays of ml_dtypes, as
onnx's own mapping gives them, and ``onnx.reference`` takes and returns them:

>>> dtype_of_code(TensorProto.FLOAT8E4M3FN), element_name(code_of_array(dtype_of_code(22)))
(dtype(float8_e4m3fn), 'int4')
>>> sequence = helper.make_sequence_type_proto(
...     helper.make_tensor_type_proto(TensorProto.FLOAT, ["N", None, 2]))
>>> type_text(sequence), shape_text(sequence)
('seq(tensor(float))', '[N, ?, 2]')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from onnx import TensorProto, TensorShapeProto, TypeProto, ValueInfoProto, helper

from ...arrays import element_of, numpy_dtype
from ...core import ElementType, Rule, SplitTypeError
from ._value_type import Dim, read_dim, says, value_type

__all__ = [
    "code_of_array",
    "code_of_dtype",
    "conflicts",
    "declared_type",
    "dim_of",
    "dim_params",
    "dtype_of_code",
    "element_name",
    "element_of_code",
    "has_negative_dim",
    "has_type",
    "numpy_dtype",
    "refined_type",
    "rename_all",
    "says_more",
    "shape_text",
    "stored_bytes",
    "tensor_parts",
    "tensor_problem",
    "type_text",
    "union_type",
    "widened",
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


def dtype_of_code(data_type: int) -> np.dtype[Any] | None:
    """The numpy dtype that holds any ONNX element type: :class:`ElementType`'s for the types
    Split takes, onnx's own mapping (``onnx.helper.tensor_dtype_to_np_dtype``, ml_dtypes for
    float8, int4, float4e2m1, ...) for the others; ``None`` for a code onnx maps to none."""
    element = ElementType.from_code(data_type)
    if element is not None:
        return numpy_dtype(element)
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(data_type))
    except (KeyError, ValueError, TypeError):
        return None


def code_of_array(dtype: object) -> int | None:
    """The ``TensorProto`` element type that an array of ``dtype`` holds (strings as
    :func:`~splitops.arrays.element_of` reads them, ml_dtypes by onnx's mapping), or ``None``
    for a dtype that holds no ONNX element type."""
    element = element_of(dtype)
    if isinstance(element, ElementType):
        return element.code
    if not isinstance(dtype, np.dtype):
        return None
    try:
        return int(helper.np_dtype_to_tensor_dtype(dtype))
    except (KeyError, ValueError, TypeError):
        return None


def widened(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``array`` in numpy's own dtypes, for a file or a person to read: a type of ml_dtypes
    (bfloat16, float8, float4e2m1, ...) as float32, int4 and int2 as int8, uint4 and uint2 as
    uint8; any other array as it is.

    >>> widened(np.arange(3, dtype=np.float32).astype(dtype_of_code(TensorProto.INT4)))
    array([0, 1, 2], dtype=int8)
    """
    if array.dtype.isbuiltin != 2:
        return array
    name = array.dtype.name
    if name.startswith(("int", "uint")):
        return array.astype("uint8" if name.startswith("uint") else "int8")
    return array.astype("float32")


@lru_cache(maxsize=256)
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


#: A dim as an int, a dim_param, or ``None``: the one dim rule of
#: :func:`~splitops.onnx.model._value_type.read_dim`.
dim_of = read_dim


def dim_params(type_proto: TypeProto) -> list[str]:
    """The ``dim_param`` names in a type: of a tensor, or inside a sequence, an optional or
    a map."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return [d.dim_param for d in type_proto.tensor_type.shape.dim if d.dim_param]
    if kind == "sequence_type":
        return dim_params(type_proto.sequence_type.elem_type)
    if kind == "optional_type":
        return dim_params(type_proto.optional_type.elem_type)
    if kind == "map_type":
        return dim_params(type_proto.map_type.value_type)
    return []


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


def stored_bytes(code: int, count: int) -> int | None:
    """The bytes ``count`` elements of type ``code`` take in ``raw_data`` (and in external
    data): types narrower than a byte packed as ONNX packs them (two int4 to a byte, the
    last byte padded), ``None`` for strings, which have no fixed size, and unknown types.

    >>> stored_bytes(TensorProto.FLOAT, 3), stored_bytes(TensorProto.FLOAT4E2M1, 3)
    (12, 2)
    >>> stored_bytes(TensorProto.STRING, 3) is None
    True
    """
    bits = _NARROW_BITS.get(code)
    if bits:
        return -(-count * bits // 8)
    if code == TensorProto.STRING:
        return None
    try:
        itemsize: int = helper.tensor_dtype_to_np_dtype(code).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    return count * itemsize


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
        needed = stored_bytes(code, count)
        if needed is None:
            return "it holds strings in raw_data, which ONNX keeps for fixed-size types only"
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


# --- merging what two sources say about one value --------------------------------------------


def _says(dim: TensorShapeProto.Dimension) -> int:
    """What a dim of a ``TypeProto`` says (see :func:`~splitops.onnx.model._value_type.says`)."""
    if dim.HasField("dim_value"):
        return says(int(dim.dim_value))
    return says(str(dim.dim_param))


def refined_type(ours: TypeProto | None, other: TypeProto | None) -> TypeProto | None:
    """``ours``, with what ``other`` knows and ours does not: per dim the one that says more
    (a value, then a name, then onnx's placeholder), ours where both say as much.

    Both describe the same value, ``other`` from less precise inputs (onnx's own pass before
    splitops refined them); where both give a value and they differ, ``ours`` wins.

    >>> from onnx import helper
    >>> print(shape_text(refined_type(helper.make_tensor_type_proto(1, ["N", None, "unk__1"]),
    ...                               helper.make_tensor_type_proto(1, [4, 3, "M"]))))
    [4, 3, M]
    """
    if ours is None:
        return other
    mine = value_type(ours)
    if mine is None or not mine.known:
        return other
    found = mine.refine(value_type(other))
    return ours if found is mine else found.proto()


def says_more(other: TypeProto | None, ours: TypeProto | None) -> bool:
    """Whether ``other`` says something of a value that ``ours`` does not: an element type, a
    rank, or a dim's value or name where ours has none (onnx's placeholders say nothing).

    >>> from onnx import helper
    >>> says_more(helper.make_tensor_type_proto(1, [4, "unk__0"]),
    ...           helper.make_tensor_type_proto(1, [4, None]))
    False
    """
    theirs = value_type(other)
    return theirs is not None and theirs.says_more(value_type(ours))


def conflicts(
    declared: TypeProto,
    inferred: TypeProto,
    *,
    said: tuple[str, str] = ("declared {}", "inferred {}"),
) -> Iterator[str]:
    """Where two types of one value contradict each other, in words: the kind, the element
    type, the rank, or two values of a dim. ``said`` words what each type says (a template
    for its value): a declaration against an inference by default.

    >>> from onnx import helper
    >>> list(conflicts(helper.make_tensor_type_proto(1, [None, "M", 3]),
    ...                helper.make_tensor_type_proto(1, [2, "N", 4])))
    ['dim 2 is declared 3 and inferred 4']
    >>> list(conflicts(helper.make_tensor_type_proto(1, [2]), helper.make_tensor_type_proto(1, [3]),
    ...                said=("{} before", "{} after")))
    ['dim 0 is 2 before and 3 after']
    """
    first, second = value_type(declared), value_type(inferred)
    if first is not None and second is not None:
        yield from first.conflicts(second, said)


def declared_type(declared: TypeProto, inferred: TypeProto) -> TypeProto:
    """A declared type with an inferred one merged in as onnx merges them; where the two
    contradict each other (:func:`conflicts`) the declaration is kept.

    An unknown dim or one of onnx's placeholders takes the inferred dim; a name takes an
    inferred value but keeps its name against an inferred name; two values must agree.

    >>> from onnx import helper
    >>> shape_text(declared_type(helper.make_tensor_type_proto(1, [None, "M", 3]),
    ...                          helper.make_tensor_type_proto(1, [2, "N", 4])))
    '[2, M, 3]'
    """
    kind = declared.WhichOneof("value")
    if kind is None:
        return inferred
    if kind != inferred.WhichOneof("value"):
        return declared
    if kind == "sequence_type":
        elem = declared_type(declared.sequence_type.elem_type, inferred.sequence_type.elem_type)
        return helper.make_sequence_type_proto(elem)
    mine, given = declared.tensor_type, inferred.tensor_type
    if kind != "tensor_type" or (mine.elem_type and given.elem_type != mine.elem_type):
        return declared
    merged = TypeProto()
    merged.CopyFrom(declared)
    tensor = merged.tensor_type
    tensor.elem_type = given.elem_type
    if not given.HasField("shape"):
        return merged
    if not tensor.HasField("shape"):
        tensor.shape.CopyFrom(given.shape)
    elif len(tensor.shape.dim) == len(given.shape.dim):
        for dim, theirs in zip(tensor.shape.dim, given.shape.dim, strict=True):
            says, other = _says(dim), _says(theirs)
            if (says <= 1 and other > 0) or (says == 2 and other == 3):
                dim.CopyFrom(theirs)
    return merged


def rename_all(entries: Iterable[ValueInfoProto], names: Mapping[str, Dim]) -> None:
    """Replace, in every entry's type (a graph's value_info, its outputs), each of onnx's
    placeholders that ``names`` holds by what it stands for (a length or a name; see
    :func:`~splitops.onnx.model.named_placeholders`).

    >>> from onnx import helper
    >>> entry = helper.make_tensor_value_info("a", 1, ["unk__3", 4])
    >>> rename_all([entry], {"unk__3": "ceiling(N/2)"}); shape_text(entry.type)
    '[ceiling(N/2), 4]'
    """
    for entry in entries:
        for dim in _tensor_dims(entry.type):
            name = dim.dim_param
            if name in names:
                found = names[name]
                if isinstance(found, int):
                    dim.dim_value = found
                elif found is not None:
                    dim.dim_param = found


def _tensor_dims(type_proto: TypeProto) -> Sequence[TensorShapeProto.Dimension]:
    """The dims of a tensor type, or of a sequence's elements (none for other types)."""
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return _tensor_dims(type_proto.sequence_type.elem_type)
    if kind != "tensor_type":
        return ()
    dims: Sequence[TensorShapeProto.Dimension] = type_proto.tensor_type.shape.dim
    return dims


def union_type(a: TypeProto, b: TypeProto) -> TypeProto | None:
    """What both types say (the outputs of an If's two branches, a function's value at two
    call sites): the dims they agree on, ``None`` when they disagree on the kind."""
    if a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True):
        return a
    first, second = value_type(a), value_type(b)
    if first is None or second is None:
        return None
    found = first.union(second)
    return None if found is None else found.proto()


def has_negative_dim(type_proto: TypeProto) -> bool:
    """Whether a type holds a negative dim, which no tensor has (onnx's inference writes one
    for some invalid nodes)."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return any(
            d.HasField("dim_value") and d.dim_value < 0 for d in type_proto.tensor_type.shape.dim
        )
    if kind == "sequence_type":
        return has_negative_dim(type_proto.sequence_type.elem_type)
    return False
