"""The conformance cases, as data: one node each, its inputs, and what the spec says it gives.

Each case is the smallest model that catches one wrong rule (``why`` names it). A valid
case's expected outputs are what :func:`splitops.onnx.run_node` gives (the planner's sizes,
applied by slicing); a case the spec rejects holds no outputs, and a runtime passes it by
refusing. Building the cases checks each against the planner: a case declared valid that
the planner rejects, or the reverse, is a defect of this table and stops the import.

Inputs are small whole numbers counting up from 1 (words ``s1``, ``s2``, ... for strings,
every third element true for bools), so that a part taken from the wrong place shows.

>>> len([case for case in CASES if case.valid]) >= 40, len([c for c in CASES if not c.valid])
(True, 12)
>>> case = case_named("test_split_num_outputs_uneven_10_into_4_opset18")
>>> [part.tolist() for part in case.outputs]
[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from onnx import ModelProto, NodeProto, TypeProto, helper

from ..core import ElementType, SplitError
from ..onnx import run_node

__all__ = ["CASES", "ConformanceCase", "case_named", "element_of"]

#: An output a case expects: an array, or a sequence of arrays (SplitToSequence).
Output = np.ndarray[Any, Any] | tuple[np.ndarray[Any, Any], ...]


@dataclass(frozen=True)
class ConformanceCase:
    """One case: a single Split or SplitToSequence node at one opset, its inputs (following
    ``node.input``), and the outputs the spec gives, or ``None`` where the spec rejects it."""

    name: str
    opset: int
    why: str
    node: NodeProto
    inputs: tuple[np.ndarray[Any, Any], ...]
    outputs: tuple[Output, ...] | None

    @property
    def op(self) -> str:
        """``"Split"`` or ``"SplitToSequence"``."""
        return str(self.node.op_type)

    @property
    def valid(self) -> bool:
        """Whether the spec computes outputs for it (else a runtime must refuse it)."""
        return self.outputs is not None

    def model(self) -> ModelProto:
        """The case as a model: the node alone, every input a graph input, each output
        typed by what it holds (shaped as expected for a valid case), at the lowest IR
        version the opset allows, as onnx's own node tests are built."""
        element = element_of(self.inputs[0])
        inputs = [
            helper.make_tensor_value_info(name, element_of(value), value.shape)
            for name, value in zip(self.node.input, self.inputs, strict=True)
        ]
        outputs = [
            helper.make_value_info(name, _output_type(self.op, element, expected))
            for name, expected in zip(self.node.output, self._expected_or_none(), strict=True)
        ]
        graph = helper.make_graph([self.node], self.name, inputs, outputs)
        return helper.make_model_gen_version(
            graph,
            producer_name="splitops-conformance",
            opset_imports=[helper.make_opsetid("", self.opset)],
            **self.model_arguments(),
        )

    def model_arguments(self) -> dict[str, int]:
        """What :meth:`model` passes beyond the opset: onnx's table of IR versions names
        opsets 1, 5 and 6 but not 2, so models of opsets below 7 say IR version 3 (the
        first), as the ONNX release of those opsets wrote."""
        return {"ir_version": 3} if self.opset < 7 else {}

    def _expected_or_none(self) -> Sequence[Output | None]:
        return self.outputs if self.outputs is not None else [None] * len(self.node.output)


def element_of(value: np.ndarray[Any, Any]) -> int:
    """The ``TensorProto`` element type code of an array (object arrays hold strings)."""
    return int(helper.np_dtype_to_tensor_dtype(value.dtype))


def _output_type(op: str, element: int, expected: Output | None) -> TypeProto:
    if op == "SplitToSequence":
        return helper.make_sequence_type_proto(helper.make_tensor_type_proto(element, None))
    shape = None if expected is None or isinstance(expected, tuple) else expected.shape
    return helper.make_tensor_type_proto(element, shape)


def _values(element: ElementType, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Whole numbers counting up from 1, in ``element``'s type, of ``shape``."""
    numbers = np.arange(1, math.prod(shape) + 1).reshape(shape)
    if element is ElementType.STRING:
        return np.array([f"s{n}" for n in numbers.flat], dtype=object).reshape(shape)
    if element is ElementType.BOOL:
        return np.asarray(numbers % 3 == 0)
    if element is ElementType.BFLOAT16:
        return numbers.astype(np.float32).astype(ml_dtypes.bfloat16)
    if element in (ElementType.COMPLEX64, ElementType.COMPLEX128):
        return (numbers - 1j * numbers).astype(element.numpy_name)
    return numbers.astype(element.numpy_name)


def _build(
    name: str,
    opset: int,
    node: NodeProto,
    inputs: Sequence[np.ndarray[Any, Any]],
    why: str,
    *,
    valid: bool,
) -> ConformanceCase:
    """A case whose expected outputs are splitops' own; it stops where the planner's verdict
    is not what the case declares."""
    try:
        found = run_node(node, list(inputs), opset=opset)
    except SplitError as error:
        if valid:
            raise AssertionError(f"{name} is declared valid, but {error}") from error
        return ConformanceCase(name, opset, why, node, tuple(inputs), None)
    if not valid:
        raise AssertionError(f"{name} is declared invalid, but splitops computes it")
    outputs: list[Output] = []
    for value in found:
        if isinstance(value, list):
            outputs.append(tuple(np.array(part, copy=True) for part in value))
        else:
            outputs.append(np.array(value, copy=True))
    return ConformanceCase(name, opset, why, node, tuple(inputs), tuple(outputs))


def _split(
    name: str,
    opset: int,
    element: ElementType,
    shape: tuple[int, ...],
    why: str,
    *,
    axis: int | None = None,
    sizes: Sequence[int] | None = None,
    sizes_as: str = "",
    num_outputs: int | None = None,
    outputs: int | None = None,
    valid: bool = True,
) -> ConformanceCase:
    """A Split case. ``sizes`` go where the version reads them (the attribute before 13,
    the input since), unless ``sizes_as`` says ``"input"`` (Split-1's second input, typed
    like the input); ``outputs`` is the number of outputs the node lists (default: one per
    size, or ``num_outputs``)."""
    x = _values(element, shape)
    inputs, names, attributes = [x], ["input"], dict[str, Any]()
    if axis is not None:
        attributes["axis"] = axis
    if num_outputs is not None:
        attributes["num_outputs"] = num_outputs
    if sizes is not None and (sizes_as == "input" or (opset >= 13 and sizes_as != "attribute")):
        names.append("split")
        inputs.append(np.array(sizes, dtype=x.dtype if opset < 2 else np.int64))
    elif sizes is not None:
        attributes["split"] = list(sizes)
    count = outputs or (len(sizes) if sizes is not None else num_outputs or 0)
    node = helper.make_node("Split", names, [f"output_{i + 1}" for i in range(count)], **attributes)
    return _build(name, opset, node, inputs, why, valid=valid)


def _sequence(
    name: str,
    opset: int,
    element: ElementType,
    shape: tuple[int, ...],
    why: str,
    *,
    axis: int | None = None,
    split: int | Sequence[int] | Sequence[Sequence[int]] | None = None,
    split_type: type[np.integer[Any]] = np.int64,
    keepdims: int | None = None,
    valid: bool = True,
) -> ConformanceCase:
    """A SplitToSequence case; ``split`` is a scalar chunk length, 1-d sizes, or absent."""
    inputs, names, attributes = [_values(element, shape)], ["input"], dict[str, Any]()
    if split is not None:
        names.append("split")
        inputs.append(np.array(split, dtype=split_type))
    if axis is not None:
        attributes["axis"] = axis
    if keepdims is not None:
        attributes["keepdims"] = keepdims
    node = helper.make_node("SplitToSequence", names, ["output_sequence"], **attributes)
    return _build(name, opset, node, inputs, why, valid=valid)


E = ElementType
_BALANCED = "a balanced split (numpy's array_split: the remainder spread over the first parts)"

#: Every case, Split first, then SplitToSequence; valid ones before those the spec rejects.
CASES: tuple[ConformanceCase, ...] = (
    # --- Split-18: num_outputs --------------------------------------------------------------
    _split(
        "test_split_num_outputs_uneven_10_into_4_opset18",
        18,
        E.FLOAT,
        (10,),
        f"{_BALANCED} gives 3, 3, 2, 2; the spec takes parts of ceil(10/4)=3 and leaves the "
        "last smaller: 3, 3, 3, 1. ONNX's 7-into-4 and 8-into-3 tests cannot tell the two apart",
        num_outputs=4,
    ),
    _split(
        "test_split_num_outputs_uneven_13_into_5_opset18",
        18,
        E.INT32,
        (2, 13),
        f"{_BALANCED} gives 3, 3, 3, 2, 2; the spec gives 3, 3, 3, 3, 1",
        axis=1,
        num_outputs=5,
    ),
    _split(
        "test_split_num_outputs_empty_last_9_into_4_opset18",
        18,
        E.INT16,
        (9,),
        "parts of ceil(9/4)=3 leave 0 for the last part: 3, 3, 3, 0. A runtime that refuses "
        f"an empty part (onnxruntime before 1.32) fails, and so does {_BALANCED}: 3, 2, 2, 2",
        num_outputs=4,
    ),
    _split(
        "test_split_num_outputs_even_6_into_3_opset18",
        18,
        E.UINT8,
        (6,),
        "a 'floor + 1' part length (6 // 3 + 1 = 3) gives 3, 3, 0 where the dim divides; the "
        "spec gives equal parts 2, 2, 2",
        num_outputs=3,
    ),
    _split(
        "test_split_num_outputs_one_opset18",
        18,
        E.INT64,
        (5,),
        "num_outputs=1 is one part holding the whole input, not an error",
        num_outputs=1,
    ),
    _split(
        "test_split_num_outputs_one_empty_axis_opset18",
        18,
        E.FLOAT,
        (0,),
        "num_outputs=1 on an axis of length 0 is one empty part (onnxruntime 1.31 refused it)",
        num_outputs=1,
    ),
    _split(
        "test_split_num_outputs_empty_input_opset18",
        18,
        E.BOOL,
        (2, 0),
        "an empty input cut into 3 is three empty parts: ceil(0/3)=0, nothing is left over",
        axis=1,
        num_outputs=3,
    ),
    _split(
        "test_split_num_outputs_fewer_outputs_listed_opset18",
        18,
        E.FLOAT,
        (8,),
        "a node may list fewer outputs than num_outputs: the listed ones are the first parts "
        "of 8 into 4, i.e. 2, 2. onnxruntime 1.32 refuses the node; 1.31 cut as many parts "
        "as listed (4, 4)",
        num_outputs=4,
        outputs=2,
    ),
    _split(
        "test_split_num_outputs_fewer_outputs_listed_uneven_opset18",
        18,
        E.UINT16,
        (7,),
        "the listed outputs are the first 2 of 7 into 3 parts, of ceil(7/3)=3: 3, 3. Cutting "
        f"as many parts as listed gives 4, 3, and {_BALANCED} 3, 2",
        num_outputs=3,
        outputs=2,
    ),
    _split(
        "test_split_num_outputs_negative_axis_opset18",
        18,
        E.FLOAT16,
        (2, 7),
        "axis=-1 counts from the back: the last axis, 7 into 3 as 3, 3, 1",
        axis=-1,
        num_outputs=3,
    ),
    _split(
        "test_split_num_outputs_axis_minus_rank_opset18",
        18,
        E.DOUBLE,
        (4, 3),
        "axis=-rank is the first axis (the accepted range is [-rank, rank-1])",
        axis=-2,
        num_outputs=2,
    ),
    _split(
        "test_split_num_outputs_middle_axis_opset18",
        18,
        E.UINT64,
        (2, 5, 3),
        "a middle axis of a rank-3 input, 5 into 2 as 3, 2: the parts are not contiguous in memory",
        axis=1,
        num_outputs=2,
    ),
    _split(
        "test_split_num_outputs_bfloat16_opset18",
        18,
        E.BFLOAT16,
        (2, 5),
        "bfloat16 is a Split type since opset 13; 5 into 2 as 3, 2",
        axis=1,
        num_outputs=2,
    ),
    _split(
        "test_split_num_outputs_string_opset18",
        18,
        E.STRING,
        (7,),
        "string tensors split like any other: 7 into 3 as 3, 3, 1",
        num_outputs=3,
    ),
    _split(
        "test_split_num_outputs_complex64_opset18",
        18,
        E.COMPLEX64,
        (3, 2),
        "complex64 is a Split type; 3 into 2 as 2, 1",
        num_outputs=2,
    ),
    _split(
        "test_split_num_outputs_uneven_11_into_4_opset18",
        18,
        E.INT8,
        (11,),
        "11 into 4 as 3, 3, 3, 2: the last part is smaller but not empty",
        num_outputs=4,
    ),
    # --- Split-18: the split input ------------------------------------------------------------
    _split(
        "test_split_sizes_with_zeros_opset18",
        18,
        E.INT8,
        (7,),
        "split values may be 0 ('Values should be >= 0'): empty parts between others",
        sizes=[0, 3, 0, 4],
    ),
    _split(
        "test_split_sizes_empty_input_opset18",
        18,
        E.STRING,
        (0,),
        "an empty input split by sizes [0, 0] is two empty parts",
        sizes=[0, 0],
    ),
    _split(
        "test_split_sizes_single_part_opset18",
        18,
        E.UINT16,
        (5,),
        "a split of one size is one part holding the whole input",
        sizes=[5],
    ),
    _split(
        "test_split_sizes_complex128_opset18",
        18,
        E.COMPLEX128,
        (2, 4),
        "complex128 is a Split type; sizes 1, 3 along axis 1",
        axis=1,
        sizes=[1, 3],
    ),
    _split(
        "test_split_sizes_uint32_opset18",
        18,
        E.UINT32,
        (4,),
        "uint32 is a Split type; sizes 2, 2",
        sizes=[2, 2],
    ),
    # --- Split-13: the split input, or equal parts by output count -----------------------------
    _split(
        "test_split_equal_parts_by_outputs_opset13",
        13,
        E.INT16,
        (6,),
        "without split, Split-13 cuts equal parts, one per listed output: 2, 2, 2",
        outputs=3,
    ),
    _split(
        "test_split_sizes_with_zeros_opset13",
        13,
        E.UINT32,
        (6,),
        "split values may be 0 at Split-13 too: 2, 0, 4",
        sizes=[2, 0, 4],
    ),
    _split(
        "test_split_negative_axis_opset13",
        13,
        E.BOOL,
        (2, 6),
        "a negative axis with a split input: axis=-1, sizes 1, 5",
        axis=-1,
        sizes=[1, 5],
    ),
    _split(
        "test_split_one_output_opset13",
        13,
        E.FLOAT,
        (4,),
        "one listed output without split is the whole input",
        outputs=1,
    ),
    _split(
        "test_split_bfloat16_opset13",
        13,
        E.BFLOAT16,
        (3,),
        "bfloat16 first became a Split type at opset 13; sizes 1, 2",
        sizes=[1, 2],
    ),
    # --- Split-11 and 2: sizes as the split attribute -----------------------------------------
    _split(
        "test_split_attribute_sizes_opset11",
        11,
        E.INT32,
        (2, 7),
        "before opset 13 the sizes are the split attribute, not an input: 2, 5 along axis 1",
        axis=1,
        sizes=[2, 5],
    ),
    _split(
        "test_split_attribute_zero_sizes_opset11",
        11,
        E.FLOAT,
        (3,),
        "the split attribute may hold zeros (Split-11: 'Values should be >= 0'): 0, 3, 0",
        sizes=[0, 3, 0],
    ),
    _split(
        "test_split_negative_axis_opset11",
        11,
        E.INT64,
        (3, 4),
        "Split-11 is the first to document negative axes: axis=-1, equal parts 2, 2",
        axis=-1,
        outputs=2,
    ),
    _split(
        "test_split_equal_parts_by_outputs_opset11",
        11,
        E.UINT8,
        (9,),
        "without the split attribute, equal parts by output count: 3, 3, 3",
        outputs=3,
    ),
    _split(
        "test_split_attribute_sizes_opset2",
        2,
        E.DOUBLE,
        (4,),
        "Split-2 reads sizes from the split attribute only: 1, 3",
        sizes=[1, 3],
    ),
    _split(
        "test_split_equal_parts_opset2",
        2,
        E.INT8,
        (2, 4),
        "Split-2 without sizes: equal parts by output count along axis 1, 2 and 2",
        axis=1,
        outputs=2,
    ),
    # --- Split-1: the split attribute, or a second input typed like the input ------------------
    _split(
        "test_split_attribute_sizes_opset1",
        1,
        E.FLOAT,
        (6,),
        "Split-1 takes sizes as the split attribute: 2, 4",
        axis=0,
        sizes=[2, 4],
        sizes_as="attribute",
    ),
    _split(
        "test_split_sizes_second_input_opset1",
        1,
        E.FLOAT16,
        (6,),
        "Split-1 also takes sizes as a second input, typed like the input (float16 here): 4, 2",
        axis=0,
        sizes=[4, 2],
        sizes_as="input",
    ),
    _split(
        "test_split_equal_parts_opset1",
        1,
        E.DOUBLE,
        (2, 6),
        "Split-1 without sizes: equal parts by output count, 3 and 3 along axis 1",
        axis=1,
        outputs=2,
    ),
    # --- SplitToSequence ------------------------------------------------------------------------
    _sequence(
        "test_split_to_sequence_scalar_uneven_7_by_3_opset11",
        11,
        E.FLOAT,
        (7, 2),
        "a scalar split is a chunk length: 7 by 3 is chunks 3, 3 and a smaller last one, 1",
        split=3,
    ),
    _sequence(
        "test_split_to_sequence_scalar_larger_than_dim_opset11",
        11,
        E.INT32,
        (5,),
        "a chunk length larger than the dim is one chunk holding it all",
        split=8,
        split_type=np.int32,
    ),
    _sequence(
        "test_split_to_sequence_scalar_keepdims_0_ignored_opset11",
        11,
        E.FLOAT,
        (2, 3),
        "keepdims is ignored when split is given ('If input split is specified, this "
        "attribute is ignored'): chunks of 1 keep the axis, shape (2, 1), not (2,)",
        axis=1,
        split=1,
        keepdims=0,
    ),
    _sequence(
        "test_split_to_sequence_sizes_keepdims_0_ignored_opset11",
        11,
        E.INT64,
        (3, 2),
        "keepdims=0 with 1-d sizes of 1 is ignored too: each part keeps the axis, (1, 2)",
        split=[1, 1, 1],
        keepdims=0,
    ),
    _sequence(
        "test_split_to_sequence_default_keepdims_0_opset11",
        11,
        E.UINT8,
        (3, 2),
        "without split the parts are of length 1, and keepdims=0 drops the axis: (2,) each",
        keepdims=0,
    ),
    _sequence(
        "test_split_to_sequence_default_keepdims_1_opset11",
        11,
        E.INT8,
        (2, 3),
        "without split and keepdims, parts of length 1 that keep the axis: (2, 1) each",
        axis=1,
    ),
    _sequence(
        "test_split_to_sequence_sizes_with_zero_opset11",
        11,
        E.INT16,
        (5,),
        "the spec says both 'only positive numbers' and 'all values must be >= 0'; splitops "
        "takes >= 0 for 1-d sizes (as Split does), so a size of 0 is an empty part",
        split=[2, 0, 3],
    ),
    _sequence(
        "test_split_to_sequence_negative_axis_opset11",
        11,
        E.UINT16,
        (2, 6),
        "axis=-1 with a chunk length of 4: chunks 4 and 2 of the last axis",
        axis=-1,
        split=4,
    ),
    _sequence(
        "test_split_to_sequence_empty_input_opset11",
        11,
        E.FLOAT,
        (0, 3),
        "an axis of length 0 cut in chunks of 2 is an empty sequence",
        split=2,
    ),
    _sequence(
        "test_split_to_sequence_string_opset11",
        11,
        E.STRING,
        (5,),
        "strings in chunks of 2: 2, 2, 1",
        split=2,
    ),
    _sequence(
        "test_split_to_sequence_bool_int32_sizes_opset11",
        11,
        E.BOOL,
        (3,),
        "split may be int32: sizes 1, 2 of a bool input",
        split=[1, 2],
        split_type=np.int32,
    ),
    _sequence(
        "test_split_to_sequence_complex64_opset11",
        11,
        E.COMPLEX64,
        (4,),
        "complex64 in chunks of 3: 3, 1",
        split=3,
    ),
    _sequence(
        "test_split_to_sequence_complex128_keepdims_0_opset11",
        11,
        E.COMPLEX128,
        (2, 2),
        "complex128 without split, keepdims=0 along axis 1: two parts of shape (2,)",
        axis=1,
        keepdims=0,
    ),
    _sequence(
        "test_split_to_sequence_uint64_opset11",
        11,
        E.UINT64,
        (4,),
        "uint64 in chunks of 2: 2, 2",
        split=2,
    ),
    _sequence(
        "test_split_to_sequence_float16_sizes_opset11",
        11,
        E.FLOAT16,
        (2, 3),
        "float16 with sizes 2, 1 along axis 1",
        axis=1,
        split=[2, 1],
    ),
    _sequence(
        "test_split_to_sequence_double_opset11",
        11,
        E.DOUBLE,
        (3,),
        "double in chunks of 2: 2, 1",
        split=2,
    ),
    _sequence(
        "test_split_to_sequence_uint32_opset11",
        11,
        E.UINT32,
        (3,),
        "uint32 in chunks of 1 given as a scalar: 1, 1, 1, keeping the axis",
        split=1,
    ),
    _sequence(
        "test_split_to_sequence_bfloat16_opset24",
        24,
        E.BFLOAT16,
        (3,),
        "bfloat16 is a SplitToSequence type since opset 24; chunks of 2: 2, 1",
        split=2,
    ),
    # --- what the spec rejects: a runtime passes by refusing -----------------------------------
    _split(
        "test_split_num_outputs_5_into_4_rejected_opset18",
        18,
        E.FLOAT,
        (5,),
        "ceil(5/4)=2 leaves -1 for the last part: no valid answer. onnx's shape inference "
        "says 2, 2, 2, -1, onnx.reference returns 2, 2, 1, 0, a balanced split 2, 1, 1, 1",
        num_outputs=4,
        valid=False,
    ),
    _split(
        "test_split_equal_parts_not_divisible_rejected_opset13",
        13,
        E.FLOAT,
        (7,),
        "before Split-18 there is no rule for a remainder: 7 into 3 equal parts does not "
        "exist (onnx.reference returns 3, 3, 1)",
        outputs=3,
        valid=False,
    ),
    _split(
        "test_split_sizes_sum_mismatch_rejected_opset18",
        18,
        E.FLOAT,
        (5,),
        "the sizes must sum to the dim: 2 + 2 is not 5",
        sizes=[2, 2],
        valid=False,
    ),
    _split(
        "test_split_sizes_negative_rejected_opset18",
        18,
        E.FLOAT,
        (5,),
        "sizes must be >= 0: -1 and 6 sum to 5 but -1 is no size",
        sizes=[-1, 6],
        valid=False,
    ),
    _split(
        "test_split_axis_out_of_range_rejected_opset18",
        18,
        E.FLOAT,
        (2, 4),
        "axis 2 of a rank-2 input lies outside [-2, 1]",
        axis=2,
        num_outputs=2,
        valid=False,
    ),
    _split(
        "test_split_sizes_and_num_outputs_rejected_opset18",
        18,
        E.FLOAT,
        (4,),
        "Split-18 takes the split input or num_outputs, not both",
        sizes=[2, 2],
        num_outputs=2,
        valid=False,
    ),
    _split(
        "test_split_more_outputs_than_num_outputs_rejected_opset18",
        18,
        E.FLOAT,
        (6,),
        "a node listing 3 outputs for num_outputs=2 has an output no part fills",
        num_outputs=2,
        outputs=3,
        valid=False,
    ),
    _split(
        "test_split_int32_input_rejected_opset1",
        1,
        E.INT32,
        (4,),
        "Split-1 takes float16, float and double only; int32 came with Split-2",
        axis=0,
        sizes=[2, 2],
        sizes_as="attribute",
        valid=False,
    ),
    _sequence(
        "test_split_to_sequence_scalar_zero_rejected_opset11",
        11,
        E.FLOAT,
        (4,),
        "a chunk length of 0 would make infinitely many parts (onnxruntime dies with SIGFPE "
        "on a constant 0)",
        split=0,
        valid=False,
    ),
    _sequence(
        "test_split_to_sequence_scalar_negative_rejected_opset11",
        11,
        E.FLOAT,
        (4,),
        "a negative chunk length is no length",
        split=-2,
        valid=False,
    ),
    _sequence(
        "test_split_to_sequence_sizes_sum_mismatch_rejected_opset11",
        11,
        E.FLOAT,
        (5,),
        "1-d sizes must sum to the dim: 1 + 2 is not 5 (onnx.reference returns parts of 1 and 2)",
        split=[1, 2],
        valid=False,
    ),
    _sequence(
        "test_split_to_sequence_2d_split_rejected_opset11",
        11,
        E.FLOAT,
        (3,),
        "split is a scalar or 1-d; a 2-d [[1, 2]] is neither (onnxruntime flattens it)",
        split=[[1, 2]],
        valid=False,
    ),
)

_BY_NAME = {case.name: case for case in CASES}
if len(_BY_NAME) != len(CASES):  # pragma: no cover - a defect of the table
    raise AssertionError("two conformance cases share a name")


def case_named(name: str) -> ConformanceCase:
    """The case called ``name`` (a ``KeyError`` for another name)."""
    return _BY_NAME[name]
