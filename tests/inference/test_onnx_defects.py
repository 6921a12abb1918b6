"""Three answers of ``onnx.shape_inference`` (onnx 1.23) that execution contradicts, pinned
with splitops' answer beside each: a test fails if either side changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper, shape_inference

from splitops import SplitError, infer_shapes, run_node
from splitops.onnx._inference import SplitInferenceWarning

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
