"""numpy's native path: views of the input, or copies cut from one new buffer.

>>> import numpy as np
>>> from splitops.core import SplitPlan
>>> [p.tolist() for p in cut(np.arange(12).reshape(2, 6), SplitPlan.make(1, (3, 3)), copy=False)]
[[[0, 1, 2], [6, 7, 8]], [[3, 4, 5], [9, 10, 11]]]
>>> [p.shape for p in cut(np.zeros((199, 3)), SplitPlan.make(0, (2,) * 99 + (1,)), copy=True)][-2:]
[(2, 3), (1, 3)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import SplitPlan, part_indices

__all__ = ["cut"]


def cut(x: np.ndarray[Any, Any], plan: SplitPlan, *, copy: bool) -> tuple[Any, ...]:
    """The parts of ``x`` by ``plan``: views, or C-contiguous copies sharing no memory."""
    if plan.drop_axis:
        return _unstacked(x, plan.axis, copy=copy)
    if plan.indices:
        views = plan.take(x)
        return _copies(views, x.dtype) if copy else views
    if plan.run_count:
        return _grouped(x, plan, copy=copy)
    views = tuple([x[index] for index in part_indices(plan.axis, plan.sizes)])
    return _copies(views, x.dtype) if copy else views


def _copies(views: tuple[Any, ...], dtype: Any) -> tuple[Any, ...]:
    """Contiguous copies of ``views``, cut one after the other from one new buffer.

    One allocation instead of one per part: glibc returns the memory of mid-sized arrays to
    the system as each is freed, and the next call faults every page in again (4 MiB cut in
    two took 4.6 ms that way, 0.1 ms from one buffer). The buffer is an ordinary array: its
    memory goes back when the last of the parts dies.
    """
    buffer = np.empty((sum(view.size for view in views),), dtype)
    copies = []
    start = 0
    for view in views:
        part = buffer[start : start + view.size].reshape(view.shape)
        np.copyto(part, view)
        copies.append(part)
        start += view.size
    return tuple(copies)


def _grouped(x: Any, plan: SplitPlan, *, copy: bool) -> tuple[Any, ...]:
    # (..., count * length, ...) viewed as (..., count, length, ...): splitting one axis in two
    # never needs a copy, so these are views; numpy then yields the count parts in C.
    axis, length, count = plan.axis, plan.run_length, plan.run_count
    shape = x.shape
    whole = count == len(plan.sizes)
    head = x if whole else x[(slice(None),) * axis + (slice(0, length * count),)]
    grouped = head.reshape((*shape[:axis], count, length, *shape[axis + 1 :]))
    moved = _to_front(grouped, axis)
    blocks: tuple[Any, ...] = (moved,)
    if not whole:
        blocks += (x[(slice(None),) * axis + (slice(length * count, None),)],)
    if copy:  # the moved view copied as a whole: its rows are contiguous parts
        blocks = _copies(blocks, x.dtype)
    return (*blocks[0], *blocks[1:])


def _to_front(x: Any, axis: int) -> Any:
    """``np.moveaxis(x, axis, 0)``, without its argument checks (a few microseconds)."""
    if not axis:
        return x
    return x.transpose((axis, *range(axis), *range(axis + 1, x.ndim)))


def _unstacked(x: Any, axis: int, *, copy: bool) -> tuple[Any, ...]:
    moved = _to_front(x, axis)
    # One C-ordered copy of the moved view: its rows are contiguous and share no memory with x.
    rows = moved.copy(order="C") if copy else moved
    if rows.ndim == 1:  # iterating would give numpy scalars; x[i, ...] is a 0-d array
        return tuple([rows[i, ...] for i in range(rows.shape[0])])
    return tuple(rows)
