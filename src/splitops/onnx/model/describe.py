"""Types, arrays and Split nodes as text for people: the one describer of the ONNX layer.

Every row a command prints, and every message that names a type, says it here: a type as
``tensor(float) [N, 2]`` (:func:`describe_type`, from :func:`~._types.type_text` and
:func:`~._types.shape_text`), an array as ``float32 (2, 3) [0, 1, ...]``
(:func:`describe_array`), a Split node as its version reads it (:func:`describe_split_nodes`)
and each output of one with its type (:func:`split_output_rows`).

>>> from onnx import TensorProto, helper
>>> describe_type(helper.make_tensor_type_proto(TensorProto.INT64, [2, "N", None]))
'tensor(int64) [2, N, ?]'
>>> describe_type(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
'tensor(float) ?'
>>> describe_type(helper.make_tensor_type_proto(TensorProto.FLOAT, None), in_words=True)
'tensor(float)'
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from onnx import TypeProto

from ...core import SplitError, opset_rule, require_argument
from ._node import is_split_node, node_label, read_node
from ._types import shape_text, type_text, widened
from ._value_type import OtherType, SequenceType, TensorType, ValueType
from ._view import ModelView
from ._walk import location

__all__ = [
    "SplitOutputDescription",
    "SplitOutputRow",
    "describe_array",
    "describe_split_nodes",
    "describe_type",
    "split_output_rows",
]


def describe_type(type_proto: TypeProto | ValueType | None, *, in_words: bool = False) -> str:
    """A type (a ``TypeProto``, or a type of the view) as a row shows it:
    ``tensor(float) [N, 2]``, ``seq(tensor(float)) [N, ?]``, with ``?`` for what is not known
    (the element type, the rank, a dim), and ``?`` alone when nothing is.

    ``in_words=True`` gives it as a sentence says it: an unknown rank is left out, and an
    unknown type is ``of unknown type`` (``is declared tensor(int64), but ...``).
    """
    if isinstance(type_proto, (TensorType, SequenceType, OtherType)):
        name, shape = type_proto.text(), type_proto.shape_text()
    else:
        if type_proto is not None:
            kinds = "an onnx.TypeProto, a ValueType or None"
            require_argument(type_proto, TypeProto, "describe_type", kinds)
        name, shape = type_text(type_proto), shape_text(type_proto)
    if in_words:
        return f"{name or 'of unknown type'} {shape or ''}".strip()
    if name is None and shape is None:
        return "?"
    return f"{name or '?'} {shape or '?'}"


def describe_array(array: np.ndarray[Any, Any]) -> str:
    """An array's dtype, shape and first eight values.

    >>> describe_array(np.arange(10, dtype=np.int64).reshape(2, 5))
    'int64 (2, 5) [0, 1, 2, 3, 4, 5, 6, 7, ...]'
    """
    require_argument(array, (np.ndarray, np.generic), "describe_array", "a numpy array")
    flat = array.reshape(-1)
    shown = widened(flat[:8])
    if shown.dtype.kind in "OUS":
        values = ", ".join(repr(str(v)) for v in shown)
    else:
        values = np.array2string(shown, precision=3, separator=", ")[1:-1]
        values = " ".join(values.split())
    more = ", ..." if flat.size > shown.size else ""
    return f"{array.dtype} {tuple(array.shape)} [{values}{more}]"


def describe_split_nodes(view: ModelView) -> list[str]:
    """``node main/quarters: Split-18 axis=1 num_outputs=4``, for each split node; a split
    input that is a constant where the node reads it (ONNX's scoping: its own graph's, or an
    enclosing graph's, never a sibling's) shows its value.

    >>> from onnx import TensorProto, helper
    >>> sizes = helper.make_tensor("sizes", TensorProto.INT64, [2], [1, 3])
    >>> node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1, name="s")
    >>> graph = helper.make_graph([node], "g", [], [], initializer=[sizes])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    >>> describe_split_nodes(ModelView.read(model))
    ["node main/s: Split-18 axis=1 split=[1, 3] (input 'sizes')"]
    """
    _require_view(view, "describe_split_nodes")
    lines = []
    for node in view.split_nodes():
        scope = node.scope
        where = location(scope.label, node_label(node.proto))
        try:
            spec = read_node(node.proto, scope.opset or 0)
        except SplitError as error:
            lines.append(f"node {where}: invalid: {error}")
            continue
        how = [f"axis={spec.axis}"]
        if spec.split_attribute is not None:
            how.append(f"split={list(spec.split_attribute)}")
        if spec.split_input is not None:
            value = scope.constant(spec.split_input)
            how.append(f"split={_shown_sizes(value)} (input {spec.split_input!r})")
        if spec.num_outputs is not None:
            how.append(f"num_outputs={spec.num_outputs}")
        lines.append(f"node {where}: {spec.rule.name} {' '.join(how)}")
    return lines


def _require_view(view: object, function: str) -> None:
    """A ``TypeError`` saying what ``function`` takes, and how to get one from a model."""
    require_argument(view, ModelView, function, "a ModelView (splitops.onnx.ModelView.read(model))")


#: How many sizes of a constant split :func:`describe_split_nodes` shows.
_SHOWN_SIZES = 16


def _shown_sizes(value: np.ndarray[Any, Any] | None) -> object:
    """A constant split as ``run`` shows it: its sizes, the first few of a long one, the
    shape of one of a wrong rank (whose values are not read: an empty array of shape
    ``(10**4, 10**4, 0)`` is 10**8 lists)."""
    if value is None:
        return "?"
    if value.ndim > 1:
        return f"<shape {tuple(value.shape)}>"
    if value.size > _SHOWN_SIZES:
        head = ", ".join(str(v) for v in value[:_SHOWN_SIZES].tolist())
        return f"[{head}, ... ({value.size} sizes)]"
    return value.tolist()


@dataclass(frozen=True)
class SplitOutputRow:
    """One output of a Split or SplitToSequence node with its type, as ``splitops infer``
    prints it."""

    #: Where the node lives: "main", "main/if_1.then_branch", "function:local.MyFn".
    graph: str
    #: The node's name (or its first output's name when it has none).
    node: str
    #: "Split-18", or "Split-?" when the model imports no opset for it.
    version: str
    output: str
    #: Its type as :func:`describe_type` gives it.
    type: str

    @property
    def location(self) -> str:
        return location(self.graph, self.node)

    def as_dict(self) -> dict[str, str]:
        """The row as ``splitops infer --json`` writes it."""
        return {
            "location": self.location,
            "graph": self.graph,
            "node": self.node,
            "version": self.version,
            "output": self.output,
            "type": self.type,
        }

    def __str__(self) -> str:
        return f"{self.location} ({self.version}) {self.output}: {self.type}"


def split_output_rows(view: ModelView) -> list[SplitOutputRow]:
    """Each output of every Split and SplitToSequence node, with the type its graph gives it
    (read a model that inference typed to see the inferred ones).

    >>> from onnx import TensorProto, helper, shape_inference
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2, name="s")], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
    ...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    >>> print(split_output_rows(ModelView.read(shape_inference.infer_shapes(model)))[1])
    main/s (Split-18) b: tensor(float) [N, 2]
    """
    _require_view(view, "split_output_rows")
    rows = []
    # By the places of the scopes: a model of Ifs 14 deep makes none of its 32,767 scopes.
    for place in view.places():
        protos = [proto for proto in place.proto.node if is_split_node(proto)]
        if not protos:
            continue
        type_of = view.place_types(place)
        for proto in protos:
            version = f"{proto.op_type}-?"
            if place.opset is not None:
                with suppress(SplitError):
                    version = opset_rule(proto.op_type, place.opset).name
            label = node_label(proto)
            for output in proto.output:
                if output:
                    type_words = describe_type(type_of(output))
                    rows.append(SplitOutputRow(place.label, label, version, output, type_words))
    return rows


class SplitOutputDescription(NamedTuple):
    """One output of a Split or SplitToSequence node, as text for people (what
    :func:`~splitops.onnx.inference._engine.describe_split_outputs` gives)."""

    graph: str
    node: str
    output: str
    #: "tensor(float)", "seq(tensor(int64))" or "unknown".
    type: str
    #: "[2, N - 3*ceiling(N/4)]", "[?, 3]" (? is an unknown dim) or "unknown".
    shape: str
    #: Why the node is invalid, or "".
    error: str

    @classmethod
    def of(
        cls, graph: str, node: str, output: str, type_proto: TypeProto | None, error: str = ""
    ) -> SplitOutputDescription:
        """The description of ``output`` (of the node labelled ``node``) of type
        ``type_proto``."""
        return cls(
            graph,
            node,
            output,
            type_text(type_proto) or "unknown",
            shape_text(type_proto) or "unknown",
            error,
        )
