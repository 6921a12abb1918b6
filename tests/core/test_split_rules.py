"""Split's rules, one table per rule, for acceptance, rejection and the rejection's message.

Expected parts come from numpy's own ``np.split`` at the expected cut points; expected sizes
are written out by hand from the rule, never taken from splitops.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import splitops
from splitops import SplitError, SplitTypeError
from splitops.core import OPSET_RULES, SplitSource

if TYPE_CHECKING:
    from .conftest import AssertCut

SPLIT_OPSETS = [1, 2, 11, 13, 18]


def floats(*shape: int) -> Any:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


# Rule 1: input rank >= 1; axis in [-rank, rank-1] at every version, negative from the back.

AXES_IN_RANGE = [
    # (shape, axis, the axis it means)
    ((5,), 0, 0),
    ((5,), -1, 0),
    ((2, 3, 4), 0, 0),
    ((2, 3, 4), 1, 1),
    ((2, 3, 4), 2, 2),
    ((2, 3, 4), -1, 2),
    ((2, 3, 4), -2, 1),
    ((2, 3, 4), -3, 0),
]


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(("shape", "axis", "meant"), AXES_IN_RANGE)
def test_split_axis_in_range_negative_counts_from_the_back(
    opset: int, shape: tuple[int, ...], axis: int, meant: int, assert_cut: AssertCut
) -> None:
    x = floats(*shape)
    count = shape[meant]
    parts = splitops.split(x, axis=axis, num_outputs=count, opset=opset)
    assert_cut(parts, x, [1] * count, meant)


AXES_OUT_OF_RANGE = [((5,), 1), ((5,), -2), ((2, 3, 4), 3), ((2, 3, 4), -4), ((2, 3, 4), 100)]


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(("shape", "axis"), AXES_OUT_OF_RANGE)
def test_split_axis_out_of_range_is_rejected(opset: int, shape: tuple[int, ...], axis: int) -> None:
    rank = len(shape)
    message = rf"axis {axis} is out of range .*rank {rank}.*\[{-rank}, {rank - 1}\]"
    with pytest.raises(SplitError, match=message):
        splitops.split(floats(*shape), axis=axis, num_outputs=1, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
def test_split_rank_zero_input_is_rejected(opset: int) -> None:
    with pytest.raises(SplitError, match=r"rank >= 1; a rank-0 \(scalar\) input"):
        splitops.split(np.array(1.0, dtype=np.float32), num_outputs=1, opset=opset)


@pytest.mark.parametrize("axis", [1.0, True, "0", np.array([0, 1])])
def test_split_axis_must_be_an_int(axis: object) -> None:
    with pytest.raises(SplitTypeError, match=r"axis must be an int; .* was given"):
        splitops.split(floats(4), axis=axis, num_outputs=2)  # type: ignore[arg-type]


def test_split_axis_accepts_numpy_integers(assert_cut: AssertCut) -> None:
    x = floats(2, 4)
    assert_cut(splitops.split(x, axis=np.int64(-1), num_outputs=2), x, [2, 2], 1)


# Rule 2: explicit sizes are each >= 0 and sum to the axis length.

SIZES_THAT_FIT = [
    (6, [2, 4]),
    (6, [6]),
    (6, [0, 6]),
    (6, [1, 0, 5]),
    (6, [1, 1, 1, 1, 1, 1]),
    (0, [0]),
    (0, [0, 0, 0]),
]


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(("dim", "sizes"), SIZES_THAT_FIT)
def test_split_explicit_sizes_that_sum_to_the_axis_are_accepted(
    opset: int, dim: int, sizes: list[int], assert_cut: AssertCut
) -> None:
    x = floats(2, dim)
    assert splitops.split_sizes(dim, sizes, opset=opset) == tuple(sizes)
    assert_cut(splitops.split(x, sizes, axis=1, opset=opset), x, sizes, 1)


SIZES_THAT_DO_NOT_SUM = [
    (6, [2, 3], 5),
    (6, [4, 4], 8),
    (0, [1], 1),
    (6, [0, 0], 0),
]


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(("dim", "sizes", "total"), SIZES_THAT_DO_NOT_SUM)
def test_split_sizes_not_summing_to_the_axis_are_rejected(
    opset: int, dim: int, sizes: list[int], total: int
) -> None:
    shown = re.escape(str(sizes))
    message = rf"Split-\d+ split sizes {shown} sum to {total}, but the axis length is {dim}"
    with pytest.raises(SplitError, match=message):
        splitops.split(floats(dim), sizes, opset=opset)
    with pytest.raises(SplitError, match=message):
        splitops.split_sizes(dim, sizes, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(("sizes", "value", "position"), [([-1, 7], -1, 0), ([3, 4, -1], -1, 2)])
def test_split_negative_sizes_are_rejected(
    opset: int, sizes: list[int], value: int, position: int
) -> None:
    shown = re.escape(str(sizes))
    message = rf"split sizes must be >= 0; {shown} has {value} at position {position}"
    with pytest.raises(SplitError, match=message):
        splitops.split(floats(6), sizes, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize("dim", [0, 6])
def test_split_empty_sizes_are_rejected(opset: int, dim: int) -> None:
    with pytest.raises(SplitError, match=r"split must hold at least one size; \[\] was given"):
        splitops.split(floats(dim), [], opset=opset)


# The split argument: a sequence of ints or a 1-d integer array for Split.


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(
    "sizes",
    [
        [2, 4],
        (2, 4),
        range(2, 6, 2),
        [np.int64(2), np.int32(4)],
        np.array([2, 4], dtype=np.int64),
        np.array([2, 4], dtype=np.int32),
        np.array([2, 4], dtype=np.uint8),
        np.array([2, 4], dtype=np.uint64),
    ],
    ids=repr,
)
def test_split_sizes_are_any_sequence_of_ints_or_integer_array(
    opset: int, sizes: Any, assert_cut: AssertCut
) -> None:
    # The node-level rule (an int64 tensor at opsets 13 and 18) belongs to the ONNX layer.
    x = floats(6)
    assert_cut(splitops.split(x, sizes, opset=opset), x, [2, 4], 0)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize("sizes", [[True, 5], [np.True_, 5], np.array([True, False, True])])
def test_split_bools_are_not_sizes(opset: int, sizes: Any) -> None:
    with pytest.raises(SplitTypeError, match=rf"Split-{opset} split .*(bool|integer)"):
        splitops.split(floats(6), sizes, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize(("sizes", "shown"), [([2.5, 3.5], "2.5"), ([np.float32(1.5), 4.5], "1.5")])
def test_split_fractional_sizes_are_rejected(opset: int, sizes: Any, shown: str) -> None:
    message = rf"Split-{opset} split sizes must be whole numbers; {re.escape(shown)} was given"
    with pytest.raises(SplitTypeError, match=message):
        splitops.split(floats(6), sizes, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize("sizes", ["24", [2, "4"], [2, None], [2, 4 + 0j]])
def test_split_non_numbers_are_not_sizes(opset: int, sizes: Any) -> None:
    with pytest.raises(SplitTypeError, match=rf"Split-{opset} split sizes must be integers"):
        splitops.split(floats(6), sizes, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize("sizes", [6, np.array(6), np.int64(6)])
def test_split_scalar_sizes_are_rejected(opset: int, sizes: Any) -> None:
    with pytest.raises(SplitError, match=r"takes split as a 1-d list of sizes; the scalar 6 was"):
        splitops.split(floats(6), sizes, opset=opset)


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize("sizes", [[[2, 4]], np.array([[2, 4]]), [2, [4]]])
def test_split_sizes_of_rank_two_are_rejected(opset: int, sizes: Any) -> None:
    nested = r"split must be a scalar or 1-d; (a nested sequence|one of shape)"
    with pytest.raises(SplitError, match=nested):
        splitops.split(floats(6), sizes, opset=opset)


# Rule 3: where sizes come from. Opset 1: attribute or an input typed T (whole floats);
# opsets 2 and 11: an ints attribute; 13 and 18: an int64 input. Split-1's axis defaults to 0.


def test_split_sources_of_each_version() -> None:
    sources = {v: OPSET_RULES[("Split", v)].split_sources for v in SPLIT_OPSETS}
    assert sources == {
        1: {SplitSource.ATTRIBUTE, SplitSource.INPUT},
        2: {SplitSource.ATTRIBUTE},
        11: {SplitSource.ATTRIBUTE},
        13: {SplitSource.INPUT},
        18: {SplitSource.INPUT},
    }
    input_types = {v: OPSET_RULES[("Split", v)].split_input_types for v in SPLIT_OPSETS}
    assert input_types == {1: None, 2: set(), 11: set(), 13: {"int64"}, 18: {"int64"}}


@pytest.mark.parametrize(
    "sizes",
    [
        [2.0, 4.0],
        [np.float32(2.0), np.float16(4.0)],
        np.array([2.0, 4.0], dtype=np.float16),
        np.array([2.0, 4.0], dtype=np.float32),
        np.array([2.0, 4.0], dtype=np.float64),
    ],
    ids=repr,
)
def test_split1_takes_whole_float_sizes(sizes: Any, assert_cut: AssertCut) -> None:
    x = floats(6)
    assert splitops.split_sizes(6, sizes, opset=1) == (2, 4)
    assert_cut(splitops.split(x, sizes, opset=1), x, [2, 4], 0)


@pytest.mark.parametrize("opset", [2, 11, 13, 18])
@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ([2.0, 4.0], r"split sizes must be integers; the float 2\.0 was given"),
        (np.array([2.0, 4.0]), r"split must be an integer array; an array of dtype float64"),
        (np.array([], np.float32), r"split must be an integer array; an array of dtype float32"),
    ],
)
def test_split_whole_floats_after_opset1_are_rejected(opset: int, sizes: Any, message: str) -> None:
    with pytest.raises(SplitTypeError, match=rf"Split-{opset} {message}"):
        splitops.split(floats(6), sizes, opset=opset)


def test_split_whole_float_message_points_to_split1() -> None:
    with pytest.raises(SplitTypeError, match=r"the float 2.0 was given. Only Split-1 "):
        splitops.split_sizes(6, [2.0, 4.0], opset=13)


def test_split1_axis_defaults_to_zero(assert_cut: AssertCut) -> None:
    x = floats(2, 3)
    assert inspect.signature(splitops.split).parameters["axis"].default == 0
    assert_cut(splitops.split(x, num_outputs=2, opset=1), x, [1, 1], 0)
    assert_cut(splitops.split(x, [1.0, 1.0], opset=1), x, [1, 1], 0)


# Rule 4: before opset 18, no sizes means equal parts, one per output.

EQUAL_PARTS = [(6, 3, [2, 2, 2]), (6, 1, [6]), (8, 4, [2, 2, 2, 2]), (0, 3, [0, 0, 0]), (1, 1, [1])]


@pytest.mark.parametrize("opset", [1, 2, 11, 13])
@pytest.mark.parametrize(("dim", "count", "sizes"), EQUAL_PARTS)
def test_split_before_18_cuts_equal_parts(
    opset: int, dim: int, count: int, sizes: list[int], assert_cut: AssertCut
) -> None:
    x = floats(dim, 2)
    assert splitops.split_sizes(dim, num_outputs=count, opset=opset) == tuple(sizes)
    assert_cut(splitops.split(x, num_outputs=count, opset=opset), x, sizes, 0)


@pytest.mark.parametrize("opset", [1, 2, 11, 13, 17])
@pytest.mark.parametrize(
    ("dim", "count", "example"), [(7, 3, "[3, 2, 2]"), (7, 4, "[2, 2, 2, 1]"), (1, 2, "[1, 0]")]
)
def test_split_before_18_indivisible_axis_is_rejected(
    opset: int, dim: int, count: int, example: str
) -> None:
    message = (
        rf"cuts equal parts, and a dim of {dim} does not divide into {count}\. "
        rf"Pass explicit sizes, e\.g\. split={re.escape(example)}"
    )
    with pytest.raises(SplitError, match=message):
        splitops.split(floats(dim), num_outputs=count, opset=opset)


@pytest.mark.parametrize("opset", [1, 2, 11, 13])
def test_split_before_18_needs_sizes_or_the_number_of_outputs(opset: int) -> None:
    with pytest.raises(SplitError, match=rf"Split-{opset} without split sizes needs the number"):
        splitops.split(floats(6), opset=opset)


@pytest.mark.parametrize("opset", [1, 2, 11, 13])
def test_split_before_18_sizes_must_match_the_number_of_outputs(
    opset: int, assert_cut: AssertCut
) -> None:
    x = floats(6)
    assert_cut(splitops.split(x, [2, 4], num_outputs=2, opset=opset), x, [2, 4], 0)
    with pytest.raises(SplitError, match=r"has 3 outputs but split gives 2 sizes \[2, 4\]"):
        splitops.split(x, [2, 4], num_outputs=3, opset=opset)


# Rule 5: opset 18 takes exactly one of split and num_outputs; uneven counts give
# ceil(d/n) to every part but the last, which takes the rest; a negative rest is rejected.

SPLIT18_COUNTS = [
    (6, 3, [2, 2, 2]),
    (7, 4, [2, 2, 2, 1]),
    (8, 3, [3, 3, 2]),
    (9, 4, [3, 3, 3, 0]),
    (10, 4, [3, 3, 3, 1]),
    (0, 3, [0, 0, 0]),
    (0, 1, [0]),
    (1, 1, [1]),
    (5, 1, [5]),
]


@pytest.mark.parametrize(("dim", "count", "sizes"), SPLIT18_COUNTS)
def test_split18_num_outputs_gives_ceil_parts_and_the_rest_last(
    dim: int, count: int, sizes: list[int], assert_cut: AssertCut
) -> None:
    x = floats(2, dim)
    assert splitops.split_sizes(dim, num_outputs=count) == tuple(sizes)
    assert_cut(splitops.split(x, axis=1, num_outputs=count, opset=18), x, sizes, 1)


@pytest.mark.parametrize(
    ("dim", "count", "chunk", "rest", "example"),
    [
        (5, 4, 2, -1, "[2, 1, 1, 1]"),
        (1, 3, 1, -1, "[1, 0, 0]"),
        (2, 4, 1, -1, "[1, 1, 0, 0]"),
        (11, 5, 3, -1, "[3, 2, 2, 2, 2]"),
    ],
)
def test_split18_uneven_rest_below_zero_is_rejected(
    dim: int, count: int, chunk: int, rest: int, example: str
) -> None:
    message = (
        rf"Split-18 cannot split a dim of {dim} into {count} parts: parts of "
        rf"ceil\({dim}/{count}\)={chunk} leave {rest} for the last\. "
        rf"Pass explicit sizes, e\.g\. split={re.escape(example)}\."
    )
    with pytest.raises(SplitError, match=message):
        splitops.split(floats(dim), num_outputs=count)
    with pytest.raises(SplitError, match=message):
        splitops.split_sizes(dim, num_outputs=count)


def test_split18_suggested_sizes_are_valid() -> None:
    # The suggestion in the message must itself be accepted and sum to the axis.
    with pytest.raises(SplitError) as info:
        splitops.split_sizes(5, num_outputs=4)
    suggested = re.search(r"split=(\[[\d, ]+\])", str(info.value))
    assert suggested is not None
    sizes = [int(v) for v in suggested.group(1).strip("[]").split(",")]
    assert splitops.split_sizes(5, sizes) == tuple(sizes)


def test_split18_split_and_num_outputs_together_are_rejected() -> None:
    message = r"either the split input or the num_outputs attribute, not both; split=\[2, 4\] "
    with pytest.raises(SplitError, match=message + r"and num_outputs=2 were given"):
        splitops.split(floats(6), [2, 4], num_outputs=2)


def test_split18_neither_split_nor_num_outputs_is_rejected() -> None:
    with pytest.raises(SplitError, match=r"Split-18 needs either .* neither was given"):
        splitops.split(floats(6))


@pytest.mark.parametrize("opset", SPLIT_OPSETS)
@pytest.mark.parametrize("count", [0, -1, 2**31])
def test_split_num_outputs_below_one_or_above_max_is_rejected(opset: int, count: int) -> None:
    message = rf"num_outputs must lie in \[1, 2147483647\]; {count} was given"
    with pytest.raises(SplitError, match=message):
        splitops.split(floats(6), num_outputs=count, opset=opset)


@pytest.mark.parametrize("count", [2.0, True, "2", np.array([1, 2])])
def test_split_num_outputs_must_be_an_int(count: object) -> None:
    with pytest.raises(SplitTypeError, match=r"num_outputs must be an int; .* was given"):
        splitops.split(floats(6), num_outputs=count)  # type: ignore[arg-type]


def test_split_returns_a_tuple_and_split_to_sequence_a_list() -> None:
    assert type(splitops.split(floats(4), num_outputs=2)) is tuple
    assert type(splitops.split_to_sequence(floats(4))) is list
