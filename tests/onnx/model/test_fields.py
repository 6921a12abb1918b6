"""The model layer is the only reader and writer of a model's attributes, initializers and
declared types: the rule, checked on the source, and what its functions do."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import splitops
from splitops.onnx.model import (
    attribute_value,
    attribute_values,
    declared_types,
    drop_attributes,
    function_defaults,
    keep_attributes,
    links_attributes,
    links_only,
    resolve_linked,
    set_attributes,
)

SOURCE = Path(splitops.__file__).resolve().parent
MODEL_LAYER = SOURCE / "onnx" / "model"
#: The protobuf fields only the model layer touches.
FIELDS = {"attribute", "attribute_proto", "initializer", "sparse_initializer", "value_info"}


def _field_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [
        f"{path.relative_to(SOURCE)}:{node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in FIELDS
    ]


def test_no_module_outside_the_model_layer_touches_those_fields() -> None:
    outside = [p for p in sorted(SOURCE.rglob("*.py")) if MODEL_LAYER not in p.parents]
    assert len(outside) > 40
    assert [read for path in outside for read in _field_reads(path)] == []


def test_the_rule_sees_a_field_read() -> None:
    """The check above finds what it looks for: the model layer itself reads the fields."""
    assert any(_field_reads(MODEL_LAYER / "_fields.py"))


def test_attributes_read_as_python_values_and_written_in_place() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=-1, split=[1, 2], keepdims=0)
    assert attribute_values(node) == {"axis": -1, "split": [1, 2], "keepdims": 0}
    assert attribute_value(node, "num_outputs", 7) == 7
    set_attributes(node, axis=0, num_outputs=2)
    assert attribute_values(node) == {"split": [1, 2], "keepdims": 0, "axis": 0, "num_outputs": 2}
    drop_attributes(node, {"keepdims"})
    keep_attributes(node, {"axis", "split"})
    assert list(attribute_values(node)) == ["split", "axis"]


def test_a_linked_attribute_takes_the_call_s_value_or_is_left_out() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"])
    for name, ref in (("axis", "a"), ("split", "s")):
        linked = AttributeProto(name=name, ref_attr_name=ref)
        linked.type = AttributeProto.INT if name == "axis" else AttributeProto.INTS
        node.attribute.append(linked)
    assert links_attributes(node)
    assert links_only(node, {"a", "s"})
    assert not links_only(node, {"a"})
    resolved = resolve_linked(node, {"a": 1})
    assert attribute_values(resolved) == {"axis": 1}
    assert not links_attributes(resolved)
    assert links_attributes(node)  # the body's node is left as it was


def test_function_defaults_plain_as_onnx_reference_passes_them() -> None:
    function = helper.make_function("d", "F", ["x"], ["y"], [], [helper.make_opsetid("", 18)])
    function.attribute_proto.extend(
        [
            helper.make_attribute("mode", "edge"),
            helper.make_attribute("k", numpy_helper.from_array(np.array([3], np.int64))),
        ]
    )
    assert function_defaults(function)["mode"] == b"edge"
    plain = function_defaults(function, plain=True)
    assert plain["mode"] == "edge"
    np.testing.assert_array_equal(plain["k"], [3])


@pytest.mark.parametrize(
    ("inputs", "untyped", "names"),
    [
        (True, False, ["w", "x", "y"]),
        (True, True, ["w", "x", "v", "y"]),
        (False, False, ["y"]),
        (False, True, ["v", "y"]),
    ],
)
def test_one_reader_of_declared_types(inputs: bool, untyped: bool, names: list[str]) -> None:
    """The one reader of what a graph declares: with or without its inputs and weights,
    with or without the entries that give no type."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["v"]), helper.make_node("Relu", ["v"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.zeros(3, np.float32), "w")],
        value_info=[helper.make_empty_tensor_value_info("v")],
    )
    assert list(declared_types(graph, inputs=inputs, untyped=untyped)) == names


def test_graphs_at_finds_every_body_by_identity_as_the_walk_does() -> None:
    """Every body the walk yields is found at its key, the same protobuf object, and a key
    whose graph the model lacks gives ``None``."""
    from tests.onnx.rewrite.test_scoped_lowering import CASES

    from splitops.onnx.model import GraphsAt, ModelView

    checked = 0
    for case in CASES:
        graphs_at = GraphsAt(case.model)
        view = ModelView.read(case.model)
        for scope in view.scopes:
            assert graphs_at(scope.key) is scope.proto
            checked += 1
        assert graphs_at((None, ((10_000, "then_branch", -1),))) is None
        assert graphs_at((("nowhere", "F", ""), ())) is None
    assert checked > 2 * len(CASES)
