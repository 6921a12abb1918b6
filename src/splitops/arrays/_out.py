"""Writing parts into arrays the caller allocated once (the ``out=`` argument).

Every array of ``out`` is checked against its part (library, dtype, shape, writeable) before
anything is written, so a rejected call leaves all of them untouched.

>>> import numpy as np
>>> x = np.arange(6).reshape(2, 3)
>>> out = [np.empty((2, 1), x.dtype), np.empty((2, 2), x.dtype)]
>>> parts = write_into(x, [x[:, :1], x[:, 1:]], out, "Split-18")
>>> parts[0] is out[0], parts[1].tolist()
(True, [[1, 2], [4, 5]])
"""

from __future__ import annotations

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
    for array, part in zip(arrays, parts, strict=True):
        array[...] = part
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
        if type(array) is np.ndarray:
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


def _library(array: object) -> str:
    """The array library of ``array`` (``numpy``, ``torch``, ``jax.numpy``, ...), or its type."""
    try:
        namespace = array_api_compat.array_namespace(array)
    except TypeError:
        return f"{type(array).__module__}.{type(array).__name__}"
    return namespace.__name__.removeprefix("array_api_compat.")
