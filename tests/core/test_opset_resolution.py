"""Opset numbers resolve to the newest version at or below them; none below the first."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import splitops
from splitops import SplitError, SplitTypeError, opset_rule


@pytest.mark.parametrize(
    ("op", "opset", "version"),
    [
        ("Split", 1, 1),
        ("Split", 2, 2),
        ("Split", 10, 2),
        ("Split", 11, 11),
        ("Split", 12, 11),
        ("Split", 13, 13),
        ("Split", 17, 13),
        ("Split", 18, 18),
        ("Split", 25, 18),
        ("Split", 99, 18),
        ("SplitToSequence", 11, 11),
        ("SplitToSequence", 23, 11),
        ("SplitToSequence", 24, 24),
        ("SplitToSequence", 25, 24),
    ],
)
def test_opset_resolves_to_newest_version_at_or_below(op: str, opset: int, version: int) -> None:
    rule = opset_rule(op, opset)
    assert (rule.op, rule.since_version, rule.name) == (op, version, f"{op}-{version}")


@pytest.mark.parametrize(
    ("op", "opset", "first"),
    [("Split", 0, 1), ("Split", -5, 1), ("SplitToSequence", 10, 11), ("SplitToSequence", 1, 11)],
)
def test_opset_below_the_first_version_is_rejected(op: str, opset: int, first: int) -> None:
    message = rf"{op} does not exist before opset {first}; opset {opset} was given"
    with pytest.raises(SplitError, match=message):
        opset_rule(op, opset)
    run = splitops.split if op == "Split" else splitops.split_to_sequence
    with pytest.raises(SplitError, match=message):
        run(np.zeros(4, np.float32), [4], opset=opset)


@pytest.mark.parametrize("opset", [13.0, "13", True, None, np.array([13])], ids=repr)
def test_opset_must_be_an_int(opset: object) -> None:
    with pytest.raises(SplitTypeError, match=r"opset must be an int; .* was given"):
        splitops.split_sizes(6, [6], opset=opset)  # type: ignore[arg-type]


def test_opset_accepts_numpy_integers() -> None:
    assert opset_rule("Split", np.int64(12)).name == "Split-11"


def test_unknown_operator_is_rejected() -> None:
    with pytest.raises(SplitError, match=r"Unknown operator 'Concat'; splitops implements"):
        opset_rule("Concat", 13)


def test_opset12_runs_split11_without_bfloat16() -> None:
    x = np.zeros(4, ml_dtypes.bfloat16)
    with pytest.raises(SplitTypeError, match=r"Split-11 \(opset 12\) does not accept bfloat16"):
        splitops.split(x, num_outputs=2, opset=12)
    assert len(splitops.split(x, num_outputs=2, opset=13)) == 2


def test_opset17_runs_split13_equal_parts_only() -> None:
    with pytest.raises(SplitError, match=r"Split-13 without split sizes cuts equal parts"):
        splitops.split(np.zeros(7), num_outputs=4, opset=17)
    assert splitops.split_sizes(7, num_outputs=4, opset=25) == (2, 2, 2, 1)


def test_opset23_runs_split_to_sequence11_without_bfloat16() -> None:
    x = np.zeros(4, ml_dtypes.bfloat16)
    message = r"SplitToSequence-11 \(opset 23\) does not accept bfloat16 .* opset 24 or later"
    with pytest.raises(SplitTypeError, match=message):
        splitops.split_to_sequence(x, opset=23)
    assert len(splitops.split_to_sequence(x, opset=25)) == 4
