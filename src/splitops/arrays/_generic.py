"""Cutting an array by a plan with nothing but the Python array API standard.

What any compliant library gets when :mod:`splitops.arrays` has no native path for it: basic
slices (views where the library has them), ``asarray(copy=True)`` for copies.

>>> import array_api_strict as xp
>>> from splitops.core import SplitPlan
>>> x = xp.reshape(xp.arange(6), (2, 3))
>>> [tuple(p.shape) for p in cut(xp, x, SplitPlan.make(1, (1, 2)), copy=False)]
[(2, 1), (2, 2)]
"""

from __future__ import annotations

from typing import Any

from ..core import SplitPlan, part_indices

__all__ = ["cut"]


def cut(xp: Any, x: Any, plan: SplitPlan, *, copy: bool) -> list[Any]:
    """The parts of ``x`` by ``plan``: basic slices, or (dropping the axis) ``x`` indexed
    with each position, which gives 0-d arrays for a 1-d ``x`` in every library."""
    if plan.drop_axis:
        lead = (slice(None),) * plan.axis
        indices = [(*lead, i, Ellipsis) for i in range(len(plan.sizes))]
        parts = [x[index] for index in indices]
    else:
        parts = list(
            plan.take(x) if plan.indices else (x[i] for i in part_indices(plan.axis, plan.sizes))
        )
    if copy:
        return [xp.asarray(part, copy=True) for part in parts]
    return parts
