"""The one place that decides the size of every part, for every version.

Plain Python values in, sizes or a :class:`SplitPlan` (or a :class:`~splitops.SplitError`)
out. Nothing here knows about arrays or protobufs: the kernels, the ONNX layer, shape
inference and the model tools all ask these functions, so they can never disagree.

- :func:`split_sizes` and :func:`sequence_sizes` give the sizes for an axis length; with
  ``outputs``, :func:`split_sizes` also checks a node's output count against them.
- :func:`plan_sequence_parts` answers SplitToSequence for a length that may be symbolic or
  unknown: the sizes when their number is known, and the length all parts share.
- :func:`split_part_sizes` and :func:`sequence_part_sizes` are the rules themselves, written
  once over a :class:`DimArithmetic`, so that shape inference evaluates the same formula on
  symbolic dims.
- :func:`split_plan` and :func:`sequence_plan` check a whole call (element type, shape,
  axis, sizes) and return a frozen :class:`SplitPlan`: what a kernel applies to an array.

>>> split_sizes(7, num_outputs=4)
(2, 2, 2, 1)
>>> sequence_sizes(5, 2)
(2, 2, 1)
>>> split_plan(ElementType.FLOAT, (2, 7), axis=1, num_outputs=4).sizes
(2, 2, 2, 1)
>>> split_sizes(5, num_outputs=4)
Traceback (most recent call last):
...
splitops.SplitError: Split-18 cannot split a dim of 5 into 4 parts: ... split=[2, 1, 1, 1].

**The plan cache.** Plans come from one ``functools.lru_cache`` (thread-safe, bounded, as
einops caches its recipes), keyed by the exact arguments. A key holds only exact ints,
``None``, tuples of exact ints, the element type and the shape: a dict finds ``True`` under
``1`` and ``2.0`` under ``2`` while the rules reject a bool axis or a float size, so a call
with any other kind of argument (a bool, a numpy integer, a float size, a list of more than
:data:`MAX_CACHED_PARTS` sizes) is planned without the cache and checked in full. Errors are
never cached. Plans of more than :data:`MAX_CACHED_PARTS` parts are not kept either, so the
cache holds at most :data:`PLAN_CACHE_SIZE` plans of a few KiB each.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache, partial
from operator import itemgetter
from types import EllipsisType
from typing import Any, Generic, Protocol, SupportsIndex, TypeVar, Union, cast, overload

from ._elements import ElementType
from ._errors import Rule, SplitError, SplitTypeError
from ._limits import current_limits
from ._versions import OpsetRule, PartCount, check_element_type, opset_rule

__all__ = [
    "GROUPED_FROM",
    "INT_ARITHMETIC",
    "MAX_CACHED_PARTS",
    "MAX_PARTS",
    "PLAN_CACHE_SIZE",
    "UNKNOWN_LENGTH",
    "DimArithmetic",
    "SequenceParts",
    "SizesLike",
    "SplitPlan",
    "check_output_count",
    "check_split_arguments",
    "drops_axis",
    "host_value",
    "is_default_split",
    "normalize_axis",
    "part_indices",
    "plan_cache_clear",
    "plan_cache_info",
    "plan_sequence_parts",
    "read_keepdims",
    "read_sizes",
    "sequence_part_length",
    "sequence_part_sizes",
    "sequence_plan",
    "sequence_sizes",
    "split_part_sizes",
    "split_plan",
    "split_sizes",
]

#: The most outputs an ONNX node may have ("between 1 and 2147483647 outputs").
MAX_PARTS = 2**31 - 1

#: The most plans the cache keeps; the least recently used goes first.
PLAN_CACHE_SIZE = 1024

#: Plans of more parts than this are made at every call and never kept: the cache would keep
#: each such tuple of sizes alive.
MAX_CACHED_PARTS = 1024

#: From this many equal parts on, a plan holds no per-part index: kernels cut such runs in one
#: step (numpy views the run as ``(..., count, length, ...)``), which costs less than slicing.
GROUPED_FROM = 64

#: SplitToSequence without ``split`` cuts chunks of this length.
_DEFAULT_CHUNK = 1

#: What ``split`` may be on the pure side: an int, a whole float (Split-1 only), a sequence of
#: those, or any object with ``tolist()`` (a numpy scalar or array) giving one of them.
SizesLike = Union[int, float, Iterable[object], object]  # noqa: UP007 (runtime alias, 3.10)

#: An axis length: a plain int, or whatever a :class:`DimArithmetic` computes with.
D = TypeVar("D")

#: The basic index of one part: slices up to the split axis, then ``...``.
PartIndex = tuple[Union[slice, EllipsisType], ...]  # noqa: UP007


class DimArithmetic(Protocol[D]):
    """The arithmetic the size rules do on an axis length, for ints or for symbols.

    The rules of both operators are written once, in :func:`split_part_sizes` and
    :func:`sequence_part_sizes`, over this protocol. The integer path passes
    :data:`INT_ARITHMETIC`; shape inference passes one over sympy expressions, so that a
    symbolic size is the same formula that execution evaluates.
    """

    def known(self, dim: D | int) -> int | None:
        """``dim`` as an int when its value is known, else ``None`` (checks that need the
        value are then left to execution)."""

    def is_size(self, value: object) -> bool:
        """Whether ``value``, which is no plain int, is a size this arithmetic computes with
        (a symbol): explicit sizes may hold such sizes, computed from the dims of a model."""

    def exact_div(self, dim: D, count: int) -> D:
        """``dim / count``, where the rules require ``count`` to divide ``dim``."""

    def ceil_div(self, dim: D, count: int) -> D:
        """``ceil(dim / count)``."""

    def minus(self, dim: D, part: D | int, times: int) -> D:
        """``dim - part * times``."""


class _IntArithmetic:
    def known(self, dim: int) -> int:
        return dim

    def is_size(self, value: object) -> bool:
        return False

    def exact_div(self, dim: int, count: int) -> int:
        return dim // count

    def ceil_div(self, dim: int, count: int) -> int:
        return -(-dim // count)

    def minus(self, dim: int, part: int, times: int) -> int:
        return dim - part * times


#: Plain integer arithmetic: every value is known, so every check runs.
INT_ARITHMETIC: DimArithmetic[int] = _IntArithmetic()


class _UnknownLength:
    def known(self, dim: int | None) -> int | None:
        return dim if isinstance(dim, int) else None

    def is_size(self, value: object) -> bool:
        return False

    def exact_div(self, dim: None, count: int) -> None:
        return None

    def ceil_div(self, dim: None, count: int) -> None:
        return None

    def minus(self, dim: None, part: int | None, times: int) -> None:
        return None


#: An axis whose length nobody knows: the checks that need no length still run (a chunk
#: length of 0, a negative size), the others are left to execution.
UNKNOWN_LENGTH: DimArithmetic[None] = _UnknownLength()


# --- the plan ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SplitPlan:
    """How to cut one input: the axis, the sizes, and what the cutting needs.

    ``run_count`` leading parts share the length ``run_length`` and only the last may differ
    (every plan with many parts has this form: equal parts, or equal parts and a rest);
    ``run_count`` is 0 when the sizes have no such form. ``indices`` holds each part's basic
    index when the plan has fewer than :data:`GROUPED_FROM` parts (else ``()``: kernels cut the
    run in one step), and ``take`` the function that applies them all in one C call
    (``operator.itemgetter``), for any array that supports basic indexing. ``drop_axis``:
    SplitToSequence of the default split (none, or the scalar 1) and ``keepdims=0``, whose parts
    lose the axis.

    >>> plan = SplitPlan.make(1, (3, 3, 1))
    >>> plan.run_length, plan.run_count, plan.indices[2]
    (3, 2, (slice(None, None, None), slice(6, 7, None), Ellipsis))
    """

    axis: int
    sizes: tuple[int, ...]
    drop_axis: bool
    run_length: int
    run_count: int
    indices: tuple[PartIndex, ...]
    take: Callable[[Any], tuple[Any, ...]]

    @classmethod
    def make(cls, axis: int, sizes: tuple[int, ...], *, drop_axis: bool = False) -> SplitPlan:
        """The plan that cuts ``axis`` (>= 0) into parts of ``sizes``."""
        count = _equal_run(sizes)
        indices = () if count >= GROUPED_FROM else part_indices(axis, sizes)
        take = _take(indices)
        return cls(axis, sizes, drop_axis, sizes[0] if sizes else 0, count, indices, take)

    @property
    def bounds(self) -> list[tuple[int, int]]:
        """``(start, stop)`` of each part along the axis."""
        return list(_bounds(self.sizes))


def _take(indices: tuple[PartIndex, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(indices) > 1:
        views: Callable[[Any], tuple[Any, ...]] = itemgetter(*indices)
        return views
    return partial(_take_each, indices)


def _take_each(indices: tuple[PartIndex, ...], x: Any) -> tuple[Any, ...]:
    return tuple([x[index] for index in indices])


def part_indices(axis: int, sizes: tuple[int, ...]) -> tuple[PartIndex, ...]:
    """The basic index that selects each part: slices, then an ellipsis for the trailing axes
    (the array API standard, unlike numpy, wants every axis accounted for).

    >>> part_indices(1, (1, 2))[1]
    (slice(None, None, None), slice(1, 3, None), Ellipsis)
    """
    lead = (slice(None),) * axis
    return tuple((*lead, slice(start, stop), ...) for start, stop in _bounds(sizes))


def _bounds(sizes: tuple[int, ...]) -> Iterable[tuple[int, int]]:
    start = 0
    for size in sizes:
        yield start, start + size
        start += size


def _equal_run(sizes: tuple[int, ...]) -> int:
    """How many parts share the first part's size, when only the last part may differ; else 0."""
    count = sizes.count(sizes[0]) if sizes else 0
    if count == len(sizes) or (count == len(sizes) - 1 and sizes[-1] != sizes[0]):
        return count
    return 0


def split_plan(
    element: ElementType | str,
    shape: tuple[Any, ...],
    split: SizesLike | None = None,
    axis: int = 0,
    num_outputs: int | None = None,
    opset: int = 18,
) -> SplitPlan:
    """The checked plan of a Split of ``opset`` on an input of ``element`` and ``shape``.

    ``element`` is the input's element type, or the text of a dtype that has none (which is
    rejected). ``split`` holds Python values (ints, or whole floats at Split-1).

    >>> split_plan(ElementType.INT64, (6,), [2, 4], opset=13).bounds
    [(0, 2), (2, 6)]
    """
    sizes = None if split is None else _exact_sizes(split)
    if (
        type(axis) is int
        and type(opset) is int
        and (num_outputs is None or (type(num_outputs) is int and num_outputs <= MAX_CACHED_PARTS))
        and sizes is not _INEXACT
    ):
        return _cached_split_plan(element, shape, sizes, axis, num_outputs, opset)
    return _split_plan(element, shape, split, axis, num_outputs, opset)


def sequence_plan(
    element: ElementType | str,
    shape: tuple[Any, ...],
    split: SizesLike | None = None,
    axis: int = 0,
    keepdims: bool | int = True,
    opset: int = 24,
) -> SplitPlan:
    """The checked plan of a SplitToSequence of ``opset`` on an input of ``element`` and
    ``shape``: ``split`` is ``None``, a chunk length, or sizes, as Python values.

    >>> plan = sequence_plan(ElementType.FLOAT, (3, 2), keepdims=False)
    >>> plan.sizes, plan.drop_axis
    ((1, 1, 1), True)
    """
    sizes = split if split is None or type(split) is int else _exact_sizes(split)
    if (
        type(axis) is int
        and type(opset) is int
        and type(keepdims) in (bool, int)
        and sizes is not _INEXACT
        and _few_chunks(shape, axis, sizes)
    ):
        return _cached_sequence_plan(element, shape, sizes, axis, keepdims, opset)
    return _sequence_plan(element, shape, split, axis, keepdims, opset)


_INEXACT: Any = object()


def _exact_sizes(split: object) -> Any:
    """``split`` (not ``None``) as a key, a tuple of exact ints, or ``_INEXACT``."""
    if type(split) in (list, tuple):
        items = cast("Sequence[object]", split)
        if len(items) <= MAX_CACHED_PARTS and not [i for i in items if type(i) is not int]:
            return tuple(items)
    return _INEXACT


def _few_chunks(shape: tuple[Any, ...], axis: int, split: object) -> bool:
    """Whether a SplitToSequence without sizes (or with a chunk length) has few enough parts
    for the cache; sizes were bounded by :func:`_exact_sizes`."""
    if isinstance(split, tuple):
        return True
    if not -len(shape) <= axis < len(shape):
        return True  # rejected anyway
    dim = shape[axis]
    chunk = _DEFAULT_CHUNK if split is None else cast(int, split)
    return type(dim) is int and chunk > 0 and dim <= chunk * MAX_CACHED_PARTS


def _split_plan(
    element: ElementType | str,
    shape: tuple[Any, ...],
    split: object,
    axis: object,
    num_outputs: object,
    opset: object,
) -> SplitPlan:
    rule = opset_rule("Split", cast(int, opset))
    position, dim = _checked_input(element, shape, axis, rule, cast(int, opset))
    sizes = split_sizes(
        dim, split, num_outputs=cast("int | None", num_outputs), opset=rule.since_version
    )
    return SplitPlan.make(position, sizes)


def _sequence_plan(
    element: ElementType | str,
    shape: tuple[Any, ...],
    split: object,
    axis: object,
    keepdims: object,
    opset: object,
) -> SplitPlan:
    rule = opset_rule("SplitToSequence", cast(int, opset))
    position, dim = _checked_input(element, shape, axis, rule, cast(int, opset))
    keep = read_keepdims(keepdims)
    sizes = sequence_sizes(dim, split, opset=rule.since_version)
    return SplitPlan.make(position, sizes, drop_axis=drops_axis(split, keep))


_cached_split_plan = lru_cache(maxsize=PLAN_CACHE_SIZE)(_split_plan)
_cached_sequence_plan = lru_cache(maxsize=PLAN_CACHE_SIZE)(_sequence_plan)


def plan_cache_info() -> dict[str, int]:
    """Hits, misses and size of the plan cache (Split and SplitToSequence together)."""
    infos = [_cached_split_plan.cache_info(), _cached_sequence_plan.cache_info()]
    return {
        "hits": sum(i.hits for i in infos),
        "misses": sum(i.misses for i in infos),
        "currsize": sum(i.currsize for i in infos),
        "maxsize": sum(i.maxsize or 0 for i in infos),
    }


def plan_cache_clear() -> None:
    """Forget every plan: the next call of each kind is checked and planned again."""
    _cached_split_plan.cache_clear()
    _cached_sequence_plan.cache_clear()


def _checked_input(
    element: ElementType | str, shape: tuple[Any, ...], axis: object, rule: OpsetRule, opset: int
) -> tuple[int, int]:
    """The axis counted from the front and its length, after the element type, rank and axis
    checks."""
    check_element_type(element, rule, opset)
    position = normalize_axis(axis, len(shape), rule.name)
    return position, _read_dim(shape[position], rule, position, shape)


# --- sizes -------------------------------------------------------------------------------


@overload
def split_sizes(
    dim: int,
    split: SizesLike | None = None,
    *,
    num_outputs: int | None = None,
    opset: int = 18,
    outputs: int | None = None,
) -> tuple[int, ...]: ...


@overload
def split_sizes(
    dim: D,
    split: SizesLike | None = None,
    *,
    num_outputs: int | None = None,
    opset: int = 18,
    arithmetic: DimArithmetic[D],
    outputs: int | None = None,
) -> tuple[D | int, ...]: ...


def split_sizes(
    dim: object,
    split: SizesLike | None = None,
    *,
    num_outputs: int | None = None,
    opset: int = 18,
    arithmetic: DimArithmetic[Any] | None = None,
    outputs: int | None = None,
) -> tuple[object, ...]:
    """The size of each part when Split of ``opset`` cuts an axis of length ``dim``.

    ``split`` gives explicit sizes. Without it, before opset 18 ``num_outputs`` is the node's
    number of outputs and the parts must be equal; at opset 18 it is the attribute, and the
    last part takes what is left after parts of ``ceil(dim / num_outputs)``. With an
    ``arithmetic``, ``dim`` may be a symbol (see :class:`DimArithmetic`). ``outputs`` is the
    number of outputs a node lists, when there is a node: it is checked against the parts
    (:func:`check_output_count`) once they are planned.

    >>> split_sizes(9, num_outputs=4)
    (3, 3, 3, 0)
    >>> split_sizes(6, num_outputs=3, opset=11)
    (2, 2, 2)
    >>> split_sizes(6, [2.0, 4.0], opset=1)
    (2, 4)
    >>> split_sizes(9, num_outputs=4, outputs=3)  # Split-18 may omit trailing outputs
    (3, 3, 3, 0)
    >>> split_sizes(6, [2, 4], opset=13, outputs=3)
    Traceback (most recent call last):
    ...
    splitops.SplitError: Split-13 has 3 outputs but split gives 2 sizes [2, 4]. ...
    """
    rule = opset_rule("Split", opset)
    sizes = cast(
        "tuple[Any, ...] | None", read_sizes(split, rule, allow_scalar=False, arithmetic=arithmetic)
    )
    count = _read_count(num_outputs, rule)
    if arithmetic is None or arithmetic is INT_ARITHMETIC:
        parts = split_part_sizes(_read_dim(dim, rule), sizes, count, rule, INT_ARITHMETIC)
    else:
        parts = split_part_sizes(dim, sizes, count, rule, arithmetic)
    if outputs is not None:
        by_num_outputs = sizes is None and rule.part_count is PartCount.NUM_OUTPUTS
        check_output_count(parts, outputs, rule, by_num_outputs=by_num_outputs)
    return parts


def sequence_sizes(dim: int, split: SizesLike | None = None, *, opset: int = 24) -> tuple[int, ...]:
    """The size of each part when SplitToSequence of ``opset`` cuts an axis of length ``dim``.

    ``split`` is ``None`` (parts of 1), a scalar chunk length (the last part takes the rest),
    or a 1-d sequence of sizes.

    >>> sequence_sizes(3)
    (1, 1, 1)
    >>> sequence_sizes(6, [1, 0, 5])
    (1, 0, 5)
    >>> sequence_sizes(0, 4)
    ()
    """
    rule = opset_rule("SplitToSequence", opset)
    sizes = plan_sequence_parts(dim, split, rule, INT_ARITHMETIC).sizes
    assert sizes is not None, "an int dim always gives a known number of parts"
    return sizes


@dataclass(frozen=True, slots=True)
class SequenceParts(Generic[D]):
    """SplitToSequence's parts, as :func:`plan_sequence_parts` plans them."""

    #: The size of each part; ``None`` when their number depends on an unknown value.
    sizes: tuple[D | int, ...] | None
    #: The length all parts share (for the sequence's type); ``None`` when they may differ.
    part_length: D | int | None


def plan_sequence_parts(
    length: D, split: SizesLike | None, rule: OpsetRule, arithmetic: DimArithmetic[D]
) -> SequenceParts[D]:
    """SplitToSequence's parts for an axis of ``length``, which may be symbolic or unknown.

    ``length`` is an int or a value of ``arithmetic`` (a symbol; ``None`` with
    :data:`UNKNOWN_LENGTH`); with :data:`INT_ARITHMETIC` it is checked as an int >= 0.
    ``split`` is the ``split`` input as host values: ``None`` (chunks of 1), a chunk length,
    or a 1-d sequence of sizes. Every check whose values are known runs (a chunk length of 0
    fails whatever the length); the others are left to execution.

    >>> rule = opset_rule("SplitToSequence", 11)
    >>> plan_sequence_parts(5, 2, rule, INT_ARITHMETIC)
    SequenceParts(sizes=(2, 2, 1), part_length=None)
    >>> plan_sequence_parts(None, [2, 2], rule, UNKNOWN_LENGTH)
    SequenceParts(sizes=(2, 2), part_length=2)
    >>> plan_sequence_parts(None, None, rule, UNKNOWN_LENGTH)
    SequenceParts(sizes=None, part_length=1)
    >>> plan_sequence_parts(None, 0, rule, UNKNOWN_LENGTH)
    Traceback (most recent call last):
    ...
    splitops.SplitError: SplitToSequence-11 scalar split (the chunk length) must be >= 1; ...
    """
    split_value = read_sizes(split, rule, allow_scalar=True, arithmetic=arithmetic)
    dim: Any = _read_dim(length, rule) if arithmetic is INT_ARITHMETIC else length
    sizes = sequence_part_sizes(dim, split_value, rule, arithmetic)
    return SequenceParts(sizes, sequence_part_length(split_value, sizes))


def check_split_arguments(rule: OpsetRule, split: str | None, count: int | None) -> None:
    """Split-18 takes exactly one of ``split`` and ``num_outputs``: the rule, once.

    ``split`` describes the sizes given (``"split=[2, 4]"``, ``"the split input 's'"``), or is
    ``None`` when there are none; ``count`` is ``num_outputs``.

    >>> check_split_arguments(opset_rule("Split", 18), "split=[2, 4]", 2)
    Traceback (most recent call last):
    ...
    splitops.SplitError: Split-18 takes either the split input or the num_outputs attribute, ...
    """
    if rule.part_count is not PartCount.NUM_OUTPUTS or (split is None) == (count is not None):
        return
    if split is not None:
        raise SplitError(
            f"{rule.name} takes either the split input or the num_outputs attribute, not "
            f"both; {split} and num_outputs={count} were given.",
            rule=Rule.SPLIT_OR_COUNT,
            hint="Drop one of them.",
        )
    raise SplitError(
        f"{rule.name} needs either the split input (sizes) or the num_outputs attribute (how "
        "many parts); neither was given.",
        rule=Rule.SPLIT_OR_COUNT,
    )


def split_part_sizes(
    dim: D,
    sizes: tuple[D | int, ...] | None,
    count: int | None,
    rule: OpsetRule,
    arithmetic: DimArithmetic[D],
) -> tuple[D | int, ...]:
    """Split's rules, written once for any :class:`DimArithmetic`.

    ``sizes`` are the explicit sizes (already read: ints, or sizes of the arithmetic),
    ``count`` the number of parts when there are none (for a node, its output count before
    opset 18). A check that needs a value (a size >= 0, sizes adding up to ``dim``, equal
    parts, a last part >= 0) runs when ``arithmetic.known`` gives that value.

    >>> split_part_sizes(7, None, 4, opset_rule("Split", 18), INT_ARITHMETIC)
    (2, 2, 2, 1)
    """
    given = None if sizes is None else f"split={_preview(sizes)}"
    check_split_arguments(rule, given, count)
    length = arithmetic.known(dim)
    if sizes is not None:
        if count is not None:
            check_output_count(sizes, count, rule, by_num_outputs=False)
        return _check_explicit(sizes, dim, rule, arithmetic)
    if count is None:
        raise SplitError(
            f"{rule.name} without split sizes needs the number of outputs.",
            rule=Rule.OUTPUT_COUNT,
            hint="Pass num_outputs (the node's output count) for equal parts.",
        )
    _check_part_count(count, rule)
    if rule.part_count is PartCount.OUTPUTS:
        if length is not None and length % count:
            raise SplitError(
                f"{rule.name} without split sizes cuts equal parts, and a dim of {length} does "
                f"not divide into {count}.",
                rule=Rule.EQUAL_PARTS,
                hint=f"Pass explicit sizes, e.g. split={_even_example(length, count)}.",
            )
        return (arithmetic.exact_div(dim, count),) * count
    chunk = arithmetic.ceil_div(dim, count)
    last = arithmetic.minus(dim, chunk, count - 1)
    rest = arithmetic.known(last)
    if rest is not None and rest < 0:
        raise SplitError(
            f"{rule.name} cannot split a dim of {dim} into {count} parts: parts of "
            f"ceil({dim}/{count})={chunk} leave {rest} for the last.",
            rule=Rule.NUM_OUTPUTS,
            hint=f"Pass explicit sizes, e.g. split={_even_example(length, count)}.",
        )
    return (chunk,) * (count - 1) + (last,)


def sequence_part_sizes(
    dim: D,
    split: D | int | tuple[D | int, ...] | None,
    rule: OpsetRule,
    arithmetic: DimArithmetic[D],
) -> tuple[D | int, ...] | None:
    """SplitToSequence's rules, written once for any :class:`DimArithmetic`.

    ``split`` is ``None`` (chunks of 1), a chunk length, or the explicit sizes (a tuple).
    Returns ``None`` when the number of parts depends on a value that is unknown (``dim``,
    or a symbolic chunk length).

    >>> sequence_part_sizes(5, 2, opset_rule("SplitToSequence", 11), INT_ARITHMETIC)
    (2, 2, 1)
    """
    if isinstance(split, tuple):
        return _check_explicit(split, dim, rule, arithmetic)
    given = _DEFAULT_CHUNK if split is None else split
    chunk = given if type(given) is int else arithmetic.known(given)
    if chunk is not None and chunk < 1:
        raise SplitError(
            f"{rule.name} scalar split (the chunk length) must be >= 1; {chunk} was given.",
            rule=Rule.SPLIT_CHUNK,
            hint="Pass a positive chunk length, or a 1-d list of sizes for zero-size parts.",
        )
    length = arithmetic.known(dim)
    if length is None or chunk is None:
        return None
    full, rest = divmod(length, chunk)
    _check_part_count(full + bool(rest), rule)
    return (chunk,) * full + ((rest,) if rest else ())


def sequence_part_length(
    split: D | int | tuple[D | int, ...] | None, sizes: tuple[D | int, ...] | None
) -> D | int | None:
    """The length all of SplitToSequence's parts share, or ``None`` when they may differ.

    ``split`` is as :func:`sequence_part_sizes` takes it and ``sizes`` what it returned for
    that split. Chunks of 1 (the default) are known to be the length even where the number of
    parts is not; otherwise the planned sizes decide, when they are known.

    >>> sequence_part_length(None, None), sequence_part_length(3, None)
    (1, None)
    >>> sequence_part_length(3, (3, 3)), sequence_part_length(3, (3, 3, 1))
    (3, None)
    """
    if (_DEFAULT_CHUNK if split is None else split) == 1:
        return 1
    if not sizes or any(size != sizes[0] for size in sizes[1:]):
        return None
    return sizes[0]


def read_sizes(
    split: SizesLike | None,
    rule: OpsetRule,
    *,
    allow_scalar: bool,
    arithmetic: DimArithmetic[Any] | None = None,
) -> Any:
    """``split`` as plain ints: ``None``, one int (a 0-d split) or a tuple (a 1-d split).
    With an ``arithmetic``, a size may also be one of its symbolic sizes (see
    :meth:`DimArithmetic.is_size`).

    Values with a ``tolist()`` (numpy arrays and scalars, tensors) are read through it: this
    is the one place where such values become host values. Bools are never sizes; floats are
    sizes only where the version types ``split`` as T (Split-1), and then only whole ones.

    >>> read_sizes([2, 4], opset_rule("Split", 13), allow_scalar=False)
    (2, 4)
    >>> read_sizes([True, 3], opset_rule("Split", 13), allow_scalar=False)
    Traceback (most recent call last):
    ...
    splitops.SplitTypeError: Split-13 split sizes must be integers; True (bool) was given.
    """
    if split is None:
        return None
    shape = getattr(split, "shape", None)
    if isinstance(shape, tuple):
        check_split_rank(shape, rule)
    values = host_value(split)
    if _is_scalar(values):
        size = _read_size(values, rule, arithmetic)
        if not allow_scalar:
            raise SplitError(
                f"{rule.name} takes split as a 1-d list of sizes; the scalar {values!r} was given.",
                rule=Rule.SPLIT_SHAPE,
                hint=f"Pass [{values!r}] for one part, or use num_outputs for equal parts.",
            )
        return size
    if isinstance(values, (Set, Mapping)) or iter(values) is values:  # type: ignore[call-overload]
        raise SplitTypeError(
            f"{rule.name} split must be an ordered sequence of sizes (list, tuple, range or 1-d "
            f"array); a {type(values).__name__} was given.",
            rule=Rule.SPLIT_SHAPE,
        )
    # numpy scalars and 0-d arrays inside a list count as the Python values they hold.
    items = [host_value(v) for v in cast(Iterable[object], values)]
    if any(not _is_scalar(v) for v in items):
        raise SplitError(
            f"{rule.name} split must be a scalar or 1-d; a nested sequence was given "
            f"({_preview(items)}).",
            rule=Rule.SPLIT_SHAPE,
            hint="Flatten it to one list of sizes.",
        )
    return tuple(_read_size(v, rule, arithmetic) for v in items)


def check_output_count(
    sizes: Sequence[Any], listed: int, rule: OpsetRule, *, by_num_outputs: bool
) -> None:
    """Check that a node lists (or a call asks for) as many outputs as there are parts.

    With explicit sizes the counts must match. With Split-18's ``num_outputs`` the node may
    omit trailing outputs (onnx/onnx#8255) but never list more than ``num_outputs``; only the
    number of ``sizes`` is read then, so a node can be checked before its axis length is
    known by passing ``range(num_outputs)``.

    >>> check_output_count((2, 2, 2, 1), 3, opset_rule("Split", 18), by_num_outputs=True)
    >>> check_output_count((2, 4), 3, opset_rule("Split", 13), by_num_outputs=False)
    Traceback (most recent call last):
    ...
    splitops.SplitError: Split-13 has 3 outputs but split gives 2 sizes [2, 4]. ...
    """
    if listed < 1:
        raise SplitError(
            f"{rule.name} needs at least one output; the node lists none.",
            rule=Rule.OUTPUT_COUNT,
        )
    if by_num_outputs:
        if listed > len(sizes):
            raise SplitError(
                f"{rule.name} has {listed} outputs but num_outputs is {len(sizes)}: a node may "
                "omit trailing outputs, never add more.",
                rule=Rule.OUTPUT_COUNT,
                hint="Raise num_outputs or drop outputs.",
            )
    elif listed != len(sizes):
        raise SplitError(
            f"{rule.name} has {listed} outputs but split gives {len(sizes)} sizes "
            f"{_preview(sizes)}.",
            rule=Rule.OUTPUT_COUNT,
            hint="Give one size per output.",
        )


def normalize_axis(axis: object, rank: int, op: str = "Split") -> int:
    """``axis`` counted from the front, after checking it lies in ``[-rank, rank-1]``.

    >>> normalize_axis(-1, 3)
    2
    """
    position = _read_int(axis, f"{op} axis", Rule.AXIS)
    if rank < 1:
        raise SplitError(
            f"{op} needs an input of rank >= 1; a rank-0 (scalar) input was given.",
            rule=Rule.RANK,
            hint="Reshape it to shape (1,) first.",
        )
    if not -rank <= position < rank:
        raise SplitError(
            f"{op} axis {position} is out of range for an input of rank {rank}: "
            f"it must lie in [{-rank}, {rank - 1}].",
            rule=Rule.AXIS,
        )
    return position + rank if position < 0 else position


def read_keepdims(keepdims: object) -> bool:
    """SplitToSequence's ``keepdims``: 0 or 1 (or a bool).

    >>> read_keepdims(0)
    False
    """
    value = keepdims if isinstance(keepdims, bool) else _as_index(keepdims)
    if value in (0, 1):
        return bool(value)
    raise SplitError(
        f"SplitToSequence keepdims must be 0 or 1; {keepdims!r} was given.", rule=Rule.KEEPDIMS
    )


def is_default_split(split: object) -> bool:
    """Whether a SplitToSequence ``split`` (as the planner reads it: ``None``, a chunk
    length, or sizes) is its default: absent, or given as the scalar 1.

    The spec: "If the argument split is not specified, a default scalar value of 1 is used
    as the value of split." A scalar 1 given is that default, not another split: it is how
    torch's TorchScript exporter writes ``unbind`` (onnxscript's exporter writes it without
    ``split`` since), and onnxruntime reads it so. Sizes ``[1]`` are sizes, not a scalar.

    >>> is_default_split(None), is_default_split(1), is_default_split(2), is_default_split((1,))
    (True, True, False, False)
    """
    if split is None:
        return True
    if isinstance(split, (list, tuple)) or getattr(split, "shape", ()) != ():
        return False
    return _as_index(split) == _DEFAULT_CHUNK


def drops_axis(split: object, keepdims: bool) -> bool:
    """Whether SplitToSequence drops the split axis: with ``keepdims=0`` and the default
    split (:func:`is_default_split`: absent, or the scalar 1), whose parts are of length 1.

    The spec applies ``keepdims`` only where ``split`` is the default; any other split
    keeps the axis, whatever ``keepdims`` says.

    >>> drops_axis(None, keepdims=False), drops_axis(1, keepdims=False)
    (True, True)
    >>> drops_axis(2, keepdims=False), drops_axis((1, 1), keepdims=False)
    (False, False)
    """
    return not keepdims and is_default_split(split)


def _as_index(value: object) -> int | None:
    """``value`` as an int when it is an integer (a bool is not), else ``None``."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        return None
    try:
        return operator.index(cast(SupportsIndex, value))
    except TypeError:  # e.g. a numpy array of more than one element
        return None


def _read_int(value: object, what: str, rule: Rule) -> int:
    index = _as_index(value)
    if index is None:
        raise SplitTypeError(
            f"{what} must be an int; {value!r} ({type(value).__name__}) was given.", rule=rule
        )
    return index


def check_split_rank(shape: Sequence[object], rule: OpsetRule) -> None:
    """SplitError for a split of rank 2 or more, read from its shape before its values: an
    empty array of shape ``(10**4, 10**4, 0)`` holds nothing, but ``tolist()`` makes 10**8
    lists of it.

    >>> check_split_rank((2, 0), opset_rule("Split", 13))
    Traceback (most recent call last):
    ...
    splitops.SplitError: Split-13 split must be a scalar or 1-d; one of shape (2, 0) was ...
    """
    if len(shape) > 1:
        raise SplitError(
            f"{rule.name} split must be a scalar or 1-d; one of shape {tuple(shape)} was given.",
            rule=Rule.SPLIT_SHAPE,
            hint="Flatten it to one list of sizes.",
        )


def host_value(value: object) -> object:
    """``value`` as Python values: an array or a numpy scalar through its ``tolist()``.

    >>> class Sizes:
    ...     def tolist(self): return [2, 4]
    >>> host_value(Sizes()), host_value((1, 2))
    ([2, 4], (1, 2))
    """
    return value.tolist() if hasattr(value, "tolist") else value


def _is_scalar(value: object) -> bool:
    return not isinstance(value, Iterable) or isinstance(value, (str, bytes))


def _preview(items: Sequence[object], limit: int = 8) -> str:
    text = ", ".join(repr(v) for v in items[:limit])
    return f"[{text}{', ...' if len(items) > limit else ''}]"


def _read_size(value: object, rule: OpsetRule, arithmetic: DimArithmetic[Any] | None = None) -> Any:
    if type(value) is int:  # the common case, first
        return value
    if arithmetic is not None and arithmetic.is_size(value):
        return value
    if isinstance(value, bool):
        raise SplitTypeError(
            f"{rule.name} split sizes must be integers; {value!r} (bool) was given.",
            rule=Rule.SPLIT_TYPE,
        )
    index = _as_index(value)
    if index is not None:
        return index
    if isinstance(value, float):
        if not value.is_integer():
            raise SplitTypeError(
                f"{rule.name} split sizes must be whole numbers; {value!r} was given.",
                rule=Rule.SPLIT_TYPE,
            )
        if rule.split_may_be_float:
            return int(value)
        raise SplitTypeError(
            f"{rule.name} split sizes must be integers; the float {value!r} was given.",
            rule=Rule.SPLIT_TYPE,
            hint="Only Split-1 types split like its input and takes whole-number floats.",
        )
    raise SplitTypeError(
        f"{rule.name} split sizes must be integers; {value!r} ({type(value).__name__}) was given.",
        rule=Rule.SPLIT_TYPE,
    )


def _read_dim(
    dim: object, rule: OpsetRule, axis: int | None = None, shape: tuple[Any, ...] = ()
) -> int:
    """The length of the split axis as an int >= 0. A library that does not know it yet
    writes ``None`` (the array API standard) or ``nan`` (dask, after boolean indexing)."""
    if dim is None or (isinstance(dim, float) and dim != dim):
        raise SplitError(
            f"{rule.name} needs the length of axis {axis} to cut it, but it is unknown: the "
            f"input's shape is {shape}.",
            rule=Rule.UNKNOWN_LENGTH,
            hint="Make the sizes known first (dask: x.compute_chunk_sizes()).",
        )
    length = _read_int(dim, f"{rule.name} dim (the length of the split axis)", Rule.DIM)
    if length < 0:
        raise SplitError(
            f"{rule.name} dim (the length of the split axis) must be >= 0; {length} was given.",
            rule=Rule.DIM,
        )
    return length


def _read_count(num_outputs: object, rule: OpsetRule) -> int | None:
    if num_outputs is None:
        return None
    count = _read_int(num_outputs, f"{rule.name} num_outputs", Rule.NUM_OUTPUTS)
    if not 1 <= count <= MAX_PARTS:
        raise SplitError(
            f"{rule.name} num_outputs must lie in [1, {MAX_PARTS}]; {count} was given.",
            rule=Rule.NUM_OUTPUTS,
        )
    return count


def _check_explicit(
    sizes: tuple[D | int, ...], dim: D, rule: OpsetRule, arithmetic: DimArithmetic[D]
) -> tuple[D | int, ...]:
    """``sizes``, after the checks that their known values allow: at least one size, none
    negative, and a sum equal to ``dim`` (when ``dim`` minus the sum is known)."""
    if not sizes:
        raise SplitError(
            f"{rule.name} split must hold at least one size; [] was given.",
            rule=Rule.SPLIT_EMPTY,
        )
    _check_part_count(len(sizes), rule)
    values = [s if type(s) is int else arithmetic.known(s) for s in sizes]
    negative = [(i, v) for i, v in enumerate(values) if v is not None and v < 0]
    if negative:
        i, v = negative[0]
        raise SplitError(
            f"{rule.name} split sizes must be >= 0; {_preview(sizes)} has {v} at position {i}.",
            rule=Rule.SPLIT_NEGATIVE,
        )
    if None in values:  # symbolic sizes: the sum is checked where dim minus it is known
        rest: Any = dim
        for size in sizes:
            rest = arithmetic.minus(rest, size, 1)
        left = arithmetic.known(rest)
        total: Any = arithmetic.minus(dim, rest, 1)
    else:
        total = sum(cast("list[int]", values))
        length = arithmetic.known(dim)
        left = None if length is None else length - total
    if left:
        raise SplitError(
            f"{rule.name} split sizes {_preview(sizes)} sum to {total}, but the axis "
            f"length is {dim}: the sizes must add up to the length of the split axis.",
            rule=Rule.SPLIT_SUM,
        )
    return sizes


def _check_part_count(count: int, rule: OpsetRule) -> None:
    """SplitError when a split would make more parts than the ``max_parts`` limit allows."""
    limit = current_limits().max_parts
    if count > limit:
        raise SplitError(
            f"{rule.name} would make {count} parts; splitops makes at most {limit} (the "
            "max_parts limit), so that a hostile file or argument cannot exhaust memory.",
            rule=Rule.LIMIT,
            hint="Raise the limit with splitops.limits(max_parts=N) or the command's "
            "--max-parts N, or split in stages.",
        )


def _even_example(dim: int | None, count: int) -> str:
    if dim is None:
        return "[...]"
    quotient, remainder = divmod(dim, count)
    # The first sizes are example enough: count may be in the millions.
    head = [quotient + 1 if i < remainder else quotient for i in range(min(count, 8))]
    return f"[{', '.join(map(str, head))}{', ...' if count > 8 else ''}]"
