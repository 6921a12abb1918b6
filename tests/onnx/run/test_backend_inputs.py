"""The backend runs what onnxruntime runs, and refuses the inputs onnxruntime refuses.

onnxruntime is the oracle: each model here runs on it (or is refused by it) live.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx import ModelProto, TensorProto, ValueInfoProto, helper

from splitops import ModelCheckWarning, ModelInputError, SplitError, backend

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT


def _model(inputs: list[ValueInfoProto], outputs: list[ValueInfoProto], nodes: list[Any]) -> Any:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _onnxruntime(model: ModelProto, feeds: dict[str, Any]) -> list[Any]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, feeds))


def _halves(x: ValueInfoProto, outputs: list[ValueInfoProto]) -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2)
    return _model([x], outputs, [node])


OUTPUTS_WITHOUT_SHAPES: dict[str, Callable[[str], ValueInfoProto]] = {
    "no type": lambda name: ValueInfoProto(name=name),
    "empty tensor type": helper.make_empty_tensor_value_info,
    "no shape": lambda name: helper.make_tensor_value_info(name, F, None),
}


@pytest.mark.parametrize("output", OUTPUTS_WITHOUT_SHAPES.values(), ids=OUTPUTS_WITHOUT_SHAPES)
def test_outputs_declared_without_a_shape_run_with_a_checker_warning(
    output: Callable[[str], ValueInfoProto],
) -> None:
    model = _halves(helper.make_tensor_value_info("x", F, [4]), [output("a"), output("b")])
    x = np.arange(4, dtype=np.float32)
    expected = _onnxruntime(model, {"x": x})
    with pytest.warns(ModelCheckWarning, match="onnx.checker: .*required but missing") as said:
        prepared = backend.prepare(model)
    got = prepared.run({"x": x})
    assert [part.tolist() for part in got] == [part.tolist() for part in expected]
    # The caller's own line, through prepare or run_model alike: not backend.py's.
    assert said[0].filename == __file__
    with pytest.warns(ModelCheckWarning) as deeper:
        backend.run_model(model, {"x": x})
    assert deeper[0].filename == __file__


def _declared_2x4() -> ModelProto:
    x = helper.make_tensor_value_info("x", F, [2, 4])
    parts = [helper.make_tensor_value_info(n, F, [1, 4]) for n in "ab"]
    return _halves(x, parts)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (np.zeros((3, 4), np.float32), "dim 0 must be 2"),
        (np.zeros((2, 4, 1), np.float32), "its rank must be 2"),
        (np.zeros((2, 4), np.float64), "its element type must be float"),
    ],
    ids=["static dim", "rank", "element type"],
)
def test_an_input_onnxruntime_refuses_is_refused_naming_what_differs(given: Any, says: str) -> None:
    model = _declared_2x4()
    refused = r"INVALID_ARGUMENT|Unexpected input data type|[Ii]nvalid rank"
    with pytest.raises(Exception, match=refused):
        _onnxruntime(model, {"x": given})
    with pytest.raises(ModelInputError, match=f"input 'x': the model declares .*{says}") as info:
        backend.run_model(model, [given])
    assert not isinstance(info.value, SplitError)


@pytest.mark.parametrize(
    ("declared", "given", "says"),
    [
        (
            TensorProto.FLOAT8E4M3FN,
            np.zeros(3, ml_dtypes.float8_e5m2),
            "declares tensor(float8e4m3fn) [3], but an array of float8e5m2 (3,) was given: its "
            "element type must be float8e4m3fn (numpy dtype ml_dtypes.float8_e4m3fn)",
        ),
        (
            TensorProto.INT4,
            np.zeros(3, np.int8),
            "declares tensor(int4) [3], but an array of int8 (3,) was given: its element type "
            "must be int4 (numpy dtype ml_dtypes.int4)",
        ),
        (
            TensorProto.FLOAT,
            np.zeros(3, ml_dtypes.float4_e2m1fn),
            "declares tensor(float) [3], but an array of float4e2m1 (3,) was given: its element "
            "type must be float (numpy dtype float32)",
        ),
    ],
    ids=["float8 for another float8", "int8 for int4", "float4e2m1 for float"],
)
def test_an_element_type_numpy_lacks_is_named_by_onnx_and_by_its_ml_dtypes_dtype(
    declared: int, given: Any, says: str
) -> None:
    x = helper.make_tensor_value_info("x", declared, [3])
    model = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [x]),
        opset_imports=[helper.make_opsetid("", 25)],
    )
    model.graph.output[0].name = "y"
    with pytest.raises(ModelInputError) as info:
        backend.check_feeds(model, {"x": given})
    assert says in str(info.value)
    right = np.zeros(3, helper.tensor_dtype_to_np_dtype(declared))
    backend.check_feeds(model, {"x": right})


def test_a_symbolic_dim_must_have_one_length_in_every_input() -> None:
    x = helper.make_tensor_value_info("x", F, ["N"])
    y = helper.make_tensor_value_info("y", F, ["N"])
    add = helper.make_node("Add", ["x", "y"], ["s"])
    split = helper.make_node("Split", ["s"], ["a"], axis=0, num_outputs=1)
    model = _model([x, y], [helper.make_tensor_value_info("a", F, ["N"])], [add, split])
    feeds = {"x": np.zeros(3, np.float32), "y": np.zeros(3, np.float32)}
    assert backend.run_model(model, feeds)[0].shape == (3,)
    with pytest.raises(ModelInputError, match="symbol 'N', which is 3 in 'x' dim 0"):
        backend.run_model(model, {"x": feeds["x"], "y": np.zeros(2, np.float32)})


def test_a_missing_or_unknown_input_is_refused_by_name() -> None:
    model = _declared_2x4()
    with pytest.raises(ModelInputError, match="needs input 'x'"):
        backend.run_model(model, {})
    with pytest.raises(ModelInputError, match="no input 'z'; its inputs are \\['x'\\]"):
        backend.run_model(model, {"x": np.zeros((2, 4), np.float32), "z": np.zeros(1)})
