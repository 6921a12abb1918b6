"""splitops inside ``onnx.reference``: op classes for ``ReferenceEvaluator(new_ops=...)``.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> from onnx.reference import ReferenceEvaluator
>>> node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
>>> graph = helper.make_graph(
...     [node], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> evaluator = ReferenceEvaluator(model, new_ops=reference_ops())
>>> evaluator.run(None, {"x": np.arange(5.0, dtype=np.float32)})
[array([0., 1., 2.], dtype=float32), array([3., 4.], dtype=float32)]
"""

from __future__ import annotations

from typing import Any

from onnx import NodeProto, helper
from onnx.reference.op_run import OpRun

from ..model._node import SplitNode, read_node, run_read_node

__all__ = ["reference_ops"]


class _SplitopsOp(OpRun):
    """Runs the node with :func:`splitops.run_node` at the opset the evaluator imports."""

    op_domain = ""

    def _load_attributes(self) -> None:
        # Attributes are read by run_node with the version's own rules, not by the latest schema.
        node: NodeProto = self.onnx_node
        self.has_linked_attribute = any(a.ref_attr_name for a in node.attribute)
        self.attributes_names_: set[str] = set()

    def run(
        self,
        *args: Any,
        linked_attributes: dict[str, Any] | None = None,
        context: Any = None,
        bindings: Any = None,
    ) -> tuple[Any, ...]:
        node: NodeProto = self.onnx_node
        if self.has_linked_attribute:
            node = _resolve_linked(node, linked_attributes or {})
        return self._run_node(node, args)

    def _run(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return self._run_node(self.onnx_node, args)

    def _run_node(self, node: NodeProto, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if node is not self.onnx_node:  # linked attributes resolved for this call
            return tuple(run_read_node(node, read_node(node, self._opset()), list(args)))
        # The node itself never changes: read it once, at its first run (a Loop body's node
        # runs once per iteration). A node that fails to read is read, and fails, every time.
        spec: SplitNode | None = self.__dict__.get("_spec")
        if spec is None:
            spec = self._spec = read_node(node, self._opset())
        return tuple(run_read_node(node, spec, list(args)))

    def _opset(self) -> int:
        opsets: dict[str, int] = self.run_params["opsets"]
        return opsets.get("", opsets.get("ai.onnx", 0))


class Split(_SplitopsOp):
    """ONNX Split, every version, on splitops."""


class SplitToSequence(_SplitopsOp):
    """ONNX SplitToSequence, every version, on splitops."""


def reference_ops() -> list[type[_SplitopsOp]]:
    """The op classes to pass as ``new_ops=`` to ``onnx.reference.ReferenceEvaluator``."""
    return [Split, SplitToSequence]


def _resolve_linked(node: NodeProto, values: dict[str, Any]) -> NodeProto:
    """A copy of a function body's node with ``ref_attr_name`` attributes given their values.

    A reference to an attribute the call does not set leaves the attribute out, as ONNX says.
    The value keeps its own type, so a FLOAT given for ``axis`` is reported by
    :func:`~splitops.onnx.model._node.read_node`, not truncated.
    """
    resolved = NodeProto()
    resolved.CopyFrom(node)
    del resolved.attribute[:]
    for attribute in node.attribute:
        if not attribute.ref_attr_name:
            resolved.attribute.append(attribute)
        elif attribute.ref_attr_name in values:
            value = values[attribute.ref_attr_name]
            empty = isinstance(value, (list, tuple)) and not value
            attr_type = attribute.type if empty else None
            resolved.attribute.append(
                helper.make_attribute(attribute.name, value, attr_type=attr_type)
            )
    return resolved
