"""How a runtime computes with each ONNX element type, for the values inference follows.

Every value that shape inference follows carries its element type, and each operator is
applied as onnxruntime and ``onnx.reference`` apply it: a fixed-width integer wraps around
(``300`` as int8 is ``44``), a float is rounded to its format to nearest, ties to even
(``2049`` as float16 is ``2048``), a Cast to a float 8 type saturates where its ``saturate``
attribute says so. Integer Div truncates toward zero, Mod takes the divisor's sign (the
dividend's with ``fmod=1``), and a BitShift by the width or more gives 0.

onnxruntime computes float16 arithmetic in float32 on the CPU (it has no float16 kernel of
Add, Sub, Mul, Div, Neg, Ceil, Floor or Equal), and drops the roundings to float16 around
it: ``Cast(2049 -> float16)`` is 2048 there as everywhere, but the same plus 0 is 2049. So a
float16 number that a Cast rounded is a :class:`Rounded`, which no arithmetic takes, and
float16 arithmetic is followed only where its result is exact.

What the spec leaves undefined, and what two runtimes compute differently, is ``None``
(unknown, never a guess): a float cast to an integer type whose range does not hold it, a
division by zero, the least 32- or 64-bit integer divided by -1 (it traps), a float that
overflows its format, and a cast that rounds differently straight from the source than
through float32 or float64 (onnxruntime casts int64 and float64 to bfloat16 and float16
through float32; numpy, which ``onnx.reference`` uses, casts float64 to float16 directly).

The formats come from numpy and ml_dtypes (``numpy.finfo``, ``ml_dtypes.finfo``), through
onnx's own mapping of element types to numpy dtypes; the rounding is done here, exactly, on
the number a float holds.

>>> int8 = number_type(TensorProto.INT8)
>>> int8.wrap(300), int8.wrap(-129)
(44, 127)
>>> number_type(TensorProto.FLOAT16).cast(2049, number_type(TensorProto.INT64))
Rounded(2048.0)
>>> number_type(TensorProto.FLOAT8E4M3FN).cast(1000.0, number_type(TensorProto.FLOAT))
448.0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any, Literal

import ml_dtypes
import numpy as np
from onnx import TensorProto, helper

__all__ = ["NumberType", "Rounded", "number_type"]

Kind = Literal["bool", "int", "float"]
#: A number a value holds: a Python int (bool items are 0 and 1) or a finite Python float,
#: which holds every number of every float format here exactly.
Number = int | float


class Rounded(float):
    """A float16 number that a Cast rounded: its value for a Cast, and for nothing else."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Rounded({float(self)})"


@dataclass(frozen=True)
class NumberType:
    """One ONNX element type, as a runtime computes with it."""

    #: The ``TensorProto`` data type code.
    code: int
    kind: Kind
    #: Integers: the width in bits and the range.
    bits: int = 0
    low: int = 0
    high: int = 0
    #: Floats: the significand's bits (the leading one included), the exponent of the least
    #: normal number, and the greatest finite number.
    precision: int = 0
    min_exponent: int = 0
    largest: float = 0.0
    #: Whether a runtime computes its arithmetic in a wider format (float16, in float32): it
    #: is followed only where it needs no rounding.
    exact_only: bool = False

    @property
    def is_integer(self) -> bool:
        return self.kind == "int"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def signed(self) -> bool:
        return self.low < 0

    @property
    def computes(self) -> bool:
        """Whether ONNX's arithmetic operators (Add, Div, Min, ...) take this type: the
        integers and floats, but not bool and not the float 8 types, which only Cast
        takes."""
        return self.kind == "int" or (self.kind == "float" and self.precision > 4)

    # -- one number into the type --

    def wrap(self, value: int) -> int:
        """An exact integer as this integer type holds it: its low bits, two's complement."""
        if self.low <= value <= self.high:
            return value
        return (value - self.low) % (1 << self.bits) + self.low

    def nearest(self, value: Fraction | Number, *, saturate: bool = False) -> float | None:
        """An exact number rounded to this float format, to nearest, ties to even; ``None``
        where it overflows (unless ``saturate``: the greatest finite number then)."""
        if self.precision == 53 and not isinstance(value, Fraction):
            double = float(value)  # Python's own float is float64, correctly rounded
            return double if math.isfinite(double) else None
        exact = Fraction(value)
        if exact == 0:
            return 0.0
        size = abs(exact)
        exponent = size.numerator.bit_length() - size.denominator.bit_length()
        if _power_of_two(exponent) > size:
            exponent -= 1  # now 2**exponent <= size < 2**(exponent + 1)
        step = _power_of_two(max(exponent, self.min_exponent) - self.precision + 1)
        units, rest = divmod(size, step)
        if rest * 2 > step or (rest * 2 == step and units % 2):
            units += 1
        rounded = units * step
        if rounded > self.largest:
            if not saturate:
                return None
            rounded = Fraction(self.largest)
        return float(rounded if exact > 0 else -rounded)

    def exact(self, value: Number) -> Number | None:
        """The result of an operator, computed exactly (an int) or in float64 (a float), as
        this type holds it. For +, -, * and / of numbers of a narrower float format,
        rounding the float64 result again gives the correctly rounded result (float64 has
        more than twice their precision, plus two bits)."""
        if self.kind == "int":
            return self.wrap(int(value))
        if self.kind == "float" and math.isfinite(value):
            found = self.nearest(value)
            return None if self.exact_only and found != value else found
        return None

    # -- Cast --

    def cast(self, value: Number, source: NumberType, *, saturate: bool = True) -> Number | None:
        """``value`` of type ``source`` cast to this type, as the spec and the runtimes do
        it; ``None`` where the spec leaves it undefined or the runtimes differ. ``saturate``
        is Cast's attribute: a float 8 type takes the greatest finite number for one that
        overflows it (every other float format overflows to infinity, and that is unknown)."""
        if self.kind == "bool":
            return int(value != 0)
        if source.kind == "float":
            if self.kind == "int":
                whole = math.trunc(value)
                return whole if self.low <= whole <= self.high else None
            if source == self:
                return value
        elif self.kind == "int":
            return self.wrap(int(value))
        # To a float format: the same number whether rounded from the value itself, or
        # first to float32 or float64 as a runtime may do. Only the float 8 types saturate.
        saturate = saturate and not self.computes
        found = self.nearest(value, saturate=saturate)
        if found is None:
            return None
        for middle in _ROUTES:
            if middle == source or middle.precision < self.precision:
                continue  # no rounding on the way
            through = middle.nearest(value)
            if through is None or self.nearest(through, saturate=saturate) != found:
                return None
        return Rounded(found) if self.exact_only and found != value else found

    # -- the arithmetic operators, on numbers of this type --

    def div(self, a: Number, b: Number) -> Number | None:
        """ONNX Div: a float quotient rounded; an integer one truncated toward zero."""
        if b == 0:
            return None  # a float gives inf or nan; an integer traps
        if self.kind == "float":
            return self.exact(a / b)
        a, b = int(a), int(b)
        quotient = abs(a) // abs(b)
        quotient = quotient if (a >= 0) == (b > 0) else -quotient
        if quotient > self.high and self.bits >= 32:
            return None  # the least int32 or int64 over -1 traps; narrower ones are promoted
        return self.wrap(quotient)

    def mod(self, a: Number, b: Number, *, fmod: bool) -> Number | None:
        """ONNX Mod: the remainder takes the divisor's sign, or with ``fmod`` the
        dividend's (as C's fmod); floats take only ``fmod=1``."""
        if b == 0:
            return None
        if self.kind == "float":
            return math.fmod(a, b) if fmod else None
        a, b = int(a), int(b)
        if a == self.low and b == -1 and self.bits >= 32:
            return None  # as for Div: it traps
        if fmod:
            remainder = abs(a) % abs(b)
            return remainder if a >= 0 else -remainder
        return a % b

    def shift(self, a: Number, b: Number, *, left: bool) -> Number | None:
        """ONNX BitShift of unsigned integers; a shift by the width or more gives 0, as
        onnxruntime and numpy do (C leaves it undefined)."""
        a, b = int(a), int(b)
        if b >= self.bits:
            return 0
        return self.wrap(a << b) if left else a >> b


def _power_of_two(exponent: int) -> Fraction:
    return Fraction(1 << exponent) if exponent >= 0 else Fraction(1, 1 << -exponent)


#: ml_dtypes' finfo: numpy's, and the formats numpy lacks (bfloat16, the float 8 types).
_float_format: Callable[[np.dtype[Any]], Any] = ml_dtypes.finfo


@cache
def number_type(code: int) -> NumberType | None:
    """The type of a ``TensorProto`` code, or ``None`` for a type whose values are not
    followed (strings, complex numbers, and the 2- and 4-bit and MX types)."""
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(code))
    except (KeyError, TypeError, ValueError):
        return None
    if dtype == np.bool_:
        return NumberType(code, "bool", bits=1, low=0, high=1)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return NumberType(code, "int", bits=info.bits, low=int(info.min), high=int(info.max))
    if code in _FLOAT_CODES:
        formats = _float_format(dtype)
        return NumberType(
            code,
            "float",
            precision=int(formats.nmant) + 1,
            min_exponent=int(formats.minexp),
            largest=float(formats.max),
            exact_only=code == TensorProto.FLOAT16,
        )
    return None


_FLOAT_CODES = frozenset(
    {
        TensorProto.FLOAT16,
        TensorProto.BFLOAT16,
        TensorProto.FLOAT,
        TensorProto.DOUBLE,
        TensorProto.FLOAT8E4M3FN,
        TensorProto.FLOAT8E4M3FNUZ,
        TensorProto.FLOAT8E5M2,
        TensorProto.FLOAT8E5M2FNUZ,
    }
)
_FLOAT32 = number_type(TensorProto.FLOAT)
_FLOAT64 = number_type(TensorProto.DOUBLE)
assert _FLOAT32 is not None
assert _FLOAT64 is not None
#: The formats a runtime may round a value to on its way to a narrower float format.
_ROUTES = (_FLOAT32, _FLOAT64)
