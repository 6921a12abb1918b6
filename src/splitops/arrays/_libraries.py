"""What particular array libraries need beyond the array API standard.

Sizes must be known on the host before any part exists: a jax value traced by ``jax.jit`` or
a lazy dask array cannot give them. :func:`reject_unreadable` turns such values into a
:class:`~splitops.SplitError` that says what to do. Inside ``torch.compile``, tensors take
the path in :mod:`splitops.arrays._torch_compile`.

Like einops, nothing here imports a library the user has not imported already: a library
that is not in ``sys.modules`` cannot have made the value at hand.

>>> reject_unreadable([2, 4], "Split", 18)
"""

from __future__ import annotations

import sys

import array_api_compat

from ..core import Rule, SplitError, opset_rule

__all__ = ["reject_unreadable", "torch_is_compiling"]


def reject_unreadable(value: object, op: str, opset: int, what: str = "split sizes") -> None:
    """SplitError when ``value`` (or an item of a list of them) cannot be read on the host.

    A jax tracer has no value while ``jax.jit`` traces; a lazy array (dask) would have to be
    computed. Either would leave the number and the shapes of the parts unknown. ``what``
    names the argument, after the version of ``op`` at ``opset``.
    """
    listed = isinstance(value, (list, tuple))
    items = value if isinstance(value, (list, tuple)) else (value,)
    jax = sys.modules.get("jax")
    if jax is not None:
        for item in items:
            if isinstance(item, jax.core.Tracer):
                raise SplitError(
                    f"{opset_rule(op, opset).name} {what} must be concrete, but {item!r}, a "
                    "value traced by jax, was given.",
                    rule=Rule.CONCRETE,
                    hint="Under jax.jit, pass them as Python ints marked static (static_argnums "
                    "or static_argnames), or close over a concrete array, so that the part "
                    "shapes are known.",
                )
    if (
        not listed
        and array_api_compat.is_array_api_obj(value)
        and array_api_compat.is_lazy_array(value)
        and not array_api_compat.is_jax_array(value)  # compat calls all of jax lazy
    ):
        library = type(value).__module__.split(".")[0]
        raise SplitError(
            f"{opset_rule(op, opset).name} {what} must be concrete, but a lazy {library} array "
            "was given: its values decide how many parts there are and their shapes.",
            rule=Rule.CONCRETE,
            hint="Compute it first (dask: .compute()) and pass the result.",
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
