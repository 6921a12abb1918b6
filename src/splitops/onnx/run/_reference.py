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

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from onnx import NodeProto
from onnx.reference.op_run import OpRun

from ...core import Rule, SplitError, current_limits
from ..model import SplitNode, node_label, read_node
from ..model.protobuf import links_attributes, resolve_linked, run_read_node

__all__ = ["bounded_run", "reference_ops"]

#: The parts the SplitToSequence nodes of the run under way may still make, where a run is
#: bounded (:func:`bounded_run`); ``None`` outside one.
_PARTS_LEFT: ContextVar[list[int] | None] = ContextVar("splitops_parts_left", default=None)


@contextmanager
def bounded_run() -> Iterator[None]:
    """One run of a model, in which the parts its SplitToSequence nodes make count against the
    ``max_model_parts`` limit in all, every Loop iteration and every call included: a
    few-byte file of 16 sequences of 2^20 parts each would otherwise hold 16 million arrays
    at once (2.2 GB). A Split's parts are the outputs the file lists, so the file bounds them.
    A run inside a run (a local function's body) shares the outer run's count."""
    if _PARTS_LEFT.get() is not None:
        yield
        return
    token = _PARTS_LEFT.set([current_limits().max_model_parts])
    try:
        yield
    finally:
        _PARTS_LEFT.reset(token)


def _spend(node: NodeProto, parts: int) -> None:
    left = _PARTS_LEFT.get()
    if left is None:
        return
    left[0] -= parts
    if left[0] < 0:
        limit = current_limits().max_model_parts
        raise SplitError(
            f"node {node_label(node)!r} (SplitToSequence): the sequences of this run would hold "
            f"{limit - left[0]} parts in all, over the max_model_parts limit of {limit} for one "
            "run of a model, so that a small file cannot exhaust memory.",
            rule=Rule.LIMIT,
            hint="Raise the limit with --max-model-parts N "
            "(splitops.limits(max_model_parts=N)) if the model really needs it.",
        )


class _SplitopsOp(OpRun):
    """Runs the node with :func:`splitops.run_node` at the opset the evaluator imports."""

    op_domain = ""

    def _load_attributes(self) -> None:
        # Attributes are read by run_node with the version's own rules, not by the latest schema.
        node: NodeProto = self.onnx_node
        self.has_linked_attribute = links_attributes(node)
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
            node = resolve_linked(node, linked_attributes or {})
        return self._run_node(node, args)

    def _run(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return self._run_node(self.onnx_node, args)

    def _run_node(self, node: NodeProto, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if node is not self.onnx_node:  # linked attributes resolved for this call
            spec = read_node(node, self._opset())
        else:
            # The node itself never changes: read it once, at its first run (a Loop body's
            # node runs once per iteration). A node that fails to read fails every time.
            spec = self.__dict__.get("_spec") or read_node(node, self._opset())
            self._spec: SplitNode = spec
        outputs = tuple(run_read_node(node, spec, list(args)))
        if spec.op == "SplitToSequence":
            _spend(node, len(outputs[0]))
        return outputs

    def _opset(self) -> int:
        opsets: dict[str, int] = self.run_params["opsets"]
        return opsets.get("", opsets.get("ai.onnx", 0))


class Split(_SplitopsOp):
    """ONNX Split, every version, on splitops."""


class SplitToSequence(_SplitopsOp):
    """ONNX SplitToSequence, every version, on splitops."""


class SequenceAt(OpRun):
    """ONNX SequenceAt, whose position may also be of shape [1]: torch's TorchScript exporter
    writes ``x.split(...)[k]`` so, and onnxruntime reads it as position ``k`` (onnx.reference
    fails with a TypeError). ``splitops check`` warns of it (rule ``position-shape``).

    >>> SequenceAt.at([np.zeros(1), np.ones(2)], np.array([-1])).shape
    (2,)
    """

    op_domain = ""

    def _run(self, sequence: list[Any], position: Any) -> tuple[Any]:
        return (self.at(sequence, position),)

    @staticmethod
    def at(sequence: list[Any], position: Any) -> Any:
        index = np.asarray(position)
        if index.shape not in ((), (1,)) or index.dtype.kind not in "iu":
            raise TypeError(
                f"SequenceAt takes a position of one integer (0-d, or of shape [1]); one of "
                f"shape {list(index.shape)} and type {index.dtype} was given."
            )
        at = int(index.reshape(()))
        if not -len(sequence) <= at < len(sequence):
            raise IndexError(f"SequenceAt position {at} is outside a sequence of {len(sequence)}.")
        return sequence[at]


def reference_ops() -> list[type[OpRun]]:
    """The op classes to pass as ``new_ops=`` to ``onnx.reference.ReferenceEvaluator``:
    Split and SplitToSequence on splitops, and SequenceAt reading a position of shape [1]."""
    return [Split, SplitToSequence, SequenceAt]
