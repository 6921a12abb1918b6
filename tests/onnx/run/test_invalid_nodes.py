"""Nodes the schema of their version forbids raise SplitError (SplitTypeError for a wrong type)
naming the node and its op, through ``run_node`` and through ``backend.run_model`` alike."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, helper, numpy_helper

import splitops
from splitops import SplitError, SplitTypeError, backend
from splitops.onnx.model._types import code_of_dtype


@dataclass(frozen=True)
class Invalid:
    """One forbidden node, the value of its input and the rule it breaks."""

    rule: str
    op: str
    opset: int
    outputs: int
    attributes: dict[str, Any] = field(default_factory=dict)
    x: Any = field(default_factory=lambda: np.arange(6, dtype=np.float32))
    split: Any = None
    error: type[SplitError] = SplitError
    match: str = ""


X2D = np.zeros((2, 3), dtype=np.float32)
NO_SPLIT = "has no attribute 'split'"
INVALID = [
    Invalid(
        "output count differs from split sizes",
        "Split",
        13,
        3,
        split=np.array([2, 4]),
        match="has 3 outputs but split gives 2 sizes",
    ),
    Invalid(
        "output count differs from the split attribute",
        "Split",
        11,
        2,
        {"split": [1, 2, 3]},
        match="has 2 outputs but split gives 3 sizes",
    ),
    Invalid(
        "more outputs than num_outputs",
        "Split",
        18,
        4,
        {"num_outputs": 3},
        match="num_outputs is 3",
    ),
    Invalid(
        "split input and num_outputs",
        "Split",
        18,
        2,
        {"num_outputs": 2},
        split=np.array([3, 3]),
        match="not both",
    ),
    Invalid("neither split nor num_outputs at 18", "Split", 18, 2, match="neither was given"),
    *(
        Invalid(f"split attribute at opset {v}", "Split", v, 2, {"split": [3, 3]}, match=NO_SPLIT)
        for v in (13, 18)
    ),
    *(
        Invalid(
            f"split input at opset {v}",
            "Split",
            v,
            2,
            split=split,
            match="takes split as an attribute, not as an input",
        )
        for v, split in [(11, np.array([3, 3])), (2, np.array([3.0, 3.0], np.float32))]
    ),
    Invalid(
        "unknown attribute",
        "Split",
        18,
        2,
        {"num_outputs": 2, "axes": [0]},
        match="has no attribute 'axes'",
    ),
    Invalid(
        "unknown SplitToSequence attribute",
        "SplitToSequence",
        11,
        1,
        {"num_outputs": 2},
        match="has no attribute 'num_outputs'",
    ),
    Invalid(
        "num_outputs before opset 18",
        "Split",
        13,
        2,
        {"num_outputs": 2},
        match="has no attribute 'num_outputs'",
    ),
    *(
        Invalid(
            f"int32 split at opset {v}",
            "Split",
            v,
            2,
            split=np.array([3, 3], np.int32),
            error=SplitTypeError,
            match="takes its split input as int64; int32 was given",
        )
        for v in (13, 18)
    ),
    Invalid(
        "float split for SplitToSequence",
        "SplitToSequence",
        11,
        1,
        split=np.array([3.0, 3.0], np.float32),
        error=SplitTypeError,
        match="int32 or int64; float was given",
    ),
    Invalid(
        "int64 split at opset 1 (typed T)",
        "Split",
        1,
        2,
        split=np.array([3, 3]),
        error=SplitTypeError,
        match=r"float \(the input's type T\); int64 was given",
    ),
    Invalid(
        "non-whole float split at opset 1",
        "Split",
        1,
        2,
        split=np.array([2.5, 3.5], np.float32),
        error=SplitTypeError,
        match="whole numbers",
    ),
    Invalid(
        "attribute and input at opset 1",
        "Split",
        1,
        2,
        {"split": [3, 3]},
        split=np.array([3.0, 3.0], np.float32),
        match="not both",
    ),
    Invalid(
        "axis out of range",
        "Split",
        18,
        2,
        {"axis": 2, "num_outputs": 2},
        x=X2D,
        match=r"axis 2 is out of range .* \[-2, 1\]",
    ),
    Invalid(
        "negative axis out of range",
        "SplitToSequence",
        24,
        1,
        {"axis": -3},
        x=X2D,
        match=r"axis -3 is out of range",
    ),
    Invalid(
        "uneven equal parts before 18",
        "Split",
        13,
        4,
        match="does not divide into 4",
    ),
    Invalid(
        "sizes not adding up",
        "SplitToSequence",
        11,
        1,
        split=np.array([2, 2]),
        match="sum to 4, but the axis length is 6",
    ),
    Invalid(
        "negative size",
        "Split",
        13,
        2,
        split=np.array([-1, 7]),
        match="must be >= 0",
    ),
    Invalid(
        "SplitToSequence with two outputs",
        "SplitToSequence",
        11,
        2,
        match="has one output, a sequence",
    ),
    Invalid(
        "input type outside the version",
        "Split",
        1,
        2,
        x=np.arange(6, dtype=np.int64),
        error=SplitTypeError,
        match="does not accept int64 inputs",
    ),
    Invalid(
        "keepdims other than 0 or 1",
        "SplitToSequence",
        11,
        1,
        {"keepdims": 2},
        match="keepdims must be 0 or 1",
    ),
    Invalid(
        "attribute of the wrong type",
        "Split",
        18,
        2,
        {"axis": 0.5, "num_outputs": 2},
        error=SplitTypeError,
        match="attribute 'axis' must be INT; FLOAT was given",
    ),
]


def _node(case: Invalid) -> Any:
    inputs = ["x"] if case.split is None else ["x", "split"]
    outputs = [f"y{i}" for i in range(case.outputs)]
    return helper.make_node(case.op, inputs, outputs, name="bad", **case.attributes)


def _model(case: Invalid) -> ModelProto:
    node = _node(case)
    rank = case.x.ndim
    inputs = [helper.make_tensor_value_info("x", code_of_dtype(case.x.dtype), case.x.shape)]
    if case.split is not None:
        split_type = code_of_dtype(case.split.dtype)
        inputs.append(helper.make_tensor_value_info("split", split_type, case.split.shape))
    element = code_of_dtype(case.x.dtype)
    if case.op == "Split":
        outputs = [helper.make_tensor_value_info(n, element, [None] * rank) for n in node.output]
    else:
        outputs = [
            helper.make_tensor_sequence_value_info(n, element, [None] * rank) for n in node.output
        ]
    graph = helper.make_graph([node], "invalid", inputs, outputs)
    opsets = [helper.make_opsetid("", case.opset)]
    # onnx's version table skips opsets 2 to 4, which IR version 3 carried.
    ir_version = 3 if case.opset < 5 else helper.find_min_ir_version_for(opsets)
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def _expected(case: Invalid) -> str:
    return rf"^node 'bad' \({case.op}\): .*{case.match}"


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.rule.replace(" ", "-"))
def test_invalid_node_raises_through_run_node(case: Invalid) -> None:
    inputs = [case.x] if case.split is None else [case.x, case.split]
    with pytest.raises(case.error, match=_expected(case)):
        splitops.run_node(_node(case), inputs, opset=case.opset)


@pytest.mark.parametrize("case", INVALID, ids=lambda c: c.rule.replace(" ", "-"))
def test_invalid_node_raises_through_backend_run_model(case: Invalid) -> None:
    feeds = {"x": case.x} if case.split is None else {"x": case.x, "split": case.split}
    with pytest.raises(case.error, match=_expected(case)) as info:
        backend.run_model(_model(case), feeds)
    assert type(info.value) is case.error


def test_invalid_split_given_as_initializer_raises_through_backend() -> None:
    """A wrong split size held in the model itself is reported the same way."""
    case = INVALID[0]
    model = _model(case)
    del model.graph.input[1]
    model.graph.initializer.append(numpy_helper.from_array(case.split, "split"))
    with pytest.raises(SplitError, match=_expected(case)):
        backend.run_model(model, {"x": case.x})


def test_every_message_names_the_version_whose_rule_it_quotes() -> None:
    """Messages quote the rule as "<op>-<since_version>", the version that applies."""
    case = next(c for c in INVALID if c.rule == "split attribute at opset 13")
    with pytest.raises(SplitError) as info:
        splitops.run_node(_node(case), [case.x], opset=17)
    assert re.search(r"Split-13 has no attribute 'split'", str(info.value))
