"""The frozen value types: read from and written to ``TypeProto``, and the rules of refining,
contradiction, union and saying more, each checked against what the rule says."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, TypeProto, helper

from splitops.onnx.model import SequenceType, TensorType, value_type
from splitops.onnx.model.protobuf import conflicts, refined_type, says_more, union_type

F, I64 = TensorProto.FLOAT, TensorProto.INT64

dims = st.one_of(
    st.integers(0, 9), st.sampled_from(["N", "M", "unk__1", "unk__7", "batch"]), st.none()
)
tensor_types = st.builds(
    TensorType, st.sampled_from([F, I64, TensorProto.BOOL]), st.none() | st.tuples(dims, dims)
)


def _tensor(elem: int, shape: list[int | str | None] | None) -> TypeProto:
    return helper.make_tensor_type_proto(elem, shape)


@given(tensor_types)
def test_a_type_reads_back_what_it_wrote(found: TensorType) -> None:
    assert value_type(found.proto()) == found
    assert value_type(SequenceType(found).proto()) == SequenceType(found)


def test_a_type_is_frozen_and_hashable() -> None:
    found = TensorType(F, (2, "N"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.element = I64  # type: ignore[misc]
    assert {found, TensorType(F, (2, "N"))} == {found}


def test_no_kind_reads_as_none() -> None:
    assert value_type(TypeProto()) is None
    assert value_type(None) is None


@pytest.mark.parametrize(
    ("ours", "other", "expected"),
    [
        # a length says more than a name, a name more than onnx's placeholder
        ((F, ["N", None, "unk__1"]), (F, [4, 3, "M"]), (F, [4, 3, "M"])),
        # ours where both say as much, or both give lengths that differ
        ((F, ["N", 2]), (F, ["M", 3]), (F, ["N", 2])),
        # the other's shape where ours has no rank; ours where the ranks differ
        ((F, None), (F, [1, 2]), (F, [1, 2])),
        ((F, [1]), (F, [1, 2]), (F, [1])),
        # an untyped ours takes the other whole
        ((0, [5]), (I64, [1, 2]), (I64, [1, 2])),
    ],
)
def test_refine(ours: tuple, other: tuple, expected: tuple) -> None:  # type: ignore[type-arg]
    found = value_type(_tensor(*ours)).refine(value_type(_tensor(*other)))  # type: ignore[union-attr]
    assert found == value_type(_tensor(*expected))
    assert value_type(refined_type(_tensor(*ours), _tensor(*other))) == found


def test_refining_with_nothing_new_keeps_the_same_object() -> None:
    ours = _tensor(F, [4, "N"])
    assert refined_type(ours, _tensor(F, [None, "unk__2"])) is ours
    assert refined_type(ours, None) is ours
    assert refined_type(None, ours) is ours


def test_a_sequence_refines_its_items() -> None:
    ours = helper.make_sequence_type_proto(_tensor(F, [None, 3]))
    other = helper.make_sequence_type_proto(_tensor(F, [2, None]))
    assert value_type(refined_type(ours, other)) == SequenceType(TensorType(F, (2, 3)))
    # another kind refines nothing
    assert refined_type(ours, _tensor(F, [2, 3])) is ours


def test_conflicts_name_each_contradiction_in_words() -> None:
    assert list(conflicts(_tensor(F, [None, "M", 3]), _tensor(F, [2, "N", 4]))) == [
        "dim 2 is declared 3 and inferred 4"
    ]
    assert list(conflicts(_tensor(F, [2]), _tensor(I64, [2]))) == [
        "its element type is declared float and inferred int64"
    ]
    assert list(conflicts(_tensor(F, [2]), _tensor(F, [2, 2]), said=("{} before", "{} after"))) == [
        "its rank is 1 before and 2 after"
    ]
    sequence = helper.make_sequence_type_proto(_tensor(F, [2]))
    assert list(conflicts(sequence, _tensor(F, [2]))) == [
        "it is declared seq(tensor(float)), inferred tensor(float)"
    ]
    # names, placeholders and unknown dims contradict nothing
    assert list(conflicts(_tensor(F, ["N", "unk__1", None]), _tensor(F, [3, 4, 5]))) == []


def test_union_keeps_what_both_say() -> None:
    assert value_type(union_type(_tensor(F, [2, "N", 3]), _tensor(F, [2, "M", 3]))) == TensorType(
        F, (2, None, 3)
    )
    assert value_type(union_type(_tensor(F, [2]), _tensor(F, [2, 1]))) == TensorType(F, None)
    assert union_type(_tensor(F, [2]), _tensor(I64, [2])) is None


def test_says_more() -> None:
    assert says_more(_tensor(F, [4, "N"]), _tensor(F, [4, None]))
    assert not says_more(_tensor(F, [4, "unk__0"]), _tensor(F, [4, None]))
    assert says_more(_tensor(F, [4]), None)
    assert not says_more(_tensor(0, [4]), _tensor(F, None))
    assert says_more(_tensor(F, [4]), _tensor(F, None))
