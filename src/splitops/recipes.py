"""Recipes: what a checked call on a numpy array does, kept so that the same call does only that.

The first call with a given dtype, shape and arguments is checked and planned as usual, and the
planner's sizes become a recipe: a function from any array of that dtype and shape to its parts.
A later call with the same key goes straight to the recipe: the checks would pass again and the
planner would return the same sizes, so neither is redone.

Keys hold only exact ints, bools, ``None`` and tuples of ints, because a dict finds ``True``
under ``1`` and ``2.0`` under ``2`` while the rules reject a bool axis or a float size: such
calls always take the checked path. Calls on plain torch tensors keep their plan (axis and
sizes) under the same keys, and torch cuts at every call. In front of the Split table,
:data:`LAST_SPLIT` keeps per shape the arguments and recipe of the last call, compared by
identity (no hashing, and a bool is never the int it equals): small Splits repeated in a loop
cost little more than the slicing.

>>> import numpy as np
>>> recipe = numpy_recipe(1, (3, 3), copy=False)
>>> [p.tolist() for p in recipe(np.arange(12).reshape(2, 6))]
[[[0, 1, 2], [6, 7, 8]], [[3, 4, 5], [9, 10, 11]]]
>>> [p.shape for p in numpy_recipe(0, (2,) * 99 + (1,), copy=False)(np.zeros((199, 3)))][-2:]
[(2, 3), (1, 3)]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np

from .buffers import buffer_pool
from .generic import part_indices

__all__ = [
    "LAST_SPLIT",
    "MAX_RECIPES",
    "SEQUENCE_RECIPES",
    "SPLIT_RECIPES",
    "TORCH_SEQUENCE_PLANS",
    "TORCH_SPLIT_PLANS",
    "LastSplit",
    "Recipe",
    "TorchPlan",
    "cacheable_sizes",
    "forget",
    "numpy_recipe",
    "numpy_unstack_recipe",
    "remember",
    "reuse_split",
    "sequence_key",
    "split_key",
]

#: A function from a numpy array (of the dtype and shape it was made for) to its parts.
Recipe = Callable[[Any], tuple[Any, ...]]

#: The most entries each table keeps; the oldest goes first when a table is full.
MAX_RECIPES = 1024

#: Explicit ``split`` lists longer than this are not keys: hashing them on every call would cost
#: as much as the planning it saves.
MAX_KEY_SIZES = 64

#: From this many equal parts on, numpy iterates over a grouped view in C instead of one slice
#: per part, and the recipe holds no per-part index (below it, making the grouped view costs
#: more than the slices it saves).
GROUPED_FROM = 64

#: Split calls: (dtype, shape, axis, split, num_outputs, opset, copy) -> recipe.
SPLIT_RECIPES: dict[Hashable, Recipe] = {}

#: The last Split call on a shape: its dtype, split, axis, num_outputs, opset, copy and recipe.
LastSplit = tuple[Any, Any, Any, Any, Any, Any, Recipe]

#: Split calls by shape: the last one.
LAST_SPLIT: dict[Hashable, LastSplit] = {}

#: SplitToSequence calls: (dtype, shape, axis, split, keepdims, opset, copy) -> recipe.
SEQUENCE_RECIPES: dict[Hashable, Recipe] = {}

#: What a checked call on a plain torch tensor planned: the axis (>= 0), the sizes, and for
#: SplitToSequence whether the axis is dropped. Keyed as the numpy tables are; the cutting
#: itself is torch's, at every call, so that tracing records it.
TorchPlan = tuple[int, tuple[int, ...], bool]

#: Split calls on plain torch tensors: the SPLIT_RECIPES key -> plan.
TORCH_SPLIT_PLANS: dict[Hashable, TorchPlan] = {}

#: SplitToSequence calls on plain torch tensors: the SEQUENCE_RECIPES key -> plan.
TORCH_SEQUENCE_PLANS: dict[Hashable, TorchPlan] = {}

_Entry = TypeVar("_Entry")

# Stands for a split list in LAST_SPLIT: a list may change between calls, so it never matches.
_MUTABLE = object()


def remember(table: dict[Hashable, _Entry], key: Hashable, entry: _Entry) -> _Entry:
    """Keep ``entry`` under ``key`` in ``table`` (dropping the oldest when full); return it."""
    if key not in table and len(table) >= MAX_RECIPES:
        del table[next(iter(table))]
    table[key] = entry
    return entry


def forget() -> None:
    """Drop every recipe: the next call of each kind is checked and planned again."""
    tables: tuple[dict[Hashable, Any], ...] = (
        SPLIT_RECIPES,
        LAST_SPLIT,
        SEQUENCE_RECIPES,
        TORCH_SPLIT_PLANS,
        TORCH_SEQUENCE_PLANS,
    )
    for table in tables:
        table.clear()


def cacheable_sizes(split: object) -> tuple[int, ...] | None:
    """``split`` as a key when it is a short list or tuple of exact ints, else ``None``.

    >>> cacheable_sizes([2, 4]), cacheable_sizes([2.0, 4.0]), cacheable_sizes((True, 5))
    ((2, 4), None, None)
    """
    if type(split) in (list, tuple):
        sizes: Any = split
        if len(sizes) <= MAX_KEY_SIZES and all(type(s) is int for s in sizes):
            return tuple(sizes)
    return None


def split_key(
    x: Any, split: object, axis: object, num_outputs: object, opset: object, copy: object
) -> tuple[Any, ...] | None:
    """The SPLIT_RECIPES key of a Split call on the numpy array ``x``, or ``None``."""
    if type(axis) is not int or type(opset) is not int or type(copy) is not bool:
        return None
    if num_outputs is not None and type(num_outputs) is not int:
        return None
    if split is not None:
        split = cacheable_sizes(split)
        if split is None:
            return None
    return (x.dtype, x.shape, axis, split, num_outputs, opset, copy)


def reuse_split(
    recipe: Recipe,
    x: Any,
    split: object,
    axis: object,
    num_outputs: object,
    opset: object,
    copy: object,
) -> tuple[Any, ...]:
    """``recipe(x)``, after noting the call's arguments in LAST_SPLIT (it has a key)."""
    exact = split if split is None or type(split) is tuple else _MUTABLE
    last: LastSplit = (x.dtype, exact, axis, num_outputs, opset, copy, recipe)
    remember(LAST_SPLIT, x.shape, last)
    return recipe(x)


def sequence_key(
    x: Any, split: object, axis: object, keepdims: object, opset: object, copy: object
) -> tuple[Any, ...] | None:
    """The SEQUENCE_RECIPES key of a SplitToSequence call on ``x`` (a numpy array or a plain
    torch tensor), or ``None`` when it has none."""
    if type(axis) is not int or type(opset) is not int:
        return None
    if type(keepdims) not in (bool, int) or type(copy) is not bool:
        return None
    if split is not None and type(split) is not int:
        split = cacheable_sizes(split)
        if split is None:
            return None
    return (x.dtype, x.shape, axis, split, keepdims, opset, copy)


def numpy_recipe(axis: int, sizes: tuple[int, ...], *, copy: bool) -> Recipe:
    """The recipe that cuts a numpy array along ``axis`` (>= 0) into parts of ``sizes``.

    Parts are views unless ``copy``, which gives contiguous arrays that share no memory.
    """
    length = sizes[0] if sizes else 0
    count = _equal_run(sizes)
    if count >= GROUPED_FROM:
        rest = sizes[count:]
        tail = part_indices(axis, (length * count, *rest))[1] if rest else None
        return partial(_grouped, axis=axis, length=length, count=count, tail=tail, copy=copy)
    indices = part_indices(axis, sizes)
    if copy or len(indices) < 2:
        return partial(_sliced, indices, copy=copy)
    views: Recipe = itemgetter(*indices)  # one C call that returns the tuple of views
    return views


def numpy_unstack_recipe(axis: int, *, copy: bool) -> Recipe:
    """The recipe for parts of length 1 along ``axis`` with that axis dropped.

    >>> [p.tolist() for p in numpy_unstack_recipe(1, copy=False)(np.arange(4).reshape(2, 2))]
    [[0, 2], [1, 3]]
    """
    return partial(_unstacked, axis=axis, copy=copy)


def _equal_run(sizes: tuple[int, ...]) -> int:
    """How many parts share the first part's size, when only the last part may differ; else 0.

    Every planned shape with many parts has this form: equal parts (Split without sizes), or
    equal parts and a smaller rest (Split-18's num_outputs, SplitToSequence's chunk length).
    """
    count = sizes.count(sizes[0]) if sizes else 0
    if count == len(sizes) or (count == len(sizes) - 1 and sizes[-1] != sizes[0]):
        return count
    return 0


def _sliced(indices: tuple[tuple[slice, ...], ...], x: Any, *, copy: bool) -> tuple[Any, ...]:
    views = tuple([x[index] for index in indices])
    return _copies(views, x.dtype) if copy else views


def _copies(views: tuple[Any, ...], dtype: Any) -> tuple[Any, ...]:
    """Contiguous copies of ``views``, cut one after the other from one new buffer.

    One allocation instead of one per part: glibc returns the memory of several mid-sized
    arrays to the system when they are freed, and the next call faults every page in again
    (4 MiB cut in two took 4.6 ms that way, 0.1 ms from one buffer). Large buffers come from
    :data:`splitops.buffer_pool`, which maps them once and reuses them.
    """
    buffer = buffer_pool.empty((sum(view.size for view in views),), dtype)
    copies = []
    start = 0
    for view in views:
        part = buffer[start : start + view.size].reshape(view.shape)
        np.copyto(part, view)
        copies.append(part)
        start += view.size
    return tuple(copies)


def _grouped(
    x: Any, *, axis: int, length: int, count: int, tail: tuple[slice, ...] | None, copy: bool
) -> tuple[Any, ...]:
    # (..., count * length, ...) viewed as (..., count, length, ...): splitting one axis in two
    # never needs a copy, so these are views; numpy then yields the count parts in C.
    shape = x.shape
    head = x if tail is None else x[(slice(None),) * axis + (slice(0, length * count),)]
    grouped = head.reshape((*shape[:axis], count, length, *shape[axis + 1 :]))
    moved = _to_front(grouped, axis)
    blocks: tuple[Any, ...] = (moved,) if tail is None else (moved, x[tail])
    if copy:  # the moved view copied as a whole: its rows are contiguous parts
        blocks = _copies(blocks, x.dtype)
    return (*blocks[0], *blocks[1:])


def _to_front(x: Any, axis: int) -> Any:
    """``np.moveaxis(x, axis, 0)``, without its argument checks (a few microseconds)."""
    if not axis:
        return x
    return x.transpose((axis, *range(axis), *range(axis + 1, x.ndim)))


def _unstacked(x: Any, *, axis: int, copy: bool) -> tuple[Any, ...]:
    moved = _to_front(x, axis)
    # One C-ordered copy of the moved view: its rows are contiguous and share no memory with x.
    if copy:
        rows = buffer_pool.empty(moved.shape, moved.dtype)
        np.copyto(rows, moved)
    else:
        rows = moved
    if rows.ndim == 1:  # iterating would give numpy scalars; x[i, ...] is a 0-d array
        return tuple([rows[i, ...] for i in range(rows.shape[0])])
    return tuple(rows)
