"""The one table of ONNX element types and array dtypes, checked against onnx itself."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, defs, helper, numpy_helper

import splitops
from splitops import SplitTypeError
from splitops.onnx_types import (
    ONNX_ELEMENT_TYPES,
    element_type_of,
    numpy_dtype,
    tensor_type,
    tensor_type_of,
)

torch = pytest.importorskip("torch")


def _schema_types(op: str, version: int, constraint: str) -> set[str]:
    """The element types of a type constraint of an operator version, read from onnx.defs."""
    schema = defs.get_schema(op, version)
    (allowed,) = [
        c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == constraint
    ]
    return {t.removeprefix("tensor(").removesuffix(")") for t in allowed}


def test_table_holds_exactly_the_types_split18_and_sequence24_take() -> None:
    assert set(ONNX_ELEMENT_TYPES) == _schema_types("Split", 18, "T")
    assert set(ONNX_ELEMENT_TYPES) == _schema_types("SplitToSequence", 24, "T")


@pytest.mark.parametrize("name", sorted(ONNX_ELEMENT_TYPES))
def test_table_agrees_with_onnx_helper(name: str) -> None:
    code = tensor_type(name)
    assert TensorProto.DataType.Name(code).lower() == name
    assert numpy_dtype(code) == helper.tensor_dtype_to_np_dtype(code)
    assert element_type_of(code) == name


@pytest.mark.parametrize("name", sorted(ONNX_ELEMENT_TYPES))
def test_tensors_of_every_type_round_trip_through_run_node(name: str) -> None:
    """A tensor of each type, made by onnx's numpy_helper, splits into parts of its dtype."""
    dtype = numpy_dtype(tensor_type(name))
    values = np.array(["a", "b", "c", "d"], dtype=object) if name == "string" else np.arange(4)
    tensor = numpy_helper.from_array(values.astype(dtype))
    x = numpy_helper.to_array(tensor)
    assert tensor_type_of(x.dtype) == tensor.data_type
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    parts = splitops.run_node(node, [x], opset=18)
    assert [part.dtype for part in parts] == [dtype, dtype]
    assert [part.tolist() for part in parts] == [x[:2].tolist(), x[2:].tolist()]


@pytest.mark.parametrize(
    ("torch_dtype", "name"),
    [("float32", "float"), ("float64", "double"), ("bfloat16", "bfloat16"), ("bool", "bool")],
)
def test_torch_dtypes_map_to_their_onnx_types(torch_dtype: str, name: str) -> None:
    assert tensor_type_of(getattr(torch, torch_dtype)) == tensor_type(name)


@pytest.mark.parametrize(
    "code", [TensorProto.FLOAT8E4M3FN, TensorProto.INT4, TensorProto.UNDEFINED]
)
def test_types_split_does_not_take_are_rejected(code: int) -> None:
    with pytest.raises(SplitTypeError, match="is not one of the 16 types"):
        element_type_of(code)


def test_dtypes_without_an_onnx_type_are_rejected() -> None:
    with pytest.raises(SplitTypeError, match="has no ONNX element type"):
        tensor_type_of(np.dtype("datetime64[s]"))
