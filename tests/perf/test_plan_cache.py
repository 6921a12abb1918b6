"""The plan cache: a repeated call reuses the first call's checked plan, and nothing else changes.

numpy's ``np.split`` at bounds worked out here from the spec's wording is the oracle for every
part; errors are compared with the ones a fresh (uncached) call raises.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from benchmarks.checks import threads_check

import splitops
from splitops.core import plan_cache_clear, plan_cache_info
from splitops.core._planner import GROUPED_FROM, MAX_CACHED_PARTS, PLAN_CACHE_SIZE


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    plan_cache_clear()
    yield
    plan_cache_clear()


def _counts() -> tuple[int, int]:
    info = plan_cache_info()
    return info["hits"], info["misses"]


def _expected(x: Any, sizes: tuple[int, ...], axis: int) -> list[Any]:
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis) if sizes else []


def _split18_bounds(dim: int, count: int) -> list[int] | None:
    """Where Split-18 cuts: after every ``ceil(dim / count)`` elements, the last part taking
    the rest; ``None`` when that rest would be below 0 (the spec's rejection)."""
    chunk = -(-dim // count)
    bounds = [chunk * i for i in range(1, count)]
    return None if bounds and bounds[-1] > dim else bounds


def _sequence_bounds(dim: int, split: Any) -> list[int]:
    """Where SplitToSequence cuts: after every element (no split), every ``split`` elements
    (a chunk length, the rest last), or at the running sums of the sizes."""
    if split is None:
        return list(range(1, dim))
    if isinstance(split, int):
        return list(range(split, dim, split))
    return np.cumsum(split)[:-1].tolist()


def _assert_parts(parts: Any, x: Any, sizes: tuple[int, ...], axis: int, *, copy: bool) -> None:
    _assert_parts_equal(parts, x, _expected(x, sizes, axis), copy=copy)


def _assert_parts_equal(parts: Any, x: Any, expected: list[Any], *, copy: bool) -> None:
    assert len(parts) == len(expected)
    if copy:  # cut from one buffer, but no two parts overlap
        for first, second in itertools.pairwise(parts):
            assert not np.shares_memory(first, second)
    for part, want in zip(parts, expected, strict=True):
        assert type(part) is np.ndarray
        np.testing.assert_array_equal(part, want, strict=True)
        if copy:
            assert not np.shares_memory(part, x)
            assert part.flags.c_contiguous
        elif part.size:
            assert np.shares_memory(part, x)


def _inputs() -> Iterator[Any]:
    base = np.arange(5 * 24, dtype=np.float32).reshape(5, 24)
    yield base
    yield base[::-1, ::2]  # negative and doubled strides
    yield np.asfortranarray(base)
    yield base.T


@pytest.mark.parametrize("x", list(_inputs()), ids=["c", "strided", "fortran", "transposed"])
@pytest.mark.parametrize("num_outputs", [1, 2, 3, 5, 9, 12])
@pytest.mark.parametrize("copy", [False, True])
def test_repeated_split_gives_numpys_parts_every_time(x: Any, num_outputs: int, copy: bool) -> None:
    for axis in (0, 1, -1):
        bounds = _split18_bounds(x.shape[axis], num_outputs)
        for _ in range(3):
            if bounds is None:
                with pytest.raises(splitops.SplitError, match="cannot split a dim"):
                    splitops.split(x, num_outputs=num_outputs, axis=axis, copy=copy)
                continue
            parts = splitops.split(x, num_outputs=num_outputs, axis=axis, copy=copy)
            assert isinstance(parts, tuple)
            _assert_parts_equal(parts, x, np.split(x, bounds, axis=axis), copy=copy)


@pytest.mark.parametrize("split", [None, 1, 4, 7, [3, 0, 21], (24,)])
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("copy", [False, True])
def test_repeated_split_to_sequence_gives_numpys_parts_every_time(
    split: Any, keepdims: int, copy: bool
) -> None:
    x = np.arange(3 * 24, dtype=np.int64).reshape(3, 24)
    for _ in range(3):
        parts = splitops.split_to_sequence(x, split, axis=1, keepdims=keepdims, copy=copy)
        assert isinstance(parts, list)
        if split in (None, 1) and not keepdims:  # the scalar 1 is the default split
            assert [p.shape for p in parts] == [(3,)] * 24
            for i, part in enumerate(parts):
                np.testing.assert_array_equal(part, x[:, i], strict=True)
                assert np.shares_memory(part, x) != copy
        else:
            expected = np.split(x, _sequence_bounds(24, split), axis=1)
            _assert_parts_equal(parts, x, expected, copy=copy)


def test_split_to_sequence_keepdims_zero_on_1d_input_gives_0d_arrays() -> None:
    x = np.arange(4.0)
    for copy in (False, True, False):
        parts = splitops.split_to_sequence(x, keepdims=0, copy=copy)
        assert all(type(p) is np.ndarray and p.shape == () for p in parts)
        assert [float(p) for p in parts] == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("copy", [False, True])
def test_many_equal_parts_come_from_a_grouped_view_of_any_layout(axis: int, copy: bool) -> None:
    # From GROUPED_FROM equal parts on, numpy iterates over a grouped view in C.
    base = np.arange(3 * 700.0).reshape(3, 700)
    x = base if axis else base.T  # along axis 0, a transposed (not C-contiguous) input
    for _ in range(2):
        parts = splitops.split(x, num_outputs=100, axis=axis, copy=copy)
        _assert_parts(parts, x, (7,) * 100, axis, copy=copy)
        parts = splitops.split_to_sequence(x, 6, axis=axis, copy=copy)  # with a shorter rest
        _assert_parts(parts, x, (6,) * 116 + (4,), axis, copy=copy)
        parts = splitops.split_to_sequence(x, axis=axis, keepdims=0, copy=copy)
        assert len(parts) == 700
        np.testing.assert_array_equal(np.stack(parts, axis=axis), x, strict=True)


def _layouts(length: int) -> dict[str, Any]:
    """Inputs of shape (2, length), cut along axis 1, in three memory layouts."""
    values = np.arange(2 * 2 * length, dtype=np.float32)
    return {
        "contiguous": values[: 2 * length].reshape(2, length),
        "strided": values.reshape(2, 2 * length)[:, ::2],
        "transposed": values[: 2 * length].reshape(length, 2).T,
    }


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
@pytest.mark.parametrize("copy", [False, True])
@pytest.mark.parametrize("tail", [False, True], ids=["equal", "tail"])
@pytest.mark.parametrize("count", [GROUPED_FROM - 1, GROUPED_FROM, GROUPED_FROM + 1])
def test_equal_parts_around_the_grouped_threshold_are_numpys_slices(
    count: int, tail: bool, copy: bool, layout: str
) -> None:
    # count parts of 3, and with a tail one more part of 1: Split-18 gives ceil((3n+1)/(n+1))=3.
    length = 3 * count + tail
    x = _layouts(length)[layout]
    expected = [x[:, 3 * i : 3 * i + 3] for i in range(count)] + [x[:, 3 * count :]] * tail
    for _ in range(2):
        parts = splitops.split(x, num_outputs=count + tail, axis=1, copy=copy)
        _assert_parts_equal(parts, x, expected, copy=copy)
        sequence = splitops.split_to_sequence(x, 3, axis=1, copy=copy)
        _assert_parts_equal(sequence, x, expected, copy=copy)


def test_views_of_a_read_only_input_stay_read_only() -> None:
    x = np.arange(12.0).reshape(2, 6)
    x.flags.writeable = False
    for _ in range(2):
        parts = splitops.split(x, num_outputs=2, axis=1)
        assert not any(p.flags.writeable for p in parts)


def _message(call: Any) -> tuple[type[BaseException], str]:
    with pytest.raises(splitops.SplitError) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize(
    "bad",
    [
        {"axis": True},
        {"axis": 1.0},
        {"num_outputs": True},
        {"num_outputs": 2.0},
        {"opset": 18.0},
        {"split": [3.0, 3.0], "num_outputs": None, "opset": 13},
        {"split": (True, 5), "num_outputs": None, "opset": 13},
        {"split": np.array([3.0, 3.0]), "num_outputs": None, "opset": 13},
    ],
    ids=repr,
)
def test_cached_call_never_lets_an_equal_but_invalid_argument_through(bad: dict[str, Any]) -> None:
    # True == 1 and 2.0 == 2 as dict keys; the rules still reject them after a valid call.
    x = np.zeros((2, 6), np.float32)
    valid: dict[str, Any] = {"axis": 1, "num_outputs": 2, "opset": 18}
    call = {**valid, **bad}
    fresh = _message(lambda: splitops.split(x, **call))
    splitops.split(x, **valid)
    splitops.split(x, [3, 3], axis=1, opset=13)
    splitops.split(x, (1, 5), axis=1, opset=13)
    assert _message(lambda: splitops.split(x, **call)) == fresh


def test_cached_sequence_call_never_lets_an_equal_but_invalid_keepdims_through() -> None:
    x = np.zeros((2, 6), np.float32)
    fresh = _message(lambda: splitops.split_to_sequence(x, keepdims=1.0))
    splitops.split_to_sequence(x, keepdims=1)
    assert _message(lambda: splitops.split_to_sequence(x, keepdims=1.0)) == fresh


def test_cached_call_still_rejects_a_dtype_the_version_does_not_take() -> None:
    floats = np.zeros((2, 6), np.float32)
    splitops.split(floats, [3, 3], axis=1, opset=1)
    with pytest.raises(splitops.SplitTypeError, match="Split-1 does not accept int32"):
        splitops.split(floats.astype(np.int32), [3, 3], axis=1, opset=1)


def test_split_list_changed_between_calls_is_planned_again() -> None:
    x = np.arange(6)
    sizes = [2, 4]
    assert [p.tolist() for p in splitops.split(x, sizes)] == [[0, 1], [2, 3, 4, 5]]
    sizes[:] = [3, 3]
    assert [p.tolist() for p in splitops.split(x, sizes)] == [[0, 1, 2], [3, 4, 5]]
    sizes[:] = [3, 4]
    with pytest.raises(splitops.SplitError, match="sum to 7"):
        splitops.split(x, sizes)


def test_same_arguments_on_another_shape_use_that_shapes_plan() -> None:
    for length in (6, 8, 6, 8):
        x = np.arange(length)
        parts = splitops.split(x, num_outputs=2)
        assert [p.tolist() for p in parts] == [
            list(range(length // 2)),
            list(range(length // 2, length)),
        ]


def test_the_cache_keeps_at_most_its_size() -> None:
    for length in range(1, PLAN_CACHE_SIZE + 20):
        splitops.split(np.zeros(length), [length])
        splitops.split_to_sequence(np.zeros(length), length)
    assert plan_cache_info()["currsize"] == plan_cache_info()["maxsize"] == 2 * PLAN_CACHE_SIZE


@pytest.mark.parametrize(
    "call",
    [
        lambda x: splitops.split(x, num_outputs=3, axis=1),
        lambda x: splitops.split(x, [1, 5], axis=1),
        lambda x: splitops.split(x, np.array([1, 5]), axis=1),
        lambda x: splitops.split_to_sequence(x),
        lambda x: splitops.split_to_sequence(x, np.array(2), axis=1),
        lambda x: splitops.split_to_sequence(x, [1, 5], axis=1, keepdims=False),
    ],
)
def test_a_repeated_call_plans_once_and_hits_the_cache_after(call: Any) -> None:
    for library in ("numpy", "torch"):
        x = np.zeros((4, 6), np.float32)
        if library == "torch":
            x = pytest.importorskip("torch").from_numpy(x)
        plan_cache_clear()
        first = [tuple(p.shape) for p in call(x)]
        for _ in range(4):
            assert [tuple(p.shape) for p in call(x)] == first
        assert _counts() == (4, 1)


def test_calls_with_inexact_arguments_plan_in_full_every_time() -> None:
    x = np.zeros((4, 6), np.float32)
    for _ in range(3):
        splitops.split(x, [np.int64(2), 4], axis=1, opset=13)  # a numpy integer in a list
        splitops.split(x, num_outputs=np.int64(2), axis=1)
        splitops.split_to_sequence(x, keepdims=np.int64(0))
    assert _counts() == (0, 0)


def test_a_plan_of_many_parts_is_made_every_time_but_never_kept() -> None:
    many = MAX_CACHED_PARTS + 1
    x = np.zeros(many)
    for _ in range(2):
        assert len(splitops.split(x, num_outputs=many)) == many
        assert len(splitops.split(x, [1] * many)) == many
        assert len(splitops.split_to_sequence(x)) == many
        assert len(splitops.split_to_sequence(np.zeros(2 * many), 2)) == many
    assert plan_cache_info()["currsize"] == 0


def test_a_plan_of_up_to_the_cached_number_of_parts_is_kept() -> None:
    limit = MAX_CACHED_PARTS
    for _ in range(3):
        assert len(splitops.split(np.zeros(limit), num_outputs=limit)) == limit
        assert len(splitops.split_to_sequence(np.zeros(2 * limit), 2)) == limit
    assert _counts() == (4, 2)


def test_a_rejected_call_is_never_cached() -> None:
    x = np.zeros(5)
    for _ in range(3):
        with pytest.raises(splitops.SplitError, match="cannot split a dim of 5 into 4"):
            splitops.split(x, num_outputs=4)
    assert plan_cache_info()["currsize"] == 0


@pytest.mark.parametrize(
    "bad",
    [
        {"axis": True},
        {"num_outputs": 2.0},
        {"split": (True, 5), "num_outputs": None, "opset": 13},
    ],
    ids=repr,
)
def test_cached_torch_call_never_lets_an_equal_but_invalid_argument_through(
    bad: dict[str, Any],
) -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros((2, 6))
    valid: dict[str, Any] = {"axis": 1, "num_outputs": 2, "opset": 18}
    call = {**valid, **bad}
    fresh = _message(lambda: splitops.split(x, **call))
    splitops.split(x, **valid)
    splitops.split(x, (1, 5), axis=1, opset=13)
    assert _message(lambda: splitops.split(x, **call)) == fresh


def test_cached_torch_call_still_rejects_a_dtype_or_keepdims_the_version_does_not_take() -> None:
    torch = pytest.importorskip("torch")
    floats = torch.zeros((2, 6))
    splitops.split(floats, [3, 3], axis=1, opset=11)
    with pytest.raises(splitops.SplitTypeError, match="Split-11 does not accept bfloat16"):
        splitops.split(floats.to(torch.bfloat16), [3, 3], axis=1, opset=11)
    fresh = _message(lambda: splitops.split_to_sequence(floats, keepdims=1.0))
    splitops.split_to_sequence(floats, keepdims=1)
    assert _message(lambda: splitops.split_to_sequence(floats, keepdims=1.0)) == fresh


def test_torch_split_list_changed_between_calls_is_planned_again() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(6)
    sizes = [2, 4]
    assert [p.tolist() for p in splitops.split(x, sizes)] == [[0, 1], [2, 3, 4, 5]]
    sizes[:] = [3, 4]
    with pytest.raises(splitops.SplitError, match="sum to 7"):
        splitops.split(x, sizes)


def test_threads_overflowing_the_cache_get_every_result_right() -> None:
    # 8 threads, a switch interval short enough that they interleave inside the cache.
    result = threads_check(threads=8, calls=1500)
    assert result["wrong"] == []
    assert result["ok"]
    assert result["plans_made"] > 2 * PLAN_CACHE_SIZE
