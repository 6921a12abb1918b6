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

from functools import lru_cache
from typing import Any

import array_api_compat
import numpy as np

from . import generic
from .arrays import Array, ArrayT
from .dtypes import check_element_type, check_split_dtype
from .errors import SplitTypeError
from .libraries import (
    axis_length,
    compiled_torch_split,
    compiled_torch_split_to_sequence,
    reject_unreadable,
    torch_is_compiling,
)
from .opset_rules import OpsetRule, opset_rule
from .planner import SizesLike, normalize_axis, read_keepdims, sequence_sizes, split_sizes

__all__ = ["host_sizes", "split", "split_to_sequence"]

_part_indices = lru_cache(maxsize=1024)(generic.part_indices)


def split(
    x: ArrayT,
    split: SizesLike | Array | None = None,
    *,
    axis: int = 0,
    num_outputs: int | None = None,
    opset: int = 18,
    copy: bool = False,
) -> tuple[ArrayT, ...]:
    """ONNX Split of ``opset``: ``x`` cut along ``axis`` into parts of the planned sizes.

    ``split`` is a sequence of sizes or a 1-d integer array. Without it, ``num_outputs`` says
    how many parts: before opset 18 it stands for the node's number of outputs (equal parts
    only); at opset 18 it is the attribute (the last part may be smaller). Parts are views of
    ``x`` where the library has views, unless ``copy=True``, which gives independent
    contiguous arrays. Results are arrays of ``x``'s library, on ``x``'s device.

    >>> import numpy as np
    >>> split(np.arange(7), num_outputs=4)
    (array([0, 1]), array([2, 3]), array([4, 5]), array([6]))
    """
    if torch_is_compiling(x):
        return compiled_torch_split(
            x, split, axis=axis, num_outputs=num_outputs, opset=opset, copy=copy
        )
    rule = opset_rule("Split", opset)
    xp, axis = _check_input(x, axis, rule, opset)
    if num_outputs is not None and type(num_outputs) is not int:
        reject_unreadable(num_outputs, f"{rule.name} num_outputs")
    sizes = split_sizes(
        x.shape[axis], _read_split(split, rule), num_outputs=num_outputs, opset=opset
    )
    return tuple(_cut(xp, x, axis, sizes, copy=copy))


def split_to_sequence(
    x: ArrayT,
    split: SizesLike | Array | None = None,
    *,
    axis: int = 0,
    keepdims: bool | int = True,
    opset: int = 24,
    copy: bool = False,
) -> list[ArrayT]:
    """ONNX SplitToSequence of ``opset``: a list of the parts of ``x`` along ``axis``.

    ``split`` is ``None`` (parts of length 1; ``keepdims=False`` then drops the axis), an int
    or 0-d integer array (chunks of that length, the last one smaller), or a 1-d sequence or
    array of sizes. ``keepdims`` only matters when ``split`` is ``None``, as the spec says.

    >>> import numpy as np
    >>> [p.tolist() for p in split_to_sequence(np.arange(6).reshape(2, 3), axis=1, keepdims=False)]
    [[0, 3], [1, 4], [2, 5]]
    """
    if torch_is_compiling(x):
        return compiled_torch_split_to_sequence(
            x, split, axis=axis, keepdims=keepdims, opset=opset, copy=copy
        )
    rule = opset_rule("SplitToSequence", opset)
    xp, axis = _check_input(x, axis, rule, opset)
    keep = read_keepdims(keepdims)
    sizes = sequence_sizes(x.shape[axis], _read_split(split, rule), opset=opset)
    if split is None and not keep:
        return _unstack(xp, x, axis, copy=copy)
    return _cut(xp, x, axis, sizes, copy=copy)


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


def _read_split(split: object, rule: OpsetRule) -> object:
    """``split`` for the planner, after checking the dtype of an array (even an empty one)."""
    dtype = getattr(split, "dtype", None)
    if dtype is not None:
        check_split_dtype(dtype, rule)
    return host_sizes(split)


def _check_input(x: object, axis: int, rule: OpsetRule, opset: int) -> tuple[Any, int]:
    try:
        xp = array_api_compat.array_namespace(x)
    except TypeError as error:
        raise SplitTypeError(
            f"{rule.name} needs an array of an array API library (numpy, torch, jax, cupy, "
            f"dask, ...); {type(x).__name__} was given."
        ) from error
    array: Any = x
    check_element_type(array.dtype, rule, opset=opset)
    axis = normalize_axis(axis, array.ndim, rule.op)
    axis_length(array.shape, axis, rule)
    return xp, axis


def _uniform(sizes: tuple[int, ...]) -> int:
    """The common part length when every part has the same length >= 1, else 0."""
    first = sizes[0] if sizes else 0
    return first if first and sizes.count(first) == len(sizes) else 0


def _cut(xp: Any, x: Any, axis: int, sizes: tuple[int, ...], *, copy: bool) -> list[Any]:
    if array_api_compat.is_torch_array(x):
        tensor: Any = x  # torch's own stubs leave Tensor.split untyped
        parts = list(tensor.split(list(sizes), dim=axis)) if sizes else []
        if copy:
            return [part.clone(memory_format=_torch_contiguous()) for part in parts]
        return parts
    if type(x) is np.ndarray:
        length = _uniform(sizes)
        if length and len(sizes) > 8:
            # Many equal parts: let numpy iterate in C over a (..., n, length, ...) view.
            shape = x.shape
            grouped = x.reshape((*shape[:axis], len(sizes), length, *shape[axis + 1 :]))
            return list(_maybe_copy(np.moveaxis(grouped, axis, 0), copy))
        parts = [x[index] for index in _part_indices(axis, sizes)]
        return [part.copy() for part in parts] if copy else parts
    if copy and array_api_compat.is_cupy_array(x):
        # The standard's asarray(copy=True) keeps cupy's source layout; .copy() is C-ordered.
        return [part.copy() for part in generic.cut(xp, x, axis, sizes, copy=False)]
    return generic.cut(xp, x, axis, sizes, copy=copy)


def _unstack(xp: Any, x: Any, axis: int, *, copy: bool) -> list[Any]:
    if array_api_compat.is_torch_array(x):
        parts = list(x.unbind(axis))
        if copy:
            return [part.clone(memory_format=_torch_contiguous()) for part in parts]
        return parts
    if type(x) is np.ndarray:
        rows = _maybe_copy(np.moveaxis(x, axis, 0), copy)
        if rows.ndim == 1:
            # Iterating a 1-d array yields numpy scalars; the parts must be 0-d arrays.
            return [rows[i, ...] for i in range(rows.shape[0])]
        return list(rows)
    if copy and array_api_compat.is_cupy_array(x):
        return [part.copy() for part in generic.unstack(xp, x, axis, copy=False)]
    return generic.unstack(xp, x, axis, copy=copy)


def _maybe_copy(moved: np.ndarray[Any, Any], copy: bool) -> np.ndarray[Any, Any]:
    # One C-ordered copy of the moved view: its rows are contiguous and share no memory with x.
    return moved.copy() if copy else moved


def _torch_contiguous() -> Any:
    import torch

    return torch.contiguous_format
