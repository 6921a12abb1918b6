"""The arguments beside the array: ``split`` read on the host, and ``copy``.

>>> import numpy as np
>>> host_sizes(np.array([2, 4], dtype=np.int32), "Split", 13)
[2, 4]
"""

from __future__ import annotations

import sys
from typing import Any

import array_api_compat
import numpy as np

from ..core import (
    OpsetRule,
    Rule,
    SplitError,
    SplitTypeError,
    check_split_element,
    check_split_rank,
    host_value,
    opset_rule,
)
from ._dtypes import element_of
from ._libraries import reject_unreadable

__all__ = ["check_copy", "host_sizes"]


def host_sizes(split: object, op: str, opset: int) -> object:
    """``split`` as the planner reads it, after the checks only an array library can make.

    An array's dtype is checked (even when it is empty), a traced or lazy value is rejected,
    then its values are read on the host (:func:`splitops.core.host_value`; an array that has
    no ``tolist`` of its own comes to numpy through DLPack first). ``op`` and ``opset`` name
    the version in messages.
    """
    if type(split) in (int, range) or (type(split) in (list, tuple) and "jax" not in sys.modules):
        return split
    if type(split) in (list, tuple) or not array_api_compat.is_array_api_obj(split):
        reject_unreadable(split, op, opset)
        return split
    array: Any = split
    check_split_element(element_of(array.dtype), opset_rule(op, opset), array.dtype)
    check_split_rank(tuple(array.shape), opset_rule(op, opset))
    reject_unreadable(split, op, opset)
    try:
        return host_value(array if hasattr(array, "tolist") else np.from_dlpack(array))
    except (NotImplementedError, RuntimeError, TypeError, BufferError) as error:
        # A meta tensor, say: it has a dtype and a shape, and no values anywhere.
        raise SplitError(
            f"{opset_rule(op, opset).name} split sizes must be readable on the host, and this "
            f"{type(array).__name__} holds no values there ({error}).",
            rule=Rule.CONCRETE,
            hint="Pass the sizes as Python ints or a numpy array.",
        ) from error


def check_copy(copy: object, rule: OpsetRule) -> None:
    """SplitTypeError unless ``copy`` is a bool.

    >>> from splitops.core import opset_rule
    >>> check_copy(1, opset_rule("Split", 18))
    Traceback (most recent call last):
    ...
    splitops.SplitTypeError: Split-18 copy must be True or False; 1 was given.
    """
    if type(copy) is not bool:
        raise SplitTypeError(
            f"{rule.name} copy must be True or False; {copy!r} was given.", rule=Rule.ARGUMENT
        )
