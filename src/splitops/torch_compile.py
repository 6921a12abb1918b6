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
- the checks and the planner run in functions marked
  :func:`torch.compiler.assume_constant_result`: dynamo calls them once while tracing and puts
  their result, plain ints, into the graph. That is sound because they are pure functions of
  the ints and dtype they are given, all of which dynamo guards.
- the cutting is ``Tensor.split`` / ``Tensor.unbind``, which dynamo records as graph ops.

``torch.compiler.allow_in_graph`` on the public functions would have needed torch at import
time and hides the cut from the compiler; ``torch.compiler.disable`` would break the graph.

Sizes given as a tensor have no values while dynamo traces; pass Python ints instead.

>>> import torch, splitops
>>> step = torch.compile(lambda t: splitops.split(t, num_outputs=2), fullgraph=True,
...                      backend="eager")
>>> [p.tolist() for p in step(torch.arange(5))]
[[0, 1, 2], [3, 4]]
>>> torch._dynamo.reset()  # forget the compiled code before the example's globals go
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch

from .dtypes import check_element_type
from .errors import SplitError
from .opset_rules import opset_rule
from .planner import normalize_axis, read_keepdims, sequence_sizes, split_sizes

__all__ = ["split", "split_to_sequence"]

_Plan = TypeVar("_Plan")


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
    axis = _or_raise(_checked_axis("Split", _static(opset), x.dtype, x.ndim, _static(axis)))
    sizes = _or_raise(
        _split_sizes(
            _length(x, axis), _static(_host(split, "Split")), _static(num_outputs), _static(opset)
        )
    )
    return tuple(_cut(x, axis, sizes, copy=copy))


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
    axis = _or_raise(
        _checked_axis("SplitToSequence", _static(opset), x.dtype, x.ndim, _static(axis))
    )
    keep = read_keepdims(_static(keepdims))
    sizes = _or_raise(
        _sequence_sizes(_length(x, axis), _static(_host(split, "SplitToSequence")), _static(opset))
    )
    if split is None and not keep:
        return _copied(x.unbind(axis)) if copy else list(x.unbind(axis))
    return _cut(x, axis, sizes, copy=copy)


def _planned(plan: Callable[..., _Plan]) -> Callable[..., _Plan | SplitError]:
    """``plan`` marked for dynamo as having a constant result, returning its SplitError.

    Dynamo reports an exception raised in a constant function as its own internal error; the
    SplitError comes back as a value instead and :func:`_or_raise` raises it in traced code,
    where dynamo hands it to the user.
    """

    def planned(*args: Any) -> _Plan | SplitError:
        try:
            return plan(*args)
        except SplitError as error:
            return error

    mark = torch.compiler.assume_constant_result
    marked: Callable[..., _Plan | SplitError] = mark(planned)  # type: ignore[no-untyped-call]
    return marked


def _or_raise(result: _Plan | SplitError) -> _Plan:
    if isinstance(result, SplitError):
        raise result
    return result


def _check_axis(op: str, opset: int, dtype: torch.dtype, rank: int, axis: int) -> int:
    rule = opset_rule(op, opset)
    check_element_type(dtype, rule, opset=opset)
    return normalize_axis(axis, rank, rule.name)


def _plan_split(dim: int, split: object, num_outputs: int | None, opset: int) -> tuple[int, ...]:
    return split_sizes(dim, split, num_outputs=num_outputs, opset=opset)


def _plan_sequence(dim: int, split: object, opset: int) -> tuple[int, ...]:
    return sequence_sizes(dim, split, opset=opset)


_checked_axis = _planned(_check_axis)
_split_sizes = _planned(_plan_split)
_sequence_sizes = _planned(_plan_sequence)


def _length(x: torch.Tensor, axis: int) -> int:
    return operator.index(x.shape[axis])


def _static(value: Any) -> Any:
    # Under dynamo a symbolic int passes isinstance(value, int); operator.index pins it.
    if isinstance(value, int) and not isinstance(value, bool):
        return operator.index(value)
    if isinstance(value, (list, tuple)):
        return [_static(item) for item in value]
    return value


def _host(split: object, op: str) -> object:
    if isinstance(split, torch.Tensor):
        raise SplitError(
            f"{op} under torch.compile needs its split sizes while tracing, but a tensor was "
            "given, whose values are only known when the graph runs. Pass Python ints, e.g. "
            "split=[2, 3]."
        )
    return split


def _cut(x: torch.Tensor, axis: int, sizes: tuple[int, ...], *, copy: bool) -> list[torch.Tensor]:
    tensor: Any = x  # torch's own stubs leave Tensor.split untyped
    parts = tensor.split(list(sizes), dim=axis) if sizes else ()
    return _copied(parts) if copy else list(parts)


def _copied(parts: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [part.clone(memory_format=torch.contiguous_format) for part in parts]
