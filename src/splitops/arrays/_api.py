"""``split`` and ``split_to_sequence`` on arrays of any array API library.

Each function asks the planner for a checked :class:`~splitops.core.SplitPlan` (from its
cache when the same call was planned before), then applies it: natively for numpy and torch
(views, with the per-part work done in C where the library can), and through the array API
standard for every other library.

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

from collections.abc import Sequence
from typing import Any, cast

import array_api_compat
import numpy as np

from ..core import (
    ElementType,
    Rule,
    SizesLike,
    SplitPlan,
    SplitTypeError,
    opset_rule,
    sequence_plan,
    split_plan,
)
from . import _generic, _numpy
from ._dtypes import NUMPY_ELEMENTS, element_of
from ._libraries import is_torch_tensor, reject_unreadable, reject_unstrided, torch_is_compiling
from ._out import write_into
from ._protocol import Array, ArrayT
from ._values import check_copy, host_sizes

__all__ = ["split", "split_to_sequence"]

# Looked up on every call: module globals cost one dictionary lookup less than attributes.
_NDARRAY = np.ndarray
_NUMPY_ELEMENTS = NUMPY_ELEMENTS


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
    that share no memory with ``x`` or with each other (numpy: cut from one new buffer,
    freed when the last part dies). Results are arrays of ``x``'s library, on ``x``'s device.
    ``out``, a list of arrays of the parts' shapes and ``x``'s dtype, receives copies of the
    parts and is returned: in a loop, it allocates nothing.

    >>> import numpy as np
    >>> split(np.arange(7), num_outputs=4)
    (array([0, 1]), array([2, 3]), array([4, 5]), array([6]))
    """
    if type(x) is not _NDARRAY and torch_is_compiling(x):
        options = {"axis": axis, "num_outputs": num_outputs, "opset": opset, "copy": copy}
        return cast("tuple[ArrayT, ...]", _traced("split", x, split, options))
    if split is not None:
        split = host_sizes(split, "Split", opset)
    elif num_outputs is not None and type(num_outputs) is not int:
        reject_unreadable(num_outputs, "Split", opset, "num_outputs")
    if type(x) is _NDARRAY:
        array: Any = x
        element = _NUMPY_ELEMENTS.get(array.dtype) or element_of(array.dtype)
        plan = split_plan(element, array.shape, split, axis, num_outputs, opset)
        if copy is False and out is None and plan.indices:  # views of a few parts: the hot path
            views: tuple[ArrayT, ...] = plan.take(array)
            return views
    else:
        plan = split_plan(*_described(x, "Split", opset), split, axis, num_outputs, opset)
    return tuple(_parts(x, plan, copy, out, "Split", opset))


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
    array of sizes. ``keepdims`` only matters for the default split, as the spec says: none,
    or the scalar 1 that the spec names as the default (torch's ``unbind``); any other split
    keeps the axis. ``copy`` and ``out`` work as in :func:`split`.

    >>> import numpy as np
    >>> [p.tolist() for p in split_to_sequence(np.arange(6).reshape(2, 3), axis=1, keepdims=False)]
    [[0, 3], [1, 4], [2, 5]]
    >>> [p.shape for p in split_to_sequence(np.zeros((2, 3)), 1, axis=1, keepdims=False)]
    [(2,), (2,), (2,)]
    """
    if type(x) is not _NDARRAY and torch_is_compiling(x):
        options = {"axis": axis, "keepdims": keepdims, "opset": opset, "copy": copy}
        return cast("list[ArrayT]", _traced("split_to_sequence", x, split, options))
    if split is not None:
        split = host_sizes(split, "SplitToSequence", opset)
    element, shape = _described(x, "SplitToSequence", opset)
    plan = sequence_plan(element, shape, split, axis, keepdims, opset)
    return _parts(x, plan, copy, out, "SplitToSequence", opset)


def _traced(function: str, x: Any, split: object, options: dict[str, Any]) -> Any:
    """The function of :mod:`splitops.arrays._torch_compile` (it imports torch) on ``x``."""
    from . import _torch_compile

    return getattr(_torch_compile, function)(x, split, **options)


def _described(x: object, op: str, opset: int) -> tuple[ElementType | str, tuple[Any, ...]]:
    """The element type and shape of ``x``, or SplitTypeError when it is no array."""
    if type(x) is _NDARRAY:
        array: Any = x
        return _NUMPY_ELEMENTS.get(array.dtype) or element_of(array.dtype), array.shape
    if is_torch_tensor(x):
        reject_unstrided(x, op, opset)
    elif not array_api_compat.is_array_api_obj(x):
        raise SplitTypeError(
            f"{opset_rule(op, opset).name} needs an array of an array API library (numpy, "
            f"torch, jax, cupy, dask, ...); {type(x).__name__} was given.",
            rule=Rule.ARRAY,
        )
    array = x
    return element_of(array.dtype), tuple(array.shape)


def _parts(x: Any, plan: SplitPlan, copy: object, out: object, op: str, opset: int) -> list[Any]:
    """The parts of ``x`` by ``plan``: views, copies, or copies written into ``out``."""
    if type(copy) is not bool:
        check_copy(copy, opset_rule(op, opset))
    parts = list(_cut(x, plan, copy=bool(copy) and out is None))
    if out is not None:
        return write_into(x, parts, out, opset_rule(op, opset).name)
    return parts


def _cut(x: Any, plan: SplitPlan, *, copy: bool) -> Sequence[Any]:
    if type(x) is _NDARRAY:
        return _numpy.cut(x, plan, copy=copy)
    if is_torch_tensor(x):
        from . import _torch

        return _torch.cut(x, plan, copy=copy)
    xp = array_api_compat.array_namespace(x)
    if copy and array_api_compat.is_cupy_array(x):
        # The standard's asarray(copy=True) keeps cupy's source layout; .copy() is C-ordered.
        return [part.copy() for part in _generic.cut(xp, x, plan, copy=False)]
    return _generic.cut(xp, x, plan, copy=copy)
