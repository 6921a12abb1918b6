"""A public function given the wrong kind of argument raises a ``TypeError`` naming what it
takes, at once, not an ``AttributeError`` from deep inside; ``load_model`` takes a model's
bytes as onnx does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from splitops import ModelLoadError, backend
from splitops.examples import EXAMPLE_MODEL
from splitops.onnx import (
    ModelView,
    check_model,
    check_portability,
    convert_model,
    default_opset,
    describe_array,
    describe_split_nodes,
    describe_type,
    infer_shapes,
    load_model,
    lower_model,
    save_model,
    split_nodes,
    split_output_rows,
)

#: Each function that takes a model, by the name its error gives, and a call of it.
TAKES_A_MODEL: dict[str, Callable[[Any], object]] = {
    "check_model": check_model,
    "infer_shapes": infer_shapes,
    "lower_model": lower_model,
    "convert_model": lambda value: convert_model(value, 13),
    "save_model": lambda value: save_model(value, "never_written.onnx"),
    "backend.run_model": lambda value: backend.run_model(value, []),
    "backend.prepare": backend.prepare,
    "ModelView.read": ModelView.read,
    "split_nodes": split_nodes,
    "check_portability": check_portability,
}
WRONG = [None, 1, "model.onnx"]


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("name", list(TAKES_A_MODEL))
def test_a_function_taking_a_model_names_it_when_given_something_else(
    name: str, value: object
) -> None:
    kind = type(value).__name__
    with pytest.raises(TypeError, match=rf"^{name} takes an onnx.ModelProto, not {kind}\.$"):
        TAKES_A_MODEL[name](value)


@pytest.mark.parametrize("value", WRONG, ids=repr)
def test_default_opset_names_what_it_takes(value: object) -> None:
    with pytest.raises(TypeError, match=r"^default_opset takes a model's opset_import"):
        default_opset(value)  # type: ignore[arg-type]
    assert default_opset(load_model(EXAMPLE_MODEL).opset_import) == 18


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("function", [describe_split_nodes, split_output_rows])
def test_the_describers_of_a_view_name_what_they_take(
    function: Callable[[Any], object], value: object
) -> None:
    kind = type(value).__name__
    name = function.__name__
    takes = r"a ModelView \(splitops.onnx.ModelView.read\(model\)\)"
    with pytest.raises(TypeError, match=rf"^{name} takes {takes}, not {kind}\.$"):
        function(value)
    assert function(ModelView.read(load_model(EXAMPLE_MODEL)))


def test_save_model_names_the_path_it_takes() -> None:
    with pytest.raises(TypeError, match=r"^save_model takes a path \(str or os.PathLike\)"):
        save_model(load_model(EXAMPLE_MODEL), None)  # type: ignore[arg-type]


def test_describe_type_and_describe_array_name_what_they_take() -> None:
    takes = r"^describe_type takes an onnx.TypeProto, a ValueType or None, not"
    with pytest.raises(TypeError, match=takes):
        describe_type(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^describe_array takes a numpy array, not NoneType"):
        describe_array(None)  # type: ignore[arg-type]
    assert describe_array(np.float32(2)) == "float32 () [2.]"


def test_load_model_takes_a_models_bytes_as_onnx_does() -> None:
    data = EXAMPLE_MODEL.read_bytes()
    assert load_model(data) == onnx.load_model_from_string(data)
    assert load_model(bytearray(data)) == load_model(EXAMPLE_MODEL)


@pytest.mark.parametrize("value", [None, 1, ["model.onnx"]], ids=repr)
def test_load_model_names_what_it_takes(value: object) -> None:
    with pytest.raises(TypeError, match=r"^load_model takes a path or the model's bytes, not"):
        load_model(value)  # type: ignore[arg-type]


def test_model_bytes_are_checked_as_a_file_is() -> None:
    with pytest.raises(ModelLoadError, match="cannot load the model's bytes: there are none"):
        load_model(b"")
    with pytest.raises(ModelLoadError, match="cannot load the model's bytes"):
        load_model(b"\x08\x07garbage that is no model")


def test_model_bytes_with_external_data_are_refused_unless_not_loaded(tmp_path: Path) -> None:
    weights = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["y"])],
        "g",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [weights],
    )
    model = helper.make_model(graph)
    onnx.save_model(model, tmp_path / "m.onnx", save_as_external_data=True, size_threshold=0)
    data = (tmp_path / "m.onnx").read_bytes()
    with pytest.raises(ModelLoadError, match="external data, which bytes have no folder"):
        load_model(data)
    kept = load_model(data, load_external_data=False)
    assert kept.graph.initializer[0].data_location == TensorProto.EXTERNAL
