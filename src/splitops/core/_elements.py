"""The 16 ONNX tensor element types that Split and SplitToSequence know, in one table.

Each row holds every fact about one type: its ONNX name, its ``TensorProto`` code, the numpy
dtype that holds it (by name: the core imports no numpy), and the first version of each
operator that accepts it. The version rules, the dtype checks of every array library and the
ONNX type mapping all read this table; nothing else lists the types.

>>> [ElementType.BFLOAT16.first_version(op) for op in ("Split", "SplitToSequence")]
[13, 24]
>>> ElementType.from_name("float").numpy_name, ElementType.from_code(11)
('float32', <ElementType.DOUBLE: 'double'>)
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ElementType"]


class ElementType(str, Enum):
    """One ONNX element type; it is its ONNX name as a string (``ElementType.FLOAT == "float"``)."""

    code: int
    numpy_name: str
    _first: tuple[int, int]

    def __new__(
        cls, name: str, code: int, numpy_name: str, split: int, sequence: int
    ) -> ElementType:
        member = str.__new__(cls, name)
        member._value_ = name
        member.code = code
        member.numpy_name = numpy_name
        member._first = (split, sequence)
        return member

    #        ONNX name     code  numpy dtype   first Split, first SplitToSequence
    BOOL = ("bool", 9, "bool", 2, 11)
    INT8 = ("int8", 3, "int8", 2, 11)
    INT16 = ("int16", 5, "int16", 2, 11)
    INT32 = ("int32", 6, "int32", 2, 11)
    INT64 = ("int64", 7, "int64", 2, 11)
    UINT8 = ("uint8", 2, "uint8", 2, 11)
    UINT16 = ("uint16", 4, "uint16", 2, 11)
    UINT32 = ("uint32", 12, "uint32", 2, 11)
    UINT64 = ("uint64", 13, "uint64", 2, 11)
    FLOAT16 = ("float16", 10, "float16", 1, 11)
    BFLOAT16 = ("bfloat16", 16, "bfloat16", 13, 24)
    FLOAT = ("float", 1, "float32", 1, 11)
    DOUBLE = ("double", 11, "float64", 1, 11)
    COMPLEX64 = ("complex64", 14, "complex64", 2, 11)
    COMPLEX128 = ("complex128", 15, "complex128", 2, 11)
    # ONNX tools hold string tensors as numpy object arrays.
    STRING = ("string", 8, "object", 2, 11)

    def __str__(self) -> str:
        return self.onnx_name

    @property
    def onnx_name(self) -> str:
        """The name ONNX gives the type in its type constraints, e.g. ``"float"``."""
        return str(self.value)

    @property
    def is_integer(self) -> bool:
        """Whether it holds integers (a split tensor may have such a type)."""
        return self.numpy_name.startswith(("int", "uint"))

    @property
    def is_float(self) -> bool:
        """Whether it holds real floating-point numbers."""
        return self in _FLOATS

    def first_version(self, op: str) -> int:
        """The first version of ``op`` ("Split" or "SplitToSequence") that accepts it."""
        return self._first[0] if op == "Split" else self._first[1]

    @classmethod
    def from_name(cls, name: str) -> ElementType | None:
        """The type of an ONNX name (``"float"``) or a numpy dtype name (``"float32"``)."""
        return _BY_NAME.get(name)

    @classmethod
    def from_code(cls, code: int) -> ElementType | None:
        """The type of a ``TensorProto`` data type code, or ``None`` for any other code."""
        return _BY_CODE.get(code)


_FLOATS = frozenset(
    {ElementType.FLOAT16, ElementType.BFLOAT16, ElementType.FLOAT, ElementType.DOUBLE}
)
_BY_NAME = {
    **{element.numpy_name: element for element in ElementType if element is not ElementType.STRING},
    **{element.onnx_name: element for element in ElementType},
}
_BY_CODE = {element.code: element for element in ElementType}
