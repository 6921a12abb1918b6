"""Every tool reads a model as onnxruntime runs it: the checker, inference, conversion and
each lowering target give onnxruntime's answers on models that two readers once read
otherwise.

- An IR-3 model whose Split sizes come from an initializer that is not listed as a graph
  input: a constant to onnxruntime (and to splitops' view), ignored by onnx's own shape
  inference, which conversion once typed the model with.
- A float ``Range`` of known scalars before a Split (``Range(0.0, 4.0, 1.0)``, or its limit
  from a static ``Cast(Shape(x))`` to float), as exported transformers compute aranges.

The oracle is onnxruntime, live, on the original model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

import splitops
from splitops.onnx.rewrite._lower import TARGETS

ort = pytest.importorskip("onnxruntime")

FLOAT = TensorProto.FLOAT


def ir3_initializer_not_an_input() -> ModelProto:
    sizes = numpy_helper.from_array(np.array([1, 3], np.int64), "s")
    graph = helper.make_graph(
        [helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")],
        "g",
        [helper.make_tensor_value_info("x", FLOAT, [4])],
        [helper.make_tensor_value_info(n, FLOAT, [None]) for n in "ab"],
        initializer=[sizes],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=3)


def float_range(limit_from_shape: bool) -> ModelProto:
    def scalar(name: str, value: float) -> onnx.NodeProto:
        tensor = numpy_helper.from_array(np.array(value, np.float32))
        return helper.make_node("Constant", [], [name], value=tensor)

    nodes = [scalar("start", 0.0), scalar("delta", 1.0)]
    if limit_from_shape:
        first = numpy_helper.from_array(np.array(0, np.int64))
        nodes += [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Constant", [], ["first"], value=first),
            helper.make_node("Gather", ["shape", "first"], ["length"]),
            helper.make_node("Cast", ["length"], ["limit"], to=FLOAT),
        ]
    else:
        nodes.append(scalar("limit", 4.0))
    nodes += [
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2, name="cut"),
        helper.make_node("Split", ["r"], ["c", "d"], axis=0, num_outputs=2, name="cut_range"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", FLOAT, [4, 2])],
        [
            *(helper.make_tensor_value_info(n, FLOAT, [None, 2]) for n in "ab"),
            *(helper.make_tensor_value_info(n, FLOAT, [None]) for n in "cd"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


MODELS = {
    "ir3-initializer-not-an-input": ir3_initializer_not_an_input(),
    "float-range": float_range(False),
    "float-range-from-shape": float_range(True),
}


def run_ort(model: ModelProto) -> list[np.ndarray[Any, Any]]:
    x = np.arange(np.prod([d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]))
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, {"x": x.astype(np.float32).reshape(shape)}))


def assert_outputs_equal(got: list[Any], want: list[Any], what: str) -> None:
    assert len(got) == len(want), what
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(a), b, err_msg=what, strict=True)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_checker_finds_no_problem_where_onnxruntime_runs_the_model(name: str) -> None:
    run_ort(MODELS[name])  # onnxruntime runs it
    assert splitops.check_model(MODELS[name]) == []


@pytest.mark.parametrize("name", list(MODELS))
def test_inference_gives_the_output_shapes_onnxruntime_computes(name: str) -> None:
    model = MODELS[name]
    inferred = splitops.infer_shapes(model, strict=False)
    for output, value in zip(inferred.graph.output, run_ort(model), strict=True):
        dims = [d.dim_value for d in output.type.tensor_type.shape.dim]
        assert dims == list(value.shape), output.name


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(MODELS))
def test_lowering_for_each_target_keeps_what_onnxruntime_computes(name: str, target: str) -> None:
    model = MODELS[name]
    lowered = splitops.lower_model(model, target=target)  # type: ignore[arg-type]
    assert_outputs_equal(run_ort(lowered), run_ort(model), f"lowered for {target}")


# onnx's version converter has no adapter to take Shape-15 down to 13 (OtherOperatorError).
CONVERSIONS = [(n, o) for n in MODELS for o in (13, 18) if (n, o) != ("float-range-from-shape", 13)]


@pytest.mark.parametrize(("name", "opset"), CONVERSIONS)
def test_conversion_keeps_what_onnxruntime_computes(name: str, opset: int) -> None:
    model = MODELS[name]
    converted = splitops.convert_model(model, opset)
    assert_outputs_equal(run_ort(converted), run_ort(model), f"converted to {opset}")
