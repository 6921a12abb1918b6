"""``out=``: parts copied into arrays the caller allocated, which are returned; bad ones rejected.

Every rejected ``out`` leaves all the given arrays untouched.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

import splitops


def _x() -> Any:
    return np.arange(24, dtype=np.float32).reshape(4, 6)


def _out(*shapes: tuple[int, ...], dtype: Any = np.float32) -> list[Any]:
    return [np.full(shape, -1, dtype) for shape in shapes]


@pytest.mark.parametrize("copy", [False, True])
def test_split_out_receives_copies_of_the_parts_and_is_returned(copy: bool) -> None:
    x = _x()
    out = _out((4, 2), (4, 4))
    for _ in range(2):
        parts = splitops.split(x, [2, 4], axis=1, out=out, copy=copy)
        assert isinstance(parts, tuple)
        assert parts[0] is out[0]
        assert parts[1] is out[1]
        np.testing.assert_array_equal(parts[0], x[:, :2], strict=True)
        np.testing.assert_array_equal(parts[1], x[:, 2:], strict=True)
        assert not any(np.shares_memory(p, x) for p in parts)


@pytest.mark.parametrize(
    ("split", "keepdims", "shapes"), [(None, 0, [(6,)] * 4), (3, 1, [(3, 6), (1, 6)])]
)
def test_split_to_sequence_out_receives_copies_and_is_returned(
    split: Any, keepdims: int, shapes: list[tuple[int, ...]]
) -> None:
    x = _x()
    out = _out(*shapes)
    parts = splitops.split_to_sequence(x, split, keepdims=keepdims, out=out)
    assert isinstance(parts, list)
    assert all(p is o for p, o in zip(parts, out, strict=True))
    expected = list(x) if split is None else [x[:3], x[3:]]
    for part, want in zip(parts, expected, strict=True):
        np.testing.assert_array_equal(part, want, strict=True)


def test_split_out_accepts_a_tuple_and_numpy_subclasses() -> None:
    x = _x()
    out = (np.zeros((2, 6), np.float32).view(np.ma.MaskedArray), np.zeros((2, 6), np.float32))
    parts = splitops.split(x, num_outputs=2, out=out)
    assert parts[0] is out[0]
    np.testing.assert_array_equal(np.asarray(parts[0]), x[:2])


def test_repeated_split_into_out_allocates_no_part_memory() -> None:
    x = np.ones((256, 1024), np.float32)  # 1 MiB
    out = _out((128, 1024), (128, 1024))
    splitops.split(x, num_outputs=2, out=out)
    tracemalloc.start()
    try:
        splitops.split(x, num_outputs=2, out=out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024  # a few small Python objects; a part alone would be 512 KiB


def test_torch_split_out_receives_copies() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(12.0).reshape(2, 6)
    out = [torch.empty(2, 2), torch.empty(2, 4)]
    parts = splitops.split(x, [2, 4], axis=1, out=out)
    assert parts[0] is out[0]
    assert parts[1] is out[1]
    assert torch.equal(parts[0], x[:, :2])
    assert torch.equal(parts[1], x[:, 2:])
    assert parts[1].data_ptr() != x[:, 2:].data_ptr()


def test_array_api_strict_split_out_receives_copies() -> None:
    xp = pytest.importorskip("array_api_strict")
    x = xp.reshape(xp.arange(6, dtype=xp.int16), (2, 3))
    out = [xp.zeros((2, 1), dtype=xp.int16), xp.zeros((2, 2), dtype=xp.int16)]
    parts = splitops.split(x, [1, 2], axis=1, out=out)
    assert parts[0] is out[0]
    assert xp.all(parts[1] == x[:, 1:])


def _rejects(error: type[splitops.SplitError], match: str, x: Any, out: Any, **kw: Any) -> None:
    before = [np.array(o, copy=True) for o in out] if isinstance(out, list) else None
    with pytest.raises(error, match=match):
        splitops.split(x, [2, 4], axis=1, out=out, **kw)
    if before is not None:
        for array, saved in zip(out, before, strict=True):
            np.testing.assert_array_equal(np.asarray(array), saved)


def test_out_with_the_wrong_number_of_arrays_is_rejected() -> None:
    _rejects(
        splitops.SplitError,
        r"needs 2 arrays, one per part; 3 were given",
        _x(),
        _out((4, 2), (4, 4), (4, 4)),
    )


def test_out_array_of_the_wrong_shape_is_rejected_before_any_write() -> None:
    _rejects(
        splitops.SplitError,
        r"out\[1\] must have shape \(4, 4\).*; \(4, 3\) was given",
        _x(),
        _out((4, 2), (4, 3)),
    )


def test_out_array_of_another_dtype_is_a_type_error() -> None:
    _rejects(
        splitops.SplitTypeError,
        r"out\[0\] must have the input's dtype float32; float64",
        _x(),
        [np.zeros((4, 2)), np.zeros((4, 4), np.float32)],
    )


def test_out_array_of_another_library_is_a_type_error() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(splitops.SplitTypeError, match=r"out\[0\] must be a numpy array .*torch"):
        splitops.split(_x(), [2, 4], axis=1, out=[torch.zeros(4, 2), torch.zeros(4, 4)])


def test_out_that_is_not_a_list_is_a_type_error() -> None:
    with pytest.raises(splitops.SplitTypeError, match=r"list or tuple of arrays.*ndarray"):
        splitops.split(_x(), num_outputs=1, out=np.zeros((1, 4, 6), np.float32))


def test_read_only_out_array_is_rejected_before_any_write() -> None:
    out = _out((4, 2), (4, 4))
    out[1].flags.writeable = False
    _rejects(splitops.SplitError, r"out\[1\] is read-only", _x(), out)


def test_a_read_only_part_of_a_copy_given_as_out_is_rejected_before_any_write() -> None:
    # The parts of one copy=True call lie in order in one buffer, but one may not be written.
    out = list(splitops.split(np.full((4, 6), -1, np.float32), [2, 4], axis=1, copy=True))
    out[1].flags.writeable = False
    _rejects(splitops.SplitError, r"out\[1\] is read-only", _x(), out)


def test_out_of_jax_arrays_is_a_type_error_since_they_are_immutable() -> None:
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(6.0).reshape(2, 3)
    out = [jnp.zeros((2, 1)), jnp.zeros((2, 2))]
    with pytest.raises(splitops.SplitTypeError, match=r"cannot write into jax\.numpy arrays"):
        splitops.split(x, [1, 2], axis=1, out=out)
