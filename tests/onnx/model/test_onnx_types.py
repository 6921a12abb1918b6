"""The one table of element types (``splitops.core.ElementType``), checked against onnx itself:
codes, names, numpy dtypes, and the first version of each operator that accepts each type."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, defs, helper, numpy_helper

import splitops
from splitops import SplitTypeError
from splitops.core import OPSET_RULES, ElementType
from splitops.onnx.model._types import code_of_dtype, element_of_code, numpy_dtype


def _schema_types(op: str, version: int, constraint: str) -> set[str]:
    """The element types of a type constraint of an operator version, read from onnx.defs."""
    schema = defs.get_schema(op, version)
    (allowed,) = [
        c.allowed_type_strs for c in schema.type_constraints if c.type_param_str == constraint
    ]
    return {t.removeprefix("tensor(").removesuffix(")") for t in allowed}


@pytest.mark.parametrize(("op", "version"), sorted(OPSET_RULES))
def test_each_version_accepts_exactly_the_types_of_its_onnx_schema(op: str, version: int) -> None:
    accepted = {element.onnx_name for element in OPSET_RULES[(op, version)].dtypes}
    assert accepted == _schema_types(op, version, "T")


def test_the_table_holds_exactly_the_types_of_the_newest_versions() -> None:
    assert {e.onnx_name for e in ElementType} == _schema_types("Split", 18, "T")
    assert {e.onnx_name for e in ElementType} == _schema_types("SplitToSequence", 24, "T")


@pytest.mark.parametrize("element", list(ElementType), ids=lambda e: e.onnx_name)
def test_codes_names_and_dtypes_agree_with_onnx_helper(element: ElementType) -> None:
    assert TensorProto.DataType.Name(element.code).lower() == element.onnx_name
    assert numpy_dtype(element) == helper.tensor_dtype_to_np_dtype(element.code)
    assert element_of_code(element.code) is element


@pytest.mark.parametrize("element", list(ElementType), ids=lambda e: e.onnx_name)
def test_tensors_of_every_type_round_trip_through_run_node(element: ElementType) -> None:
    """A tensor of each type, made by onnx's numpy_helper, splits into parts of its dtype."""
    dtype = numpy_dtype(element)
    strings = np.array(["a", "b", "c", "d"], dtype=object)
    values = strings if element is ElementType.STRING else np.arange(4)
    tensor = numpy_helper.from_array(values.astype(dtype))
    x = numpy_helper.to_array(tensor)
    assert code_of_dtype(x.dtype) == tensor.data_type
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    parts = splitops.run_node(node, [x], opset=18)
    assert [part.dtype for part in parts] == [dtype, dtype]
    assert [part.tolist() for part in parts] == [x[:2].tolist(), x[2:].tolist()]


@pytest.mark.parametrize(
    ("torch_dtype", "element"),
    [
        ("float32", ElementType.FLOAT),
        ("float64", ElementType.DOUBLE),
        ("bfloat16", ElementType.BFLOAT16),
        ("bool", ElementType.BOOL),
    ],
)
def test_torch_dtypes_map_to_their_onnx_types(torch_dtype: str, element: ElementType) -> None:
    torch = pytest.importorskip("torch")
    assert code_of_dtype(getattr(torch, torch_dtype)) == element.code


@pytest.mark.parametrize(
    "code", [TensorProto.FLOAT8E4M3FN, TensorProto.INT4, TensorProto.UNDEFINED, 999]
)
def test_types_split_does_not_take_are_rejected(code: int) -> None:
    with pytest.raises(SplitTypeError, match="is not one of the 16 types"):
        element_of_code(code)


def test_dtypes_without_an_onnx_type_are_rejected() -> None:
    with pytest.raises(SplitTypeError, match="has no ONNX element type"):
        code_of_dtype(np.dtype("datetime64[s]"))
