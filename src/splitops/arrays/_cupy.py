"""cupy's native path: numpy's primitives on the GPU, views by ``cupy.split``.

cupy's arrays follow numpy's API, so :class:`~splitops.arrays._numpy.NumpyLike` serves them;
what differs is cupy's own split for views, device pointers for ``out=``, and the device
every new array is made on (the input's). This module imports cupy: it is loaded only once a
cupy array arrives. Tested where cupy and a CUDA device exist (tests/arrays/test_cupy.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import cupy

from ..core import Rule, SplitError, SplitPlan
from ._numpy import NumpyLike, _rows, _to_front

__all__ = ["CUPY"]


class Cupy(NumpyLike):
    """cupy's primitives."""

    def __init__(self) -> None:
        super().__init__(cupy)

    def empty(self, x: Any, count: int) -> Any:
        with x.device:
            return cupy.empty((count,), x.dtype)

    def contiguous(self, x: Any) -> Any:
        with x.device:
            return x.copy()  # C order

    def views(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        if plan.drop_axis:
            return _rows(_to_front(x, plan.axis))
        if not plan.sizes:
            return ()
        return cupy.split(x, list(accumulate(plan.sizes[:-1])), axis=plan.axis)  # type: ignore[no-any-return]

    def address(self, a: Any) -> int | None:
        return int(a.data.ptr) if a.size and a.flags.c_contiguous else None

    def writeable(self, a: Any) -> bool:
        return True

    def span(self, a: Any) -> tuple[int, int] | None:
        if not a.size:
            return None
        start = int(a.data.ptr)
        low = sum((n - 1) * st for n, st in zip(a.shape, a.strides, strict=True) if st < 0)
        high = sum((n - 1) * st for n, st in zip(a.shape, a.strides, strict=True) if st > 0)
        return start + low, start + high + a.itemsize

    def overlaps(self, a: Any, b: Any) -> bool:
        return a.device == b.device and super(NumpyLike, self).overlaps(a, b)

    def check_array(self, x: Any, array: Any, i: int, name: str) -> None:
        if array.device != x.device:
            raise SplitError(
                f"{name} out[{i}] is on {array.device}, and the input on {x.device}.",
                rule=Rule.OUT,
                hint="Pass arrays on the input's device.",
            )


#: cupy's primitives.
CUPY = Cupy()
