"""Arguments of the wrong kind are SplitTypeError, and messages stay short whatever the counts."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import splitops
from splitops import SplitError, SplitTypeError


@pytest.mark.parametrize("copy", ["no", None, 1, np.True_])
def test_copy_must_be_a_bool(copy: object) -> None:
    with pytest.raises(SplitTypeError, match=rf"Split-18 copy must be True or False; {copy!r}"):
        splitops.split(np.zeros(4), num_outputs=2, copy=copy)  # type: ignore[arg-type]


def test_copy_must_be_a_bool_for_split_to_sequence() -> None:
    with pytest.raises(SplitTypeError, match=r"SplitToSequence-24 copy must be True or False"):
        splitops.split_to_sequence(np.zeros(4), copy="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("split", "kind"),
    [
        ({1, 3}, "set"),
        (frozenset({4}), "frozenset"),
        ({1: 3}, "dict"),
        (iter([1, 3]), "list_iterator"),
    ],
)
def test_unordered_or_one_shot_sizes_are_rejected(split: object, kind: str) -> None:
    with pytest.raises(SplitTypeError, match=rf"ordered sequence of sizes .* a {kind}"):
        splitops.split_sizes(4, split)  # type: ignore[arg-type]


def test_uneven_equal_parts_message_stays_short_for_a_huge_count() -> None:
    with splitops.limits(max_parts=2**31 - 1), pytest.raises(SplitError) as caught:
        splitops.split_sizes(5, num_outputs=10**8, opset=11)
    message = str(caught.value)
    assert "100000000" in message
    assert message.endswith("split=[1, 1, 1, 1, 1, 0, 0, 0, ...].")
    assert len(message) < 300


def test_a_count_over_the_parts_limit_is_refused_before_anything_is_made() -> None:
    with pytest.raises(SplitError, match=r"would make 100000000 parts; .*max_parts") as caught:
        splitops.split_sizes(5, num_outputs=10**8, opset=11)
    assert caught.value.rule == "limit"
    assert "splitops.limits(max_parts=N)" in str(caught.value)


def test_run_node_needs_a_node_proto() -> None:
    with pytest.raises(SplitTypeError, match=r"run_node needs an onnx\.NodeProto; str was given"):
        splitops.run_node("Split", [np.zeros(4)], opset=18)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("inputs", "role", "kind"),
    [([[1.0, 2.0]], "input tensor", "list"), ([np.zeros(4), [2, 2]], "split input", "list")],
)
def test_run_node_inputs_must_be_arrays(inputs: list[object], role: str, kind: str) -> None:
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], name="halves")
    with pytest.raises(
        SplitTypeError, match=rf"node 'halves' \(Split\): .*{role} as an array.*{kind}"
    ):
        splitops.run_node(node, inputs, opset=13)
