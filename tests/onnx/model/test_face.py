"""The model layer's face: the view, the types, the site, the edits and I/O, at most 40
names; what touches a protobuf itself is imported from ``model.protobuf``, where it shows."""

from __future__ import annotations

import inspect
from typing import get_type_hints

import splitops.onnx.model as face
from splitops.onnx.model import describe, protobuf

#: The face's functions that take a raw protobuf: reading and writing models (I/O and the
#: weights left where they lie), a proto's type read as a frozen value, a node read by its
#: version, and the edits that write a node's sizes or name a model's nodes.
TAKES_PROTOS = {
    "check_model_size", "check_node_count", "copy_model", "name_nodes",
    "node_error", "node_label", "read_node", "renamed_copy", "rewrite_file", "route_outputs",
    "save_model",
    "types_only", "value_type", "write_split_sizes",
}  # fmt: skip


def test_the_face_is_at_most_40_names_each_defined() -> None:
    assert len(face.__all__) <= 40
    assert all(hasattr(face, name) for name in face.__all__)
    assert {"ModelView", "Scope", "Node", "Value", "Usage", "TensorType", "SequenceType",
            "SplitSite", "ModelEdits", "load_model", "save_model"} <= set(face.__all__)  # fmt: skip


def test_the_three_modules_share_no_name() -> None:
    names = [*face.__all__, *protobuf.__all__, *describe.__all__]
    assert len(names) == len(set(names))
    assert all(hasattr(protobuf, n) for n in protobuf.__all__)
    assert all(hasattr(describe, n) for n in describe.__all__)


def _takes_a_proto(function: object) -> bool:
    hints = get_type_hints(function)
    hints.pop("return", None)
    return any("Proto" in str(hint) for hint in hints.values())


def test_the_face_s_functions_ask_the_view_but_where_a_proto_is_read_or_written() -> None:
    """A function of the face that takes a raw protobuf is one of :data:`TAKES_PROTOS`;
    every other protobuf helper lives in ``model.protobuf``."""
    functions = {
        name: value for name in face.__all__ if inspect.isfunction(value := getattr(face, name))
    }
    assert {name for name, f in functions.items() if _takes_a_proto(f)} == TAKES_PROTOS
