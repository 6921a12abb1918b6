"""Answers of ``onnx.shape_inference`` (onnx 1.23) that execution contradicts, or that fall
short of it, pinned with splitops' answer beside each: a test fails if either side changes."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from harness.shapes import KNOWN, executed_shapes, split_dim_verdicts
from onnx import ModelProto, TensorProto, helper, numpy_helper, shape_inference
from tests.processes import GUARD_SECONDS

from splitops import SplitError, infer_shapes, run_node
from splitops.onnx.inference._engine import SplitInferenceWarning

F = TensorProto.FLOAT


def test_onnx_gives_split18_of_5_into_4_a_negative_last_dim(
    make_model: Callable[..., ModelProto], value_shapes: Callable[..., Any]
) -> None:
    node = helper.make_node("Split", ["x"], list("abcd"), axis=0, num_outputs=4, name="s")
    model = make_model([node], {"x": (F, [5])}, opset=18)
    theirs = value_shapes(shape_inference.infer_shapes(model))
    assert [theirs[n] for n in "abcd"] == [("tensor", F, [d]) for d in (2, 2, 2, -1)]
    # Execution rejects the node: ceil(5/4)=2 leaves -1 for the last part.
    with pytest.raises(SplitError, match="cannot split a dim of 5 into 4 parts"):
        run_node(node, [np.zeros(5, np.float32)], opset=18)
    with pytest.raises(SplitError, match=r"main: node 's' \(Split\): .* leave -1 for the last"):
        infer_shapes(model)
    with pytest.warns(SplitInferenceWarning, match="left without shapes"):
        ours = value_shapes(infer_shapes(model, strict=False))
    assert [ours[n] for n in "abcd"] == [None] * 4


def test_onnx_forgets_constant_sizes_on_a_symbolic_dim(
    make_model: Callable[..., ModelProto], value_shapes: Callable[..., Any]
) -> None:
    node = helper.make_node("Split", ["x", "split"], ["a", "b"], axis=0)
    sizes = {"split": np.array([2, 3], dtype=np.int64)}
    model = make_model([node], {"x": (F, ["N", 3])}, opset=18, constants=sizes)
    theirs = value_shapes(shape_inference.infer_shapes(model))
    assert theirs["a"] == ("tensor", F, ["unk__0", 3])
    assert theirs["b"] == ("tensor", F, ["unk__1", 3])
    ours = value_shapes(infer_shapes(model))
    assert ours["a"] == ("tensor", F, [2, 3])
    assert ours["b"] == ("tensor", F, [3, 3])
    parts = run_node(node, [np.zeros((5, 3), np.float32), sizes["split"]], opset=18)
    assert [p.shape for p in parts] == [(2, 3), (3, 3)]


def test_onnx_accepts_negative_split_sizes(
    make_model: Callable[..., ModelProto], value_shapes: Callable[..., Any]
) -> None:
    node = helper.make_node("Split", ["x", "split"], ["a", "b"], axis=0, name="s")
    sizes = {"split": np.array([-1, 6], dtype=np.int64)}
    model = make_model([node], {"x": (F, [5, 3])}, opset=18, constants=sizes)
    theirs = value_shapes(shape_inference.infer_shapes(model, strict_mode=True))
    assert theirs["a"] == ("tensor", F, [-1, 3])
    assert theirs["b"] == ("tensor", F, [6, 3])
    with pytest.raises(SplitError, match=r"split sizes must be >= 0; \[-1, 6\]"):
        run_node(node, [np.zeros((5, 3), np.float32), sizes["split"]], opset=18)
    with pytest.raises(SplitError, match=r"node 's' \(Split\): .*must be >= 0"):
        infer_shapes(model)


def test_onnx_aborts_the_process_on_a_split18_listing_more_outputs_than_num_outputs(
    make_model: Callable[..., ModelProto],
) -> None:
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], num_outputs=2, name="s")
    model = make_model([node], {"x": (F, [6, 3])}, opset=18)
    # onnx 1.23's inference reads num_outputs sizes for every output listed: out of bounds.
    code = (
        "import onnx, sys; "
        "onnx.shape_inference.infer_shapes(onnx.load_from_string(sys.stdin.buffer.read()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=model.SerializeToString(), capture_output=True,
        timeout=GUARD_SECONDS, check=False,
    )  # fmt: skip
    assert done.returncode == -signal.SIGABRT
    with pytest.raises(SplitError, match=r"node 's' \(Split\): Split-18 has 3 outputs") as error:
        infer_shapes(model)
    assert error.value.rule == "output-count"


def test_onnx_leaves_sizes_computed_from_the_shape_unknown(
    make_model: Callable[..., ModelProto], value_shapes: Callable[..., Any]
) -> None:
    pytest.importorskip("onnxruntime")
    three = numpy_helper.from_array(np.array(3, np.int64))
    nodes = [
        helper.make_node("Shape", ["x"], ["s1"], start=1, end=2),
        helper.make_node("Constant", [], ["three"], value=three),
        helper.make_node("Div", ["s1", "three"], ["third"]),
        helper.make_node("Sub", ["s1", "third"], ["rest"]),
        helper.make_node("Concat", ["third", "rest"], ["sizes"], axis=0),
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
    ]
    model = make_model(nodes, {"x": (F, ["B", "S"])}, opset=18)
    theirs = value_shapes(shape_inference.infer_shapes(model, data_prop=True))
    assert [theirs[n][2][1].startswith("unk__") for n in "ab"] == [True, True]
    feeds = [{"x": np.zeros((2, s), np.float32)} for s in (7, 9)]
    verdicts = split_dim_verdicts(infer_shapes(model), executed_shapes(model, feeds))
    assert verdicts == {"a": [KNOWN, KNOWN], "b": [KNOWN, KNOWN]}
