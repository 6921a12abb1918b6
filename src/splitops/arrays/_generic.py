"""Cutting an array by a plan with nothing but the Python array API standard.

What any compliant library gets when :mod:`splitops.arrays` has no native path for it: basic
slices (views where the library has them), ``asarray(copy=True)`` for copies, and ``out=``
written with basic indexing.

>>> import array_api_strict as xp
>>> from splitops.core import SplitPlan
>>> x = xp.reshape(xp.arange(6), (2, 3))
>>> [tuple(p.shape) for p in GENERIC.views(x, SplitPlan.make(1, (1, 2)))]
[(2, 1), (2, 2)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import array_api_compat

from ..core import ElementType, Rule, SplitPlan, SplitTypeError, opset_rule, part_indices
from ._dtypes import element_of
from ._out import write_parts

__all__ = ["GENERIC", "Generic"]


class Generic:
    """Any array API library: describe, views, copies and ``out=`` by the standard alone."""

    def describe(self, x: Any, op: str, opset: int) -> tuple[ElementType | str, tuple[Any, ...]]:
        """The element type and shape of ``x``, or SplitTypeError when it is no array."""
        if not array_api_compat.is_array_api_obj(x):
            raise SplitTypeError(
                f"{opset_rule(op, opset).name} needs an array of an array API library (numpy, "
                f"torch, jax, cupy, dask, ...); {type(x).__name__} was given.",
                rule=Rule.ARRAY,
            )
        return element_of(x.dtype), tuple(x.shape)

    def views(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        """Basic slices, or (dropping the axis) ``x`` indexed with each position, which gives
        0-d arrays for a 1-d ``x`` in every library."""
        if plan.drop_axis:
            lead = (slice(None),) * plan.axis
            indices = [(*lead, i, Ellipsis) for i in range(len(plan.sizes))]
            return [x[index] for index in indices]
        if plan.indices:
            return plan.take(x)
        return [x[index] for index in part_indices(plan.axis, plan.sizes)]

    def copies(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        xp = array_api_compat.array_namespace(x)
        return [xp.asarray(part, copy=True) for part in self.views(x, plan)]

    def write(self, x: Any, plan: SplitPlan, out: object, name: str) -> list[Any]:
        return write_parts(x, self.views(x, plan), out, name)


#: The standard's way, for every library without a native path.
GENERIC = Generic()
