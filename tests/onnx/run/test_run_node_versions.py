"""``run_node`` reads each node by the schema of its version; expected parts are numpy slices."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx import helper

import splitops
from splitops import SplitTypeError, backend

X = np.arange(12, dtype=np.float32).reshape(2, 6)
#: X cut along axis 1 into parts of 2 and 4, and into three equal parts.
TWO_FOUR = [X[:, :2], X[:, 2:]]
THIRDS = [X[:, 0:2], X[:, 2:4], X[:, 4:6]]


def assert_parts(actual: Any, expected: list[np.ndarray[Any, Any]]) -> None:
    assert isinstance(actual, list)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(a, e, strict=True)


def split_node(outputs: int, *inputs: str, **attributes: Any) -> Any:
    names = [f"y{i}" for i in range(outputs)]
    return helper.make_node("Split", ["x", *inputs], names, axis=1, name="s", **attributes)


@pytest.mark.parametrize("opset", [1, 2, 11, 12])
def test_split_attribute_gives_sizes_up_to_opset_12(opset: int) -> None:
    node = split_node(2, split=[2, 4])
    assert_parts(splitops.run_node(node, [X], opset=opset), TWO_FOUR)


def test_split1_takes_sizes_from_a_second_input_of_the_input_type() -> None:
    node = split_node(2, "sizes")
    sizes = np.array([2.0, 4.0], dtype=np.float32)
    assert_parts(splitops.run_node(node, [X, sizes], opset=1), TWO_FOUR)


@pytest.mark.parametrize("opset", [13, 17, 18, 28])
def test_split_input_gives_sizes_from_opset_13(opset: int) -> None:
    node = split_node(2, "sizes")
    assert_parts(splitops.run_node(node, [X, np.array([2, 4])], opset=opset), TWO_FOUR)


@pytest.mark.parametrize("opset", [1, 2, 11, 13, 17])
def test_without_sizes_the_outputs_count_equal_parts_before_18(opset: int) -> None:
    assert_parts(splitops.run_node(split_node(3), [X], opset=opset), THIRDS)


@pytest.mark.parametrize("opset", [13, 18])
def test_an_input_named_empty_is_absent(opset: int) -> None:
    attributes = {"num_outputs": 3} if opset == 18 else {}
    node = split_node(3, "", **attributes)
    assert_parts(splitops.run_node(node, [X], opset=opset), THIRDS)
    assert_parts(splitops.run_node(node, [X, None], opset=opset), THIRDS)


def test_split18_num_outputs_cuts_ceil_sized_parts_and_a_smaller_last() -> None:
    node = split_node(4, num_outputs=4)
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    expected = [x[:, 0:2], x[:, 2:4], x[:, 4:6], x[:, 6:7]]
    assert_parts(splitops.run_node(node, [x], opset=18), expected)


def test_split18_may_omit_trailing_outputs_of_num_outputs() -> None:
    """The listed outputs keep the sizes of the full num_outputs split."""
    node = split_node(2, num_outputs=4)
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    assert_parts(splitops.run_node(node, [x], opset=18), [x[:, 0:2], x[:, 2:4]])


def test_sequence_split_accepts_int32_and_int64_and_returns_a_list() -> None:
    node = helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], axis=1, name="q")
    for dtype in (np.int32, np.int64):
        (parts,) = splitops.run_node(node, [X, np.array([2, 4], dtype=dtype)], opset=11)
        assert_parts(parts, TWO_FOUR)


def test_sequence_scalar_split_cuts_chunks_with_a_smaller_last() -> None:
    node = helper.make_node("SplitToSequence", ["x", "chunk"], ["seq"], axis=1)
    (parts,) = splitops.run_node(node, [X, np.array(4, dtype=np.int32)], opset=24)
    assert_parts(parts, [X[:, :4], X[:, 4:]])


def test_sequence_keepdims_0_without_split_drops_the_axis() -> None:
    node = helper.make_node("SplitToSequence", ["x", ""], ["seq"], axis=0, keepdims=0)
    (parts,) = splitops.run_node(node, [X], opset=11)
    assert_parts(parts, [X[0], X[1]])


def test_sequence_keepdims_is_ignored_when_split_is_given() -> None:
    node = helper.make_node("SplitToSequence", ["x", "chunk"], ["seq"], axis=1, keepdims=0)
    (parts,) = splitops.run_node(node, [X, np.array(4)], opset=11)
    assert_parts(parts, [X[:, :4], X[:, 4:]])


def test_sequence_scalar_split_of_1_is_the_default_split_so_keepdims_0_drops_the_axis() -> None:
    node = helper.make_node("SplitToSequence", ["x", "chunk"], ["seq"], axis=0, keepdims=0)
    (parts,) = splitops.run_node(node, [X, np.array(1)], opset=11)
    assert_parts(parts, [X[0], X[1]])


XB = X.astype(ml_dtypes.bfloat16)
SIZES = np.array([2, 4])
SEQUENCE = helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], axis=1)


@pytest.mark.parametrize(
    ("node", "inputs", "opset"),
    [(split_node(2, split=[2, 4]), [XB], 12), (SEQUENCE, [XB, SIZES], 23)],
    ids=["Split-11", "SplitToSequence-11"],
)
def test_bfloat16_is_rejected_before_its_version(node: Any, inputs: list[Any], opset: int) -> None:
    with pytest.raises(SplitTypeError, match="does not accept bfloat16"):
        splitops.run_node(node, inputs, opset=opset)


def test_bfloat16_is_accepted_from_split13_and_sequence24() -> None:
    parts = splitops.run_node(split_node(2, "sizes"), [XB, SIZES], opset=13)
    (sequence,) = splitops.run_node(SEQUENCE, [XB, SIZES], opset=24)
    expected = [XB[:, :2], XB[:, 2:]]
    assert_parts(parts, expected)
    assert_parts(sequence, expected)


def test_backend_run_node_takes_the_opset_as_opset_version() -> None:
    node = split_node(3)
    assert_parts(list(backend.run_node(node, [X], opset_version=13)), THIRDS)
    with pytest.raises(splitops.SplitError, match="Split-18 needs either"):
        backend.run_node(node, [X])


def test_backend_supports_the_cpu_only() -> None:
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")


def test_parts_are_views_of_the_input() -> None:
    parts = splitops.run_node(split_node(2, "sizes"), [X, np.array([2, 4])], opset=13)
    assert all(np.shares_memory(part, X) for part in parts)
