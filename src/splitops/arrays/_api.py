"""``split`` and ``split_to_sequence`` on arrays of any array API library.

Each function asks the planner for a checked :class:`~splitops.core.SplitPlan` (from its
cache when the same call was planned before), then hands it to the kernel of ``x``'s library
(a :class:`~splitops.arrays._protocol.Kernel`): numpy, torch, cupy and jax natively (views
by the library's own split, copies in one allocation), every other library through the array
API standard.

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

import sys
from collections.abc import Sequence
from typing import Any, cast

import array_api_compat
import numpy as np

from ..core import SizesLike, SplitPlan, opset_rule, sequence_plan, split_plan
from ._dtypes import NUMPY_ELEMENTS, element_of
from ._generic import GENERIC
from ._libraries import reject_unreadable, torch_is_compiling
from ._numpy import NUMPY
from ._protocol import Array, ArrayT, Kernel
from ._values import check_copy, host_sizes

__all__ = ["split", "split_to_sequence"]

# Looked up on every call: module globals cost one dictionary lookup less than attributes.
_NDARRAY = np.ndarray
_NUMPY_ELEMENTS = NUMPY_ELEMENTS
_MODULES = sys.modules


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
    that share no memory with ``x`` or with each other (cut from one new buffer, freed when
    the last part dies). Results are arrays of ``x``'s library, on ``x``'s device. ``out``, a
    list of arrays of the parts' shapes and ``x``'s dtype, receives copies of the parts and
    is returned: in a loop, it allocates nothing.

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
        kernel: Kernel = NUMPY
    else:
        kernel = _kernel(x)
        plan = split_plan(*kernel.describe(x, "Split", opset), split, axis, num_outputs, opset)
        if copy is False and out is None:
            return tuple(kernel.views(x, plan))
    return tuple(_parts(kernel, x, plan, copy, out, "Split", opset))


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
    kernel = NUMPY if type(x) is _NDARRAY else _kernel(x)
    element, shape = kernel.describe(x, "SplitToSequence", opset)
    plan = sequence_plan(element, shape, split, axis, keepdims, opset)
    return list(_parts(kernel, x, plan, copy, out, "SplitToSequence", opset))


def _traced(function: str, x: Any, split: object, options: dict[str, Any]) -> Any:
    """The function of :mod:`splitops.arrays._torch_compile` (it imports torch) on ``x``."""
    from . import _torch_compile

    return getattr(_torch_compile, function)(x, split, **options)


def _kernel(x: object) -> Kernel:
    """The kernel of ``x``'s library. A native one is imported with its library, which the
    caller has imported already (else ``x`` could not be one of its arrays)."""
    torch = _MODULES.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        module = _MODULES.get("splitops.arrays._torch")
        if module is None:
            from . import _torch

            return _torch.TORCH
        return cast(Kernel, module.TORCH)
    if array_api_compat.is_jax_array(x):
        from ._jax import JAX

        return JAX
    if array_api_compat.is_cupy_array(x):
        from ._cupy import CUPY

        return CUPY
    return GENERIC


def _parts(
    kernel: Kernel, x: Any, plan: SplitPlan, copy: object, out: object, op: str, opset: int
) -> Sequence[Any]:
    """The parts of ``x`` by ``plan``: views, copies, or copies written into ``out``."""
    if type(copy) is not bool:
        check_copy(copy, opset_rule(op, opset))
    if out is not None:
        return kernel.write(x, plan, out, opset_rule(op, opset).name)
    return kernel.copies(x, plan) if copy else kernel.views(x, plan)
