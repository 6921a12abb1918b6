"""torch's native path: views from ``Tensor.split`` / ``Tensor.unbind``, or clones.

The eager path and the traced one (:mod:`splitops.arrays._torch_compile`) both cut here, so
that ``torch.compile`` records the ops that eager mode runs. This module imports torch: it is
loaded only once a tensor arrives.

>>> import torch
>>> from splitops.core import SplitPlan
>>> [part.tolist() for part in cut(torch.arange(5), SplitPlan.make(0, (2, 0, 3)), copy=False)]
[[0, 1], [], [2, 3, 4]]
>>> rows = SplitPlan.make(1, (1, 1), drop_axis=True)
>>> [p.tolist() for p in cut(torch.arange(4).reshape(2, 2), rows, copy=True)]
[[0, 2], [1, 3]]
"""

from __future__ import annotations

from typing import Any

import torch

from ..core import SplitPlan

__all__ = ["cut", "cut_sizes"]


def cut(x: torch.Tensor, plan: SplitPlan, *, copy: bool) -> list[torch.Tensor]:
    """The parts of ``x`` by ``plan``: views sharing its storage, or contiguous clones."""
    return cut_sizes(x, plan.axis, plan.sizes, plan.drop_axis, copy=copy)


def cut_sizes(
    x: torch.Tensor, axis: int, sizes: tuple[int, ...], drop_axis: bool, *, copy: bool
) -> list[torch.Tensor]:
    """:func:`cut` by the plan's fields, which is what a traced graph can carry."""
    tensor: Any = x  # torch's own stubs leave Tensor.split untyped
    if drop_axis:
        parts = list(x.unbind(axis))
    else:
        parts = list(tensor.split(list(sizes), dim=axis)) if sizes else []
    if copy:
        return [part.clone(memory_format=torch.contiguous_format) for part in parts]
    return parts
