"""numpy: parts are views of any input layout, keep the exact dtype, and copy=True detaches.

The oracle is numpy's own basic slicing ``x[..., a:b]`` of the same array.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np
import pytest

from splitops import split, split_to_sequence

BASE = np.arange(2 * 12 * 3, dtype=np.float32).reshape(2, 12, 3)

#: Input layouts: contiguous, negative strides, axes stored in another order, Fortran order,
#: strided with an offset.
LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "contiguous": lambda a: a,
    "reversed": lambda a: a[::-1, ::-1, ::-1],
    "permuted": lambda a: np.ascontiguousarray(a.transpose(1, 0, 2)).transpose(1, 0, 2),
    "fortran": np.asfortranarray,
    "strided": lambda a: np.repeat(a, 2, axis=1)[:, 1::2],
}

#: Each way to cut axis 1 (length 12): a function of x and the sizes it cuts.
CUTS: dict[str, tuple[Callable[..., Any], list[int]]] = {
    "explicit": (lambda x, **kw: split(x, [5, 0, 7], axis=1, **kw), [5, 0, 7]),
    "num_outputs": (lambda x, **kw: split(x, num_outputs=5, axis=1, **kw), [3, 3, 3, 3, 0]),
    "many_equal": (lambda x, **kw: split(x, num_outputs=12, axis=1, **kw), [1] * 12),
    "chunks": (lambda x, **kw: split_to_sequence(x, 5, axis=1, **kw), [5, 5, 2]),
}


def _slices(x: np.ndarray, sizes: list[int], axis: int) -> list[np.ndarray]:
    stops = list(accumulate(sizes))
    lead = (slice(None),) * axis
    return [x[(*lead, slice(stop - size, stop))] for size, stop in zip(sizes, stops, strict=True)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cut", CUTS)
def test_parts_of_every_layout_are_views_with_numpy_slicing_values(layout: str, cut: str) -> None:
    function, sizes = CUTS[cut]
    x = LAYOUTS[layout](BASE)
    parts = function(x)
    for part, want in zip(parts, _slices(x, sizes, 1), strict=True):
        np.testing.assert_array_equal(part, want, strict=True)
        assert part.size == 0 or np.shares_memory(part, x)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sequence_keepdims0_parts_are_views_without_the_axis(layout: str) -> None:
    x = LAYOUTS[layout](BASE)
    parts = split_to_sequence(x, axis=1, keepdims=0)
    assert len(parts) == 12
    for i, part in enumerate(parts):
        np.testing.assert_array_equal(part, x[:, i], strict=True)
        assert np.shares_memory(part, x)


def test_sequence_keepdims0_of_a_1d_input_gives_0d_arrays_not_scalars() -> None:
    x = np.arange(3, dtype=np.int16)
    parts = split_to_sequence(x, keepdims=0)
    assert [type(p) for p in parts] == [np.ndarray] * 3
    assert [p.shape for p in parts] == [()] * 3
    assert all(np.shares_memory(p, x) for p in parts)


@pytest.mark.parametrize("cut", CUTS)
def test_parts_of_a_read_only_input_stay_read_only(cut: str) -> None:
    function, sizes = CUTS[cut]
    x = BASE.copy()
    x.flags.writeable = False
    parts = function(x)
    assert [p.shape[1] for p in parts] == sizes
    assert not any(p.flags.writeable for p in parts)
    with pytest.raises(ValueError, match="read-only"):
        parts[0][...] = 0


@pytest.mark.parametrize("dtype", [">f4", ">i8", "<c8", ">u2", "<f2", ">c16"])
@pytest.mark.parametrize("copy", [False, True])
def test_parts_keep_the_input_dtype_and_byte_order(dtype: str, copy: bool) -> None:
    x = np.arange(12).reshape(3, 4).astype(dtype)
    parts = [*split(x, [1, 3], axis=1, copy=copy), *split_to_sequence(x, axis=0, copy=copy)]
    assert [p.dtype.str for p in parts] == [np.dtype(dtype).str] * 5
    np.testing.assert_array_equal(parts[1], x[:, 1:], strict=True)


@pytest.mark.parametrize("dtype", ["U3", "S3", "O", np.dtypes.StringDType()])
def test_string_arrays_split_into_views(dtype: Any) -> None:
    x = np.array([["a", "bc", "def"], ["g", "", "hi"]], dtype=dtype)
    parts = split(x, [2, 1], axis=1)
    np.testing.assert_array_equal(parts[0], x[:, :2], strict=True)
    assert parts[1].dtype == x.dtype
    assert all(np.shares_memory(p, x) for p in parts)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cut", CUTS)
def test_copy_true_gives_c_contiguous_writable_arrays_apart_from_the_input(
    layout: str, cut: str
) -> None:
    function, sizes = CUTS[cut]
    x = LAYOUTS[layout](BASE)
    x.flags.writeable = False
    before = x.copy()
    parts = function(x, copy=True)
    for part, want in zip(parts, _slices(x, sizes, 1), strict=True):
        np.testing.assert_array_equal(part, want, strict=True)
        assert part.flags.c_contiguous
        assert part.flags.writeable
        assert not np.shares_memory(part, x)
        part[...] = -1
    np.testing.assert_array_equal(x, before, strict=True)


def test_copy_true_keepdims0_parts_are_c_contiguous_and_apart() -> None:
    x = LAYOUTS["permuted"](BASE)
    parts = split_to_sequence(x, axis=2, keepdims=0, copy=True)
    for i, part in enumerate(parts):
        np.testing.assert_array_equal(part, x[:, :, i], strict=True)
        assert part.flags.c_contiguous
        assert not np.shares_memory(part, x)
