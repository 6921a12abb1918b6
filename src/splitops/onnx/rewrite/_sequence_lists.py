"""A list built in a Loop, for targets whose runtime has no sequences or joins them wrong.

torch's TorchScript exporter (opset 13 on) writes ``out = []; for ...: out.append(v)``
followed by ``torch.cat(out, d)`` or ``torch.stack(out, d)`` as a SequenceEmpty carried
through a Loop, a SequenceInsert of ``v`` in its body, and a ConcatFromSequence of what the
Loop gives. The rule carries a tensor instead. Joining along axis ``d`` is, in C order,
joining rows: each value is a ``[P, -1]`` matrix, ``P`` the product of its dims before
``d``, and the values so far (flat) are one too, so each iteration appends its value as
columns and flattens the result; after the Loop, one Reshape to the last value's dims with
``d``'s length summed gives the ConcatFromSequence's result. No rank needs to be known.

Scan outputs would stack the values in one node, but they need every value of one shape:
``torch.cat`` of chunks whose last is shorter fails there (onnxruntime: "Inconsistent shape
in loop output", as the opset-11 exporter's own scan outputs do), and OpenVINO's own import
of the sequence joins values of unequal lengths wrong (``[3, 4, 18]`` for parts of 2, 4 and
6 along the last axis of 12). The carried tensor takes values of any length along the
joined axis; the other axes must agree, as ConcatFromSequence requires. An empty list fails
after the Loop, as ConcatFromSequence of an empty sequence does.

>>> LISTS_ACCUMULATED.name
'lists-accumulated'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, ValueInfoProto, helper, numpy_helper

from ..model import Node, Value
from ..model.protobuf import dtype_of_code, interface_entries
from ._forms import Context, Reason
from ._graph_sizes import CheckForm, GraphBuilder
from ._sequence_forms import SequenceRewritten
from ._sequence_loops import LoopForm
from ._split_forms import name_base

__all__ = ["LISTS_ACCUMULATED"]


@dataclass(frozen=True)
class _List:
    """One list a Loop builds: its carried slot, the SequenceEmpty it starts from, the
    SequenceInsert that appends to it, what it appends, and how it is joined after."""

    slot: int
    empty: Node
    insert: Node
    element: Value
    code: int
    readers: list[Node]
    #: The axis the values are joined along (negative counts from the back), and whether
    #: each is given a new axis there first.
    axis: int
    new_axis: bool


def _lists(loop: Node) -> list[_List] | str:
    """Each list ``loop`` builds, where every carried sequence is one the rule rewrites;
    else why not."""
    if not loop.is_op("Loop") or not loop.held:
        return "it is not a Loop of the default domain"
    found = []
    for slot, initial in enumerate(loop.inputs[2:]):
        start = None if initial is None else initial.producer
        if start is None or not start.is_op("SequenceEmpty"):
            continue
        found.append(_list(loop, slot, start))
    lists = [item for item in found if not isinstance(item, str)]
    reasons = [item for item in found if isinstance(item, str)]
    if reasons:
        return reasons[0]
    return lists or "it builds no list from a SequenceEmpty"


def _list(loop: Node, slot: int, empty: Node) -> _List | str:
    body = loop.held[0]
    empty_value = empty.output(0)
    if empty_value is None or len(empty_value.uses) != 1:
        return "its SequenceEmpty is read by more than the Loop"
    names = body.input_names()
    carried = body.value(names[2 + slot]) if 2 + slot < len(names) else None
    uses = [] if carried is None else carried.uses
    insert = uses[0].node if len(uses) == 1 else None
    if (
        insert is None
        or uses[0].index != 0
        or not insert.is_op("SequenceInsert")
        or insert.scope is not body
        or any(insert.input_names[2:])
    ):
        return "its body does not only append one value to the list"
    appended = insert.output(0)
    outputs = body.output_names()
    if appended is None or outputs[1 + slot] != appended.name or appended.uses:
        return "its body does not carry the appended list on"
    element = insert.inputs[1]
    if element is None:
        return "its body appends no value"
    kind = body.tensor_type(element.name)
    result = loop.outputs[slot]
    if result is None or result.output_of:
        return "the list it builds is a graph output"
    readers = [usage.node for usage in result.uses]
    if not readers or any(
        usage.index != 0
        or not usage.node.is_op("ConcatFromSequence")
        or usage.node.scope is not loop.scope
        for usage in result.uses
    ):
        return "the list it builds is read by more than ConcatFromSequence"
    joins = {(r.attributes.get("axis", 0), bool(r.attributes.get("new_axis", 0))) for r in readers}
    if len(joins) != 1:
        return "the list it builds is joined in more than one way"
    ((axis, new_axis),) = joins
    code = (kind.element if kind is not None else 0) or int(
        empty.attributes.get("dtype", TensorProto.FLOAT)
    )
    return _List(slot, empty, insert, element, code, readers, axis, new_axis)


class _ListsAccumulated(LoopForm):
    """Each list a Loop builds, a tensor carried through it (see the module's docs)."""

    name = "lists-accumulated"

    def check(self, context: Context, node: Node) -> Reason | None:
        found = _lists(node)
        return Reason(found) if isinstance(found, str) else None

    def rewrite(self, context: Context, node: Node) -> SequenceRewritten:
        found = _lists(node)
        assert not isinstance(found, str)
        body = node.held[0]
        label = name_base(node.proto)
        view, edits = context.view, context.edits
        inputs, outputs = list(node.input_names), list(node.output_names)
        body_inputs, body_outputs = interface_entries(body)
        carried = len(inputs) - 2
        extra_in: list[str] = []
        extra_out: list[str] = []
        extra_body_in: list[ValueInfoProto] = []
        extra_body_out: list[ValueInfoProto] = []
        outside = context.scope_builder(node.scope, label)
        joins = []
        for item in found:
            code = item.code
            inner = {what: view.fresh_name(f"{label}_{what}_in") for what in _CARRIED}
            out = {what: view.fresh_name(f"{label}_{what}") for what in _CARRIED}
            final = {what: view.fresh_name(f"{label}_{what}_out") for what in _CARRIED}
            # Each carried value starts empty (a ConstantOfShape: OpenVINO refuses a Loop
            # whose carried value starts as an initializer of no elements), or at 0.
            inputs[2 + item.slot] = _empty(outside, code)
            extra_in += [_empty(outside, TensorProto.INT64), outside.ints([0]), outside.ints([0])]
            step = context.scope_builder(body, name_base(item.insert.proto))
            value = item.element.name
            if item.new_axis:
                value = step.unsqueeze(value, item.axis)
            dims = step.add("Shape", [value], "dims", output=out["dims"])
            at = _axis_position(step, dims, item.axis)
            # The values so far and this one as matrices of P rows (at least 1, so that
            # values of no elements still reshape), joined as columns.
            before = step.add("Slice", [dims, step.ints([0]), at], "before")
            rows = step.add("ReduceProd", [before], "rows", keepdims=1)
            rows = _at_least_one(step, rows)
            matrix = step.add("Concat", [rows, step.ints([-1])], "matrix", axis=0)
            so_far = step.add("Reshape", [inner["acc"], matrix], "so_far")
            this = step.add("Reshape", [value, matrix], "this")
            joined = step.add("Concat", [so_far, this], "joined", axis=1)
            step.add("Reshape", [joined, step.ints([-1])], "flat", output=out["acc"])
            length = step.add("Gather", [dims, at], "length", axis=0)
            step.add("Add", [inner["total"], length], "total", output=out["total"])
            step.add("Add", [inner["count"], step.ints([1])], "count", output=out["count"])
            edits.replace(item.insert, step.nodes)
            appended = item.insert.output(0)
            if appended is not None:
                edits.forget(appended)
            body_inputs[2 + item.slot] = helper.make_tensor_value_info(inner["acc"], code, [None])
            body_outputs[1 + item.slot] = helper.make_tensor_value_info(out["acc"], code, [None])
            for what, shape in (("dims", [None]), ("total", [1]), ("count", [1])):
                int64 = TensorProto.INT64
                extra_body_in.append(helper.make_tensor_value_info(inner[what], int64, shape))
                extra_body_out.append(helper.make_tensor_value_info(out[what], int64, shape))
            outputs[item.slot] = final["acc"]
            extra_out += [final["dims"], final["total"], final["count"]]
            joins.append((item, final))
            edits.replace(item.empty, [])
            listed = node.outputs[item.slot]
            if listed is not None:
                edits.forget(listed)
        # The new carried values after the old ones: a Loop's outputs (and its body's, after
        # the condition) are its carried values, then its scan outputs.
        body_in = [*body_inputs, *extra_body_in]
        body_out = [*body_outputs[: 1 + carried], *extra_body_out, *body_outputs[1 + carried :]]
        edits.interface(body, body_in, body_out)
        edits.reconnect(
            node, [*inputs, *extra_in], [*outputs[:carried], *extra_out, *outputs[carried:]]
        )
        edits.insert_before(node, outside.nodes)
        for item, final in joins:
            self._join(context, node, item, final)
        shown = ", ".join(
            f"ConcatFromSequence along axis {item.axis}" + (" (new axis)" if item.new_axis else "")
            for item in found
        )
        return SequenceRewritten(
            "rewritten",
            f"{len(found)} list(s) built by SequenceInsert in the Loop, joined by {shown} -> a "
            "tensor carried through it, each value appended as the columns of its rows, "
            "reshaped after the Loop",
        )

    @staticmethod
    def _join(context: Context, loop: Node, item: _List, final: dict[str, str]) -> None:
        """After the Loop: the carried values reshaped to the last value's dims, the joined
        axis's length summed; an empty list fails, as ConcatFromSequence of one does."""
        for reader in item.readers:
            label = name_base(reader.proto)
            # The checked length goes into a shape: of a static length, which an Expand's
            # result is not (OpenVINO's CPU plugin refuses a Reshape of a dynamic rank).
            form: CheckForm | None = "expand-gather" if context.forms.check == "expand" else None
            checks = context.scope_builder(loop.scope, label, check=form)
            step = context.scope_builder(loop.scope, label)
            empty = checks.add("Less", [final["count"], checks.ints([1])], "empty")
            total = checks.checked(final["total"], empty, "concat_of_an_empty_sequence")
            if checks.check == "part":
                less = checks.add("Sub", [final["count"], checks.ints([1])], "less")
                checks.must_not_be_negative(less, "concat_of_an_empty_sequence", scalar=False)
            dims = final["dims"]
            at = _axis_position(step, dims, item.axis)
            after = step.add("Add", [at, step.ints([1])], "after")
            head = step.add("Slice", [dims, step.ints([0]), at], "head")
            tail = step.add("Slice", [dims, after, step.ints([2**62])], "tail")
            shape = step.add("Concat", [head, total, tail], "shape", axis=0)
            if step.opset >= 14:
                joined = step.add("Reshape", [final["acc"], shape], "joined", allowzero=1)
            else:
                joined = step.add("Reshape", [final["acc"], shape], "joined")
            step.add("Identity", [joined], "concat", output=reader.output_names[0])
            if checks.pending:
                step.nodes[:] = checks.on_part(step.nodes)
            context.edits.replace(reader, [*checks.nodes, *step.nodes])


def _empty(build: GraphBuilder, code: int) -> str:
    """A 1-d tensor of no elements of type ``code``: a ConstantOfShape (an initializer for
    strings, which ConstantOfShape does not make)."""
    if code == TensorProto.STRING:
        tensor = numpy_helper.from_array(np.zeros(0, dtype=object), build.name("empty"))
        build.nodes += build.edits.tensor_constant(build.scope, tensor)
        return tensor.name
    zero = numpy_helper.from_array(np.zeros(1, dtype_of_code(code)))
    return build.add("ConstantOfShape", [build.ints([0])], "empty", value=zero)


def _axis_position(step: GraphBuilder, dims: str, axis: int) -> str:
    """The joined axis as a ``[1]`` position in a shape ``dims``: ``axis``, or counted from
    the back where negative (the rank known only at run time)."""
    if axis >= 0:
        return step.ints([axis])
    rank = step.add("Size", [dims], "rank")
    return step.add(
        "Add", [step.add("Reshape", [rank, step.ints([1])], "rank"), step.ints([axis])], "axis"
    )


def _at_least_one(step: GraphBuilder, value: str) -> str:
    """``value`` (int64 ``[1]``), or 1 where it is 0 (Max takes int64 from opset 12)."""
    one = step.ints([1])
    if step.opset >= 12:
        return step.add("Max", [value, one], "at_least_one")
    small = step.add("Less", [value, one], "zero")
    return step.add("Where", [small, one, value], "at_least_one")


#: The values carried for each list: the values so far, flat ("acc"), the last value's dims,
#: the joined axis's length so far, and the number of values.
_CARRIED = ("acc", "dims", "total", "count")


LISTS_ACCUMULATED: LoopForm = _ListsAccumulated()
