"""numpy's native path: views of the input, or copies cut from one new buffer.

:func:`views` cuts a plan in as few C calls as numpy allows; :class:`NumpyLike` gives
:class:`~splitops.arrays._strided.Strided` numpy's primitives, for copies and ``out=``
(cupy, whose arrays follow numpy's API, reuses it).

>>> import numpy as np
>>> from splitops.core import SplitPlan
>>> [p.tolist() for p in views(np.arange(12).reshape(2, 6), SplitPlan.make(1, (3, 3)))]
[[[0, 1, 2], [6, 7, 8]], [[3, 4, 5], [9, 10, 11]]]
>>> [p.shape for p in NUMPY.copies(np.zeros((199, 3)), SplitPlan.make(0, (2,) * 99 + (1,)))][-2:]
[(2, 3), (1, 3)]
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ..core import ElementType, SplitPlan, part_indices
from ._dtypes import NUMPY_ELEMENTS, element_of
from ._out import read_only
from ._strided import Strided

__all__ = ["NUMPY", "NumpyLike", "views"]

_NDARRAY = np.ndarray


def views(x: Any, plan: SplitPlan) -> tuple[Any, ...]:
    """The parts of ``x`` by ``plan``, views of it."""
    if plan.drop_axis:
        return _rows(_to_front(x, plan.axis))
    if plan.indices:
        return plan.take(x)
    if plan.run_count:
        return _grouped(x, plan)
    return tuple([x[index] for index in part_indices(plan.axis, plan.sizes)])


def _grouped(x: Any, plan: SplitPlan) -> tuple[Any, ...]:
    # (..., count * length, ...) viewed as (..., count, length, ...): splitting one axis in two
    # never needs a copy, so these are views; numpy then yields the count parts in C.
    axis, length, count = plan.axis, plan.run_length, plan.run_count
    shape = x.shape
    whole = count == len(plan.sizes)
    head = x if whole else x[(slice(None),) * axis + (slice(0, length * count),)]
    grouped = head.reshape((*shape[:axis], count, length, *shape[axis + 1 :]))
    parts = tuple(_to_front(grouped, axis))
    if whole:
        return parts
    return (*parts, x[(slice(None),) * axis + (slice(length * count, None),)])


def _to_front(x: Any, axis: int) -> Any:
    """``np.moveaxis(x, axis, 0)``, without its argument checks (a few microseconds)."""
    if not axis:
        return x
    return x.transpose((axis, *range(axis), *range(axis + 1, x.ndim)))


def _rows(x: Any) -> tuple[Any, ...]:
    if x.ndim == 1:  # iterating would give numpy scalars; x[i, ...] is a 0-d array
        return tuple([x[i, ...] for i in range(x.shape[0])])
    return tuple(x)


def _address(a: Any) -> int | None:
    """Where a non-empty, C-contiguous and writeable numpy array starts; else ``None``.

    Through the buffer protocol: numpy's own ``__array_interface__`` and ``ctypes.data``
    build a dict or an object first, and cost three times as much, once per ``out`` array.
    """
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError, BufferError):  # read-only, strided, empty, no buffer
        return None


class NumpyLike(Strided):
    """numpy's primitives, or those of a library with numpy's API (``xp``)."""

    def __init__(self, xp: ModuleType) -> None:
        self.xp = xp
        self.array_type = xp.ndarray

    def describe(self, x: Any, op: str, opset: int) -> tuple[ElementType | str, tuple[int, ...]]:
        return NUMPY_ELEMENTS.get(x.dtype) or element_of(x.dtype), x.shape

    def empty(self, x: Any, count: int) -> Any:
        return self.xp.empty((count,), x.dtype)

    def contiguous(self, x: Any) -> Any:
        return x.copy()  # C order

    def copy(self, destination: Any, source: Any) -> None:
        destination[...] = source  # np.copyto, without its dispatch (a microsecond)

    def transpose(self, a: Any, order: tuple[int, ...]) -> Any:
        return a.transpose(order)

    def rows(self, a: Any) -> Sequence[Any]:
        return _rows(a)

    def views(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        return views(x, plan)

    def address(self, a: Any) -> int | None:
        """Where ``a`` starts, when it is non-empty, C-contiguous and writeable."""
        return _address(a)

    def writeable(self, a: Any) -> bool:
        return bool(a.flags.writeable)

    def span(self, a: Any) -> tuple[int, int] | None:
        if not a.size:
            return None
        start = self.address(a)
        if start is not None:
            return start, start + a.nbytes
        low, high = np.lib.array_utils.byte_bounds(a)
        return int(low), int(high)

    def owner(self, first: Any, x: Any) -> Any:
        base: Any = first.base if type(first) is self.array_type else None
        if type(base) is self.array_type and base.dtype == x.dtype and base.flags.c_contiguous:
            return base
        return None

    def piece(self, array: Any, owner: Any, shape: tuple[int, ...]) -> int | None:
        if array.base is not owner or array.shape != shape or type(array) is not self.array_type:
            return None
        if array.dtype is not owner.dtype and array.dtype != owner.dtype:
            return None
        address = self.address(array)
        if address is None:  # empty (anywhere will do), strided, or read-only
            return -1 if not array.size and self.writeable(array) else None
        return address

    def flat(self, owner: Any, start: int, stop: int) -> Any:
        if stop - start == owner.nbytes:  # all of it: no need to find where it lies
            return owner.reshape(-1)
        origin = self.address(owner)
        if origin is None:
            return None
        offset, rest = divmod(start - origin, owner.itemsize)
        return (
            None if rest else owner.reshape(-1)[offset : offset + (stop - start) // owner.itemsize]
        )

    def overlaps(self, a: Any, b: Any) -> bool:
        return bool(np.may_share_memory(a, b))

    def check_array(self, x: Any, array: Any, i: int, name: str) -> None:
        if isinstance(array, np.ndarray) and not array.flags.writeable:
            raise read_only(i, name)


#: numpy's primitives.
NUMPY = NumpyLike(np)
