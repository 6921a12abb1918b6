"""The ``out=`` argument: arrays the caller allocated once, checked before anything is written.

Every array of ``out`` is checked against its part (library, dtype, shape, writeable, and
what its library adds: torch's device, autograd and inference rules) before anything is
written, so a rejected call leaves all of them untouched. An array that may share memory with
the input or with another array of ``out`` is rejected too: writing one part would change a
part not yet copied (``split(x, [2, 2], out=[x[2:], x[:2]])`` would give the first half
twice). Memory is compared by the byte range each array may touch, as ``np.may_share_memory``
does: arrays that interleave without overlapping are rejected too, which is safe.

The kernels write (:meth:`splitops.arrays._strided.Strided.write`); this module holds the
checks, and the writing for libraries without a native path (:func:`write_parts`).

>>> import numpy as np
>>> x = np.arange(6).reshape(2, 3)
>>> out = [np.empty((2, 1), x.dtype), np.empty((2, 2), x.dtype)]
>>> parts = write_parts(x, [x[:, :1], x[:, 1:]], out, "Split-18")
>>> parts[0] is out[0], parts[1].tolist()
(True, [[1, 2], [4, 5]])
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import array_api_compat

from ..core import Rule, SplitError, SplitTypeError

__all__ = [
    "Span",
    "check_apart",
    "check_arrays",
    "check_count",
    "immutable",
    "overlap",
    "read_only",
    "write_parts",
    "writing_failed",
]

#: The bytes an array may touch: (first byte, byte past the last) in its memory space.
Span = tuple[int, int]

#: A library's own check of ``out[i]`` (x, the array, i, the name): raises or returns.
ArrayCheck = Callable[[Any, Any, int, str], None]


def check_count(out: object, count: int, name: str) -> list[Any]:
    """``out`` as a list, when it is a list or tuple of ``count`` items."""
    if not isinstance(out, (list, tuple)):
        raise SplitTypeError(
            f"{name} out= takes a list or tuple of arrays, one per part; "
            f"{type(out).__name__} was given.",
            rule=Rule.OUT,
        )
    if len(out) != count:
        raise SplitError(
            f"{name} out= needs {count} arrays, one per part; {len(out)} "
            f"{'was' if len(out) == 1 else 'were'} given.",
            rule=Rule.OUT,
        )
    return list(out)


def check_arrays(
    x: Any,
    arrays: Sequence[Any],
    shapes: Sequence[tuple[int, ...]],
    name: str,
    check: ArrayCheck,
) -> None:
    """Each array of ``out`` is of ``x``'s library and dtype, of its part's shape, and passes
    its library's ``check``."""
    for i, (array, shape) in enumerate(zip(arrays, shapes, strict=True)):
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
        if tuple(array.shape) != shape:
            raise SplitError(
                f"{name} out[{i}] must have shape {shape}, the shape of part {i}; "
                f"{tuple(array.shape)} was given.",
                rule=Rule.OUT,
            )
        check(x, array, i, name)


def read_only(i: int, name: str) -> SplitError:
    """The error for a read-only ``out[i]``."""
    return SplitError(
        f"{name} out[{i}] is read-only.",
        rule=Rule.OUT,
        hint="Pass writeable arrays (flags.writeable).",
    )


def immutable(x: Any, name: str) -> SplitTypeError:
    """The error for a library whose arrays cannot be written into."""
    return SplitTypeError(
        f"{name} cannot write into {_library(x)} arrays: they are immutable.",
        rule=Rule.OUT,
        hint="Drop out= (copy=True gives independent parts).",
    )


def overlap(first: Span | None, second: Span | None) -> bool:
    """Whether two spans (``None``: no memory, or memory nobody can tell) share a byte."""
    return bool(first and second and first[0] < second[1] and second[0] < first[1])


def check_apart(own: Span | None, spans: Sequence[Span | None], name: str) -> None:
    """SplitError when an array of ``out`` (of ``spans``) may share memory with the input
    (of span ``own``) or with another one."""
    for i, span in enumerate(spans):
        if overlap(span, own):
            raise SplitError(
                f"{name} out[{i}] shares memory with the input: writing a part into it would "
                "change parts not yet copied.",
                rule=Rule.OUT,
                hint="Pass arrays of their own (for instance the parts of one copy=True call).",
            )
    found = sorted((span, i) for i, span in enumerate(spans) if span)
    for (first, i), (second, j) in itertools.pairwise(found):
        if second[0] < first[1]:
            raise SplitError(
                f"{name} out[{min(i, j)}] and out[{max(i, j)}] share memory: a part written "
                "into one would change the other.",
                rule=Rule.OUT,
                hint="Pass one array of its own per part.",
            )


def writing_failed(index: int, error: Exception, name: str) -> SplitError:
    """The error for a write the library refused after every check passed."""
    return SplitError(
        f"{name} could not write part {index} into out[{index}]: {error}", rule=Rule.OUT
    )


def write_parts(x: Any, parts: Sequence[Any], out: object, name: str) -> list[Any]:
    """``out=`` for a library with no native path: each of ``parts`` (cut from ``x``) written
    into its array with basic indexing, after the checks; returns ``out``."""
    arrays = check_count(out, len(parts), name)
    check_arrays(x, arrays, [tuple(part.shape) for part in parts], name, _writeable)
    for index, (array, part) in enumerate(zip(arrays, parts, strict=True)):
        try:
            array[...] = part
        except (RuntimeError, ValueError, TypeError) as error:
            raise writing_failed(index, error, name) from error
    return arrays


def _writeable(x: Any, array: Any, i: int, name: str) -> None:
    if not array_api_compat.is_writeable_array(array):
        raise immutable(x, name)


def _library(array: object) -> str:
    """The array library of ``array`` (``numpy``, ``torch``, ``jax.numpy``, ...), or its type."""
    try:
        namespace = array_api_compat.array_namespace(array)
    except TypeError:
        return f"{type(array).__module__}.{type(array).__name__}"
    return namespace.__name__.removeprefix("array_api_compat.")
