"""What particular array libraries need beyond the array API standard.

Sizes must be known on the host before any part exists: a jax value traced by ``jax.jit`` or
a lazy dask array cannot give them, and a dask array with unknown chunk sizes has no known
length to cut. These checks turn such inputs into a :class:`~splitops.SplitError` that says
what to do. Inside ``torch.compile``, tensors take the path in :mod:`splitops.torch_compile`.

Like einops, nothing here imports a library the user has not imported already: a library
that is not in ``sys.modules`` cannot have made the value at hand.

>>> from splitops.opset_rules import opset_rule
>>> axis_length((3, float("nan")), 1, opset_rule("Split", 18))
Traceback (most recent call last):
...
splitops.errors.SplitError: Split-18 needs the length of axis 1 to cut it, but it is unknown...
"""

from __future__ import annotations

import math
import sys
from typing import Any

import array_api_compat

from .errors import SplitError
from .opset_rules import OpsetRule

__all__ = [
    "axis_length",
    "compiled_torch_split",
    "compiled_torch_split_to_sequence",
    "reject_unreadable",
    "torch_is_compiling",
]


def axis_length(shape: tuple[Any, ...], axis: int, rule: OpsetRule) -> int:
    """The length of ``axis``, or SplitError when the library does not know it yet.

    The standard writes an unknown dim as ``None``; dask writes ``nan`` (chunks whose sizes
    depend on data, e.g. after boolean indexing).

    >>> from splitops.opset_rules import opset_rule
    >>> axis_length((2, 5), 1, opset_rule("Split", 18))
    5
    """
    length = shape[axis]
    if length is None or (isinstance(length, float) and math.isnan(length)):
        raise SplitError(
            f"{rule.name} needs the length of axis {axis} to cut it, but it is unknown: the "
            f"input's shape is {shape}. Make the sizes known first (dask: "
            "x.compute_chunk_sizes())."
        )
    known: int = length
    return known


def reject_unreadable(value: object, what: str) -> None:
    """SplitError when ``value`` (or an item of a list of them) cannot be read on the host.

    A jax tracer has no value while ``jax.jit`` traces; a lazy array (dask) would have to be
    computed. Either would leave the number and the shapes of the parts unknown.

    >>> reject_unreadable([2, 4], "split sizes")
    """
    listed = isinstance(value, (list, tuple))
    tracer = _jax_tracer_type()
    if tracer is not None:
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(item, tracer):
                raise SplitError(
                    f"{what} must be concrete, but {item!r}, a value traced by jax, was given. "
                    "Under jax.jit, pass them as Python ints marked static (static_argnums or "
                    "static_argnames), or close over a concrete array, so that the part shapes "
                    "are known."
                )
    if (
        not listed
        and array_api_compat.is_array_api_obj(value)
        and array_api_compat.is_lazy_array(value)
        and not array_api_compat.is_jax_array(value)  # compat calls all of jax lazy
    ):
        raise SplitError(
            f"{what} must be concrete, but a lazy {_library(value)} array was given: "
            "its values decide how many parts there are and their shapes. Compute it first "
            "(dask: .compute()) and pass the result."
        )


def torch_is_compiling(x: object) -> bool:
    """Whether ``x`` is a tensor that ``torch.compile`` is tracing right now.

    Inside a compiled region array-api-compat's detection is not used: its ``lru_cache``
    wrappers make dynamo warn, and dynamo only traces tensors there anyway.

    >>> import numpy as np
    >>> torch_is_compiling(np.zeros(3))
    False
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor) and torch.compiler.is_compiling()


def is_plain_torch_tensor(x: object) -> bool:
    """Whether ``x`` is exactly a ``torch.Tensor`` (no subclass), without importing torch.

    >>> import numpy as np
    >>> is_plain_torch_tensor(np.zeros(3))
    False
    """
    torch = sys.modules.get("torch")
    return torch is not None and type(x) is torch.Tensor


def compiled_torch_split(x: Any, split: object, **options: Any) -> tuple[Any, ...]:
    """:func:`splitops.split` of a tensor inside ``torch.compile`` (see :mod:`torch_compile`)."""
    from . import torch_compile

    return torch_compile.split(x, split, **options)


def compiled_torch_split_to_sequence(x: Any, split: object, **options: Any) -> list[Any]:
    """:func:`splitops.split_to_sequence` of a tensor inside ``torch.compile``."""
    from . import torch_compile

    return torch_compile.split_to_sequence(x, split, **options)


_jax_tracer: type | None = None


def _jax_tracer_type() -> type | None:
    """jax's Tracer class once the user has imported jax, else None."""
    global _jax_tracer
    if _jax_tracer is None and "jax" in sys.modules:
        _jax_tracer = sys.modules["jax"].core.Tracer
    return _jax_tracer


def _library(value: object) -> str:
    return type(value).__module__.split(".", 1)[0]
