"""A list built in a Loop of a trip count known only at run time and read at positions, for
targets whose runtime has no sequences: each part computed again where it is read.

torch's TorchScript exporter writes ``torch.tensor_split(x, idx, dim)`` with ``idx`` a
tensor as a SequenceEmpty, a Loop of ``len(idx)`` trips whose body appends ``x[idx[i - 1]
:idx[i]]`` (a Slice whose bounds it gathers at its iteration number ``i``), then one
SequenceInsert of the last part after the Loop; a loop over the parts reads them by
SequenceAt at its own iteration number. The parts have unequal lengths, so no tensor holds
them all; but each is a function of its position alone. Where the body computes what it
appends from its iteration number and the values it sees from outside (nothing it carries),
the rule removes the list: SequenceAt at a position ``p`` becomes the body's computation of
the appended value copied with ``p`` for the iteration number, in an If where appends after
the Loop follow (``p`` below the trip count: the body's value; else the value appended
there), and SequenceLength the trip count plus the appends after it. A position outside the
list fails at run time, as SequenceAt does (in the target's check form; with ``part``, on
the value read, unchecked where its element type is not one of
:data:`~splitops.onnx.rewrite._graph_sizes.PART_CHECK_TYPES`, as Split's parts are).

The copy runs where the SequenceAt is (inside another Loop's body, say), once per read: a
Slice's bounds gathered again, a few scalar nodes. Where the trip count is a constant, the
Loop is unrolled instead (:mod:`~splitops.onnx.rewrite._sequence_loops`).

>>> LIST_RECOMPUTED.name
'list-recomputed'
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx import GraphProto, NodeProto, TensorProto, helper

from ..model import DEFAULT_DOMAINS, Node, Scope, Value, renamed_copy
from ._forms import Context, Reason
from ._graph_sizes import PART_CHECK_TYPES, CheckForm, GraphBuilder
from ._sequence_forms import SequenceRewritten
from ._sequence_loops import LoopForm, always_true
from ._split_forms import name_base

__all__ = ["LIST_RECOMPUTED"]


@dataclass(frozen=True)
class _Found:
    """What the rule found of a Loop: the SequenceEmpty it starts from, the body's nodes
    that compute the appended value (in order), the body's iteration number and whether it
    is declared of shape [1], what is appended after the Loop, and who reads the list."""

    empty: Node
    computes: list[Node]
    appended: str
    iteration: str
    flat: bool
    element: int
    tails: list[str]
    inserts: list[Node]
    readers: list[Node]


def _within(scope: Scope, outer: Scope) -> bool:
    """Whether ``scope`` is ``outer`` or a graph held (at any depth) inside it."""
    root, path = scope.key
    outer_root, outer_path = outer.key
    return root == outer_root and path[: len(outer_path)] == outer_path


def _found(node: Node) -> _Found | str:
    """The Loop's list, or why it is not one the rule removes."""
    scope, names = node.scope, node.input_names
    if not node.is_op("Loop") or not node.held:
        return "it is not a Loop of the default domain"
    if len(names) != 3 or len(node.output_names) != 1 or not names[0]:
        return "it carries more than one list, has scan outputs, or no trip count"
    start = node.inputs[2]
    empty = None if start is None or len(start.uses) != 1 else start.producer
    if empty is None or not empty.is_op("SequenceEmpty"):
        return "its list does not start as a SequenceEmpty read by the Loop alone"
    body = node.held[0]
    names_in, names_out = body.input_names(), body.output_names()
    if len(names_in) != 3 or len(names_out) != 2:
        return "its body is not of one iteration number, one condition and one list"
    iteration, condition, carried = names_in
    produced = {out: n for n in body.nodes for out in n.output_names}
    if names[1]:
        go = scope.constant(names[1])
        if go is None or go.size != 1 or not bool(go.reshape(-1)[0]):
            return "its condition is not a constant true"
    if not always_true(names_out[0], condition, produced, scope):
        return "its body's condition is not always true"
    insert = produced.get(names_out[1])
    if insert is None or insert.op_type != "SequenceInsert" or insert.input_names[:1] != (carried,):
        return "its body does not append one value to the list"
    if len(insert.input_names) != 2:
        return "its body inserts at a position, not at the end"
    appended = insert.input_names[1]
    computes = _computation(body, produced, appended, {iteration, condition, carried})
    if isinstance(computes, str):
        return computes
    declared = body.tensor_type(iteration)
    kind = body.tensor_type(appended)
    element = (kind.element if kind is not None else 0) or int(
        empty.attributes.get("dtype", TensorProto.FLOAT)
    )
    value = node.outputs[0]
    if value is None:
        return "its list is not read"
    chain = _chain(node, value)
    if isinstance(chain, str):
        return chain
    tails, inserts, readers = chain
    flat = declared is not None and declared.dims == (1,)
    return _Found(empty, computes, appended, iteration, flat, element, tails, inserts, readers)


def _computation(
    body: Scope, produced: dict[str, Node], value: str, barred: set[str]
) -> list[Node] | str:
    """The body's nodes that compute ``value``, in order, where none reads ``barred`` but the
    iteration number (the condition, the list) or is one the rule cannot copy."""
    needed: set[int] = set()
    stack = [value]
    while stack:
        name = stack.pop()
        maker = produced.get(name)
        if maker is None:
            if name in barred and name != body.input_names()[0]:
                return "the value its body appends depends on what the Loop carries"
            if body.values.get(name) is not None and not body.values[name].is_input:
                return "the value its body appends reads an initializer of the body's own"
            continue
        if id(maker) in needed:
            continue
        if maker.domain not in DEFAULT_DOMAINS or maker.op_type.startswith("Sequence"):
            return f"its body computes the appended value by {maker.op_type}"
        if maker.held:
            return f"its body computes the appended value by {maker.op_type} of a subgraph"
        needed.add(id(maker))
        stack.extend(name for name in maker.input_names if name)
    return [n for n in body.nodes if id(n) in needed]


def _chain(loop: Node, value: Value) -> tuple[list[str], list[Node], list[Node]] | str:
    """What is appended to the Loop's list after it (in order), the SequenceInserts that do
    it, and the SequenceAt and SequenceLength nodes that read the list; or why not."""
    tails: list[str] = []
    inserts: list[Node] = []
    readers: list[Node] = []
    current: Value | None = value
    while current is not None:
        if current.output_of:
            return "its list is a graph output"
        following: Value | None = None
        for usage in current.uses:
            reader, what = usage.node, f"{usage.node.op_type} {usage.node.label!r}"
            if reader.domain not in DEFAULT_DOMAINS or usage.index != 0:
                return f"{what} reads its list"
            if reader.is_op("SequenceInsert"):
                if len(current.uses) != 1 or reader.scope is not loop.scope:
                    return f"{what} appends to its list where it is read too"
                if len(reader.input_names) > 2 and reader.input_names[2]:
                    return f"{what} inserts into its list at a position"
                tails.append(reader.input_names[1])
                inserts.append(reader)
                following = reader.outputs[0]
            elif reader.is_op("SequenceAt", "SequenceLength"):
                if not _within(reader.scope, loop.scope):
                    return f"{what} reads its list outside the graph of the Loop"
                readers.append(reader)
            else:
                return f"{what} reads its list"
        current = following
    if not readers:
        return "nothing reads its list"
    return tails, inserts, readers


class _ListRecomputed(LoopForm):
    """A list a Loop of a run-time trip count builds, read by position: each part computed
    again where it is read (see the module's documentation)."""

    name = "list-recomputed"
    removes_loop = True

    def check(self, context: Context, node: Node) -> Reason | None:
        found = _found(node)
        return Reason(found) if isinstance(found, str) else None

    def rewrite(self, context: Context, node: Node) -> SequenceRewritten:
        found = _found(node)
        assert not isinstance(found, str)
        trips = node.input_names[0]
        for reader in found.readers:
            label = name_base(reader.proto)
            part_check = context.forms.check == "part" and found.element in PART_CHECK_TYPES
            check: CheckForm | None = "none" if context.forms.check == "part" else None
            step = context.scope_builder(reader.scope, label, check="part" if part_check else check)
            count = step.add("Reshape", [trips, step.ints([1])], "trips")
            length = step.add("Add", [count, step.ints([len(found.tails)])], "length")
            out = reader.output_names[0]
            if reader.op_type == "SequenceLength":
                step.add("Reshape", [length, step.ints([])], "length", output=out)
            else:
                self._read(context, step, found, reader, count, length, out)
            context.edits.replace(reader, step.nodes)
        for insert in found.inserts:
            context.edits.replace(insert, [])
        context.edits.replace(found.empty, [])
        context.edits.replace(node, [])
        context.drop_input(node, 1)
        for reader in found.readers:
            if reader.op_type == "SequenceAt":
                context.drop_input(reader, 1)
        return SequenceRewritten(
            "removed",
            f"a list of a run-time number of values appended by the Loop, "
            f"{len(found.tails)} more after it, read by {len(found.readers)} "
            "SequenceAt/SequenceLength -> each value computed again where it is read",
        )

    @staticmethod
    def _read(
        context: Context,
        step: GraphBuilder,
        found: _Found,
        reader: Node,
        count: str,
        length: str,
        out: str,
    ) -> None:
        """SequenceAt at its position: the position counted from the front and checked, then
        the body's value copied for it, or what is appended after the Loop there."""
        at = step.add("Reshape", [reader.input_names[1], step.ints([1])], "at")
        back = step.add("Less", [at, step.ints([0])], "from_back")
        at = step.add("Where", [back, step.add("Add", [at, length], "counted"), at], "at")
        outside = step.add(
            "Or",
            [
                step.add("Less", [at, step.ints([0])], "before"),
                step.add("Not", [step.add("Less", [at, length], "inside")], "past"),
            ],
            "outside",
        )
        rule = "sequence_position_out_of_range"
        if step.check == "part":  # -1 where outside, 0 where not: no elements to allocate
            minus, zero = step.ints([-1]), step.ints([0])
            flag = step.add("Where", [outside, minus, zero], "outside")
            step.must_not_be_negative(flag, rule, scalar=False)
        else:
            at = step.checked(at, outside, rule)
        number = at if found.flat else step.add("Reshape", [at, step.ints([])], "number")
        view = context.view

        def copied(output: str) -> list[NodeProto]:
            """The body's computation of the appended value, at ``number``, into ``output``."""
            renamed: dict[str, str] = {found.iteration: number}
            nodes = []
            for computed in found.computes:
                outputs = {
                    name: view.fresh_name(f"{step.label}_{name.strip('/').replace('/', '_')}")
                    for name in computed.output_names
                    if name
                }
                copy = renamed_copy(computed.proto, renamed, outputs)
                copy.name = view.fresh_name(f"{copy.name or computed.op_type}_at")
                nodes.append(copy)
                renamed.update(outputs)
            return [*nodes, helper.make_node("Identity", [renamed[found.appended]], [output])]

        if not found.tails:
            step.nodes.extend(copied(out))
            last = step.nodes.pop()
            step.nodes.extend(step.on_part([last]))
            return

        def branch(nodes: list[NodeProto], output: str) -> GraphProto:
            declared = helper.make_tensor_value_info(output, found.element, None)
            return helper.make_graph(nodes, view.fresh_name(f"{step.label}_branch"), [], [declared])

        # Flag k: the position lies below the trip count plus k.
        flags = [
            step.add(
                "Reshape",
                [
                    step.add(
                        "Less", [at, step.add("Add", [count, step.ints([k])], "bound")], "below"
                    ),
                    step.ints([]),
                ],
                "flag",
            )
            for k in range(len(found.tails))
        ]
        # From the last value appended after the Loop outwards: below the trip count plus k,
        # the value appended k - 1 after it; else what the If inside gives.
        inner = view.fresh_name(f"{step.label}_last")
        nodes = [helper.make_node("Identity", [found.tails[-1]], [inner])]
        for k in range(len(found.tails) - 1, 0, -1):
            picked, result = (
                view.fresh_name(f"{step.label}_tail"),
                view.fresh_name(f"{step.label}_at"),
            )
            then = branch([helper.make_node("Identity", [found.tails[k - 1]], [picked])], picked)
            nodes = [
                helper.make_node(
                    "If", [flags[k]], [result], then_branch=then, else_branch=branch(nodes, inner)
                )
            ]
            inner = result
        computed = view.fresh_name(f"{step.label}_computed")
        step.nodes.append(
            helper.make_node(
                "If",
                [flags[0]],
                [out],
                then_branch=branch(copied(computed), computed),
                else_branch=branch(nodes, inner),
            )
        )
        last = step.nodes.pop()
        step.nodes.extend(step.on_part([last]))


LIST_RECOMPUTED: LoopForm = _ListRecomputed()
