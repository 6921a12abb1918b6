"""jax's native path: ``jax.lax.split`` (one primitive for all parts) and ``jnp.unstack``.

jax arrays are immutable and never views: the parts are new arrays, so ``copy=True`` gives
the same parts (sharing no buffer with the input), and ``out=`` is refused. Both calls trace
under ``jax.jit`` and ``jax.grad``. This module imports jax: it is loaded only once a jax
array arrives.

>>> import jax.numpy as jnp
>>> from splitops.core import SplitPlan
>>> [p.tolist() for p in JAX.views(jnp.arange(5), SplitPlan.make(0, (2, 3)))]
[[0, 1], [2, 3, 4]]
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import jax.numpy as jnp
from jax import lax

from ..core import ElementType, SplitPlan
from ._dtypes import NUMPY_ELEMENTS, element_of
from ._generic import Generic

__all__ = ["JAX"]


class Jax(Generic):
    """jax's own split, under ``jax.jit`` too."""

    def describe(self, x: Any, op: str, opset: int) -> tuple[ElementType | str, tuple[Any, ...]]:
        return NUMPY_ELEMENTS.get(x.dtype) or element_of(x.dtype), tuple(x.shape)

    def views(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        if plan.drop_axis:
            return jnp.unstack(x, axis=plan.axis)
        if not plan.sizes:
            return ()
        if hasattr(lax, "split"):  # jax >= 0.4.36
            return lax.split(x, plan.sizes, axis=plan.axis)
        return jnp.split(x, list(accumulate(plan.sizes[:-1])), axis=plan.axis)

    def copies(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        return self.views(x, plan)  # new arrays already


#: jax's primitives.
JAX = Jax()
