"""The cases as data: what each expects is what plain numpy slicing gives by the spec's text
(:mod:`tests.conformance.spec_oracle`), every element type is there, and every item the issue
lists has a case."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from tests.conformance.spec_oracle import run_split_node

from splitops.conformance import CASES, ConformanceCase, case_named

VALID = [case for case in CASES if case.valid]
REJECTED = [case for case in CASES if not case.valid]

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
    "keepdims=0 with a split": "test_split_to_sequence_scalar_keepdims_0_ignored_opset11",
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
