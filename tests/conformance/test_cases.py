"""The cases as data: what each expects is what plain numpy slicing gives by the spec's text
(:mod:`tests.conformance.spec_oracle`), every element type is there, and every item the issue
lists has a case."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.backend.base import Backend
from tests.conformance.spec_oracle import SPEC, Rules, run_split_node

from splitops.conformance import CASES, ConformanceCase, case_named

VALID = [case for case in CASES if case.valid]
REJECTED = [case for case in CASES if case.rejected]
READ_TWO_WAYS = [case for case in CASES if case.readings]

#: The element types of Split-18 and SplitToSequence-24, as ONNX names them.
ELEMENT_TYPES = {
    "BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
    "FLOAT16", "BFLOAT16", "FLOAT", "DOUBLE", "COMPLEX64", "COMPLEX128", "STRING",
}  # fmt: skip


def _assert_same(expected: np.ndarray, got: np.ndarray) -> None:
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("case", VALID, ids=lambda case: case.name)
def test_expected_outputs_are_plain_numpy_slicing_by_the_spec(case: ConformanceCase) -> None:
    assert case.outputs is not None
    oracle = run_split_node(case.node, case.inputs)
    assert len(case.outputs) == len(oracle)
    for expected, sliced in zip(case.outputs, oracle, strict=True):
        if isinstance(expected, tuple):
            assert len(expected) == len(sliced)
            for part, sliced_part in zip(expected, sliced, strict=True):
                _assert_same(sliced_part, part)
        else:
            _assert_same(sliced, expected)


def test_the_pack_has_at_least_40_valid_cases_and_5_the_spec_rejects() -> None:
    assert len(VALID) >= 40
    assert len(REJECTED) >= 5
    assert len(VALID) + len(REJECTED) + len(READ_TWO_WAYS) == len(CASES)


@pytest.mark.parametrize("op", ["Split", "SplitToSequence"])
def test_every_element_type_of_each_operator_has_a_case(op: str) -> None:
    found = {
        onnx.TensorProto.DataType.Name(onnx.helper.np_dtype_to_tensor_dtype(case.inputs[0].dtype))
        for case in VALID
        if case.op == op
    }
    assert found == ELEMENT_TYPES


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_every_case_is_one_node_whose_inputs_are_graph_inputs(case: ConformanceCase) -> None:
    model = case.model()
    assert [node.op_type for node in model.graph.node] == [case.op]
    assert [i.name for i in model.graph.input] == list(case.node.input)
    assert model.opset_import[0].version == case.opset
    assert case.why


@pytest.mark.parametrize("case", VALID, ids=lambda case: case.name)
def test_valid_cases_pass_onnx_checker_with_shape_inference(case: ConformanceCase) -> None:
    onnx.checker.check_model(case.model(), full_check=True)


@pytest.mark.parametrize("case", REJECTED + READ_TWO_WAYS, ids=lambda case: case.name)
def test_the_other_cases_pass_onnx_checker_so_a_harness_reaches_the_runtime(
    case: ConformanceCase,
) -> None:
    """onnx's ``Backend.prepare`` runs onnx.checker first: a model it refuses would be
    "refused" on every runtime of such a harness. The outputs the spec gives no shape are
    declared with unknown dims of the input's rank."""
    model = case.model()
    onnx.checker.check_model(model)
    Backend.prepare(model)  # what onnx's backend harnesses call before the runtime's own
    for output in model.graph.output:
        if output.type.HasField("tensor_type"):
            assert len(output.type.tensor_type.shape.dim) == case.inputs[0].ndim


#: Each item of the issue's list of what ONNX's node tests miss, and the case that covers it.
ISSUE_ITEMS = {
    "balanced split told apart from ceil": "test_split_num_outputs_uneven_10_into_4_opset18",
    "ceil x (n - 1) reaches the dim (5 into 4)": "test_split_num_outputs_5_into_4_rejected_opset18",
    "Split opset 1": "test_split_attribute_sizes_opset1",
    "Split opset 2": "test_split_attribute_sizes_opset2",
    "Split opset 11, split as an attribute": "test_split_attribute_sizes_opset11",
    "a negative axis": "test_split_num_outputs_negative_axis_opset18",
    "num_outputs=1": "test_split_num_outputs_one_opset18",
    "zero entries in split": "test_split_sizes_with_zeros_opset18",
    "fewer outputs listed than num_outputs": "test_split_num_outputs_fewer_outputs_listed_opset18",
    "SplitToSequence, 7 by 3": "test_split_to_sequence_scalar_uneven_7_by_3_opset11",
    "SplitToSequence, scalar > dim": "test_split_to_sequence_scalar_larger_than_dim_opset11",
    "keepdims=0 with a split": "test_split_to_sequence_scalar_2_keepdims_0_ignored_opset11",
    "an empty input": "test_split_num_outputs_empty_input_opset18",
    "SplitToSequence, a size of 0": "test_split_to_sequence_sizes_with_zero_opset11",
}


@pytest.mark.parametrize("item", ISSUE_ITEMS)
def test_each_gap_of_onnx_node_tests_has_a_case(item: str) -> None:
    assert case_named(ISSUE_ITEMS[item]).why


def test_the_5_into_4_case_is_rejected_and_10_into_4_tells_ceil_from_balanced() -> None:
    assert not case_named("test_split_num_outputs_5_into_4_rejected_opset18").valid
    outputs = case_named("test_split_num_outputs_uneven_10_into_4_opset18").outputs
    assert outputs is not None
    balanced = [len(p) for p in np.array_split(np.arange(10), 4)]
    assert [len(p) for p in outputs] == [3, 3, 3, 1] != balanced


#: Each wrong rule that no case caught before, and the rejected case that catches it: a runtime
#: that does not check the rule computes parts there.
BUG_CLASSES = {
    "Split-18 with neither split nor num_outputs":
        "test_split_neither_sizes_nor_num_outputs_rejected_opset18",
    "int32 sizes at Split-18": "test_split_int32_sizes_rejected_opset18",
    "int32 sizes at Split-13": "test_split_int32_sizes_rejected_opset13",
    "negative sizes in the split attribute before 13":
        "test_split_attribute_negative_size_rejected_opset11",
    "SplitToSequence 1-d negative sizes": "test_split_to_sequence_sizes_negative_rejected_opset11",
    "a SplitToSequence axis out of range that wraps":
        "test_split_to_sequence_axis_wraps_rejected_opset11",
    "bfloat16 at Split-11": "test_split_bfloat16_rejected_opset11",
    "bfloat16 at SplitToSequence-11": "test_split_to_sequence_bfloat16_rejected_opset11",
    "more sizes than outputs at Split-13": "test_split_more_sizes_than_outputs_rejected_opset13",
}  # fmt: skip


@pytest.mark.parametrize("item", BUG_CLASSES)
def test_a_runtime_that_checks_nothing_computes_each_bug_class_case(item: str) -> None:
    """The oracle slices what it is given and checks no rule (axis modulo the rank, sizes as
    given, any element type): it is the runtime each case was made to catch."""
    case = case_named(BUG_CLASSES[item])
    assert case.rejected
    parts = run_split_node(case.node, case.inputs)
    assert parts  # it computes something where the spec gives nothing


#: The readings of each case read two ways, and the oracle's rules that follow each.
READINGS = {
    "test_split_to_sequence_scalar_1_keepdims_0_opset11": {
        "drops-axis": SPEC,
        "keeps-axis": Rules(scalar_one_keeps_axis=True),
    },
    "test_split_to_sequence_sizes_with_zero_opset11": {"empty-part": SPEC, "rejected": None},
}


@pytest.mark.parametrize("case", READ_TWO_WAYS, ids=lambda case: case.name)
def test_each_reading_gives_what_plain_numpy_gives_so_read(case: ConformanceCase) -> None:
    assert case.outputs is None
    assert {reading.key for reading in case.readings} == set(READINGS[case.name])
    assert [reading.key for reading in case.readings if reading.splitops] == [
        next(key for key, rules in READINGS[case.name].items() if rules is SPEC)
    ]
    for reading in case.readings:
        rules = READINGS[case.name][reading.key]
        assert reading.why
        if rules is None:
            assert reading.rejects
            continue
        assert reading.outputs is not None
        (expected,) = run_split_node(case.node, case.inputs, rules)
        (sequence,) = reading.outputs
        assert isinstance(sequence, tuple)
        assert len(sequence) == len(expected)
        for part, sliced in zip(sequence, expected, strict=True):
            _assert_same(sliced, part)


def test_the_readings_of_scalar_1_keepdims_0_are_the_axis_dropped_or_kept() -> None:
    case = case_named("test_split_to_sequence_scalar_1_keepdims_0_opset11")
    shapes = {
        reading.key: [part.shape for part in reading.outputs[0]]
        for reading in case.readings
        if reading.outputs is not None and isinstance(reading.outputs[0], tuple)
    }
    assert shapes == {"drops-axis": [(2,)] * 3, "keeps-axis": [(2, 1)] * 3}


@pytest.mark.parametrize("case", READ_TWO_WAYS, ids=lambda case: case.name)
def test_splitops_reads_each_case_as_the_reading_it_declares(case: ConformanceCase) -> None:
    """The reading marked ``splitops`` is the project's decision, which the planner keeps."""
    from splitops.onnx import run_node

    (reading,) = [reading for reading in case.readings if reading.splitops]
    assert reading.outputs is not None
    (sequence,) = run_node(case.node, list(case.inputs), opset=case.opset)
    (expected,) = reading.outputs
    assert isinstance(expected, tuple)
    assert len(sequence) == len(expected)
    for part, want in zip(sequence, expected, strict=True):
        _assert_same(want, np.asarray(part))
