"""Writing parts into arrays the caller allocated once (the ``out=`` argument).

Every array of ``out`` is checked against its part (library, device, dtype, shape,
writeable) before anything is written, so a rejected call leaves all of them untouched. An
array that may share memory with the input or with another array of ``out`` is rejected too:
writing one part would change a part not yet copied (``split(x, [2, 2], out=[x[2:], x[:2]])``
would give the first half twice). Memory is compared by the byte range each array may touch
(numpy's ``byte_bounds``, torch's storage and strides), as ``np.may_share_memory`` does:
arrays that interleave without overlapping are rejected too, which is safe.

>>> import numpy as np
>>> x = np.arange(6).reshape(2, 3)
>>> out = [np.empty((2, 1), x.dtype), np.empty((2, 2), x.dtype)]
>>> parts = write_into(x, [x[:, :1], x[:, 1:]], out, "Split-18")
>>> parts[0] is out[0], parts[1].tolist()
(True, [[1, 2], [4, 5]])
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Sequence
from typing import Any

import array_api_compat
import numpy as np

from ..core import Rule, SplitError, SplitTypeError

__all__ = ["write_into"]


def write_into(x: Any, parts: Sequence[Any], out: object, name: str) -> list[Any]:
    """Copy each of ``parts`` (cut from ``x``) into the matching array of ``out``; return ``out``.

    ``name`` (``Split-18``, ...) starts every error message.
    """
    arrays = _check_out(x, parts, out, name)
    _check_apart(x, arrays, name)
    for index, (array, part) in enumerate(zip(arrays, parts, strict=True)):
        try:
            array[...] = part
        except (RuntimeError, ValueError, TypeError) as error:
            raise SplitError(
                f"{name} could not write part {index} into out[{index}]: {error}",
                rule=Rule.OUT,
            ) from error
    return arrays


def _check_out(x: Any, parts: Sequence[Any], out: object, name: str) -> list[Any]:
    if not isinstance(out, (list, tuple)):
        raise SplitTypeError(
            f"{name} out= takes a list or tuple of arrays, one per part; "
            f"{type(out).__name__} was given.",
            rule=Rule.OUT,
        )
    if len(out) != len(parts):
        raise SplitError(
            f"{name} out= needs {len(parts)} arrays, one per part; {len(out)} "
            f"{'was' if len(out) == 1 else 'were'} given.",
            rule=Rule.OUT,
        )
    for i, (array, part) in enumerate(zip(out, parts, strict=True)):
        if type(array) is not type(x) and _library(array) != _library(x):
            raise SplitTypeError(
                f"{name} out[{i}] must be a {_library(x)} array like the input; "
                f"{type(array).__module__}.{type(array).__name__} was given.",
                rule=Rule.OUT,
            )
        if array.dtype != x.dtype:
            raise SplitTypeError(
                f"{name} out[{i}] must have the input's dtype {x.dtype}; {array.dtype} was given.",
                rule=Rule.OUT,
                hint="Allocate out with the input's dtype: parts are copied, never cast.",
            )
        if tuple(array.shape) != tuple(part.shape):
            raise SplitError(
                f"{name} out[{i}] must have shape {tuple(part.shape)}, the shape of part {i}; "
                f"{tuple(array.shape)} was given.",
                rule=Rule.OUT,
            )
        if _is_torch(array):
            _check_torch_out(x, array, i, name)
        elif type(array) is np.ndarray:
            if not array.flags.writeable:
                raise SplitError(
                    f"{name} out[{i}] is read-only.",
                    rule=Rule.OUT,
                    hint="Pass writeable arrays (flags.writeable).",
                )
        elif not array_api_compat.is_writeable_array(array):
            raise SplitTypeError(
                f"{name} cannot write into {_library(x)} arrays: they are immutable.",
                rule=Rule.OUT,
                hint="Drop out= (copy=True gives independent parts).",
            )
    return list(out)


def _is_torch(array: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(array, torch.Tensor)


def _check_torch_out(x: Any, array: Any, i: int, name: str) -> None:
    """What torch refuses to write into, said before anything is written."""
    torch = sys.modules["torch"]
    problem = None
    if array.device != x.device:
        problem = f"is on {array.device}, and the input on {x.device}"
    elif array.requires_grad and array.is_leaf and torch.is_grad_enabled():
        problem = "is a leaf tensor that requires grad: autograd forbids writing into it"
    elif array.is_inference() and not torch.is_inference_mode_enabled():
        problem = "is an inference tensor, written outside inference mode"
    elif any(st == 0 and n > 1 for n, st in zip(array.shape, array.stride(), strict=True)):
        problem = "is expanded (a stride of 0): its elements share memory"
    if problem:
        raise SplitError(
            f"{name} out[{i}] {problem}.",
            rule=Rule.OUT,
            hint="Pass writeable tensors of their own on the input's device.",
        )


def _check_apart(x: Any, arrays: list[Any], name: str) -> None:
    """SplitError when an array of ``out`` may share memory with ``x`` or another one."""
    spans = [(_span(array), i) for i, array in enumerate(arrays)]
    own = _span(x)
    for span, i in spans:
        if span and own and span[0] == own[0] and span[1] < own[2] and own[1] < span[2]:
            raise SplitError(
                f"{name} out[{i}] shares memory with the input: writing a part into it would "
                "change parts not yet copied.",
                rule=Rule.OUT,
                hint="Pass arrays of their own (for instance the parts of one copy=True call).",
            )
    found = sorted((span, i) for span, i in spans if span)
    for (first, i), (second, j) in itertools.pairwise(found):
        if first[0] == second[0] and second[1] < first[2]:
            raise SplitError(
                f"{name} out[{min(i, j)}] and out[{max(i, j)}] share memory: a part written "
                "into one would change the other.",
                rule=Rule.OUT,
                hint="Pass one array of its own per part.",
            )


def _span(array: Any) -> tuple[str, int, int] | None:
    """Where ``array``'s memory may lie: (the memory it is in, first byte, byte past the
    last), or ``None`` for an empty array or one whose memory is not known."""
    if isinstance(array, np.ndarray):
        if array.size == 0:
            return None
        low, high = np.lib.array_utils.byte_bounds(array)
        return "host", int(low), int(high)
    if _is_torch(array) and array.numel() and array.device.type != "meta":
        itemsize = array.element_size()
        start = array.untyped_storage().data_ptr() + array.storage_offset() * itemsize
        reach = sum((n - 1) * abs(st) for n, st in zip(array.shape, array.stride(), strict=True))
        return str(array.device), start, start + (reach + 1) * itemsize
    return None


def _library(array: object) -> str:
    """The array library of ``array`` (``numpy``, ``torch``, ``jax.numpy``, ...), or its type."""
    try:
        namespace = array_api_compat.array_namespace(array)
    except TypeError:
        return f"{type(array).__module__}.{type(array).__name__}"
    return namespace.__name__.removeprefix("array_api_compat.")
