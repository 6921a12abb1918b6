"""A lowered model's outputs as its runtime's own API hands them over: onnx2torch's module
returns one tensor per graph output, in order; tract returns an output computed from a
shape as int64 (its Python API hands no symbolic dim over)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.model import ModelView
from splitops.onnx.run import RuntimeWorkers, runtime_named
from splitops.onnx.run._runtimes import _importable_torchvision

F = TensorProto.FLOAT


def _thirds() -> ModelProto:
    """A Split of three parts, each a graph output, the middle one read again."""
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3, name="cut"),
        helper.make_node("Neg", ["b"], ["nb"], name="negated"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, 6])],
        [helper.make_tensor_value_info(n, F, [2, 2]) for n in ("a", "b", "c", "nb")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_each_output_of_a_lowered_model_for_onnx2torch_has_a_node_of_its_own() -> None:
    lowered = splitops.lower_model(_thirds(), target="onnx2torch")
    view = ModelView.read(lowered)
    producers = [view.main.value(name).producer for name in view.main.output_names()]  # type: ignore[union-attr]
    assert all(p is not None and len(p.output_names) == 1 for p in producers)
    (got,) = [splitops.backend.run_model(lowered, [np.arange(12, dtype=np.float32).reshape(2, 6)])]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for value, want in zip(got, [x[:, :2], x[:, 2:4], x[:, 4:], -x[:, 2:4]], strict=True):
        np.testing.assert_array_equal(value, want)


def test_onnx2torch_returns_one_tensor_per_output_in_order() -> None:
    """The converted module itself, as a user calls it (not splitops' worker, which sorts a
    module's values out by node)."""
    if not runtime_named("onnx2torch").is_installed():
        pytest.skip("onnx2torch is not installed here: pip install --no-deps onnx2torch")
    import torch

    _importable_torchvision()  # as splitops' worker runs onnx2torch: without torchvision
    from onnx2torch import convert

    module = convert(splitops.lower_model(_thirds(), target="onnx2torch")).eval()
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    with torch.inference_mode(), warnings.catch_warnings():
        # onnx2torch indexes with a list, which torch warns of.
        warnings.simplefilter("ignore", UserWarning)
        result = module(torch.from_numpy(x))
    assert len(result) == 4
    for value, want in zip(result, [x[:, :2], x[:, 2:4], x[:, 4:], -x[:, 2:4]], strict=True):
        np.testing.assert_array_equal(value.numpy(), want)


def _dims() -> ModelProto:
    """Outputs computed from the input's shape: a dim (0-d) and two of them (1-d)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["n"], axis=0),
        helper.make_node("Gather", ["shape", "both"], ["dims"], axis=0),
        helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["B", "N"])],
        [
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("dims", TensorProto.INT64, [2]),
            helper.make_tensor_value_info("a", F, ["B", None]),
            helper.make_tensor_value_info("b", F, ["B", None]),
        ],
        [
            numpy_helper.from_array(np.array(1, np.int64), "one"),
            numpy_helper.from_array(np.array([1, 0], np.int64), "both"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_tract_hands_over_an_output_computed_from_a_shape() -> None:
    tract = runtime_named("tract")
    if not tract.is_installed():
        pytest.skip("tract is not installed here: pip install tract")
    lowered = splitops.lower_model(_dims(), target="tract")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    feeds: dict[str, Any] = {"x": x}
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        n, dims, a, b = workers.run(tract, lowered.SerializeToString(), feeds)
        original = _dims().SerializeToString()
        with pytest.raises(splitops.onnx.run.RuntimeRunError, match="TDim"):
            workers.run(tract, original, feeds)
    assert np.asarray(n).dtype == np.int64
    assert int(n) == 4
    assert np.asarray(dims).tolist() == [4, 3]
    np.testing.assert_array_equal(a, x[:, :2])
    np.testing.assert_array_equal(b, x[:, 2:])
