"""The conformance cases, as data: one node each, its inputs, and what the spec says it gives.

Each case is the smallest model that catches one wrong rule (``why`` names it). A valid
case's expected outputs are what :func:`splitops.onnx.run_node` gives (the planner's sizes,
applied by slicing); a case the spec rejects holds no outputs, and a runtime passes it by
refusing. Building the cases checks each against the planner: a case declared valid that
the planner rejects, or the reverse, is a defect of this table and stops the import.

Where the spec's text is read two ways, a case holds both :class:`Reading` s, each with its
reasons and what it gives (outputs, or a refusal); a runtime neither passes nor fails it,
but is said to follow one reading, or neither.

Inputs are small whole numbers counting up from 1 (words ``s1``, ``s2``, ... for strings,
every third element true for bools), so that a part taken from the wrong place shows.

>>> len([case for case in CASES if case.valid]) >= 40, len([c for c in CASES if c.rejected])
(True, 21)
>>> [c.name for c in CASES if c.readings]  # doctest: +NORMALIZE_WHITESPACE
['test_split_to_sequence_scalar_1_keepdims_0_opset11',
 'test_split_to_sequence_sizes_with_zero_opset11']
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
from ..onnx.model import Node

__all__ = ["CASES", "ConformanceCase", "Reading", "case_named", "element_of"]

#: An output a case expects: an array, or a sequence of arrays (SplitToSequence).
Output = np.ndarray[Any, Any] | tuple[np.ndarray[Any, Any], ...]


@dataclass(frozen=True)
class Reading:
    """One way to read a spec text that is read two ways, and what a node gives so read."""

    #: A short name (``"drops-axis"``); the case folder's ``reading_<key>`` holds its outputs.
    key: str
    #: The spec's words it rests on, and who reads it so.
    why: str
    #: The outputs it gives, or ``None`` where it rejects the node.
    outputs: tuple[Output, ...] | None
    #: Whether splitops reads it so (the project's decision, recorded in its README).
    splitops: bool = False

    @property
    def rejects(self) -> bool:
        """Whether this reading rejects the node (a runtime follows it by refusing)."""
        return self.outputs is None


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
    #: Where the spec is read two ways: each reading (then ``outputs`` is ``None``).
    readings: tuple[Reading, ...] = ()
    #: For a case read two ways where a reading rejects the node: the valid case of the same
    #: node without the words read two ways. A runtime's refusal follows that reading only
    #: where it runs the control (else it refuses the node for another reason).
    control: str | None = None

    @property
    def op(self) -> str:
        """``"Split"`` or ``"SplitToSequence"``."""
        return Node.alone(self.node).op_type

    @property
    def valid(self) -> bool:
        """Whether the spec computes these outputs for it, read one way only."""
        return self.outputs is not None

    @property
    def rejected(self) -> bool:
        """Whether the spec rejects it (a runtime must refuse it)."""
        return self.outputs is None and not self.readings

    @property
    def expect(self) -> str:
        """What the pack's ``cases.json`` says a runtime must do: ``"outputs"`` (give the
        spec's), ``"refusal"`` (refuse the node) or ``"readings"`` (one of the readings)."""
        return "outputs" if self.valid else "readings" if self.readings else "refusal"

    def model(self) -> ModelProto:
        """The case as a model: the node alone, every input a graph input, each output
        typed by what it holds (shaped as expected for a valid case; else dims unknown, of
        the input's rank, as onnx.checker requires of a graph output), at the lowest IR
        version the opset allows, as onnx's own node tests are built."""
        element = element_of(self.inputs[0])
        rank = self.inputs[0].ndim
        node = Node.alone(self.node)
        inputs = [
            helper.make_tensor_value_info(name, element_of(value), value.shape)
            for name, value in zip(node.input_names, self.inputs, strict=True)
        ]
        expected = self._expected_or_none()
        outputs = [
            helper.make_value_info(name, _output_type(self.op, element, value, rank))
            for name, value in zip(node.output_names, expected, strict=True)
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
        if self.outputs is not None:
            return self.outputs
        return [None] * len(Node.alone(self.node).output_names)


def element_of(value: np.ndarray[Any, Any]) -> int:
    """The ``TensorProto`` element type code of an array (object arrays hold strings)."""
    return int(helper.np_dtype_to_tensor_dtype(value.dtype))


def _output_type(op: str, element: int, expected: Output | None, rank: int) -> TypeProto:
    """An output's type: the expected array's shape, or unknown dims of the input's rank
    (a part has the input's rank; a SplitToSequence part may drop the axis, so a sequence
    is typed without a shape)."""
    if op == "SplitToSequence":
        return helper.make_sequence_type_proto(helper.make_tensor_type_proto(element, None))
    shape = [None] * rank if expected is None or isinstance(expected, tuple) else expected.shape
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
        found = _outputs_of(node, inputs, opset)
    except SplitError as error:
        if valid:
            raise AssertionError(f"{name} is declared valid, but {error}") from error
        return ConformanceCase(name, opset, why, node, tuple(inputs), None)
    if not valid:
        raise AssertionError(f"{name} is declared invalid, but splitops computes it")
    return ConformanceCase(name, opset, why, node, tuple(inputs), found)


def _outputs_of(
    node: NodeProto, inputs: Sequence[np.ndarray[Any, Any]], opset: int
) -> tuple[Output, ...]:
    """What splitops gives for ``node``, each array copied (a sequence as a tuple), or the
    SplitError of a node the spec rejects."""
    outputs: list[Output] = []
    for value in run_node(node, list(inputs), opset=opset):
        if isinstance(value, list):
            outputs.append(tuple(np.array(part, copy=True) for part in value))
        else:
            outputs.append(np.array(value, copy=True))
    return tuple(outputs)


def _read_two_ways(
    name: str,
    opset: int,
    node: NodeProto,
    inputs: Sequence[np.ndarray[Any, Any]],
    why: str,
    readings: Sequence[Reading],
    control: str | None = None,
) -> ConformanceCase:
    """A case the spec's text reads two ways. Each reading's outputs come from a node that
    says the same thing without the words read two ways; splitops' own answer for ``node``
    must be one of them (the one marked ``splitops`` is the project's decision)."""
    try:
        found: tuple[Output, ...] | None = _outputs_of(node, inputs, opset)
    except SplitError:
        found = None
    if not any(_same_outputs(found, reading.outputs) for reading in readings):
        raise AssertionError(f"{name}: splitops' answer is none of the readings")
    return ConformanceCase(name, opset, why, node, tuple(inputs), None, tuple(readings), control)


def _same_outputs(a: tuple[Output, ...] | None, b: tuple[Output, ...] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(_same_output(x, y) for x, y in zip(a, b, strict=True))


def _same_output(a: Output, b: Output) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(_same_output(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist())


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
    sizes_type: type[np.integer[Any]] = np.int64,
    num_outputs: int | None = None,
    outputs: int | None = None,
    valid: bool = True,
) -> ConformanceCase:
    """A Split case. ``sizes`` go where the version reads them (the attribute before 13,
    the input since), unless ``sizes_as`` says ``"input"`` (Split-1's second input, typed
    like the input); ``outputs`` is the number of outputs the node lists (default: one per
    size, or ``num_outputs``); the split input is int64 unless ``sizes_type`` says."""
    x = _values(element, shape)
    inputs, names, attributes = [x], ["input"], dict[str, Any]()
    if axis is not None:
        attributes["axis"] = axis
    if num_outputs is not None:
        attributes["num_outputs"] = num_outputs
    if sizes is not None and (sizes_as == "input" or (opset >= 13 and sizes_as != "attribute")):
        names.append("split")
        inputs.append(np.array(sizes, dtype=x.dtype if opset < 2 else sizes_type))
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
    node, inputs = _sequence_node(element, shape, axis, split, split_type, keepdims)
    return _build(name, opset, node, inputs, why, valid=valid)


def _sequence_node(
    element: ElementType,
    shape: tuple[int, ...],
    axis: int | None = None,
    split: int | Sequence[int] | Sequence[Sequence[int]] | None = None,
    split_type: type[np.integer[Any]] = np.int64,
    keepdims: int | None = None,
) -> tuple[NodeProto, list[np.ndarray[Any, Any]]]:
    """A SplitToSequence node and its inputs (see :func:`_sequence`)."""
    inputs, names, attributes = [_values(element, shape)], ["input"], dict[str, Any]()
    if split is not None:
        names.append("split")
        inputs.append(np.array(split, dtype=split_type))
    if axis is not None:
        attributes["axis"] = axis
    if keepdims is not None:
        attributes["keepdims"] = keepdims
    node = helper.make_node("SplitToSequence", names, ["output_sequence"], **attributes)
    return node, inputs


def _scalar_1_keepdims_0() -> ConformanceCase:
    """torch's unbind: a scalar split of 1 with keepdims=0, read as the default split (the
    axis dropped) or as a given split (the axis kept)."""
    node, inputs = _sequence_node(E.FLOAT, (2, 3), axis=1, split=1, keepdims=0)
    default, _ = _sequence_node(E.FLOAT, (2, 3), axis=1, keepdims=0)
    sizes, by_sizes = _sequence_node(E.FLOAT, (2, 3), axis=1, split=[1, 1, 1], keepdims=0)
    return _read_two_ways(
        "test_split_to_sequence_scalar_1_keepdims_0_opset11",
        11,
        node,
        inputs,
        "a scalar split of 1 with keepdims=0 is read two ways: keepdims is ignored 'if input "
        "split is specified', and without split 'a default scalar value of 1 is used', so a "
        "scalar 1 is the default split written out",
        [
            Reading(
                "drops-axis",
                "a scalar 1 is the default split, so keepdims=0 drops the axis as it does "
                "without split: parts of shape (2,), as torch's unbind (exported as this node) "
                "means. onnxruntime reads it so",
                _outputs_of(default, inputs[:1], 11),
                splitops=True,
            ),
            Reading(
                "keeps-axis",
                "any given split, the scalar 1 too, makes keepdims ignored: parts of shape "
                "(2, 1). onnx.reference and TVM read it so",
                _outputs_of(sizes, by_sizes, 11),
            ),
        ],
    )


def _sizes_with_zero() -> ConformanceCase:
    """A SplitToSequence size of 0: an empty part, or no valid size."""
    node, inputs = _sequence_node(E.FLOAT, (5,), split=[2, 0, 3])
    split = helper.make_node("Split", ["input", "split"], ["a", "b", "c"])
    parts = _outputs_of(split, inputs, 18)
    return _read_two_ways(
        "test_split_to_sequence_sizes_with_zero_opset11",
        11,
        node,
        inputs,
        "a 1-d split holding 0 is read two ways: the spec says split 'must contain only "
        "positive numbers', and also 'All values must be >= 0'",
        [
            Reading(
                "empty-part",
                "'All values must be >= 0', as Split's sizes are: a size of 0 is an empty "
                "part between the others, 2, 0, 3. onnxruntime and onnx.reference read it so",
                (tuple(part for part in parts if isinstance(part, np.ndarray)),),
                splitops=True,
            ),
            Reading(
                "rejected",
                "'must contain only positive numbers': a size of 0 is no size, and the node "
                "is refused",
                None,
            ),
        ],
        control="test_split_to_sequence_sizes_without_zero_opset11",
    )


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
        "test_split_to_sequence_scalar_2_keepdims_0_ignored_opset11",
        11,
        E.FLOAT,
        (2, 5),
        "keepdims is ignored when split is given ('If input split is specified, this "
        "attribute is ignored'): chunks of 2 keep the axis, (2, 2), (2, 2), (2, 1)",
        axis=1,
        split=2,
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
        "test_split_to_sequence_int16_sizes_opset11",
        11,
        E.INT16,
        (2, 5),
        "int16 with 1-d sizes 3, 2 along axis 1",
        axis=1,
        split=[3, 2],
    ),
    _sequence(
        "test_split_to_sequence_sizes_without_zero_opset11",
        11,
        E.FLOAT,
        (5,),
        "sizes 2, 1, 2 of a float input: the node of the case of a size of 0, without it (a "
        "runtime that refuses both refuses that node for another reason than the 0)",
        split=[2, 1, 2],
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
    # --- what the spec's text says two ways: a runtime follows one reading, or neither ---------
    _scalar_1_keepdims_0(),
    _sizes_with_zero(),
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
        "test_split_neither_sizes_nor_num_outputs_rejected_opset18",
        18,
        E.FLOAT,
        (4,),
        "Split-18 needs the split input or num_outputs; a node with neither has no rule for "
        "its parts (Split-13 cut equal parts by output count, Split-18 does not)",
        outputs=2,
        valid=False,
    ),
    _split(
        "test_split_int32_sizes_rejected_opset18",
        18,
        E.FLOAT,
        (4,),
        "the split input of Split-18 is tensor(int64); int32 sizes are another type",
        sizes=[2, 2],
        sizes_type=np.int32,
        valid=False,
    ),
    _split(
        "test_split_int32_sizes_rejected_opset13",
        13,
        E.FLOAT,
        (4,),
        "the split input of Split-13 is tensor(int64); int32 sizes are another type",
        sizes=[2, 2],
        sizes_type=np.int32,
        valid=False,
    ),
    _split(
        "test_split_attribute_negative_size_rejected_opset11",
        11,
        E.FLOAT,
        (5,),
        "the split attribute's values must be >= 0 before opset 13 too: -1 and 6 sum to 5 "
        "but -1 is no size",
        sizes=[-1, 6],
        valid=False,
    ),
    _split(
        "test_split_bfloat16_rejected_opset11",
        11,
        E.BFLOAT16,
        (4,),
        "bfloat16 is no Split type before opset 13",
        outputs=2,
        valid=False,
    ),
    _split(
        "test_split_more_sizes_than_outputs_rejected_opset13",
        13,
        E.FLOAT,
        (6,),
        "3 sizes for a node listing 2 outputs: one size per output, and a part no output "
        "holds is no part",
        sizes=[2, 2, 2],
        outputs=2,
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
        "test_split_to_sequence_sizes_negative_rejected_opset11",
        11,
        E.FLOAT,
        (5,),
        "1-d sizes must be >= 0: -1 and 6 sum to 5 but -1 is no size",
        split=[-1, 6],
        valid=False,
    ),
    _sequence(
        "test_split_to_sequence_axis_wraps_rejected_opset11",
        11,
        E.FLOAT,
        (2, 3),
        "axis -3 of a rank-2 input lies outside [-2, 1]; adding the rank once gives -1, "
        "which numpy reads as the last axis, and -3 modulo 2 is 1: both wrap to a real axis",
        axis=-3,
        split=1,
        valid=False,
    ),
    _sequence(
        "test_split_to_sequence_bfloat16_rejected_opset11",
        11,
        E.BFLOAT16,
        (4,),
        "bfloat16 is no SplitToSequence type before opset 24",
        split=2,
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
if any(  # pragma: no cover - a defect of the table
    case.control is not None and not _BY_NAME[case.control].valid for case in CASES
):
    raise AssertionError("a control of a case read two ways must be a valid case")


def case_named(name: str) -> ConformanceCase:
    """The case called ``name`` (a ``KeyError`` for another name)."""
    return _BY_NAME[name]
