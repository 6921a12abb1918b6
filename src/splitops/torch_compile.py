"""Split and SplitToSequence of tensors inside ``torch.compile``: one graph, no warnings.

:func:`splitops.split` sends a tensor here when dynamo is tracing it (this module imports
torch, so it loads only then). The eager path would trace too, with two flaws: dynamo warns
at every ``functools.lru_cache`` wrapper it meets (the planner's and array-api-compat's), and
under dynamic shapes the split axis has a symbolic length (a ``SymInt``) that the planner,
made for plain ints, cannot read, which breaks the graph. So here:

- the split axis's length, and any size, count or axis that dynamo made symbolic, is
  specialized to an int with ``operator.index`` (dynamo guards on it). A new length along the
  split axis compiles once more, as it must: the number of parts may change with it. Other
  dims stay dynamic.
- the checks of the eager path and the planner run in functions marked
  :func:`torch.compiler.assume_constant_result`: dynamo calls them once while tracing and puts
  their result, plain ints, into the graph. That is sound because they are pure functions of
  the ints and dtypes they are given, all of which dynamo guards.
- the cutting is :mod:`splitops.torch_parts`, whose ``Tensor.split`` / ``Tensor.unbind``
  dynamo records as graph ops.
- a rejected input reaches the user as the SplitError that eager mode raises, same class,
  same message. Dynamo cannot raise it while tracing: with ``fullgraph=True`` every exception
  that leaves the traced code becomes dynamo's own ``Unsupported``. So the graph gets an op,
  ``splitops::reject``, that raises the error when the graph runs, and tracing goes on with
  stand-ins for the parts. The op is marked as having a side effect, so that no compiler
  drops it when the parts go unused.

``torch.compiler.allow_in_graph`` on the public functions would have needed torch at import
time and hides the cut from the compiler; ``torch.compiler.disable`` would break the graph.

Sizes given as an array have no values while dynamo traces (it makes numpy arrays tensors,
and guards neither on their values); pass Python ints instead.

>>> import torch, splitops
>>> step = torch.compile(lambda t: splitops.split(t, num_outputs=2), fullgraph=True,
...                      backend="eager")
>>> [p.tolist() for p in step(torch.arange(5))]
[[0, 1, 2], [3, 4]]
>>> uneven = torch.compile(lambda t: splitops.split(t, [1, 2]), fullgraph=True, backend="eager")
>>> uneven(torch.arange(4))
Traceback (most recent call last):
...
splitops.errors.SplitError: Split-18 split sizes [1, 2] sum to 3, but the axis length is 4...
>>> torch._dynamo.reset()  # forget the compiled code before the example's globals go
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np
import torch

from . import torch_parts
from .dtypes import check_split_dtype
from .errors import SplitError, SplitTypeError
from .kernels import check_axis, check_copy, read_split
from .opset_rules import OpsetRule, opset_rule
from .planner import drops_axis, read_keepdims, sequence_sizes, split_sizes

__all__ = ["split", "split_to_sequence"]

_Plan = TypeVar("_Plan")

#: The most stand-ins a rejected call gives back while tracing goes on (see _stand_ins).
_MOST_STAND_INS = 64


class _Rejection(NamedTuple):
    """A SplitError as plain data, which dynamo can carry through the traced code."""

    kind: str
    message: str
    rule: str


_ERRORS: dict[str, type[SplitError]] = {
    kind.__name__: kind for kind in (SplitError, SplitTypeError)
}


def split(
    x: torch.Tensor,
    split: object = None,
    *,
    axis: int = 0,
    num_outputs: int | None = None,
    opset: int = 18,
    copy: bool = False,
) -> tuple[torch.Tensor, ...]:
    """:func:`splitops.split` as dynamo traces it."""
    count = _requested_count(split, num_outputs)
    checked = _checked_axis("Split", _static(opset), copy, x.dtype, x.ndim, _static(axis))
    if isinstance(checked, _Rejection):
        return tuple(_stand_ins(x, checked, count))
    sizes = _split_sizes(
        _length(x, checked), *_traced_sizes(split), _static(num_outputs), _static(opset)
    )
    if isinstance(sizes, _Rejection):
        return tuple(_stand_ins(x, sizes, count))
    return tuple(torch_parts.cut(x, checked, sizes, copy=copy))


def split_to_sequence(
    x: torch.Tensor,
    split: object = None,
    *,
    axis: int = 0,
    keepdims: bool | int = True,
    opset: int = 24,
    copy: bool = False,
) -> list[torch.Tensor]:
    """:func:`splitops.split_to_sequence` as dynamo traces it."""
    count = _requested_count(split, None)
    checked = _checked_axis("SplitToSequence", _static(opset), copy, x.dtype, x.ndim, _static(axis))
    if isinstance(checked, _Rejection):
        return _stand_ins(x, checked, count)
    plan = _sequence_plan(
        _length(x, checked), *_traced_sizes(split), _static(keepdims), _static(opset)
    )
    if isinstance(plan, _Rejection):
        return _stand_ins(x, plan, count)
    sizes, drop = plan
    if drop:
        return torch_parts.unbind(x, checked, copy=copy)
    return torch_parts.cut(x, checked, sizes, copy=copy)


def _planned(plan: Callable[..., _Plan]) -> Callable[..., _Plan | _Rejection]:
    """``plan`` marked for dynamo as having a constant result, its SplitError given as data.

    Dynamo reports an exception raised in a constant function as its own internal error, and
    cannot carry an exception object through traced code; a :class:`_Rejection` it can.
    """

    def planned(*args: Any) -> _Plan | _Rejection:
        try:
            return plan(*args)
        except SplitError as error:
            return _Rejection(type(error).__name__, str(error), error.rule)

    mark = torch.compiler.assume_constant_result
    marked: Callable[..., _Plan | _Rejection] = mark(planned)  # type: ignore[no-untyped-call]
    return marked


def _check_axis(op: str, opset: int, copy: object, dtype: torch.dtype, rank: int, axis: int) -> int:
    rule = opset_rule(op, opset)
    check_copy(copy, rule)
    return check_axis(dtype, rank, axis, rule, opset)


def _plan_split(
    dim: int, split: object, traced: str, num_outputs: int | None, opset: int
) -> tuple[int, ...]:
    sizes = _host_sizes(split, traced, opset_rule("Split", opset))
    return split_sizes(dim, sizes, num_outputs=num_outputs, opset=opset)


def _plan_sequence(
    dim: int, split: object, traced: str, keepdims: object, opset: int
) -> tuple[tuple[int, ...], bool]:
    rule = opset_rule("SplitToSequence", opset)
    keep = read_keepdims(keepdims)
    sizes = sequence_sizes(dim, _host_sizes(split, traced, rule), opset=opset)
    return sizes, drops_axis(split is not None, keep)


_checked_axis = _planned(_check_axis)
_split_sizes = _planned(_plan_split)
_sequence_plan = _planned(_plan_sequence)


def _traced_sizes(split: object) -> tuple[object, str]:
    """``split`` for a constant function, and what dynamo traces of it: "", "numpy", "torch"
    (an array, which a constant function receives as the tensor of its example value) or
    "items" (a sequence holding arrays, which it cannot receive)."""
    if isinstance(split, np.ndarray):
        return split, "numpy"
    if isinstance(split, torch.Tensor):
        return split, "torch"
    if isinstance(split, (list, tuple)) and any(
        isinstance(item, (np.ndarray, torch.Tensor)) for item in split
    ):
        return None, "items"
    return _static(split), ""


def _host_sizes(split: object, traced: str, rule: OpsetRule) -> object:
    """:func:`splitops.kernels.read_split`, where dynamo has left ``split`` a plain value.

    An array arrives as its example value: the dtype is guarded and checked as eager mode
    checks it, but reading the values would bake them into the graph unguarded.
    """
    if not traced:
        return read_split(split, rule)
    if isinstance(split, torch.Tensor):
        check_split_dtype(split.numpy().dtype if traced == "numpy" else split.dtype, rule)
    given = "a sequence holding arrays" if traced == "items" else "an array"
    raise SplitError(
        f"{rule.name} under torch.compile needs its split sizes while tracing, but {given} "
        "was given, whose values are only known when the graph runs. Pass Python ints, e.g. "
        "split=[2, 3]."
    )


def _length(x: torch.Tensor, axis: int) -> int:
    return operator.index(x.shape[axis])


def _static(value: Any) -> Any:
    # Under dynamo a symbolic int passes isinstance(value, int); operator.index pins it.
    if isinstance(value, int) and not isinstance(value, bool):
        return operator.index(value)
    if isinstance(value, (list, tuple)):
        return [_static(item) for item in value]
    return value


def _requested_count(split: object, num_outputs: object) -> int:
    """How many parts the caller asked for, as far as the arguments say; else 1."""
    if isinstance(split, (list, tuple)):
        count = len(split)
    elif isinstance(num_outputs, int):
        count = operator.index(num_outputs)
    else:
        count = 1
    return min(max(count, 1), _MOST_STAND_INS)


@torch.library.custom_op("splitops::reject", mutates_args=())
def _reject(x: torch.Tensor, kind: str, message: str, rule: str) -> torch.Tensor:
    """Raise the SplitError of a rejected call when the graph runs; ``x`` orders it there."""
    raise _ERRORS[kind](message, rule=rule)


@_reject.register_fake
def _reject_fake(x: torch.Tensor, kind: str, message: str, rule: str) -> torch.Tensor:
    return torch.empty_like(x)


torch.fx.node.has_side_effect(torch.ops.splitops.reject.default)


def _stand_ins(x: torch.Tensor, rejection: _Rejection, count: int) -> list[torch.Tensor]:
    """``count`` stand-ins for the parts of a rejected call, shaped like ``x``.

    They only let dynamo trace the caller's code on to the end of the graph, which raises the
    rejection when it runs before any of them could be used. A caller that needs more parts,
    or other shapes, than the arguments tell makes tracing fail instead.
    """
    stand_in = _reject(x.detach(), *rejection)
    return [stand_in] * count
