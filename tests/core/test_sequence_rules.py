"""SplitToSequence's rules (6-8), one table per rule, with the rejections' messages."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import splitops
from splitops import SplitError, SplitTypeError

if TYPE_CHECKING:
    from .conftest import AssertCut

SEQUENCE_OPSETS = [11, 24]


def floats(*shape: int) -> Any:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


# Rule 6: rank >= 1 and axis in [-rank, rank-1]; keepdims is 0 or 1; without split, parts of
# length 1, and keepdims=0 removes the split axis; an axis of length 0 gives an empty list.


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(
    ("shape", "axis", "meant"),
    [((4,), 0, 0), ((4,), -1, 0), ((2, 3, 4), -1, 2), ((2, 3, 4), -3, 0), ((2, 3, 4), 1, 1)],
)
def test_sequence_without_split_gives_parts_of_length_one_along_the_axis(
    opset: int, shape: tuple[int, ...], axis: int, meant: int, assert_cut: AssertCut
) -> None:
    x = floats(*shape)
    parts = splitops.split_to_sequence(x, axis=axis, opset=opset)
    assert isinstance(parts, list)
    assert_cut(parts, x, [1] * shape[meant], meant)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(
    ("shape", "axis", "meant"),
    [((4,), 0, 0), ((4,), -1, 0), ((2, 3, 4), -1, 2), ((2, 3, 4), -3, 0), ((2, 3, 4), 1, 1)],
)
@pytest.mark.parametrize("keepdims", [0, False, np.int64(0)])
def test_sequence_keepdims0_removes_the_split_axis(
    opset: int, shape: tuple[int, ...], axis: int, meant: int, keepdims: Any
) -> None:
    x = floats(*shape)
    parts = splitops.split_to_sequence(x, axis=axis, keepdims=keepdims, opset=opset)
    expected = [np.take(x, i, axis=meant) for i in range(shape[meant])]
    assert len(parts) == len(expected)
    for part, want in zip(parts, expected, strict=True):
        assert isinstance(part, np.ndarray)  # 0-d arrays for a 1-d input, never numpy scalars
        np.testing.assert_array_equal(part, want, strict=True)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("split", [None, 3, [0]], ids=["no split", "scalar", "1-d [0]"])
def test_sequence_axis_of_length_zero(opset: int, keepdims: int, split: Any) -> None:
    x = floats(2, 0)
    parts = splitops.split_to_sequence(x, split, axis=1, keepdims=keepdims, opset=opset)
    if split == [0]:
        # Explicit sizes give exactly the parts they name, here one empty part.
        assert [p.shape for p in parts] == [(2, 0)]
    else:
        assert parts == []


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(("shape", "axis"), [((4,), 1), ((4,), -2), ((2, 3), 2), ((2, 3), -3)])
def test_sequence_axis_out_of_range_is_rejected(
    opset: int, shape: tuple[int, ...], axis: int
) -> None:
    rank = len(shape)
    message = rf"SplitToSequence-{opset} axis {axis} is out of range .*\[{-rank}, {rank - 1}\]"
    with pytest.raises(SplitError, match=message):
        splitops.split_to_sequence(floats(*shape), axis=axis, opset=opset)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
def test_sequence_rank_zero_input_is_rejected(opset: int) -> None:
    with pytest.raises(SplitError, match=r"SplitToSequence-\d+ needs an input of rank >= 1"):
        splitops.split_to_sequence(np.array(1.0, dtype=np.float32), opset=opset)


@pytest.mark.parametrize("keepdims", [1, True, np.int64(1), np.array(1)])
def test_sequence_keepdims1_keeps_the_axis(keepdims: Any, assert_cut: AssertCut) -> None:
    x = floats(2, 3)
    assert_cut(splitops.split_to_sequence(x, axis=1, keepdims=keepdims), x, [1, 1, 1], 1)


@pytest.mark.parametrize("keepdims", [2, -1, 0.5, 1.0, "1", None, np.array([0, 1])], ids=repr)
def test_sequence_keepdims_other_than_0_or_1_is_rejected(keepdims: Any) -> None:
    message = rf"SplitToSequence keepdims must be 0 or 1; {re.escape(repr(keepdims))} was given"
    with pytest.raises(SplitError, match=message):
        splitops.split_to_sequence(floats(3), keepdims=keepdims)
    with pytest.raises(SplitError, match=message):
        splitops.split_to_sequence(floats(3), [1, 2], keepdims=keepdims)


# Rule 7: a scalar split s >= 1 cuts parts of s, the last one smaller with the rest;
# keepdims is ignored, but for the scalar 1, which is the default split ("a default scalar
# value of 1 is used"): keepdims=0 removes the axis there, as without split (torch's unbind).

SCALAR_SPLITS = [
    (5, 2, [2, 2, 1]),
    (6, 3, [3, 3]),
    (3, 5, [3]),
    (7, 7, [7]),
    (4, 1, [1, 1, 1, 1]),
    (0, 4, []),
]


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(("dim", "chunk", "sizes"), SCALAR_SPLITS)
@pytest.mark.parametrize(
    "wrap", [int, np.int64, np.int32, np.array], ids=["int", "np.int64", "np.int32", "0-d"]
)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_sequence_scalar_split_cuts_chunks_with_the_rest_last(
    opset: int,
    dim: int,
    chunk: int,
    sizes: list[int],
    wrap: Any,
    keepdims: int,
    assert_cut: AssertCut,
) -> None:
    x = floats(2, dim)
    split = wrap(chunk)
    assert splitops.sequence_sizes(dim, split, opset=opset) == tuple(sizes)
    parts = splitops.split_to_sequence(x, split, axis=1, keepdims=keepdims, opset=opset)
    if chunk == 1 and not keepdims:
        assert [p.shape for p in parts] == [(2,)] * dim
        np.testing.assert_array_equal(np.stack(parts, axis=1), x)
    else:
        assert_cut(parts, x, sizes, 1)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(
    "split",
    [1, np.int64(1), np.array(1), np.array(1, np.int32)],
    ids=["int", "np.int64", "0-d", "0-d int32"],
)
def test_sequence_scalar_split_of_1_is_the_default_split(opset: int, split: Any) -> None:
    x = floats(4, 3, 5)
    squeezed = splitops.split_to_sequence(x, split, axis=1, keepdims=0, opset=opset)
    assert [p.shape for p in squeezed] == [(4, 5)] * 3
    for k, part in enumerate(squeezed):
        np.testing.assert_array_equal(part, x[:, k, :])
    kept = splitops.split_to_sequence(x, split, axis=1, keepdims=1, opset=opset)
    assert [p.shape for p in kept] == [(4, 1, 5)] * 3


@pytest.mark.parametrize("split", [[1, 1, 1], np.array([1, 1, 1]), np.array([3]), 3])
def test_sequence_keepdims_is_ignored_with_any_other_split(split: Any) -> None:
    x = floats(4, 3, 5)
    parts = splitops.split_to_sequence(x, split, axis=1, keepdims=0)
    assert all(p.ndim == 3 for p in parts)
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), x)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize("chunk", [0, -1, np.array(0), np.int64(-3)], ids=repr)
def test_sequence_scalar_split_below_one_is_rejected(opset: int, chunk: Any) -> None:
    shown = int(chunk)
    message = rf"SplitToSequence-{opset} scalar split \(the chunk length\) must be >= 1; "
    with pytest.raises(SplitError, match=message + rf"{shown} was given\. Pass a positive"):
        splitops.split_to_sequence(floats(4), chunk, opset=opset)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        (True, r"split sizes must be integers; True \(bool\)"),
        (2.0, r"split sizes must be integers; the float 2\.0"),
        (2.5, r"split sizes must be whole numbers; 2\.5"),
        (np.array(2.0), r"split must be an integer array; an array of dtype float64"),
        (np.array(True), r"split must be an integer array; an array of dtype bool"),
        ("2", r"split sizes must be integers; '2' \(str\)"),
    ],
    ids=repr,
)
def test_sequence_scalar_split_must_be_an_integer(opset: int, chunk: Any, message: str) -> None:
    with pytest.raises(SplitTypeError, match=rf"SplitToSequence-{opset} {message}"):
        splitops.split_to_sequence(floats(4), chunk, opset=opset)


# Rule 8: a 1-d split holds >= 1 values, each >= 0, summing to the axis length; keepdims is
# ignored; a split of rank >= 2 is rejected; its dtype must be an integer type.

ONE_D_SPLITS = [(6, [1, 0, 5]), (6, [6]), (6, [0, 6, 0]), (3, [1, 1, 1]), (0, [0]), (0, [0, 0])]


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(("dim", "sizes"), ONE_D_SPLITS)
@pytest.mark.parametrize(
    "wrap",
    [list, tuple, lambda s: np.array(s, np.int64), lambda s: np.array(s, np.int32)],
    ids=["list", "tuple", "int64 array", "int32 array"],
)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_sequence_1d_split_gives_the_named_sizes(
    opset: int,
    dim: int,
    sizes: list[int],
    wrap: Any,
    keepdims: int,
    assert_cut: AssertCut,
) -> None:
    x = floats(dim, 2)
    split = wrap(sizes)
    assert splitops.sequence_sizes(dim, split, opset=opset) == tuple(sizes)
    parts = splitops.split_to_sequence(x, split, keepdims=keepdims, opset=opset)
    assert_cut(parts, x, sizes, 0)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ([], r"split must hold at least one size; \[\] was given"),
        (np.array([], np.int64), r"split must hold at least one size; \[\] was given"),
        ([-1, 7], r"split sizes must be >= 0; \[-1, 7\] has -1 at position 0"),
        ([2, 3], r"split sizes \[2, 3\] sum to 5, but the axis length is 6"),
        ([4, 4], r"split sizes \[4, 4\] sum to 8, but the axis length is 6"),
        (np.array([[2, 4]]), r"split must be a scalar or 1-d; one of shape \(1, 2\)"),
        ([[2], [4]], r"split must be a scalar or 1-d; a nested sequence"),
    ],
    ids=repr,
)
def test_sequence_1d_split_that_breaks_the_rule_is_rejected(
    opset: int, sizes: Any, message: str
) -> None:
    with pytest.raises(SplitError, match=rf"SplitToSequence-{opset} {message}"):
        splitops.split_to_sequence(floats(6), sizes, opset=opset)


@pytest.mark.parametrize("opset", SEQUENCE_OPSETS)
@pytest.mark.parametrize(
    "dtype", [np.bool_, np.float16, np.float32, np.float64, np.complex64, np.str_, object]
)
@pytest.mark.parametrize("values", [[2, 4], []], ids=["[2, 4]", "empty"])
def test_sequence_split_array_of_non_integer_dtype_is_rejected(
    opset: int, dtype: Any, values: list[int]
) -> None:
    split = np.array(values, dtype=dtype)
    message = rf"SplitToSequence-{opset} split must be an integer array; an array of dtype "
    with pytest.raises(SplitTypeError, match=message + re.escape(str(split.dtype))):
        splitops.split_to_sequence(floats(6), split, opset=opset)


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
)
def test_sequence_split_array_of_any_integer_dtype_is_accepted(
    dtype: Any, assert_cut: AssertCut
) -> None:
    # int32 and int64 are the node's types; the ONNX layer checks that, not the array API.
    x = floats(6)
    assert_cut(splitops.split_to_sequence(x, np.array([2, 4], dtype=dtype)), x, [2, 4], 0)
    assert_cut(splitops.split_to_sequence(x, np.array(4, dtype=dtype)), x, [4, 2], 0)
