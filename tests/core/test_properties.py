"""Properties that hold for every input: parts put back together give the input, part shapes
are the planner's sizes, parts are views unless ``copy=True``, and the planner's sizes obey
their invariants (Split-18's against a formula written here with numpy as the oracle).
"""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import splitops
from splitops import SplitError

PROPERTY = settings(max_examples=120, deadline=None)
DTYPES = [np.float32, np.float64, np.int8, np.uint16, np.bool_, np.complex64]
LAYOUTS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.T,
    "reversed": lambda a: a[::-1],
    "strided": lambda a: a[::2],
}


@st.composite
def inputs(draw: st.DrawFn, max_side: int = 6) -> Any:
    """An array of any layout (views included) and an axis of it, negative or not."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=max_side))
    base = draw(hnp.arrays(dtype, shape))
    x = LAYOUTS[draw(st.sampled_from(sorted(LAYOUTS)))](base)
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    return x, axis


@st.composite
def compositions(draw: st.DrawFn, total: int) -> list[int]:
    """1 to 12 sizes >= 0 that add up to ``total`` (zero sizes included)."""
    count = draw(st.integers(1, 12))
    cuts = sorted(draw(st.lists(st.integers(0, total), min_size=count - 1, max_size=count - 1)))
    return np.diff([0, *cuts, total]).tolist()


def split18_oracle(dim: int, count: int) -> list[int] | None:
    """Split-18's sizes by the spec's words, in numpy: None where the rest is negative."""
    if dim % count == 0:
        return np.full(count, dim // count).tolist()
    sizes = np.full(count, int(np.ceil(dim / count)))
    sizes[-1] = dim - sizes[:-1].sum()
    return None if sizes[-1] < 0 else sizes.tolist()


def assert_cut_back(parts: Any, x: Any, axis: int, sizes: list[int]) -> None:
    """Part shapes are ``sizes`` along ``axis`` and the parts concatenate back to ``x``."""
    axis %= x.ndim
    assert [p.shape for p in parts] == [(*x.shape[:axis], s, *x.shape[axis + 1 :]) for s in sizes]
    np.testing.assert_array_equal(np.concatenate(parts, axis=axis), x, strict=True)


def assert_views(parts: Any, x: Any) -> None:
    # np.shares_memory is False for an empty array, whatever its base.
    assert all(np.shares_memory(p, x) for p in parts if p.size)


def assert_copies(parts: Any, x: Any) -> None:
    assert all(p.flags.c_contiguous for p in parts)
    assert not any(np.shares_memory(p, x) for p in parts)
    assert not any(np.shares_memory(a, b) for i, a in enumerate(parts) for b in parts[i + 1 :])


@PROPERTY
@given(data=st.data(), case=inputs())
def test_split_explicit_sizes_cut_back_to_input(data: st.DataObject, case: Any) -> None:
    x, axis = case
    floating = x.dtype.kind == "f"  # Split-1 takes float types only
    opset = data.draw(st.sampled_from([1, 2, 11, 13, 18] if floating else [2, 11, 13, 18]))
    sizes = data.draw(compositions(x.shape[axis]))
    assert splitops.split_sizes(x.shape[axis], sizes, opset=opset) == tuple(sizes)
    parts = splitops.split(x, sizes, axis=axis, opset=opset)
    assert_cut_back(parts, x, axis, sizes)
    assert_views(parts, x)
    copies = splitops.split(x, np.array(sizes), axis=axis, opset=opset, copy=True)
    assert_cut_back(copies, x, axis, sizes)
    assert_copies(copies, x)


@PROPERTY
@given(case=inputs(), count=st.integers(1, 12), copy=st.booleans())
def test_split18_num_outputs_matches_the_ceil_formula(case: Any, count: int, copy: bool) -> None:
    x, axis = case
    expected = split18_oracle(x.shape[axis], count)
    if expected is None:
        with pytest.raises(SplitError, match=r"Pass explicit sizes"):
            splitops.split(x, axis=axis, num_outputs=count, copy=copy)
        return
    parts = splitops.split(x, axis=axis, num_outputs=count, copy=copy)
    assert_cut_back(parts, x, axis, expected)
    (assert_copies if copy else assert_views)(parts, x)


@PROPERTY
@given(
    case=inputs(max_side=3),
    count=st.integers(9, 20),
    opset=st.sampled_from([2, 11, 13, 18]),
    copy=st.booleans(),
)
def test_split_many_equal_parts_cut_back_to_input(
    case: Any, count: int, opset: int, copy: bool
) -> None:
    x, axis = case
    x = np.repeat(x, count, axis=axis)  # the axis length is now a multiple of count
    length = x.shape[axis] // count
    parts = splitops.split(x, axis=axis, num_outputs=count, opset=opset, copy=copy)
    assert_cut_back(parts, x, axis, [length] * count)
    (assert_copies if copy else assert_views)(parts, x)


@PROPERTY
@given(case=inputs(), opset=st.sampled_from([11, 24]), copy=st.booleans())
def test_sequence_keepdims0_stacks_back_to_input(case: Any, opset: int, copy: bool) -> None:
    x, axis = case
    parts = splitops.split_to_sequence(x, axis=axis, keepdims=0, opset=opset, copy=copy)
    assert all(isinstance(p, np.ndarray) for p in parts)
    assert len(parts) == x.shape[axis]
    if parts:
        np.testing.assert_array_equal(np.stack(parts, axis=axis), x, strict=True)
    (assert_copies if copy else assert_views)(parts, x)


@PROPERTY
@given(
    data=st.data(),
    case=inputs(),
    opset=st.sampled_from([11, 24]),
    keepdims=st.sampled_from([0, 1]),
    copy=st.booleans(),
)
def test_sequence_split_cuts_back_to_input(
    data: st.DataObject, case: Any, opset: int, keepdims: int, copy: bool
) -> None:
    x, axis = case
    dim = x.shape[axis]
    kind = data.draw(st.sampled_from(["none", "scalar", "1-d"]))
    split: Any = None
    expected = [1] * dim
    if kind == "scalar":
        split = data.draw(st.integers(1, 8))
        expected = [split] * (dim // split) + ([dim % split] if dim % split else [])
    elif kind == "1-d":
        split = expected = data.draw(compositions(dim))
    if kind == "none":
        keepdims = 1  # keepdims=0 without split is the stacking property above
    assert splitops.sequence_sizes(dim, split, opset=opset) == tuple(expected)
    parts = splitops.split_to_sequence(
        x, split, axis=axis, keepdims=keepdims, opset=opset, copy=copy
    )
    assert len(parts) == len(expected)
    if split == 1 and not keepdims:  # the default split: keepdims applies
        if parts:
            np.testing.assert_array_equal(np.stack(parts, axis=axis), x, strict=True)
    elif parts:
        assert_cut_back(parts, x, axis, expected)
    (assert_copies if copy else assert_views)(parts, x)


@settings(max_examples=200, deadline=None)
@given(dim=st.integers(0, 10**6), count=st.integers(1, 100))
def test_split18_planner_matches_the_numpy_oracle(dim: int, count: int) -> None:
    expected = split18_oracle(dim, count)
    if expected is None:
        with pytest.raises(SplitError, match=rf"cannot split a dim of {dim} into {count} parts"):
            splitops.split_sizes(dim, num_outputs=count)
    else:
        assert splitops.split_sizes(dim, num_outputs=count) == tuple(expected)


@settings(max_examples=200, deadline=None)
@given(count=st.integers(1, 100), length=st.integers(0, 10**4), extra=st.integers(1, 99))
def test_split_before_18_equal_parts_or_rejection(count: int, length: int, extra: int) -> None:
    for opset in (1, 2, 11, 13):
        assert splitops.split_sizes(count * length, num_outputs=count, opset=opset) == (
            (length,) * count
        )
        if extra % count:
            with pytest.raises(SplitError, match=r"does not divide into"):
                splitops.split_sizes(count * length + extra, num_outputs=count, opset=opset)


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 10**6), min_size=1, max_size=40))
def test_planner_explicit_sizes_invariants(sizes: list[int]) -> None:
    dim = sum(sizes)
    for opset in (1, 2, 11, 13, 18):
        assert splitops.split_sizes(dim, sizes, opset=opset) == tuple(sizes)
    for opset in (11, 24):
        assert splitops.sequence_sizes(dim, sizes, opset=opset) == tuple(sizes)
    with pytest.raises(SplitError, match=rf"sum to {dim}, but the axis length is {dim + 1}"):
        splitops.split_sizes(dim + 1, sizes)


@settings(max_examples=200, deadline=None)
@given(dim=st.integers(0, 10**5), chunk=st.integers(1, 10**3))
def test_planner_scalar_chunks_invariants(dim: int, chunk: int) -> None:
    sizes = splitops.sequence_sizes(dim, chunk)
    assert sum(sizes) == dim
    assert len(sizes) == -(-dim // chunk)
    assert all(s == chunk for s in sizes[:-1])
    assert all(1 <= s <= chunk for s in sizes)
