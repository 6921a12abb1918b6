"""The declared types a lowering makes untrue, and their repair.

torch's TorchScript exporter writes ``unbind`` as a SplitToSequence of the scalar split 1
with ``keepdims=0``, which drops the axis (the scalar 1 is the default split: see
:func:`~splitops.core.is_default_split`), and declares the types of what follows from onnx's
shape inference, which keeps it: the parts, what is computed from them, the Loop's outputs
and the graph's, one axis too many. Where lowering makes every runtime drop the axis, those
declarations contradict the model: onnx's full check refuses it, and a runtime that checks
declared shapes warns or fails. Each such declaration is loosened (its shape dropped, its
element type kept), then given back where onnx's inference of the lowered model agrees with
it, or replaced by that inference where onnx infers a shape: only the declarations the
squeeze makes untrue change.

>>> from onnx import TensorProto, helper
>>> from splitops.onnx.model import ModelView
>>> graph = helper.make_graph(
...     [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
>>> view = ModelView.read(helper.make_model(graph))
>>> [value.name for value in downstream([view.main.value("x")])]
['x', 'r', 'y']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import onnx
from onnx import GraphProto, ModelProto, NodeProto, TypeProto

from ..model import ModelEdits, Node, ScopeKey, TensorType, Value, types_only, value_type
from ..model.protobuf import (
    GraphsAt,
    declarations_of,
    drop_declared_shapes,
    set_attributes,
    set_declared_type,
)

__all__ = ["Loosened", "downstream", "loosen_declared", "restore_agreeing", "unbound_readers"]


def downstream(values: Iterable[Value]) -> list[Value]:
    """``values`` and every value computed from them, in the order found: the outputs of
    each node that reads one (in its scope or below), and across control flow, a subgraph's
    output to its holder's output at that place (a Loop's body output ``k + 1`` is its output
    ``k``), a Loop's carried input to its body's input."""
    found: dict[int, Value] = {}
    pending = list(values)
    while pending:
        value = pending.pop()
        if id(value) in found:
            continue
        found[id(value)] = value
        for usage in value.uses:
            node = usage.node
            pending.extend(out for out in node.outputs if out is not None)
            if node.is_op("Loop") and usage.index >= 2:
                body = node.held[0] if node.held else None
                names = [] if body is None else body.input_names()
                if body is not None and usage.index < len(names):
                    inner = body.value(names[usage.index])
                    pending.extend(() if inner is None else (inner,))
        for scope in value.output_of:
            holder = scope.holder
            if holder is None:
                continue
            at = scope.output_names().index(value.name)
            at -= 1 if holder.is_op("Loop") else 0
            outputs = holder.outputs
            held = outputs[at] if 0 <= at < len(outputs) else None
            pending.extend(() if held is None else (held,))
    return list(found.values())


@dataclass(frozen=True)
class Loosened:
    """One declaration loosened: where it lies (its scope's identity once the edits are
    made), the value's name, and the type the model declared."""

    key: ScopeKey
    name: str
    declared: TypeProto


def loosen_declared(
    model: ModelProto, edits: ModelEdits, values: Iterable[Value]
) -> list[Loosened]:
    """Drop the shape (keep the element type) of every declaration of ``values`` in
    ``model``, the result of ``edits``: their ``value_info``, a graph's outputs, a
    subgraph's inputs (a main graph's inputs are the caller's, and stay). Returns what was
    loosened, for :func:`restore_agreeing`."""
    graphs = GraphsAt(model)
    loosened = []
    for value in values:
        key = edits.key_after(value.scope.key)
        proto = graphs(key)
        if not isinstance(proto, GraphProto):
            continue  # a function body declares no types
        for declared in drop_declared_shapes(proto, value.name, inputs=bool(key[1])):
            loosened.append(Loosened(key, value.name, declared))
    return loosened


def restore_agreeing(model: ModelProto, loosened: list[Loosened]) -> list[Loosened]:
    """Give each loosened declaration back where onnx's inference of ``model`` does not
    contradict it; where it does, declare what onnx infers, where it infers a rank. Returns
    the declarations that changed."""
    if not loosened:
        return []
    try:
        inferred = onnx.shape_inference.infer_shapes(
            types_only(model), strict_mode=False, data_prop=False
        )
    except (onnx.shape_inference.InferenceError, ValueError, TypeError, RuntimeError):
        inferred = None
    theirs = GraphsAt(inferred) if inferred is not None else None
    graphs = GraphsAt(model)
    changed = []
    for item in loosened:
        proto = graphs(item.key)
        assert isinstance(proto, GraphProto)
        found = theirs(item.key) if theirs is not None else None
        inferred_type = _type_in(found, item.name) if isinstance(found, GraphProto) else None
        declared = value_type(item.declared)
        agrees = (
            inferred_type is not None
            and declared is not None
            and next(declared.conflicts(inferred_type), None) is None
        )
        written = item.declared if agrees else _known_rank(inferred_type)
        if not agrees:
            changed.append(item)
        if written is not None:
            set_declared_type(proto, item.name, written, inputs=bool(item.key[1]))
    return changed


def unbound_readers(
    sequence: Value, axis: int, rank: int
) -> tuple[list[tuple[Node, NodeProto]], list[str]]:
    """The nodes reading an unbind's parts whose attributes torch's exporter wrote for the
    parts' rank with the axis kept (``rank``, the input's, where the parts have one less):
    each with its attributes rewritten for the parts' own rank, and what cannot be.

    ``x.unbind(1)[h].transpose(-2, -1)`` is exported as a Transpose of ``perm=[0, 1, 3,
    2]``: for the parts' rank of 3, ``[0, 2, 1]``. An attribute naming axes counted from the
    front (``axis``, ``axes``, ``perm``) names the unbound ``axis`` no more: the axes after it
    move one down; one that names ``axis`` itself (an axis that is not there) cannot be
    rewritten. Axes counted from the back name the same axes.
    """
    found, left = [], []
    for usage in sequence.uses:
        reader = usage.node
        part = reader.output(0) if reader.is_op("SequenceAt") and usage.index == 0 else None
        for use in [] if part is None else part.uses:
            node = use.node
            new = _for_parts_rank(node, axis, rank)
            if isinstance(new, str):
                left.append(f"{node.op_type} {node.label!r} {new}")
            elif new is not None:
                found.append((node, new))
    return found, left


def _for_parts_rank(node: Node, axis: int, rank: int) -> NodeProto | str | None:
    """``node`` with its axes counted from the front for the part's rank (``rank - 1``);
    ``None`` where it names none of them; why not where it names the unbound ``axis``."""
    perm = node.attributes.get("perm") if node.is_op("Transpose") else None
    if perm is not None:
        if len(perm) != rank:
            return None  # written for the part's own rank
        if perm[axis] != axis:
            return f"moves the unbound axis {axis} (perm {list(perm)})"
        new_perm = [p - (p > axis) for k, p in enumerate(perm) if k != axis]
        return _with(node, perm=new_perm)
    changes: dict[str, object] = {}
    for name in ("axis", "axes"):
        given = node.attributes.get(name)
        if not isinstance(given, (int, tuple)) or isinstance(given, bool):
            continue
        axes = [given] if isinstance(given, int) else list(given)
        if not any(a >= 0 for a in axes) or node.is_split:
            continue
        if axis in axes:
            return f"names the unbound axis {axis} ({name}={given})"
        moved = [a - (a > axis) if a >= 0 else a for a in axes]
        changes[name] = moved[0] if isinstance(given, int) else moved
    return _with(node, **changes) if changes else None


def _with(node: Node, **attributes: object) -> NodeProto:
    copy = NodeProto()
    copy.CopyFrom(node.proto)
    set_attributes(copy, **attributes)
    return copy


def _type_in(proto: GraphProto, name: str) -> TensorType | None:
    for entry in declarations_of(proto, name, inputs=True):
        found = value_type(entry.type)
        return found if isinstance(found, TensorType) else None
    return None


def _known_rank(found: TensorType | None) -> TypeProto | None:
    """``found`` as a declaration, where it gives a rank (else the loosened one stays)."""
    if found is None or found.dims is None or not found.element:
        return None
    return found.proto()
