"""Parts are views of the input by default and independent contiguous arrays with copy=True,
on every numpy path: a few parts, many equal parts, and SplitToSequence's keepdims=0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import splitops

x2d = np.arange(2 * 12, dtype=np.float64).reshape(2, 12)
CUTS: dict[str, Callable[..., Any]] = {
    "split, a few unequal parts": lambda x, **kw: splitops.split(x, [5, 0, 7], axis=1, **kw),
    "split, many equal parts": lambda x, **kw: splitops.split(x, axis=1, num_outputs=12, **kw),
    "split_to_sequence, scalar": lambda x, **kw: splitops.split_to_sequence(x, 5, axis=1, **kw),
    "split_to_sequence, keepdims=0": lambda x, **kw: splitops.split_to_sequence(
        x, axis=1, keepdims=0, **kw
    ),
    "split_to_sequence, keepdims=0 on 1-d": lambda x, **kw: splitops.split_to_sequence(
        x[0], keepdims=0, **kw
    ),
}


@pytest.mark.parametrize("cut", CUTS.values(), ids=CUTS.keys())
@pytest.mark.parametrize("layout", ["C", "F"])
def test_parts_are_views_by_default(cut: Callable[..., Any], layout: str) -> None:
    x = np.array(x2d, order=layout)
    parts = cut(x)
    assert all(isinstance(p, np.ndarray) for p in parts)
    assert all(np.shares_memory(p, x) for p in parts if p.size)
    first = parts[0]
    first[...] = -1  # writing through a view writes the input
    assert (x == -1).sum() == first.size


@pytest.mark.parametrize("cut", CUTS.values(), ids=CUTS.keys())
@pytest.mark.parametrize("layout", ["C", "F"])
def test_copy_gives_independent_contiguous_parts(cut: Callable[..., Any], layout: str) -> None:
    x = np.array(x2d, order=layout)
    parts = cut(x, copy=True)
    expected = cut(x2d)
    for part, want in zip(parts, expected, strict=True):
        assert isinstance(part, np.ndarray)
        assert part.flags.c_contiguous
        assert not np.shares_memory(part, x)
        np.testing.assert_array_equal(part, want, strict=True)
    for part in parts:
        part[...] = -1
    np.testing.assert_array_equal(x, x2d)
