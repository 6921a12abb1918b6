"""Split and SplitToSequence of tensors inside ``torch.compile``: one graph, no warnings.

:func:`splitops.split` sends a tensor here while dynamo traces it (this module imports torch,
so it loads only then). The eager path cannot be traced as it is, and with torch 2.13 it
still cannot:

- dynamo warns at every ``functools.lru_cache`` wrapper it meets, the plan cache's and
  array-api-compat's ("Dynamo ignores the cache wrapper and directly traces the wrapped
  function");
- under dynamic shapes the split axis has a symbolic length (a ``SymInt``) that the planner,
  made for plain ints, cannot read, and the plan cache cannot hash;
- with ``fullgraph=True``, an exception raised while tracing becomes dynamo's own
  ``Unsupported`` ("Observed exception"), never the user's ``SplitError``.

So here:

- the split axis's length, and any size, count or axis that dynamo made symbolic, is
  specialized to an int with ``operator.index`` (dynamo guards on it). A new length along the
  split axis compiles once more, as it must: the number of parts may change with it. Other
  dims stay dynamic.
- the checks and the planner run, uncached, in one function marked
  :func:`torch.compiler.assume_constant_result`: dynamo calls it once while tracing and puts
  its result, plain ints, into the graph. That is sound because it is a pure function of the
  ints and dtypes it is given, all of which dynamo guards.
- the cutting is :func:`splitops.arrays._torch.cut_sizes`, whose ``Tensor.split`` /
  ``Tensor.unbind`` dynamo records as graph ops.
- a rejected input reaches the user as the SplitError eager mode raises (same class, message,
  rule and hint): the graph gets an op, ``splitops::reject``, that raises it when the graph
  runs, and tracing goes on with stand-ins for the parts. The op is marked as having a side
  effect, so that no compiler drops it when the parts go unused.

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
splitops.SplitError: Split-18 split sizes [1, 2] sum to 3, but the axis length is 4...
>>> torch._dynamo.reset()  # forget the compiled code before the example's globals go
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple, cast

import numpy as np
import torch

from ..core import (
    Rule,
    SplitError,
    SplitTypeError,
    check_split_element,
    opset_rule,
    sequence_plan,
    split_plan,
)
from ._dtypes import element_of
from ._torch import cut_sizes
from ._values import check_copy, host_sizes

__all__ = ["split", "split_to_sequence"]

#: The most stand-ins a rejected call gives back while tracing goes on (see _stand_ins).
_MOST_STAND_INS = 64


class _Rejection(NamedTuple):
    """A SplitError as plain data, which dynamo can carry through the traced code."""

    kind: str
    message: str
    rule: str
    hint: str


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
    axis, count, opset = _static(axis), _static(num_outputs), _static(opset)
    plan = _plan("Split", x.dtype, _shape(x, axis), *_traced_sizes(split), copy, axis, count, opset)
    if isinstance(plan, _Rejection):
        return tuple(_stand_ins(x, plan, _requested_count(split, num_outputs)))
    return tuple(cut_sizes(x, *plan, copy=copy))


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
    axis, keep, opset = _static(axis), _static(keepdims), _static(opset)
    shape = _shape(x, axis)
    plan = _plan("SplitToSequence", x.dtype, shape, *_traced_sizes(split), copy, axis, keep, opset)
    if isinstance(plan, _Rejection):
        return _stand_ins(x, plan, _requested_count(split, None))
    return cut_sizes(x, *plan, copy=copy)


def _make_plan(
    op: str,
    dtype: torch.dtype,
    shape: tuple[int | None, ...],
    split: object,
    traced: str,
    copy: object,
    axis: int,
    count_or_keepdims: object,
    opset: int,
) -> tuple[int, tuple[int, ...], bool] | _Rejection:
    """The eager path's checks and plan as plain data, with a SplitError given back as data
    too: dynamo reports an exception raised in a constant function as its own internal error,
    and puts only plain values into a graph."""
    try:
        rule = opset_rule(op, opset)
        check_copy(copy, rule)
        sizes = _host_sizes(split, traced, op, opset)
        element = element_of(dtype)
        if op == "Split":
            count = cast("int | None", count_or_keepdims)
            plan = split_plan(element, shape, sizes, axis=axis, num_outputs=count, opset=opset)
        else:
            keep = cast("bool | int", count_or_keepdims)
            plan = sequence_plan(element, shape, sizes, axis=axis, keepdims=keep, opset=opset)
        return plan.axis, plan.sizes, plan.drop_axis
    except SplitError as error:
        return _Rejection(type(error).__name__, error.message, error.rule.id, error._hint)


_plan = torch.compiler.assume_constant_result(_make_plan)  # type: ignore[no-untyped-call]


def _shape(x: torch.Tensor, axis: object) -> tuple[int | None, ...]:
    """``x``'s shape with the split axis's length pinned to an int and the other dims left
    out (``None``): only the split axis decides the plan, and only its length is guarded."""
    rank = x.dim()
    position = operator.index(axis) if isinstance(axis, int) and not isinstance(axis, bool) else 0
    if -rank <= position < rank:
        position %= rank
        return tuple(operator.index(x.shape[i]) if i == position else 0 for i in range(rank))
    return (0,) * rank


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


def _host_sizes(split: object, traced: str, op: str, opset: int) -> object:
    """:func:`splitops.arrays._values.host_sizes`, where dynamo has left ``split`` a plain value.

    An array arrives as its example value: its dtype is checked as eager mode checks it, but
    reading the values would bake them into the graph unguarded.
    """
    rule = opset_rule(op, opset)
    if not traced:
        return host_sizes(split, op, opset)
    if isinstance(split, torch.Tensor):
        # A numpy array arrives as a tensor; its dtype is checked as eager mode checks it.
        dtype = split.numpy().dtype if traced == "numpy" else split.dtype
        check_split_element(element_of(dtype), rule, dtype)
    given = "a sequence holding arrays" if traced == "items" else "an array"
    raise SplitError(
        f"{rule.name} under torch.compile needs its split sizes while tracing, but {given} "
        "was given, whose values are only known when the graph runs.",
        rule=Rule.CONCRETE,
        hint="Pass Python ints, e.g. split=[2, 3].",
    )


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
def _reject(x: torch.Tensor, kind: str, message: str, rule: str, hint: str) -> torch.Tensor:
    """Raise the SplitError of a rejected call when the graph runs; ``x`` orders it there."""
    raise _ERRORS[kind](message, rule=Rule.from_id(rule), hint=hint)


@_reject.register_fake
def _reject_fake(x: torch.Tensor, kind: str, message: str, rule: str, hint: str) -> torch.Tensor:
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
