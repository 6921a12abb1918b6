"""What every array library gets: parts in its own type, on its own device, with numpy's values.

Each test runs once per :class:`Backend` (see conftest.py); numpy's own split of the same
data is the oracle.
"""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType
from typing import Any

import array_api_compat
import numpy as np
import pytest

from splitops import SplitError, SplitTypeError, split, split_to_sequence

from .conftest import Backend

GRID = np.arange(60, dtype=np.float64).reshape(3, 4, 5)


def _sample(onnx_type: str, dtype: np.dtype[Any]) -> np.ndarray:
    """Six distinct values of ``dtype`` (two for bool), as a (6,) array."""
    if onnx_type == "string":
        return np.array(["", "a", "bc", "def", "\u00e9", "ghij"], dtype=dtype)
    if onnx_type == "bool":
        return np.array([True, False, False, True, True, False])
    if dtype.kind == "c":
        return (np.arange(6) * (1 + 2j)).astype(dtype)
    return np.arange(6).astype(dtype)


def _assert_same_parts(parts: Any, expected: list[np.ndarray], to_numpy: Any) -> None:
    assert len(parts) == len(expected)
    for part, want in zip(parts, expected, strict=True):
        np.testing.assert_array_equal(to_numpy(part), want, strict=True)


def test_parts_are_arrays_of_the_input_library_on_its_device(
    xp: ModuleType, device: Any, asarray: Any
) -> None:
    x = asarray(GRID)
    for part in [*split(x, [1, 0, 3], axis=1), *split_to_sequence(x, 2, axis=-1)]:
        assert type(part) is type(x)
        assert array_api_compat.array_namespace(part) is xp
        assert array_api_compat.device(part) == device


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_split_values_equal_numpy_split_along_each_axis(
    axis: int, asarray: Any, to_numpy: Any, oracle: Any
) -> None:
    sizes = [0, 1, 1, 1] if GRID.shape[axis] == 3 else [1, 0, 2, GRID.shape[axis] - 3]
    parts = split(asarray(GRID), sizes, axis=axis)
    _assert_same_parts(parts, oracle(GRID, sizes, axis), to_numpy)


def test_split18_num_outputs_leaves_the_rest_to_the_last_part(
    asarray: Any, to_numpy: Any, oracle: Any
) -> None:
    values = np.arange(14.0).reshape(2, 7)
    parts = split(asarray(values), num_outputs=4, axis=1)
    _assert_same_parts(parts, oracle(values, [2, 2, 2, 1], 1), to_numpy)


def test_sequence_scalar_split_cuts_chunks_with_a_shorter_last(
    asarray: Any, to_numpy: Any, oracle: Any
) -> None:
    parts = split_to_sequence(asarray(GRID), 2, axis=2)
    _assert_same_parts(parts, oracle(GRID, [2, 2, 1], 2), to_numpy)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sequence_keepdims0_without_split_drops_the_axis(
    axis: int, asarray: Any, to_numpy: Any
) -> None:
    parts = split_to_sequence(asarray(GRID), axis=axis, keepdims=0)
    expected = [np.take(GRID, i, axis=axis) for i in range(GRID.shape[axis])]
    _assert_same_parts(parts, expected, to_numpy)


@pytest.mark.parametrize("op", ["split", "split_to_sequence"])
def test_copy_true_gives_the_same_values_library_and_device(
    op: str, xp: ModuleType, device: Any, asarray: Any, to_numpy: Any, oracle: Any
) -> None:
    function = split if op == "split" else split_to_sequence
    parts = function(asarray(GRID), [1, 3], axis=1, copy=True)
    _assert_same_parts(parts, oracle(GRID, [1, 3], 1), to_numpy)
    for part in parts:
        assert array_api_compat.array_namespace(part) is xp
        assert array_api_compat.device(part) == device


@pytest.mark.parametrize("op", ["split", "split_to_sequence"])
def test_out_receives_copies_in_arrays_of_the_library_on_its_device(
    op: str, library: Any, device: Any, asarray: Any, to_numpy: Any, oracle: Any
) -> None:
    function = split if op == "split" else split_to_sequence
    out = list(function(asarray(np.zeros_like(GRID)), [1, 3], axis=1, copy=True))
    if library is Backend.JAX:
        with pytest.raises(SplitTypeError, match=r"cannot write into jax\.numpy arrays"):
            function(asarray(GRID), [1, 3], axis=1, out=out)
        return
    parts = function(asarray(GRID), [1, 3], axis=1, out=out)
    assert all(part is array for part, array in zip(parts, out, strict=True))
    _assert_same_parts(parts, oracle(GRID, [1, 3], 1), to_numpy)
    assert all(array_api_compat.device(part) == device for part in parts)


def test_every_onnx_type_the_library_has_keeps_its_dtype(
    library: Any, asarray: Any, to_numpy: Any, oracle: Any
) -> None:
    for onnx_type, dtype in library.onnx_types.items():
        values = _sample(onnx_type, dtype)
        x = asarray(values)
        parts = split(x, [1, 2, 3], opset=18)
        sequence = split_to_sequence(x, axis=0, keepdims=0, opset=24)
        for part in [*parts, *sequence]:
            assert type(part) is type(x), onnx_type
            assert part.dtype == x.dtype, onnx_type
        _assert_same_parts(parts, oracle(values, [1, 2, 3], 0), to_numpy)
        _assert_same_parts(sequence, [values[i, ...] for i in range(len(values))], to_numpy)


def test_sizes_that_do_not_add_up_are_a_split_error(asarray: Any) -> None:
    with pytest.raises(SplitError, match=r"sum to 5, but the axis length is 4"):
        split(asarray(GRID), [2, 3], axis=1)


def test_splitting_numpy_arrays_imports_no_other_array_library() -> None:
    script = (
        "import sys, numpy as np, splitops\n"
        "splitops.split(np.zeros(3), [1, 2])\n"
        "splitops.split_to_sequence(np.zeros(3), np.array(2), keepdims=0)\n"
        "print(sorted(set(sys.modules) & {'torch', 'jax', 'dask', 'cupy', 'array_api_strict'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
