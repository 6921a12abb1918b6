"""The arithmetic of each element type that inference follows values in, against numpy and
ml_dtypes (whose conversions ``onnx.reference`` uses): wrap-around, rounding to nearest with
ties to even, saturation, and the cases left unknown."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from splitops.onnx.inference._number_types import NumberType, Rounded, number_type

INTEGERS = [
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT16,
    TensorProto.UINT16,
    TensorProto.INT32,
    TensorProto.UINT32,
    TensorProto.INT64,
    TensorProto.UINT64,
]
FLOATS = [TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE]
FLOAT8 = [
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
]
INT64 = number_type(TensorProto.INT64)
FLOAT = number_type(TensorProto.FLOAT)


def _type(code: int) -> NumberType:
    found = number_type(code)
    assert found is not None
    return found


def _dtype(code: int) -> np.dtype[Any]:
    return np.dtype(helper.tensor_dtype_to_np_dtype(code))


def _name(code: int) -> str:
    return helper.tensor_dtype_to_string(code).split(".")[-1].lower()


@pytest.mark.parametrize("code", INTEGERS, ids=_name)
@settings(max_examples=60, deadline=None)
@given(value=st.integers(-(2**70), 2**70))
def test_an_integer_wraps_around_as_numpy_casts_it(code: int, value: int) -> None:
    wrapped = np.array([value % 2**64], np.uint64).astype(_dtype(code))
    assert _type(code).wrap(value) == int(wrapped[0])


@pytest.mark.parametrize("code", FLOATS, ids=_name)
@settings(max_examples=200, deadline=None)
@given(value=st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_a_float32_number_rounds_as_ml_dtypes_rounds_it(code: int, value: float) -> None:
    # From float32, numpy and ml_dtypes round once, to nearest with ties to even.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow to inf
        expected = float(np.array([value], np.float32).astype(_dtype(code))[0])
    found = _type(code).nearest(value)
    assert found == (expected if np.isfinite(expected) else None)


@pytest.mark.parametrize("code", FLOAT8, ids=_name)
@settings(max_examples=200, deadline=None)
@given(value=st.floats(-1e6, 1e6, width=32), saturate=st.booleans())
def test_a_float8_cast_saturates_where_the_spec_says(
    code: int, value: float, saturate: bool
) -> None:
    target = _type(code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rounded = float(np.array([value], np.float32).astype(_dtype(code))[0])
    found = target.cast(value, FLOAT, saturate=saturate)
    if np.isfinite(rounded) and abs(rounded) <= target.largest:
        assert found == rounded
    elif saturate:
        assert found == np.copysign(target.largest, value)
    else:
        assert found is None


@pytest.mark.parametrize(
    ("code", "value", "expected"),
    [
        (TensorProto.FLOAT16, 2049, Rounded(2048.0)),  # a rounding that Cast keeps
        (TensorProto.FLOAT16, 2048, 2048.0),
        (TensorProto.FLOAT16, 65520, None),  # overflows to infinity
        (TensorProto.BFLOAT16, 259, 260.0),
        (TensorProto.FLOAT, 2**24 + 1, 2.0**24),
        (TensorProto.UINT8, 258, 2),
        (TensorProto.INT8, 300, 44),
        (TensorProto.UINT64, -1, 2**64 - 1),
        (TensorProto.BOOL, -3, 1),
        # onnxruntime rounds through float32 (to 2**30 + 2**24), the value itself to
        # 2**30 + 2**23: unknown.
        (TensorProto.BFLOAT16, 2**30 + 3 * 2**22 - 1, None),
    ],
)
def test_an_int64_cast_is_the_runtimes(code: int, value: int, expected: Any) -> None:
    found = _type(code).cast(value, INT64)
    assert found == expected
    assert type(found) is type(expected)


@pytest.mark.parametrize(
    ("code", "value", "expected"),
    [
        (TensorProto.INT8, 300.0, None),  # out of range: undefined
        (TensorProto.UINT8, -1.0, None),
        (TensorProto.INT64, 2.0**63, None),
        (TensorProto.INT32, -2.7, -2),  # toward zero
        (TensorProto.BOOL, 0.5, 1),
    ],
)
def test_a_float32_cast_to_an_integer_truncates_or_is_unknown(
    code: int, value: float, expected: int | None
) -> None:
    assert _type(code).cast(value, FLOAT) == expected


def test_a_float64_cast_to_float16_that_rounds_twice_through_float32_is_unknown() -> None:
    # numpy (onnx.reference) gives 2050, onnxruntime (through float32) 2048.
    assert _type(TensorProto.FLOAT16).cast(2049.0000001, _type(TensorProto.DOUBLE)) is None


@pytest.mark.parametrize(
    ("code", "a", "b", "expected"),
    [
        (TensorProto.INT8, -128, -1, -128),  # promoted to int in C: it wraps
        (TensorProto.INT32, -(2**31), -1, None),  # traps
        (TensorProto.INT64, -7, 2, -3),  # toward zero
        (TensorProto.UINT8, 200, 0, None),
        (TensorProto.FLOAT, 1.0, 3.0, float(np.float32(1 / 3))),
        (TensorProto.FLOAT16, 1.0, 3.0, None),  # it rounds, and onnxruntime does not
        (TensorProto.FLOAT16, 3.0, 2.0, 1.5),
    ],
)
def test_div(code: int, a: float, b: float, expected: float | None) -> None:
    assert _type(code).div(a, b) == expected


@pytest.mark.parametrize(
    ("code", "a", "b", "fmod", "expected"),
    [
        (TensorProto.INT64, -7, 3, False, 2),  # the divisor's sign
        (TensorProto.INT64, -7, 3, True, -1),  # the dividend's
        (TensorProto.INT32, -(2**31), -1, False, None),  # traps
        (TensorProto.INT8, -128, -1, False, 0),
        (TensorProto.FLOAT, 7.5, 2.0, True, 1.5),
        (TensorProto.FLOAT, 7.5, 2.0, False, None),  # onnxruntime refuses a float fmod=0
    ],
)
def test_mod(code: int, a: float, b: float, fmod: bool, expected: float | None) -> None:
    assert _type(code).mod(a, b, fmod=fmod) == expected


@pytest.mark.parametrize(
    ("code", "a", "b", "left", "expected"),
    [
        (TensorProto.UINT8, 3, 7, True, 128),
        (TensorProto.UINT8, 3, 8, True, 0),  # the width or more: 0, as the runtimes give
        (TensorProto.UINT32, 3, 40, True, 0),
        (TensorProto.UINT64, 2**63, 64, False, 0),
        (TensorProto.UINT16, 12, 14, True, 0),
        (TensorProto.UINT16, 200, 3, False, 25),
    ],
)
def test_bit_shift(code: int, a: int, b: int, left: bool, expected: int) -> None:
    assert _type(code).shift(a, b, left=left) == expected


@pytest.mark.parametrize("code", [TensorProto.STRING, TensorProto.INT4, TensorProto.COMPLEX64])
def test_values_of_other_types_are_not_followed(code: int) -> None:
    assert number_type(code) is None


def test_only_numbers_and_casts_take_float8() -> None:
    assert not any(_type(code).computes for code in FLOAT8)
    assert all(_type(code).computes for code in [*INTEGERS, *FLOATS])
    assert not _type(TensorProto.BOOL).computes
