"""A Loop that builds a sequence by SequenceInsert (what torch's TorchScript exporter writes
for ``tensor_split`` by indices), unrolled into its parts, for targets without sequences.

torch exports ``torch.tensor_split(x, [1, 4], dim=1)`` as a ``SequenceEmpty``, a ``Loop`` of
a constant number of trips whose body inserts ``Slice(x, indices[i], indices[i + 1])`` into
the sequence, one more ``SequenceInsert`` of the last part after the loop, and a
``SequenceAt`` of each part. Where the trip count is a constant, the sequence holds a known
list of tensors: the rule copies the body once per trip (each copy's values renamed, the
iteration number a constant, and what the body computes from constants alone folded, so
that the Slices get constant bounds), and each reader takes its part: ``SequenceAt`` an
``Identity``, ``SequenceLength`` a constant, ``ConcatFromSequence`` a ``Concat``.

Like the SplitToSequence forms (:mod:`~splitops.onnx.rewrite._sequence_forms`), the rule
says when it applies (or why not) and what it did, for the report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import NodeProto, numpy_helper

from ...core import current_limits
from ..model import DEFAULT_DOMAINS, Linked, Node, Scope, Value
from ..model.protobuf import constant_value
from ._forms import Context, Form, Reason
from ._graph_sizes import GraphBuilder
from ._sequence_forms import SequenceRewritten, concat_parts, count_constant
from ._split_forms import name_base

__all__ = [
    "INSERTED_INTO_EMPTY",
    "LOOP_OF_INSERTS_UNROLLED",
    "LoopForm",
    "always_true",
    "loop_of_inserts",
    "sequence_loops",
]


class LoopForm(Form[Node, SequenceRewritten]):
    """One form of a Loop (or of the SequenceEmpty a list starts as)
    (:class:`~splitops.onnx.rewrite._forms.Form`): it says whether it applies to the node or
    why not, and makes its edits."""

    #: Whether the form leaves no Loop where the node was (a runtime without Loop runs it).
    removes_loop = False


#: The operators whose result the rule folds where every input is a constant (the index
#: arithmetic of torch's export), each as numpy computes it.
_FOLDED: dict[str, Callable[[list[Any], Mapping[str, Any]], Any]] = {
    "Identity": lambda a, _: a[0],
    "Add": lambda a, _: np.add(a[0], a[1]),
    "Sub": lambda a, _: np.subtract(a[0], a[1]),
    "Mul": lambda a, _: np.multiply(a[0], a[1]),
    "Gather": lambda a, k: np.take(a[0], a[1], axis=int(k.get("axis", 0))),
}
#: The most elements a folded value may have (index arithmetic is small).
_MOST_FOLDED = 4096


@dataclass(frozen=True)
class _Pattern:
    """What the rule found of a Loop: its trip count, its body, the value its body inserts,
    the SequenceEmpty it starts from."""

    trips: int
    body: Scope
    inserted: str
    empty: Node


def _pattern(node: Node) -> _Pattern | str:
    """The Loop's pattern, or why it is not one the rule unrolls."""
    scope, names = node.scope, node.input_names
    if len(names) != 3 or len(node.output_names) != 1:
        return "it carries more than one sequence, or has scan outputs"
    trips = scope.constant(names[0]) if names[0] else None
    if trips is None or trips.size != 1 or trips.dtype.kind not in "iu":
        return "its trip count is known only at run time"
    if not 0 <= int(trips.reshape(-1)[0]) <= current_limits().max_model_parts:
        return "its trip count is negative or over the max_model_parts limit"
    if names[1]:
        go = scope.constant(names[1])
        if go is None or go.size != 1 or not bool(go.reshape(-1)[0]):
            return "its condition is not a constant true"
    start = scope.value(names[2])
    empty = None if start is None or len(start.uses) != 1 else start.producer
    if empty is None or empty.op_type != "SequenceEmpty":
        return "its sequence does not start as a SequenceEmpty read by the Loop alone"
    body = node.attribute("body")
    if not isinstance(body, Scope) or len(body.input_names()) != 3 or len(body.output_names()) != 2:
        return "its body is not of one iteration number, one condition and one sequence"
    _, condition, carried = body.input_names()
    cond_out, seq_out = body.output_names()
    produced = _produced(body)
    insert = produced.get(seq_out)
    appended = () if insert is None else insert.input_names
    if (
        insert is None
        or insert.op_type != "SequenceInsert"
        or len(appended) != 2
        or appended[0] != carried
    ):
        return "its body does not append one tensor to the sequence"
    for inner in body.nodes:
        if inner is insert:
            continue
        if inner.domain not in DEFAULT_DOMAINS or inner.held:
            return f"its body's {inner.op_type} {inner.label!r} is not one it copies"
        if carried in inner.input_names or inner.op_type in ("Split", "SplitToSequence"):
            return f"its body's {inner.op_type} {inner.label!r} is not one it copies"
    if not always_true(cond_out, condition, produced, scope):
        return "its body's condition is not always true"
    part = produced.get(appended[1])
    if part is None or part.op_type != "Slice":
        return "its body does not insert a Slice"
    folded = _fold(body, scope, 0)
    if any(bound not in folded for bound in part.input_names[1:3]):
        return "the bounds of the Slice its body inserts are known only at run time"
    return _Pattern(int(trips.reshape(-1)[0]), body, appended[1], empty)


def _produced(body: Scope) -> dict[str, Node]:
    """The node of ``body`` that computes each value, by the value's name."""
    return {out: n for n in body.nodes for out in n.output_names}


def _declared_wrong(scope: Scope, found: _Pattern, trip: int, reader: Node) -> str | None:
    """Where the part a SequenceAt reads has a static length that its output's declared type
    contradicts (torch's static export declares every part as long as the second), why the
    rule leaves the Loop: the unrolled Slice would make onnx's check refuse the model."""
    inputs = _produced(found.body)[found.inserted].input_names
    dims = scope.dims(inputs[0])
    declared = scope.dims(reader.output_names[0])
    known = _fold(found.body, scope, trip)
    axes = known.get(inputs[3]) if len(inputs) > 3 else None
    if axes is None and len(inputs) > 3:
        axes = scope.constant(inputs[3])
    if dims is None or declared is None or axes is None or len(inputs) > 4:
        return None
    axis = int(np.asarray(axes).reshape(-1)[0])
    axis += len(dims) if axis < 0 else 0
    if not 0 <= axis < len(dims) or len(declared) != len(dims) or dims[axis] is None:
        return None
    length = int(dims[axis])  # type: ignore[arg-type]
    start, end = (int(np.asarray(known[b]).reshape(-1)[0]) for b in inputs[1:3])
    start, end = (min(max(b + length if b < 0 else b, 0), length) for b in (start, end))
    if declared[axis] is None or declared[axis] == max(end - start, 0):
        return None
    return (
        f"{reader.op_type} {reader.label!r} is declared of length "
        f"{declared[axis]} on axis {axis}, but reads a part of {max(end - start, 0)}: the "
        "model's declared types are wrong (onnx's check would refuse the unrolled model)"
    )


def always_true(name: str, given: str, produced: dict[str, Node], scope: Scope) -> bool:
    """Whether the body's condition ``name`` is the condition it was given (a constant true)
    or a constant true, through Identity nodes; ``produced`` gives the body's node that
    computes each value, ``scope`` the constants the body sees from outside."""
    while name != given:
        node = produced.get(name)
        if node is None:
            value = scope.constant(name)
            return value is not None and value.size == 1 and bool(value.reshape(-1)[0])
        if node.op_type == "Constant":
            value = constant_value(node.proto)
            return value is not None and value.size == 1 and bool(value.reshape(-1)[0])
        if node.op_type != "Identity":
            return False
        name = node.input_names[0]
    return True


@dataclass
class _Readers:
    """The nodes that read the Loop's sequence and what SequenceInsert made of it after the
    loop: each with the parts of the sequence it reads."""

    found: list[tuple[Node, list[str]]]
    inserts: list[Node]


def _readers(value: Value, parts: list[str]) -> _Readers | str:
    """Each reader of the sequence ``value`` (holding ``parts``) and of the sequences that
    SequenceInsert makes of it, or why one is not a reader the rule replaces."""
    if value.output_of:
        return "its sequence is a graph output"
    found = _Readers([], [])
    for usage in value.uses:
        reader = usage.node
        names, what = reader.input_names, f"{reader.op_type} {reader.label!r}"
        if reader.scope is not value.scope or reader.domain not in DEFAULT_DOMAINS:
            return f"{what} reads its sequence"
        if usage.index != 0:
            return f"{what} reads its sequence as a tensor"
        if reader.op_type == "SequenceInsert":
            at = len(parts)
            if len(names) > 2 and names[2]:
                given = reader.scope.constant(names[2])
                if given is None or given.size != 1:
                    return f"{what} inserts at a position known only at run time"
                at = int(given.reshape(-1)[0])
                if not -len(parts) <= at <= len(parts):
                    return f"{what} inserts past the sequence: it fails at run time"
                at %= len(parts) + 1
            grown = [*parts[:at], names[1], *parts[at:]]
            after = reader.output(0)
            more = _readers(after, grown) if after is not None else _Readers([], [])
            if isinstance(more, str):
                return more
            found.found += more.found
            found.inserts += [reader, *more.inserts]
        elif reader.op_type == "SequenceAt":
            given = reader.scope.constant(names[1])
            if given is None or given.size != 1 or given.dtype.kind not in "iu":
                return f"{what} reads it at a position known only at run time"
            at = int(given.reshape(-1)[0])
            if not -len(parts) <= at < len(parts):
                return f"{what} reads part {at} of {len(parts)}: it fails at run time"
            found.found.append((reader, [parts[at]]))
        elif reader.op_type == "ConcatFromSequence" and _linked(reader):
            return f"{what} takes its axis from its function's call, known only at each call"
        elif reader.op_type == "SequenceLength" or (
            reader.op_type == "ConcatFromSequence" and parts
        ):
            found.found.append((reader, parts))
        else:
            return f"{what} reads its sequence"
    return found


def _linked(node: Node) -> bool:
    """Whether an attribute of ``node`` takes its value from its function's call."""
    return any(isinstance(value, Linked) for value in node.attributes.values())


class _LoopOfInsertsUnrolled(LoopForm):
    """A Loop of a constant number of trips that appends one Slice of constant bounds per
    trip to a sequence started empty (torch's ``tensor_split`` by indices): unrolled, each
    reader given its part (see the module's documentation)."""

    name = "loop-of-inserts-unrolled"

    removes_loop = True

    def check(self, context: Context, node: Node) -> Reason | None:
        found = _pattern(node)
        if isinstance(found, str):
            return Reason(found)
        value = node.output(0)
        if value is None:
            return Reason("its sequence is not read")
        trips = [f"\0trip{i}" for i in range(found.trips)]  # no value is named so
        readers = _readers(value, trips)
        if isinstance(readers, str):
            return Reason(readers)
        for reader, chosen in readers.found:
            if reader.op_type == "SequenceAt" and chosen[0] in trips:
                wrong = _declared_wrong(node.scope, found, trips.index(chosen[0]), reader)
                if wrong is not None:
                    return Reason(wrong, (reader,))
        return None

    def rewrite(self, context: Context, node: Node) -> SequenceRewritten:
        found = _pattern(node)
        assert not isinstance(found, str)
        context.spend(node, found.trips)
        scope, label = node.scope, name_base(node.proto)
        build = context.scope_builder(scope, label)
        parts = [_unroll(build, scope, found, trip) for trip in range(found.trips)]
        context.edits.replace(node, build.nodes)
        context.edits.replace(found.empty, [])
        for position in (0, 1):
            context.drop_input(node, position)
        value = node.output(0)
        assert value is not None
        _give_parts(context, value, parts)
        detail = (
            f"Loop of {found.trips} SequenceInsert of a Slice -> {found.trips} Slices of "
            "constant bounds, each reader of its sequence given its parts"
        )
        return SequenceRewritten("rewritten", detail)


def _give_parts(context: Context, value: Value, parts: list[str]) -> None:
    """Each reader of the sequence ``value``, which holds ``parts``, (and of what a
    SequenceInsert makes of it) given its parts; the SequenceInserts go."""
    readers = _readers(value, parts)
    assert not isinstance(readers, str)
    scope = value.scope
    for insert in readers.inserts:
        context.edits.replace(insert, [])
        if len(insert.input_names) > 2:
            context.drop_input(insert, 2)
    for reader, chosen in readers.found:
        step = context.scope_builder(scope, name_base(reader.proto))
        out = reader.output_names[0]
        if reader.op_type == "SequenceAt":
            step.add("Identity", chosen, "part", output=out)
            context.drop_input(reader, 1)
        elif reader.op_type == "SequenceLength":
            step.nodes.append(count_constant(out, len(chosen)))
        else:
            concat_parts(step, reader, list(chosen))
        context.edits.replace(reader, step.nodes)


class _InsertedIntoEmpty(LoopForm):
    """A SequenceEmpty whose sequence SequenceInserts alone grow (as an unrolled Loop of
    appends leaves it), read by SequenceAt at constant positions, SequenceLength and
    ConcatFromSequence: each reader given its parts; no sequence is left."""

    name = "inserted-into-empty"

    def check(self, context: Context, node: Node) -> Reason | None:
        if not node.is_op("SequenceEmpty"):
            return Reason("it is not a SequenceEmpty")
        value = node.output(0)
        if value is None or not value.uses:
            return Reason("nothing reads its sequence")
        readers = _readers(value, [])
        return Reason(readers) if isinstance(readers, str) else None

    def rewrite(self, context: Context, node: Node) -> SequenceRewritten:
        value = node.output(0)
        assert value is not None
        inserts = len(_readers(value, []).inserts)  # type: ignore[union-attr]
        _give_parts(context, value, [])
        context.edits.replace(node, [])
        return SequenceRewritten(
            "removed",
            f"a sequence of {inserts} SequenceInsert(s) into a SequenceEmpty -> each reader "
            "given its parts",
        )


def loop_of_inserts(node: Node) -> bool:
    """Whether ``node`` is torch's Loop of SequenceInsert of Slices (``tensor_split`` by
    indices), which the lowering's own rule unrolls."""
    return node.is_op("Loop") and not isinstance(_pattern(node), str)


def _fold(body: Scope, scope: Scope, trip: int) -> dict[str, Any]:
    """What the body computes from constants alone (its own Constant nodes, the constants it
    sees in ``scope``, its iteration number ``trip``, and the condition it is given, true at
    every trip of a Loop the rule unrolls) by the operators of :data:`_FOLDED`, by name: an
    unrolled body keeps none of them, nor what reads its condition (an Identity of it). A
    node whose attributes its function's call gives is not folded."""
    iteration, condition = body.input_names()[:2]
    known: dict[str, Any] = {iteration: np.array(trip, np.int64), condition: np.array(True)}
    computed: set[str] = set()  # what the body computes at run time

    def constant(name: str) -> Any:
        if name in known:
            return known[name]
        return None if name in computed else scope.constant(name)

    for node in body.nodes:
        outputs = node.output_names
        if node.op_type == "Constant":
            value = constant_value(node.proto)
            if value is not None:
                known[outputs[0]] = value
                continue
        values = [constant(name) for name in node.input_names]
        fold = _FOLDED.get(node.op_type)
        if fold is not None and values and all(v is not None for v in values):
            try:
                result = None if _linked(node) else np.asarray(fold(values, node.attributes))
            except (IndexError, ValueError):  # fails at run time, as the node will
                result = None
            if result is not None and result.size <= _MOST_FOLDED:
                known[outputs[0]] = result
                continue
        computed.update(outputs)
    return known


def _unroll(build: GraphBuilder, scope: Scope, found: _Pattern, trip: int) -> str:
    """The body's nodes for one trip, in ``build``: its values renamed, its iteration
    number ``trip``, what it computes from constants alone folded. Returns the name of the
    Slice it inserts."""
    known = _fold(found.body, scope, trip)
    renamed: dict[str, str] = {}

    def written(name: str, *, flat: bool) -> str:
        """The name a copied node reads for ``name``: its value written as a constant where
        it was folded (1-d where ``flat``, as a Slice's bounds are)."""
        if name in renamed or not name or name not in known:
            return renamed.get(name, name)
        array = np.asarray(known[name])
        array = array.reshape(1) if flat and array.ndim == 0 else array
        tensor = numpy_helper.from_array(array, build.name(f"trip{trip}_const"))
        build.nodes += build.edits.tensor_constant(scope, tensor)
        return tensor.name

    for node in found.body.nodes:
        if node.op_type == "SequenceInsert" or all(out in known for out in node.output_names):
            continue
        copy = NodeProto()
        copy.CopyFrom(node.proto)
        copy.name = build.name(f"trip{trip}_{node.op_type.lower()}") if node.name else ""
        for index, name in enumerate(node.input_names):
            copy.input[index] = written(name, flat=node.op_type == "Slice" and index > 0)
        for index, name in enumerate(node.output_names):
            if name:
                renamed[name] = build.name(f"trip{trip}_{name.strip('/').replace('/', '_')}")
                copy.output[index] = renamed[name]
        build.nodes.append(copy)
    return renamed[found.inserted]


LOOP_OF_INSERTS_UNROLLED: LoopForm = _LoopOfInsertsUnrolled()
INSERTED_INTO_EMPTY: LoopForm = _InsertedIntoEmpty()


def sequence_loops(scopes: list[Scope]) -> list[Node]:
    """The nodes that build sequences: Loops and SequenceEmptys of the default domain, in
    every scope."""
    return [node for scope in scopes for node in scope.nodes if node.is_op("Loop", "SequenceEmpty")]
