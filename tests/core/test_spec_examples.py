"""Every worked example of the spec, transcribed from its text and run through splitops.

The inputs and expected outputs are copied from Split-all-versions.txt (16 Split examples, the
``*_opset13`` and ``*_opset18`` ones) and SplitToSequence-11-with-examples.rst (3 examples).
Split runs at the example's ``opset_imports`` (18 when it names none); the SplitToSequence
examples run at both of its versions, 11 and 24. For the opset-13 equal-parts examples the
node's number of outputs is passed as ``num_outputs``, as splitops takes it before opset 18.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import splitops


@dataclass(frozen=True)
class Example:
    name: str
    op: str
    opset: int
    x: Any
    expected: list[Any]
    split: Any = None
    kwargs: dict[str, Any] = field(default_factory=dict)


def f32(values: Any) -> Any:
    return np.array(values).astype(np.float32)


ONE_TO_SIX = f32([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
TWO_BY_SIX = f32([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]])
EQUAL_1D = [f32([1.0, 2.0]), f32([3.0, 4.0]), f32([5.0, 6.0])]
VARIABLE_1D = [f32([1.0, 2.0]), f32([3.0, 4.0, 5.0, 6.0])]
EQUAL_2D = [f32([[1.0, 2.0, 3.0], [7.0, 8.0, 9.0]]), f32([[4.0, 5.0, 6.0], [10.0, 11.0, 12.0]])]
VARIABLE_2D = [
    f32([[1.0, 2.0], [7.0, 8.0]]),
    f32([[3.0, 4.0, 5.0, 6.0], [9.0, 10.0, 11.0, 12.0]]),
]
SPLIT_2_4 = np.array([2, 4]).astype(np.int64)
EMPTY = f32([])
THREE_EMPTY = [f32([]), f32([]), f32([])]
ZEROS_3 = np.array([0, 0, 0]).astype(np.int64)

SPLIT_EXAMPLES = [
    # _1d_opset13
    Example(
        "test_split_equal_parts_1d_opset13",
        "Split",
        13,
        ONE_TO_SIX,
        EQUAL_1D,
        kwargs={"axis": 0, "num_outputs": 3},
    ),
    Example(
        "test_split_variable_parts_1d_opset13",
        "Split",
        13,
        ONE_TO_SIX,
        VARIABLE_1D,
        SPLIT_2_4,
        {"axis": 0},
    ),
    # _2d_opset13
    Example(
        "test_split_equal_parts_2d_opset13",
        "Split",
        13,
        TWO_BY_SIX,
        EQUAL_2D,
        kwargs={"axis": 1, "num_outputs": 2},
    ),
    Example(
        "test_split_variable_parts_2d_opset13",
        "Split",
        13,
        TWO_BY_SIX,
        VARIABLE_2D,
        SPLIT_2_4,
        {"axis": 1},
    ),
    # _default_values_opset13
    Example(
        "test_split_equal_parts_default_axis_opset13",
        "Split",
        13,
        ONE_TO_SIX,
        EQUAL_1D,
        kwargs={"num_outputs": 3},
    ),
    Example(
        "test_split_variable_parts_default_axis_opset13",
        "Split",
        13,
        ONE_TO_SIX,
        VARIABLE_1D,
        SPLIT_2_4,
    ),
    # _zero_size_splits_opset13
    Example("test_split_zero_size_splits_opset13", "Split", 13, EMPTY, THREE_EMPTY, ZEROS_3),
    # _1d_opset18
    Example(
        "test_split_equal_parts_1d_opset18",
        "Split",
        18,
        ONE_TO_SIX,
        EQUAL_1D,
        kwargs={"axis": 0, "num_outputs": 3},
    ),
    Example(
        "test_split_variable_parts_1d_opset18",
        "Split",
        18,
        ONE_TO_SIX,
        VARIABLE_1D,
        SPLIT_2_4,
        {"axis": 0},
    ),
    # _2d_opset18
    Example(
        "test_split_equal_parts_2d",
        "Split",
        18,
        TWO_BY_SIX,
        EQUAL_2D,
        kwargs={"axis": 1, "num_outputs": 2},
    ),
    Example(
        "test_split_variable_parts_2d_opset18",
        "Split",
        18,
        TWO_BY_SIX,
        VARIABLE_2D,
        SPLIT_2_4,
        {"axis": 1},
    ),
    # _default_values_opset18
    Example(
        "test_split_equal_parts_default_axis_opset18",
        "Split",
        18,
        ONE_TO_SIX,
        EQUAL_1D,
        kwargs={"num_outputs": 3},
    ),
    Example(
        "test_split_variable_parts_default_axis_opset18",
        "Split",
        18,
        ONE_TO_SIX,
        VARIABLE_1D,
        SPLIT_2_4,
    ),
    # _zero_size_splits_opset18
    Example("test_split_zero_size_splits_opset18", "Split", 18, EMPTY, THREE_EMPTY, ZEROS_3),
    # _1d_uneven_split_opset18
    Example(
        "test_split_1d_uneven_split_opset18",
        "Split",
        18,
        f32([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]),
        [f32([1.0, 2.0]), f32([3.0, 4.0]), f32([5.0, 6.0]), f32([7.0])],
        kwargs={"num_outputs": 4},
    ),
    # _2d_uneven_split_opset18
    Example(
        "test_split_2d_uneven_split_opset18",
        "Split",
        18,
        f32(
            [
                [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                [9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
            ]
        ),
        [
            f32([[1.0, 2.0, 3.0], [9.0, 10.0, 11.0]]),
            f32([[4.0, 5.0, 6.0], [12.0, 13.0, 14.0]]),
            f32([[7.0, 8.0], [15.0, 16.0]]),
        ],
        kwargs={"axis": 1, "num_outputs": 3},
    ),
]

DATA = np.arange(18).reshape((3, 6)).astype(np.float32)

SEQUENCE_EXAMPLES = [
    # _with_split_1
    Example(
        "test_split_to_sequence_1",
        "SplitToSequence",
        11,
        DATA,
        [
            np.array([[0.0, 1.0], [6.0, 7.0], [12.0, 13.0]], dtype=np.float32),
            np.array([[2.0, 3.0], [8.0, 9.0], [14.0, 15.0]], dtype=np.float32),
            np.array([[4.0, 5.0], [10.0, 11.0], [16.0, 17.0]], dtype=np.float32),
        ],
        np.array(2, dtype=np.int64),
        {"axis": 1},
    ),
    # _with_split_2: the spec's expected outputs are data[:1] and data[1:], written out here.
    Example(
        "test_split_to_sequence_2",
        "SplitToSequence",
        11,
        DATA,
        [
            f32([[0, 1, 2, 3, 4, 5]]),
            f32([[6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17]]),
        ],
        np.array([1, 2], dtype=np.int64),
        {"axis": 0},
    ),
    # _nokeepdims: the spec's expected outputs are data[:, i] for each column, written out here.
    Example(
        "test_split_to_sequence_nokeepdims",
        "SplitToSequence",
        11,
        DATA,
        [
            f32([0, 6, 12]),
            f32([1, 7, 13]),
            f32([2, 8, 14]),
            f32([3, 9, 15]),
            f32([4, 10, 16]),
            f32([5, 11, 17]),
        ],
        kwargs={"axis": 1, "keepdims": 0},
    ),
]


def assert_parts_equal(parts: Any, expected: list[Any]) -> None:
    assert len(parts) == len(expected)
    for part, want in zip(parts, expected, strict=True):
        assert isinstance(part, np.ndarray)
        assert part.dtype == want.dtype
        assert part.shape == want.shape
        np.testing.assert_array_equal(part, want, strict=True)


def test_spec_has_nineteen_worked_examples() -> None:
    names = [example.name for example in SPLIT_EXAMPLES + SEQUENCE_EXAMPLES]
    assert len(SPLIT_EXAMPLES) == 16
    assert len(SEQUENCE_EXAMPLES) == 3
    assert len(set(names)) == 19


@pytest.mark.parametrize("example", SPLIT_EXAMPLES, ids=lambda e: e.name)
def test_split_spec_example(example: Example) -> None:
    parts = splitops.split(example.x, example.split, opset=example.opset, **example.kwargs)
    assert isinstance(parts, tuple)
    assert_parts_equal(parts, example.expected)


@pytest.mark.parametrize("opset", [11, 24])
@pytest.mark.parametrize("example", SEQUENCE_EXAMPLES, ids=lambda e: e.name)
def test_split_to_sequence_spec_example(example: Example, opset: int) -> None:
    parts = splitops.split_to_sequence(example.x, example.split, opset=opset, **example.kwargs)
    assert isinstance(parts, list)
    assert_parts_equal(parts, example.expected)
