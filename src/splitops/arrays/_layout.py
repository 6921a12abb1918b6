"""Where the copies of a plan's parts lie in one buffer, and the few copies that fill it.

``copy=True`` makes one flat buffer and cuts every part from it; ``out=`` arrays that are
consecutive pieces of one buffer (the parts of an earlier ``copy=True`` call) are filled the
same way. The parts lie one after the other, each C-contiguous, and a :class:`Block` is a run
of them that one copy fills:

- ``whole``: no axis before the split axis is longer than 1 (the split axis is the first, for
  instance): the buffer holds ``x`` in C order, and the parts are views of it by the plan;
- ``rows``: a run of parts of one length (or, when the plan drops the axis, every position):
  ``x``'s run viewed as ``(..., count, length, ...)`` with ``count`` moved first, copied in C
  order; the parts are its rows. One gather, however many parts;
- ``part``: one part, copied alone (sizes that are no run of equal parts and a rest).

All of it is integers: a library applies a block with its own slicing, reshaping,
transposing and copying (:class:`splitops.arrays._strided.Strided`).

>>> from splitops.core import SplitPlan
>>> [(b.kind, b.start, b.stop, b.shape) for b in copy_layout((4, 6), SplitPlan.make(1, (2, 2, 2)))]
[('rows', 0, 24, (3, 4, 2))]
>>> [(b.kind, b.shape) for b in copy_layout((4, 7), SplitPlan.make(1, (3, 3, 1)))]
[('rows', (2, 4, 3)), ('part', (4, 1))]
>>> [b.kind for b in copy_layout((1, 4, 6), SplitPlan.make(1, (1, 3)))]
['whole']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from ..core import SplitPlan

__all__ = ["Block", "copy_layout", "part_numels", "part_shapes"]


@dataclass(frozen=True, slots=True)
class Block:
    """Elements ``[start, stop)`` of the buffer, of ``shape``, hold ``x[index]`` reshaped to
    ``grouped`` and transposed by ``order`` (each empty when not needed)."""

    kind: Literal["whole", "rows", "part"]
    start: int
    stop: int
    shape: tuple[int, ...]
    index: tuple[Any, ...]
    grouped: tuple[int, ...] = ()
    order: tuple[int, ...] = ()


def part_shapes(shape: tuple[int, ...], plan: SplitPlan) -> list[tuple[int, ...]]:
    """The shape of each part of ``plan`` on an input of ``shape`` (parts of one size share
    one tuple)."""
    axis, sizes = plan.axis, plan.sizes
    if plan.drop_axis:
        return [shape[:axis] + shape[axis + 1 :]] * len(sizes)
    lead, trail = shape[:axis], shape[axis + 1 :]
    if plan.run_count:
        run = [(*lead, plan.run_length, *trail)] * plan.run_count
        return [*run, (*lead, sizes[-1], *trail)] if plan.run_count < len(sizes) else run
    return [(*lead, size, *trail) for size in sizes]


def part_numels(shape: tuple[int, ...], plan: SplitPlan) -> list[int]:
    """The number of elements of each part."""
    across = math.prod(shape[: plan.axis]) * math.prod(shape[plan.axis + 1 :])
    return [across * size for size in plan.sizes]


def copy_layout(shape: tuple[int, ...], plan: SplitPlan) -> tuple[Block, ...]:
    """The blocks of the buffer that holds copies of the parts of ``plan`` on ``shape``."""
    axis = plan.axis
    everything = (Ellipsis,)
    total = math.prod(shape)
    if not total or math.prod(shape[:axis]) == 1:
        return (Block("whole", 0, total, shape, everything),)
    lead, trail = shape[:axis], shape[axis + 1 :]
    # Moving the axis (or its count) first: (axis, 0, ..., axis - 1, axis + 1, ...).
    order = (axis, *range(axis), *range(axis + 1, len(shape) + (not plan.drop_axis)))
    if plan.drop_axis:
        return (Block("rows", 0, total, (shape[axis], *lead, *trail), everything, (), order),)
    count, length = plan.run_count, plan.run_length
    across = total // shape[axis]
    blocks = []
    start = 0
    if count > 1:
        stop = count * length * across
        index = (*(slice(None),) * axis, slice(0, count * length), Ellipsis)
        grouped = (*lead, count, length, *trail)
        blocks.append(Block("rows", 0, stop, (count, *lead, length, *trail), index, grouped, order))
        start = stop
    first = count if count > 1 else 0
    position = first * length  # along the axis
    for size in plan.sizes[first:]:
        stop = start + size * across
        index = (*(slice(None),) * axis, slice(position, position + size), Ellipsis)
        blocks.append(Block("part", start, stop, (*lead, size, *trail), index))
        start, position = stop, position + size
    return tuple(blocks)
