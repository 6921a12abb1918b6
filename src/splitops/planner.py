"""The one place that decides the size of every part, for every version.

Plain integers in, a tuple of integers or a :class:`~splitops.SplitError` out. Nothing here
knows about arrays or protobufs: kernels, the ONNX layer, shape inference and the model tools
all ask these functions, so they can never disagree.

>>> split_sizes(7, num_outputs=4)
(2, 2, 2, 1)
>>> split_sizes(6, [2, 4], opset=13)
(2, 4)
>>> sequence_sizes(5, 2)
(2, 2, 1)
>>> split_sizes(5, num_outputs=4)
Traceback (most recent call last):
...
splitops.errors.SplitError: Split-18 cannot split a dim of 5 into 4 parts: ... split=[2, 1, 1, 1].
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence, Set
from functools import lru_cache
from typing import Any, Protocol, SupportsIndex, TypeVar, Union, cast, overload

from .errors import SplitError, SplitTypeError
from .opset_rules import OpsetRule, PartCount, opset_rule

__all__ = [
    "INT_ARITHMETIC",
    "MAX_PARTS",
    "DimArithmetic",
    "SizesLike",
    "check_output_count",
    "drops_axis",
    "normalize_axis",
    "plan_sequence",
    "plan_split",
    "read_keepdims",
    "read_sizes",
    "sequence_part_length",
    "sequence_sizes",
    "split_sizes",
]

#: The most outputs an ONNX node may have ("between 1 and 2147483647 outputs").
MAX_PARTS = 2**31 - 1

#: SplitToSequence without ``split`` cuts chunks of this length.
_DEFAULT_CHUNK = 1

#: What ``split`` may be on the pure side: an int, a whole float (Split-1 only), a sequence of
#: those, or any object with ``tolist()`` (a numpy scalar or array) giving one of them.
SizesLike = Union[int, float, Iterable[object], object]  # noqa: UP007 (runtime alias, 3.10)


#: An axis length: a plain int, or whatever a :class:`DimArithmetic` computes with.
D = TypeVar("D")


class DimArithmetic(Protocol[D]):
    """The arithmetic the size rules do on an axis length, for ints or for symbols.

    The rules of both operators are written once, in :func:`plan_split` and
    :func:`plan_sequence`, over this protocol. The integer path passes
    :data:`INT_ARITHMETIC`; shape inference passes one over sympy expressions, so that a
    symbolic size is the same formula that execution evaluates.
    """

    def known(self, dim: D) -> int | None:
        """``dim`` as an int when its value is known, else ``None`` (checks that need the
        value are then left to execution)."""

    def exact_div(self, dim: D, count: int) -> D:
        """``dim / count``, where the rules require ``count`` to divide ``dim``."""

    def ceil_div(self, dim: D, count: int) -> D:
        """``ceil(dim / count)``."""

    def minus(self, dim: D, part: D, times: int) -> D:
        """``dim - part * times``."""


class _IntArithmetic:
    def known(self, dim: int) -> int:
        return dim

    def exact_div(self, dim: int, count: int) -> int:
        return dim // count

    def ceil_div(self, dim: int, count: int) -> int:
        return -(-dim // count)

    def minus(self, dim: int, part: int, times: int) -> int:
        return dim - part * times


#: Plain integer arithmetic: every value is known, so every check runs.
INT_ARITHMETIC: DimArithmetic[int] = _IntArithmetic()


@overload
def split_sizes(
    dim: int,
    split: SizesLike | None = None,
    *,
    num_outputs: int | None = None,
    opset: int = 18,
) -> tuple[int, ...]: ...


@overload
def split_sizes(
    dim: D,
    split: SizesLike | None = None,
    *,
    num_outputs: int | None = None,
    opset: int = 18,
    arithmetic: DimArithmetic[D],
) -> tuple[D | int, ...]: ...


def split_sizes(
    dim: object,
    split: SizesLike | None = None,
    *,
    num_outputs: int | None = None,
    opset: int = 18,
    arithmetic: DimArithmetic[Any] | None = None,
) -> tuple[object, ...]:
    """The size of each part when Split of ``opset`` cuts an axis of length ``dim``.

    ``split`` gives explicit sizes. Without it, before opset 18 ``num_outputs`` is the node's
    number of outputs and the parts must be equal; at opset 18 it is the attribute, and the
    last part takes what is left after parts of ``ceil(dim / num_outputs)``. With an
    ``arithmetic``, ``dim`` may be a symbol (see :class:`DimArithmetic`).

    >>> split_sizes(9, num_outputs=4)
    (3, 3, 3, 0)
    >>> split_sizes(6, num_outputs=3, opset=11)
    (2, 2, 2)
    >>> split_sizes(6, [2.0, 4.0], opset=1)
    (2, 4)
    """
    rule = opset_rule("Split", opset)
    by_int = arithmetic is None or arithmetic is INT_ARITHMETIC
    length = _read_dim(dim, rule) if by_int else None
    sizes = cast("tuple[int, ...] | None", read_sizes(split, rule, allow_scalar=False))
    count = _read_count(num_outputs, rule)
    if arithmetic is None or by_int:
        return _split_plan(cast(int, length), sizes, count, rule)
    return plan_split(dim, sizes, count, rule, arithmetic)


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
    return _sequence_plan(_read_dim(dim, rule), read_sizes(split, rule, allow_scalar=True), rule)


def plan_split(
    dim: D,
    sizes: tuple[int, ...] | None,
    count: int | None,
    rule: OpsetRule,
    arithmetic: DimArithmetic[D],
) -> tuple[D | int, ...]:
    """Split's rules, written once for any :class:`DimArithmetic`.

    ``sizes`` are the explicit sizes (already read), ``count`` the number of parts when there
    are none. A check that needs the value of ``dim`` (sizes adding up to it, equal parts,
    a last part >= 0) runs when ``arithmetic.known`` gives that value.

    >>> plan_split(7, None, 4, opset_rule("Split", 18), INT_ARITHMETIC)
    (2, 2, 2, 1)
    """
    if rule.part_count is PartCount.NUM_OUTPUTS:
        if sizes is not None and count is not None:
            raise SplitError(
                f"{rule.name} takes either the split input or the num_outputs attribute, not "
                f"both; split={_preview(sizes)} and num_outputs={count} were given.",
                rule="split-or-num_outputs",
            )
        if sizes is None and count is None:
            raise SplitError(
                f"{rule.name} needs either the split input (sizes) or the num_outputs "
                "attribute (how many parts); neither was given.",
                rule="split-or-num_outputs",
            )
    length = arithmetic.known(dim)
    if sizes is not None:
        if count is not None and count != len(sizes):
            raise SplitError(
                f"{rule.name} has {count} outputs but split gives {len(sizes)} sizes "
                f"{_preview(sizes)}: give one size per output.",
                rule="output-count",
            )
        return _check_explicit(sizes, length, rule)
    if count is None:
        raise SplitError(
            f"{rule.name} without split sizes needs the number of outputs: pass num_outputs "
            "(the node's output count) for equal parts.",
            rule="output-count",
        )
    if rule.part_count is PartCount.OUTPUTS:
        if length is not None and length % count:
            raise SplitError(
                f"{rule.name} without split sizes cuts equal parts, and a dim of {length} does "
                f"not divide into {count}. Pass explicit sizes, e.g. "
                f"split={_even_example(length, count)}.",
                rule="equal-parts",
            )
        return (arithmetic.exact_div(dim, count),) * count
    chunk = arithmetic.ceil_div(dim, count)
    last = arithmetic.minus(dim, chunk, count - 1)
    rest = arithmetic.known(last)
    if rest is not None and rest < 0:
        raise SplitError(
            f"{rule.name} cannot split a dim of {dim} into {count} parts: parts of "
            f"ceil({dim}/{count})={chunk} leave {rest} for the last. Pass explicit sizes, "
            f"e.g. split={_even_example(length, count)}.",
            rule="num_outputs",
        )
    return (chunk,) * (count - 1) + (last,)


def plan_sequence(
    dim: D,
    split: int | tuple[int, ...] | None,
    rule: OpsetRule,
    arithmetic: DimArithmetic[D],
) -> tuple[D | int, ...] | None:
    """SplitToSequence's rules, written once for any :class:`DimArithmetic`.

    ``split`` is ``None`` (chunks of 1), a chunk length, or the explicit sizes. Returns
    ``None`` when the number of parts depends on a ``dim`` whose value is unknown.

    >>> plan_sequence(5, 2, opset_rule("SplitToSequence", 11), INT_ARITHMETIC)
    (2, 2, 1)
    """
    length = arithmetic.known(dim)
    if split is None:
        split = _DEFAULT_CHUNK
    if isinstance(split, int):
        if split < 1:
            raise SplitError(
                f"{rule.name} scalar split (the chunk length) must be >= 1; {split} was given. "
                "Pass a positive chunk length, or a 1-d list of sizes for zero-size parts.",
                rule="split-chunk",
            )
        if length is None:
            return None
        full, rest = divmod(length, split)
        return (split,) * full + ((rest,) if rest else ())
    return _check_explicit(split, length, rule)


def sequence_part_length(
    split: int | tuple[int, ...] | None, sizes: tuple[D | int, ...] | None
) -> D | int | None:
    """The length all of SplitToSequence's parts share, or ``None`` when they may differ.

    ``split`` is as :func:`plan_sequence` takes it and ``sizes`` what it returned for that
    split. Chunks of 1 (the default) are known to be the length even where the number of
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
    split: SizesLike | None, rule: OpsetRule, *, allow_scalar: bool
) -> int | tuple[int, ...] | None:
    """``split`` as plain ints: ``None``, one int (a 0-d split) or a tuple (a 1-d split).

    Bools are never sizes; floats are sizes only where the version types ``split`` as T
    (Split-1), and then only whole ones.

    >>> read_sizes([2, 4], opset_rule("Split", 13), allow_scalar=False)
    (2, 4)
    >>> read_sizes([True, 3], opset_rule("Split", 13), allow_scalar=False)
    Traceback (most recent call last):
    ...
    splitops.errors.SplitTypeError: Split-13 split sizes must be integers; True (bool) was given.
    """
    if split is None:
        return None
    values = _host_value(split)
    if _is_scalar(values):
        size = _read_size(values, rule)
        if not allow_scalar:
            raise SplitError(
                f"{rule.name} takes split as a 1-d list of sizes; the scalar {values!r} was "
                f"given. Pass [{values!r}] for one part, or use num_outputs for equal parts.",
                rule="split-shape",
            )
        return size
    if isinstance(values, (Set, Mapping)) or iter(values) is values:  # type: ignore[call-overload]
        raise SplitTypeError(
            f"{rule.name} split must be an ordered sequence of sizes (list, tuple, range or 1-d "
            f"array); a {type(values).__name__} was given.",
            rule="split-shape",
        )
    # numpy scalars and 0-d arrays inside a list count as the Python values they hold.
    items = [_host_value(v) for v in cast(Iterable[object], values)]
    if any(not _is_scalar(v) for v in items):
        raise SplitError(
            f"{rule.name} split must be a scalar or 1-d; a nested sequence was given "
            f"({_preview(items)}). Flatten it to one list of sizes.",
            rule="split-shape",
        )
    return tuple(_read_size(v, rule) for v in items)


def check_output_count(
    sizes: tuple[int, ...], listed: int, rule: OpsetRule, *, by_num_outputs: bool
) -> None:
    """Check that a node lists as many outputs as it has parts.

    With explicit sizes the counts must match. With Split-18's ``num_outputs`` the node may
    omit trailing outputs (onnx/onnx#8255) but never list more than ``num_outputs``.

    >>> check_output_count((2, 2, 2, 1), 3, opset_rule("Split", 18), by_num_outputs=True)
    >>> check_output_count((2, 4), 3, opset_rule("Split", 13), by_num_outputs=False)
    Traceback (most recent call last):
    ...
    splitops.errors.SplitError: Split-13 lists 3 outputs but split gives 2 sizes [2, 4]: ...
    """
    if listed < 1:
        raise SplitError(
            f"{rule.name} needs at least one output; the node lists none.", rule="output-count"
        )
    if by_num_outputs:
        if listed > len(sizes):
            raise SplitError(
                f"{rule.name} lists {listed} outputs but num_outputs is {len(sizes)}: a node may "
                "omit trailing outputs, never add more. Raise num_outputs or drop outputs.",
                rule="output-count",
            )
    elif listed != len(sizes):
        raise SplitError(
            f"{rule.name} lists {listed} outputs but split gives {len(sizes)} sizes "
            f"{_preview(sizes)}: give one size per output.",
            rule="output-count",
        )


def normalize_axis(axis: int, rank: int, op: str = "Split") -> int:
    """``axis`` counted from the front, after checking it lies in ``[-rank, rank-1]``.

    >>> normalize_axis(-1, 3)
    2
    """
    axis = _read_int(axis, f"{op} axis", "axis")
    if rank < 1:
        raise SplitError(
            f"{op} needs an input of rank >= 1; a rank-0 (scalar) input was given. "
            "Reshape it to shape (1,) first.",
            rule="rank",
        )
    if not -rank <= axis < rank:
        raise SplitError(
            f"{op} axis {axis} is out of range for an input of rank {rank}: "
            f"it must lie in [{-rank}, {rank - 1}].",
            rule="axis",
        )
    return axis + rank if axis < 0 else axis


def read_keepdims(keepdims: object) -> bool:
    """SplitToSequence's ``keepdims``: 0 or 1 (or a bool).

    >>> read_keepdims(0)
    False
    """
    value = keepdims if isinstance(keepdims, bool) else _as_index(keepdims)
    if value in (0, 1):
        return bool(value)
    raise SplitError(
        f"SplitToSequence keepdims must be 0 or 1; {keepdims!r} was given.", rule="keepdims"
    )


def drops_axis(split_given: bool, keepdims: bool) -> bool:
    """Whether SplitToSequence drops the split axis: only with no ``split`` and ``keepdims=0``.

    The spec applies ``keepdims`` only when ``split`` is not given; each part is then of
    length 1, and ``keepdims=0`` removes that axis. With a ``split``, parts keep the axis.

    >>> drops_axis(split_given=False, keepdims=False)
    True
    >>> drops_axis(split_given=True, keepdims=False)
    False
    """
    return not split_given and not keepdims


def _as_index(value: object) -> int | None:
    """``value`` as an int when it is an integer (a bool is not), else ``None``."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        return None
    try:
        return operator.index(cast(SupportsIndex, value))
    except TypeError:  # e.g. a numpy array of more than one element
        return None


def _read_int(value: object, what: str, rule_id: str) -> int:
    index = _as_index(value)
    if index is None:
        raise SplitTypeError(
            f"{what} must be an int; {value!r} ({type(value).__name__}) was given.", rule=rule_id
        )
    return index


def _host_value(value: object) -> object:
    return value.tolist() if hasattr(value, "tolist") else value


def _is_scalar(value: object) -> bool:
    return not isinstance(value, Iterable) or isinstance(value, (str, bytes))


def _preview(items: Sequence[object], limit: int = 8) -> str:
    text = ", ".join(repr(v) for v in items[:limit])
    return f"[{text}{', ...' if len(items) > limit else ''}]"


def _read_size(value: object, rule: OpsetRule) -> int:
    if type(value) is int:  # the common case, first
        return value
    if isinstance(value, bool):
        raise SplitTypeError(
            f"{rule.name} split sizes must be integers; {value!r} (bool) was given.",
            rule="split-type",
        )
    index = _as_index(value)
    if index is not None:
        return index
    if isinstance(value, float):
        if not value.is_integer():
            raise SplitTypeError(
                f"{rule.name} split sizes must be whole numbers; {value!r} was given.",
                rule="split-type",
            )
        if rule.split_may_be_float:
            return int(value)
        raise SplitTypeError(
            f"{rule.name} split sizes must be integers; the float {value!r} was given. "
            "Only Split-1 types split like its input and takes whole-number floats.",
            rule="split-type",
        )
    raise SplitTypeError(
        f"{rule.name} split sizes must be integers; {value!r} ({type(value).__name__}) was given.",
        rule="split-type",
    )


def _read_dim(dim: object, rule: OpsetRule) -> int:
    length = _read_int(dim, f"{rule.name} dim (the length of the split axis)", "dim")
    if length < 0:
        raise SplitError(
            f"{rule.name} dim (the length of the split axis) must be >= 0; {length} was given.",
            rule="dim",
        )
    return length


def _read_count(num_outputs: object, rule: OpsetRule) -> int | None:
    if num_outputs is None:
        return None
    count = _read_int(num_outputs, f"{rule.name} num_outputs", "num_outputs")
    if not 1 <= count <= MAX_PARTS:
        raise SplitError(
            f"{rule.name} num_outputs must lie in [1, {MAX_PARTS}]; {count} was given.",
            rule="num_outputs",
        )
    return count


def _check_explicit(sizes: tuple[int, ...], dim: int | None, rule: OpsetRule) -> tuple[int, ...]:
    if not sizes:
        raise SplitError(
            f"{rule.name} split must hold at least one size; [] was given.", rule="split-empty"
        )
    if len(sizes) > MAX_PARTS:
        raise SplitError(
            f"{rule.name} allows at most {MAX_PARTS} parts; {len(sizes)} were given.",
            rule="outputs",
        )
    negative = [(i, s) for i, s in enumerate(sizes) if s < 0]
    if negative:
        i, s = negative[0]
        raise SplitError(
            f"{rule.name} split sizes must be >= 0; {_preview(sizes)} has {s} at position {i}.",
            rule="split-negative",
        )
    total = sum(sizes)
    if dim is not None and total != dim:
        raise SplitError(
            f"{rule.name} split sizes {_preview(sizes)} sum to {total}, but the axis "
            f"length is {dim}: the sizes must add up to the length of the split axis.",
            rule="split-sum",
        )
    return sizes


def _even_example(dim: int | None, count: int) -> str:
    if dim is None:
        return "[...]"
    quotient, remainder = divmod(dim, count)
    # The first sizes are example enough: count may be in the millions.
    head = [quotient + 1 if i < remainder else quotient for i in range(min(count, 8))]
    return f"[{', '.join(map(str, head))}{', ...' if count > 8 else ''}]"


#: Plans of more parts than this are computed on every call and never cached: the cache would
#: keep each such tuple of sizes (and its key's) alive, 80 MB for ten million parts. Below it,
#: a full cache holds at most 4096 plans of 32 KiB.
_MAX_CACHED_PARTS = 2**12


def _split_plan(
    dim: int, sizes: tuple[int, ...] | None, count: int | None, rule: OpsetRule
) -> tuple[int, ...]:
    """Split's plan for an int dim: from the cache, unless it has too many parts to keep."""
    if (count or 0) > _MAX_CACHED_PARTS or len(sizes or ()) > _MAX_CACHED_PARTS:
        return plan_split(dim, sizes, count, rule, INT_ARITHMETIC)
    return _plan_split(dim, sizes, count, rule)


def _sequence_plan(
    dim: int, split: int | tuple[int, ...] | None, rule: OpsetRule
) -> tuple[int, ...]:
    """SplitToSequence's plan for an int dim: from the cache, unless it has too many parts."""
    if isinstance(split, tuple):
        parts = len(split)
    else:
        chunk = _DEFAULT_CHUNK if split is None else split
        parts = INT_ARITHMETIC.ceil_div(dim, chunk) if chunk > 0 else 0
    if parts > _MAX_CACHED_PARTS:
        return _sequence_sizes(dim, split, rule)
    return _plan_sequence(dim, split, rule)


@lru_cache(maxsize=4096)
def _plan_split(
    dim: int, sizes: tuple[int, ...] | None, count: int | None, rule: OpsetRule
) -> tuple[int, ...]:
    return plan_split(dim, sizes, count, rule, INT_ARITHMETIC)


def _sequence_sizes(
    dim: int, split: int | tuple[int, ...] | None, rule: OpsetRule
) -> tuple[int, ...]:
    sizes = plan_sequence(dim, split, rule, INT_ARITHMETIC)
    assert sizes is not None, "an int dim always gives a known number of parts"
    return sizes


_plan_sequence = lru_cache(maxsize=4096)(_sequence_sizes)
