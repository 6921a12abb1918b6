"""Cutting an array into planned parts with nothing but the Python array API standard.

These functions take the namespace ``xp`` and sizes already decided by the planner; they are
what any compliant library gets when :mod:`splitops.kernels` has no native path for it.

>>> import array_api_strict as xp
>>> x = xp.reshape(xp.arange(6), (2, 3))
>>> [tuple(p.shape) for p in cut(xp, x, 1, (1, 2), copy=False)]
[(2, 1), (2, 2)]
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate
from typing import Any

__all__ = ["bounds", "cut", "part_indices", "unstack"]


def bounds(sizes: tuple[int, ...]) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of each part along the axis.

    >>> list(bounds((2, 0, 3)))
    [(0, 2), (2, 2), (2, 5)]
    """
    stops = accumulate(sizes)
    start = 0
    for stop in stops:
        yield start, stop
        start = stop


def part_indices(axis: int, sizes: tuple[int, ...]) -> tuple[tuple[Any, ...], ...]:
    """The basic index that selects each part: slices, then an ellipsis for the trailing axes
    (the standard, unlike numpy, wants every axis accounted for).

    >>> part_indices(1, (1, 2))[1]
    (slice(None, None, None), slice(1, 3, None), Ellipsis)
    """
    lead = (slice(None),) * axis
    return tuple((*lead, slice(start, stop), ...) for start, stop in bounds(sizes))


def cut(xp: Any, x: Any, axis: int, sizes: tuple[int, ...], *, copy: bool) -> list[Any]:
    """The parts of ``x`` along ``axis``: basic slices, which are views where ``xp`` has them."""
    parts = [x[index] for index in part_indices(axis, sizes)]
    if copy:
        return [xp.asarray(part, copy=True) for part in parts]
    return parts


def unstack(xp: Any, x: Any, axis: int, *, copy: bool) -> list[Any]:
    """Parts of length 1 along ``axis`` with that axis removed (SplitToSequence, keepdims=0).

    Each part is ``x`` indexed with ``i`` on ``axis``, ``:`` before it and ``...`` after it:
    a 0-d array for a 1-d ``x`` in every library, where ``unstack`` of numpy (and so of
    array-api-compat's numpy) gives numpy scalars.
    """
    lead = (slice(None),) * axis
    indices = [(*lead, i, ...) for i in range(x.shape[axis])]
    parts = [x[index] for index in indices]
    if copy:
        return [xp.asarray(part, copy=True) for part in parts]
    return parts
