"""Split and SplitToSequence on arrays of any array API library.

Each public function checks the input against the version's rules, asks the planner for the
sizes, then cuts: natively for numpy and torch (views, with the per-part work done in C where
the library can), and through :mod:`splitops.generic` for every other library.

>>> import numpy as np
>>> x = np.arange(12).reshape(2, 6)
>>> [p.tolist() for p in split(x, num_outputs=4, axis=1)]
[[[0, 1], [6, 7]], [[2, 3], [8, 9]], [[4, 5], [10, 11]], [[], []]]
>>> [p.shape for p in split_to_sequence(x, 4, axis=1)]
[(2, 4), (2, 2)]
>>> np.shares_memory(split(x, [1, 1])[0], x)
True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import array_api_compat
import numpy as np

from . import generic, recipes
from .arrays import Array, ArrayT
from .dtypes import check_element_type, check_split_dtype
from .errors import SplitTypeError
from .libraries import (
    axis_length,
    compiled_torch_split,
    compiled_torch_split_to_sequence,
    is_plain_torch_tensor,
    reject_unreadable,
    torch_is_compiling,
)
from .opset_rules import OpsetRule, opset_rule
from .planner import (
    SizesLike,
    drops_axis,
    normalize_axis,
    read_keepdims,
    sequence_sizes,
    split_sizes,
)
from .preallocated import write_into

__all__ = ["host_sizes", "split", "split_to_sequence"]

# Looked up on every call of split(): module globals cost one dictionary lookup less.
_NDARRAY = np.ndarray
_LAST_SPLIT = recipes.LAST_SPLIT


def split(
    x: ArrayT,
    split: SizesLike | Array | None = None,
    *,
    axis: int = 0,
    num_outputs: int | None = None,
    opset: int = 18,
    copy: bool = False,
    out: Sequence[ArrayT] | None = None,
) -> tuple[ArrayT, ...]:
    """ONNX Split of ``opset``: ``x`` cut along ``axis`` into parts of the planned sizes.

    ``split`` is a sequence of sizes or a 1-d integer array. Without it, ``num_outputs`` says
    how many parts: before opset 18 it stands for the node's number of outputs (equal parts
    only); at opset 18 it is the attribute (the last part may be smaller). Parts are views of
    ``x`` where the library has views, unless ``copy=True``, which gives contiguous arrays
    that share no memory with ``x`` or with each other. Results are arrays of ``x``'s
    library, on ``x``'s device. ``out``, a list of arrays of the parts' shapes and ``x``'s
    dtype, receives copies of the parts and is returned, so that repeated calls allocate
    nothing.

    >>> import numpy as np
    >>> split(np.arange(7), num_outputs=4)
    (array([0, 1]), array([2, 3]), array([4, 5]), array([6]))
    """
    if out is not None:
        views = _split(x, split, axis=axis, num_outputs=num_outputs, opset=opset)
        return tuple(write_into(x, views, out, opset_rule("Split", opset).name))
    key = torch_key = None
    if type(x) is _NDARRAY:
        # Repeated calls reuse what the first identical call planned (see splitops.recipes).
        try:
            dtype, last_split, last_axis, last_count, last_opset, last_copy, last_recipe = (
                _LAST_SPLIT[x.shape]
            )
        except KeyError:
            pass
        else:
            if (
                last_axis is axis
                and last_count is num_outputs
                and last_split is split
                and last_opset is opset
                and last_copy is copy
                and dtype is x.dtype
            ):
                return last_recipe(x)
        key = recipes.split_key(x, split, axis, num_outputs, opset, copy)
        recipe = recipes.SPLIT_RECIPES.get(key) if key is not None else None
        if recipe is not None:
            return recipes.reuse_split(recipe, x, split, axis, num_outputs, opset, copy)
    elif torch_is_compiling(x):
        return compiled_torch_split(
            x, split, axis=axis, num_outputs=num_outputs, opset=opset, copy=copy
        )
    elif is_plain_torch_tensor(x):
        # Repeated calls reuse the checked plan; torch cuts at every call (tracing records it).
        torch_key = recipes.split_key(x, split, axis, num_outputs, opset, copy)
        plan = recipes.TORCH_SPLIT_PLANS.get(torch_key) if torch_key is not None else None
        if plan is not None:
            return tuple(_torch_planned(x, plan, copy=copy))
    rule = opset_rule("Split", opset)
    xp, axis = _check_input(x, axis, rule, opset, copy)
    if num_outputs is not None and type(num_outputs) is not int:
        reject_unreadable(num_outputs, f"{rule.name} num_outputs")
    sizes = split_sizes(
        x.shape[axis], read_split(split, rule), num_outputs=num_outputs, opset=opset
    )
    if key is not None:
        recipe = recipes.numpy_recipe(axis, sizes, copy=copy)
        recipes.remember(recipes.SPLIT_RECIPES, key, recipe)
        return recipes.reuse_split(recipe, x, split, axis, num_outputs, opset, copy)
    parts = tuple(_cut(xp, x, axis, sizes, copy=copy))
    if torch_key is not None:
        recipes.remember(recipes.TORCH_SPLIT_PLANS, torch_key, (axis, sizes, False))
    return parts


_split = split  # for split() itself, where the argument ``split`` hides the function


def split_to_sequence(
    x: ArrayT,
    split: SizesLike | Array | None = None,
    *,
    axis: int = 0,
    keepdims: bool | int = True,
    opset: int = 24,
    copy: bool = False,
    out: Sequence[ArrayT] | None = None,
) -> list[ArrayT]:
    """ONNX SplitToSequence of ``opset``: a list of the parts of ``x`` along ``axis``.

    ``split`` is ``None`` (parts of length 1; ``keepdims=False`` then drops the axis), an int
    or 0-d integer array (chunks of that length, the last one smaller), or a 1-d sequence or
    array of sizes. ``keepdims`` only matters when ``split`` is ``None``, as the spec says.
    ``copy`` and ``out`` work as in :func:`split`.

    >>> import numpy as np
    >>> [p.tolist() for p in split_to_sequence(np.arange(6).reshape(2, 3), axis=1, keepdims=False)]
    [[0, 3], [1, 4], [2, 5]]
    """
    if out is not None:
        views = split_to_sequence(x, split, axis=axis, keepdims=keepdims, opset=opset)
        return write_into(x, views, out, opset_rule("SplitToSequence", opset).name)
    if torch_is_compiling(x):
        return compiled_torch_split_to_sequence(
            x, split, axis=axis, keepdims=keepdims, opset=opset, copy=copy
        )
    key = torch_key = None
    if type(x) is _NDARRAY:
        key = recipes.sequence_key(x, split, axis, keepdims, opset, copy)
        recipe = recipes.SEQUENCE_RECIPES.get(key) if key is not None else None
        if recipe is not None:
            return list(recipe(x))
    elif is_plain_torch_tensor(x):
        torch_key = recipes.sequence_key(x, split, axis, keepdims, opset, copy)
        plan = recipes.TORCH_SEQUENCE_PLANS.get(torch_key) if torch_key is not None else None
        if plan is not None:
            return _torch_planned(x, plan, copy=copy)
    rule = opset_rule("SplitToSequence", opset)
    xp, axis = _check_input(x, axis, rule, opset, copy)
    keep = read_keepdims(keepdims)
    sizes = sequence_sizes(x.shape[axis], read_split(split, rule), opset=opset)
    unstack = drops_axis(split is not None, keep)
    if key is not None:
        if unstack:
            recipe = recipes.numpy_unstack_recipe(axis, copy=copy)
        else:
            recipe = recipes.numpy_recipe(axis, sizes, copy=copy)
        return list(recipes.remember(recipes.SEQUENCE_RECIPES, key, recipe)(x))
    parts = _unstack(xp, x, axis, copy=copy) if unstack else _cut(xp, x, axis, sizes, copy=copy)
    if torch_key is not None:
        recipes.remember(recipes.TORCH_SEQUENCE_PLANS, torch_key, (axis, sizes, unstack))
    return parts


def host_sizes(split: object) -> object:
    """``split`` as Python values the planner reads: arrays become (nested) lists of scalars.

    >>> import numpy as np
    >>> host_sizes(np.array([2, 4], dtype=np.int32))
    [2, 4]
    """
    if split is None or isinstance(split, (int, float, range)):
        return split
    if isinstance(split, (list, tuple)):
        reject_unreadable(split, "split sizes")
        return split
    if not array_api_compat.is_array_api_obj(split):
        return split
    reject_unreadable(split, "split sizes")
    array: Any = split
    return array.tolist() if hasattr(array, "tolist") else np.from_dlpack(array).tolist()


def read_split(split: object, rule: OpsetRule) -> object:
    """``split`` for the planner, after checking the dtype of an array (even an empty one)."""
    dtype = getattr(split, "dtype", None)
    if dtype is not None:
        check_split_dtype(dtype, rule)
    return host_sizes(split)


def check_copy(copy: object, rule: OpsetRule) -> None:
    """SplitTypeError unless ``copy`` is a bool.

    >>> check_copy(1, opset_rule("Split", 18))
    Traceback (most recent call last):
    ...
    splitops.errors.SplitTypeError: Split-18 copy must be True or False; 1 was given.
    """
    if not isinstance(copy, bool):
        raise SplitTypeError(f"{rule.name} copy must be True or False; {copy!r} was given.")


def check_axis(dtype: object, rank: int, axis: int, rule: OpsetRule, opset: int) -> int:
    """``axis`` in ``[0, rank)``, after checking the input's element type against ``rule``.

    >>> import numpy as np
    >>> check_axis(np.dtype("float32"), 2, -1, opset_rule("Split", 18), 18)
    1
    """
    check_element_type(dtype, rule, opset=opset)
    return normalize_axis(axis, rank, rule.name)


def _check_input(
    x: object, axis: int, rule: OpsetRule, opset: int, copy: object
) -> tuple[Any, int]:
    check_copy(copy, rule)
    try:
        xp = array_api_compat.array_namespace(x)
    except TypeError as error:
        raise SplitTypeError(
            f"{rule.name} needs an array of an array API library (numpy, torch, jax, cupy, "
            f"dask, ...); {type(x).__name__} was given."
        ) from error
    array: Any = x
    axis = check_axis(array.dtype, array.ndim, axis, rule, opset)
    axis_length(array.shape, axis, rule)
    return xp, axis


def _cut(xp: Any, x: Any, axis: int, sizes: tuple[int, ...], *, copy: bool) -> list[Any]:
    if array_api_compat.is_torch_array(x):
        return _torch_cut(x, axis, sizes, copy=copy)
    if type(x) is np.ndarray:
        return list(recipes.numpy_recipe(axis, sizes, copy=copy)(x))
    if copy and array_api_compat.is_cupy_array(x):
        # The standard's asarray(copy=True) keeps cupy's source layout; .copy() is C-ordered.
        return [part.copy() for part in generic.cut(xp, x, axis, sizes, copy=False)]
    return generic.cut(xp, x, axis, sizes, copy=copy)


def _unstack(xp: Any, x: Any, axis: int, *, copy: bool) -> list[Any]:
    if array_api_compat.is_torch_array(x):
        return _torch_unbound(x, axis, copy=copy)
    if type(x) is np.ndarray:
        return list(recipes.numpy_unstack_recipe(axis, copy=copy)(x))
    if copy and array_api_compat.is_cupy_array(x):
        return [part.copy() for part in generic.unstack(xp, x, axis, copy=False)]
    return generic.unstack(xp, x, axis, copy=copy)


def _torch_planned(x: Any, plan: recipes.TorchPlan, *, copy: bool) -> list[Any]:
    """The parts of the torch tensor ``x`` by a plan an earlier, checked call made."""
    axis, sizes, unstack = plan
    if unstack:
        return _torch_unbound(x, axis, copy=copy)
    return _torch_cut(x, axis, sizes, copy=copy)


def _torch_cut(x: Any, axis: int, sizes: tuple[int, ...], *, copy: bool) -> list[Any]:
    parts: list[Any] = _torch_parts().cut(x, axis, sizes, copy=copy)
    return parts


def _torch_unbound(x: Any, axis: int, *, copy: bool) -> list[Any]:
    parts: list[Any] = _torch_parts().unbind(x, axis, copy=copy)
    return parts


@functools.cache
def _torch_parts() -> ModuleType:
    """:mod:`splitops.torch_parts`, imported at the first tensor (it imports torch)."""
    from . import torch_parts

    return torch_parts
