"""Loops whose trip count is known before they run, unrolled: for targets whose runtimes run
no Loop (tract, TVM, tinygrad, onnx2torch, and so ``portable``).

torch's TorchScript exporter writes ``for t in x.split(...)`` and a loop over a module's
heads as a Loop of ``SequenceLength(s)`` trips, or of the least of that and other counts
(``zip``, ``enumerate``). Where the number of parts is known when the model is lowered (a
static axis, constant sizes), so is the trip count: the body is copied once per iteration,
its iteration number a constant, its carried values threaded from one copy to the next, its
scan outputs stacked. Each copy then reads its part at a constant position, which the
SplitToSequence forms lower as they lower any SequenceAt.

A trip count is folded from constants by the operators of its computation, each run by
onnx.reference on its constant inputs (small ones, :data:`~splitops.onnx.model.SMALL_TENSOR`
elements at most), and ``SequenceLength`` of a SplitToSequence whose parts the planner can
tell now. A Loop is unrolled where its condition is always true (torch's bodies pass on the
one they are given) and the copies hold at most :data:`MAX_UNROLLED_NODES` nodes in all; a
Loop inside an unrolled body is unrolled in the next pass, its copies having constant trip
counts of their own.

>>> MAX_UNROLLED_NODES
4096
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ...core import SplitError, current_limits
from ..inference import infer_model_and_nodes
from ..model import (
    ModelEdits,
    ModelView,
    Node,
    Scope,
    SplitSite,
    TensorType,
    Value,
    renamed_copy,
    types_only,
)
from ..model.protobuf import SMALL_TENSOR, copy_attributes
from ._declared import downstream
from ._rewrite import Rewrite
from ._sequence_forms import stacks_unequal_parts
from ._sequence_loops import loop_of_inserts
from ._split_forms import name_base

__all__ = ["MAX_UNROLLED_NODES", "Unroll", "Unrolled", "folded"]

#: The most body nodes the copies of one Loop may hold: a Loop of a thousand trips stays a
#: Loop (a model a hundred times its size is not what its user wants either).
MAX_UNROLLED_NODES = 4096

#: How deep a trip count's computation is followed back.
_DEPTH = 24


def folded(value: Value | None, depth: int = 0) -> np.ndarray[Any, Any] | None:
    """``value``'s value where it is computed from constants alone, else ``None``."""
    if value is None or depth > _DEPTH:
        return None
    found = value.constant()
    if found is not None:
        return found
    node = value.producer
    if node is None or node.held or node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "SequenceLength":
        count = _parts_of(node.inputs[0])
        return None if count is None else np.array(count, np.int64)
    if node.op_type in ("Shape", "Size"):
        return _of_static_shape(node)
    inputs: list[np.ndarray[Any, Any] | None] = []
    for name, given in zip(node.input_names, node.inputs, strict=True):
        if not name:
            inputs.append(None)
            continue
        constant = folded(given, depth + 1)
        if constant is None or constant.size > SMALL_TENSOR:
            return None
        inputs.append(constant)
    return _evaluated(node, inputs, value.name)


def _parts_of(sequence: Value | None) -> int | None:
    """The number of parts of a SplitToSequence's sequence, where the planner tells it now."""
    node = None if sequence is None else sequence.producer
    if node is None or not node.is_split or node.op_type != "SplitToSequence":
        return None
    try:
        sizes = SplitSite.read(node).part_sizes()
    except SplitError:
        return None
    return None if sizes is None else len(sizes)


def _of_static_shape(node: Node) -> np.ndarray[Any, Any] | None:
    given = node.inputs[0]
    kind = None if given is None else node.scope.tensor_type(given.name)
    dims = None if not isinstance(kind, TensorType) else kind.static_dims
    if dims is None or None in dims:
        return None
    shape = np.array(dims, np.int64)
    if node.op_type == "Size":
        return np.array(int(np.prod(shape)), np.int64)
    start, end = node.attributes.get("start", 0), node.attributes.get("end", len(dims))
    return shape[start:end]


def _evaluated(
    node: Node, inputs: list[np.ndarray[Any, Any] | None], output: str
) -> np.ndarray[Any, Any] | None:
    """``node`` run by onnx.reference on its constant ``inputs``: its output ``output``."""
    feeds = {f"in{k}": value for k, value in enumerate(inputs) if value is not None}
    if any(value.dtype.kind == "O" for value in feeds.values()):
        return None  # texts decide no count
    names = [f"in{k}" if value is not None else "" for k, value in enumerate(inputs)]
    outputs = [name or "" for name in node.output_names]
    copy = helper.make_node(node.op_type, names, outputs, domain=node.domain)
    copy_attributes(copy, node.proto)
    graph = helper.make_graph(
        [copy],
        "fold",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for n, v in feeds.items()
        ],
        [helper.make_tensor_value_info(output, 0, None)],
    )
    opsets = [helper.make_opsetid("", node.scope.opset or 0)]
    model = helper.make_model(graph, opset_imports=opsets)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (result,) = ReferenceEvaluator(model).run([output], feeds)
    except Exception:  # an operator onnx.reference does not run, or fails on these values
        return None
    array = np.asarray(result)
    return array if array.size <= SMALL_TENSOR else None


@dataclass(frozen=True)
class Unrolled:
    """What unrolling did to one Loop: where it lay, its scope's opset, its trip count."""

    graph: str
    node: str
    opset: int
    trips: int


class Unroll(Rewrite):
    """One pass of unrolling (see the module's documentation); :attr:`unrolled` lists the
    Loops it unrolled. A Loop it leaves is one the lowering's own Loop forms rewrite (torch's
    Loop of SequenceInsert of Slices), or one it cannot unroll."""

    what = "unrolling"

    def __init__(self) -> None:
        self.unrolled: list[Unrolled] = []

    def types(self, model: ModelProto) -> ModelProto:
        inferred, _ = infer_model_and_nodes(types_only(model))
        return inferred

    def plan(self, view: ModelView, edits: ModelEdits) -> None:
        self.unrolled = []
        budget = [MAX_UNROLLED_NODES]
        for scope in _outermost(view):
            for node in scope.nodes:
                if not node.is_op("Loop") or loop_of_inserts(node) or stacks_unequal_parts(node):
                    continue
                trips = _trips(node, budget)
                if trips is not None:
                    _unroll(view, edits, node, trips)
                    self.unrolled.append(Unrolled(scope.label, node.label, scope.opset or 0, trips))
        # onnx's inference, which types the result for the contract, keeps the axis of an
        # unbind (a scalar split 1 with keepdims=0), which the lowering drops afterwards:
        # what follows one is not compared.
        unbound = [
            sequence
            for node in view.split_nodes()
            if node.op_type == "SplitToSequence" and _unbinds(node)
            if (sequence := node.output(0)) is not None
        ]
        self.corrected = {
            (edits.key_after(value.scope.key), value.name) for value in downstream(unbound)
        }

    def finish(self, model: ModelProto) -> None:
        return None


def _unbinds(node: Node) -> bool:
    """Whether a SplitToSequence's given split is the scalar 1 that, with keepdims=0, drops
    the axis (where its site reads)."""
    try:
        site = SplitSite.read(node)
    except SplitError:
        return False
    return bool(site.drops_axis) and site.spec.split_input is not None


def _outermost(view: ModelView) -> Iterator[Scope]:
    """Every scope not inside a Loop's body: a Loop in a body is unrolled with its copies."""
    for scope in view.scopes:
        inside, around = False, scope
        while around.parent is not None:
            holder = around.holder
            if holder is not None and holder.is_op("Loop"):
                inside = True
                break
            around = around.parent
        if not inside:
            yield scope


def _trips(loop: Node, budget: list[int]) -> int | None:
    """The trip count of ``loop`` where it is unrolled: known, its condition always true,
    within the limits; else ``None``."""
    body = loop.held[0] if loop.held else None
    if body is None or len(loop.inputs) < 2:
        return None
    trips = folded(loop.inputs[0]) if loop.input_names[0] else None
    if trips is None or trips.size != 1 or trips.dtype.kind not in "iu":
        return None
    count = int(trips.reshape(-1)[0])
    if count < 1 or count > current_limits().max_model_parts:
        return None  # no trip: its scan outputs' shapes are not known; past the limit
    if loop.input_names[1]:
        go = folded(loop.inputs[1])
        if go is None or go.size != 1 or not bool(go.reshape(-1)[0]):
            return None
    if not _always_true(body):
        return None
    cost = count * len(body.nodes)
    if cost > budget[0]:
        return None
    budget[0] -= cost
    return count


def _always_true(body: Scope) -> bool:
    """Whether the body passes on the condition it is given, or a constant true."""
    names = body.input_names()
    value = body.value(body.output_names()[0])
    while value is not None and value.producer is not None and value.producer.is_op("Identity"):
        value = value.producer.inputs[0]
    if value is None:
        return False
    if value.scope is body and value.is_input and names[1:2] == [value.name]:
        return True
    constant = folded(value)
    return constant is not None and constant.size == 1 and bool(constant.reshape(-1)[0])


def _unroll(view: ModelView, edits: ModelEdits, loop: Node, trips: int) -> None:
    """``loop`` replaced by its body, copied ``trips`` times."""
    scope, body = loop.scope, loop.held[0]
    label = name_base(loop.proto)
    names_in, names_out = body.input_names(), body.output_names()
    carried = len(loop.inputs) - 2
    nodes: list[NodeProto] = []

    def constant(array: np.ndarray[Any, Any], what: str) -> str:
        tensor = numpy_helper.from_array(array, view.fresh_name(f"{label}_{what}"))
        nodes.extend(edits.tensor_constant(scope, tensor))
        return tensor.name

    # The body's own initializers, once, as constants of the Loop's scope.
    shared: dict[str, str] = {}
    for own in body.values.values():
        if own.producer is None and not own.is_input:  # an initializer of the body's own
            shared[own.name] = view.fresh_name(f"{label}_{own.name}")
            nodes.extend(edits.copied_constant(own, scope, shared[own.name]))
    go = constant(np.array(True), "cond")
    values = list(loop.input_names[2:])
    scans: list[list[str]] = [[] for _ in range(len(names_out) - 1 - carried)]
    outputs = loop.output_names
    # The last copy writes the Loop's carried outputs itself (an Identity of a sequence
    # takes opset 14), where its body computes them.
    last = {
        name: output
        for name, output in zip(names_out[1 : 1 + carried], outputs[:carried], strict=False)
        if output and body.values.get(name) is not None and body.values[name].producer
    }
    if len(set(last)) != len(last):  # one value carried out twice: Identities instead
        last = {}
    # The iteration number as the body declares it: 0-d, as the spec says, or of shape [1],
    # as torch's TorchScript exporter declares it (and onnxruntime then gives it).
    declared = body.tensor_type(names_in[0])
    flat = declared is not None and declared.dims == (1,)
    for trip in range(trips):
        mapping = dict(shared)
        number = np.array([trip] if flat else trip, np.int64)
        mapping[names_in[0]] = constant(number, f"trip{trip}")
        if len(names_in) > 1:
            mapping[names_in[1]] = go
        mapping.update(zip(names_in[2:], values, strict=False))
        for node in body.nodes:
            renamed = {
                name: last[name]
                if trip == trips - 1 and name in last
                else view.fresh_name(f"{label}_trip{trip}_{name.strip('/').replace('/', '_')}")
                for name in node.output_names
                if name
            }
            copy = renamed_copy(node.proto, mapping, renamed)
            copy.name = view.fresh_name(f"{copy.name or node.op_type}_trip{trip}")
            nodes.append(copy)
            mapping.update(renamed)
        values = [mapping.get(name, name) for name in names_out[1 : 1 + carried]]
        for k, name in enumerate(names_out[1 + carried :]):
            scans[k].append(mapping.get(name, name))
    for value, output in zip(values, outputs[:carried], strict=False):
        if output and value != output:
            nodes.append(helper.make_node("Identity", [value], [output]))
    axis = constant(np.array([0], np.int64), "axis")
    for stacked, output in zip(scans, outputs[carried:], strict=False):
        if output:
            raised = []
            for value in stacked:
                raised.append(view.fresh_name(f"{label}_scan"))
                if (scope.opset or 0) >= 13:
                    nodes.append(helper.make_node("Unsqueeze", [value, axis], [raised[-1]]))
                else:
                    nodes.append(helper.make_node("Unsqueeze", [value], [raised[-1]], axes=[0]))
            nodes.append(helper.make_node("Concat", raised, [output], axis=0))
    edits.replace(loop, nodes)
    for position in (0, 1):  # what computed the trip count goes with the Loop
        edits.drop(loop.input_value(position), computed=True)
