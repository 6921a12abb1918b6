"""The forms a SplitToSequence node may take when lowered, as rules: each says when it applies
(and, when not, why not), makes its edits, and writes the report row of what it did.

A target's SplitToSequence forms are an ordered list of these rules (``Forms.sequence`` in
:mod:`~splitops.onnx.rewrite._lower`), as its Split forms are
(:mod:`~splitops.onnx.rewrite._split_forms`): the first that applies lowers the node. The
list ends in :data:`KEPT` (the sequence stays, in the form onnxruntime runs as the spec says)
or :data:`REFUSED` (a :class:`~splitops.SplitError` for a target without sequences), whose
reason is what in the model keeps the sequence (what reads it), or else the reason the form
before it gave. Adding a runtime's form is adding a rule.

>>> [form.name for form in sequence_forms(kept=False)]
['unread-removed', 'unread-checked', 'by-split', 'by-position', 'refused']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import NodeProto, TensorProto, helper, numpy_helper

from ...core import Rule, SplitError, is_default_split, sequence_sizes
from ..model import Node, Scope, SplitSite, Usage, Value, node_label, write_split_sizes
from ..model.protobuf import drop_attributes, has_attribute
from ._forms import Chosen, Context, Form, Reason
from ._graph_sizes import CheckForm, GraphBuilder
from ._sequence_parts import RuntimeParts, not_joinable
from ._split_forms import checkable_length, constant_slices, name_base

__all__ = [
    "BY_POSITION",
    "BY_SPLIT",
    "KEPT",
    "KEPT_FOR_ONNXRUNTIME",
    "KEPT_OUTPUT_FOR_TVM",
    "ONNXRUNTIME_SEQUENCE_TYPES",
    "REFUSED",
    "SequenceForm",
    "SequenceReader",
    "SequenceRewritten",
    "by_position",
    "concat_parts",
    "count_constant",
    "sequence_forms",
    "sequence_readers",
]

#: The element types of onnxruntime's SplitToSequence kernels (releases 1.20 to 1.32).
ONNXRUNTIME_SEQUENCE_TYPES = frozenset(
    {
        TensorProto.BOOL,
        TensorProto.INT32,
        TensorProto.INT64,
        TensorProto.FLOAT16,
        TensorProto.FLOAT,
        TensorProto.DOUBLE,
        TensorProto.STRING,
    }
)

#: The operators that read a sequence and that lowering replaces.
_SEQUENCE_READERS = frozenset({"SequenceAt", "SequenceLength", "ConcatFromSequence"})


# --- who reads the sequence ----------------------------------------------------------------


@dataclass
class SequenceReader:
    """One node that reads a sequence: SequenceAt (with its part), SequenceLength or
    ConcatFromSequence (of every part, or of those a SequenceErase left)."""

    node: Node
    #: SequenceAt's constant position, as given (negative counts from the back).
    position: int | None = None
    #: The SequenceErase a ConcatFromSequence reads the sequence through, and the position
    #: it erases (as given; ``None``: the last part).
    erase: Node | None = None
    erased: int | None = None
    #: For a SequenceAt in a Loop's body at its iteration number: the Loop, and whether the
    #: Loop runs no more iterations than the sequence has parts (its trip count is the
    #: sequence's length, or the least of that and other counts, as torch's ``zip`` and
    #: ``enumerate`` write it), so that every position read lies inside.
    loop: Node | None = None
    inside: bool = False
    #: Whether the Loop stacks, as a scan output, the part or what an elementwise operator
    #: computes from it (as long as the part): every part must then be as long as the first,
    #: since a scan output stacks values of one shape (onnxruntime fails others,
    #: "Inconsistent shape in loop output"; OpenVINO and TVM stack them wrong).
    stacked: bool = False

    @property
    def at_run_time(self) -> bool:
        """Whether it reads a part at a position known only at run time (a Loop's)."""
        return self.loop is not None


def sequence_readers(node: Node, *, erase: bool = False) -> tuple[list[SequenceReader], str | None]:
    """The nodes that read the sequence of a SplitToSequence ``node``, when every one is a
    SequenceAt at a constant position, a SequenceLength or a ConcatFromSequence of its own
    scope (with ``erase``, also a ConcatFromSequence of what a SequenceErase at a constant
    position leaves), or a SequenceAt at the iteration number of a Loop of its scope, in the
    Loop's body; else why the sequence must stay."""
    sequence = node.output(0)
    if sequence is None:
        return [], None
    if sequence.output_of:
        return [], f"it is an output of {sequence.output_of[0].label}"
    found = []
    for usage in sequence.uses:
        reader = usage.node
        what = f"{reader.op_type} {reader.label!r}"
        if reader.scope is not node.scope:
            loop = _iteration_loop(usage, node)
            if loop is None:
                return [], f"{what} in {reader.scope.label} reads it"
            found.append(
                SequenceReader(
                    reader,
                    loop=loop,
                    inside=_runs_inside(loop, sequence),
                    stacked=_stacks_part(loop, reader),
                )
            )
            continue
        if erase and reader.is_op("SequenceErase"):
            through, why = _erased_then_concatenated(usage)
            if why is not None:
                return [], f"{what} reads it, and {why}"
            found += through
            continue
        if not reader.is_op(*_SEQUENCE_READERS):
            return [], f"{what} reads it"
        if usage.index != 0:
            return [], f"{what} reads it as a tensor"
        found.append(SequenceReader(reader))
        if reader.op_type == "SequenceAt":
            position = _constant_position(reader)
            if position is None:
                return [], f"{what} reads it at a position known only at run time"
            found[-1].position = position
    return found, None


def _iteration_loop(usage: Usage, node: Node) -> Node | None:
    """The Loop of ``node``'s scope whose body ``usage`` lies in, where it is a SequenceAt
    of the sequence at the body's iteration number; else ``None``."""
    reader, body = usage.node, usage.node.scope
    loop = body.holder
    if (
        usage.index != 0
        or not reader.is_op("SequenceAt")
        or loop is None
        or not loop.is_op("Loop")
        or loop.scope is not node.scope
        or body.attribute_name != "body"
    ):
        return None
    position, names = reader.input_value(1), body.input_names()
    if position is None or not names or position.name != names[0] or position.scope is not body:
        return None
    return loop


#: Operators whose output is as long as each input along every axis (up to broadcasting).
_ELEMENTWISE = frozenset({
    "Abs", "Add", "And", "BitShift", "Cast", "Ceil", "Clip", "Cos", "Div", "Equal", "Erf",
    "Exp", "Floor", "Greater", "GreaterOrEqual", "Identity", "IsInf", "IsNaN", "LeakyRelu",
    "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mod", "Mul", "Neg", "Not", "Or",
    "Pow", "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
    "Softplus", "Sqrt", "Sub", "Sum", "Tanh", "Where", "Xor",
})  # fmt: skip


def _stacks_part(loop: Node, reader: Node) -> bool:
    """Whether ``loop`` stacks, as one of its scan outputs, the part ``reader`` (a SequenceAt
    in its body) reads, or what an elementwise operator computes from that part."""
    part, body = reader.output(0), reader.scope
    carried = len(loop.inputs) - 2
    for name in body.output_names()[1 + carried :]:
        value = body.values.get(name)
        producer = None if value is None else value.producer
        if value is not None and value is part:
            return True
        if (
            producer is not None
            and producer.op_type in _ELEMENTWISE
            and any(given is not None and given is part for given in producer.inputs)
        ):
            return True
    return False


def stacks_unequal_parts(loop: Node) -> bool:
    """Whether ``loop`` stacks, as a scan output, parts of a SplitToSequence of its scope
    that it reads at its iteration number (or what an elementwise operator computes from
    them), where those parts are known now to be of unequal lengths: the model fails there
    at run time, and no form, unrolled or not, can stack them."""
    body = loop.held[0] if loop.held else None
    for reader in [] if body is None else body.nodes:
        sequence = reader.inputs[0] if reader.is_op("SequenceAt") and reader.inputs else None
        split = None if sequence is None else sequence.producer
        if sequence is None or split is None or not split.is_op("SplitToSequence"):
            continue
        usage = next((u for u in sequence.uses if u.node is reader and u.index == 0), None)
        if usage is None or _iteration_loop(usage, split) is not loop:
            continue
        if not _stacks_part(loop, reader):
            continue
        try:
            sizes = _sizes(SplitSite.read(split))
        except SplitError:
            continue
        if sizes is not None and len(set(sizes)) > 1:
            return True
    return False


def _runs_inside(loop: Node, sequence: Value) -> bool:
    """Whether ``loop`` runs no more iterations than ``sequence`` has parts: its trip count
    is ``SequenceLength(sequence)``, or the ReduceMin of a Concat of counts among which is
    that length (unsqueezed), as torch writes ``zip`` and ``enumerate``."""

    def length_of_sequence(value: Value | None) -> bool:
        producer = None if value is None else value.producer
        if producer is not None and producer.is_op("Unsqueeze"):
            producer = producer.inputs[0].producer if producer.inputs[0] else None
        return (
            producer is not None
            and producer.is_op("SequenceLength")
            and producer.inputs[0] is sequence
        )

    trips = loop.input_value(0)
    if length_of_sequence(trips):
        return True
    least = None if trips is None else trips.producer
    if least is None or not least.is_op("ReduceMin") or len(least.inputs) != 1:
        return False
    counts = least.inputs[0]
    joined = None if counts is None else counts.producer
    return (
        joined is not None
        and joined.is_op("Concat")
        and any(length_of_sequence(value) for value in joined.inputs)
    )


def _constant_position(node: Node) -> int | None:
    """The constant integer position that ``node`` reads as its second input, or ``None``:
    0-d as the spec says, or of shape [1] as torch's TorchScript exporter writes it (and
    onnxruntime reads it)."""
    index = node.input_value(1)
    value = None if index is None else index.constant()
    if value is None or value.shape not in ((), (1,)) or value.dtype.kind not in "iu":
        return None
    return int(value.reshape(()))


def _erased_then_concatenated(usage: Usage) -> tuple[list[SequenceReader], str | None]:
    """The ConcatFromSequence nodes that read what the SequenceErase of ``usage`` leaves of
    the sequence it reads, where the position it erases is constant; else why not."""
    erase = usage.node
    if usage.index != 0:
        return [], "reads it as a tensor"
    erased = None
    if len(erase.input_names) > 1 and erase.input_names[1]:
        erased = _constant_position(erase)
        if erased is None:
            return [], "erases a position known only at run time"
    left = erase.output(0)
    if left is None or left.output_of or not left.uses:
        return [], "what it leaves is not read by a ConcatFromSequence alone"
    found = []
    for read in left.uses:
        concat = read.node
        if concat.scope is not erase.scope or not concat.is_op("ConcatFromSequence"):
            return [], "what it leaves is not read by a ConcatFromSequence alone"
        found.append(SequenceReader(concat, erase=erase, erased=erased))
    return found, None


# --- what is known of a site ---------------------------------------------------------------


class SequenceFacts:
    """What is known of each SplitToSequence of a model whatever the form: what reads its
    sequence, and why no form can remove it; found once per node, for all the forms of a
    target (each of which asks)."""

    def __init__(self) -> None:
        self._readers: dict[Node, tuple[list[SequenceReader], Reason | None]] = {}
        self._kept: dict[Node, Reason | None] = {}

    def readers(self, site: SplitSite[Scope]) -> tuple[list[SequenceReader], Reason | None]:
        """:func:`sequence_readers` of the site's node, and why they block every form."""
        found = self._readers.get(site.node)
        if found is None:
            readers, why = sequence_readers(site.node, erase=True)
            found = self._readers[site.node] = (readers, None if why is None else Reason(why))
        return found

    def why_kept(self, site: SplitSite[Scope]) -> Reason | None:
        """Why the sequence cannot be removed by any form, where that is a fact of the model
        (what reads it, a position past its parts, a split of unknown rank); else ``None``."""
        if site.node not in self._kept:
            self._kept[site.node] = _why_kept(self, site)
        return self._kept[site.node]


def _readers(
    context: Context, site: SplitSite[Scope]
) -> tuple[list[SequenceReader], Reason | None]:
    return context.sequences.readers(site)


def _sizes(site: SplitSite[Scope]) -> tuple[int, ...] | None:
    """The size of every part, where the planner can tell them now."""
    value = site.split_value
    if value is not None and value.ndim == 1:
        return tuple(int(v) for v in value)
    length, chunk = checkable_length(site), site.chunk
    if length is not None and chunk is not None:
        return sequence_sizes(length, chunk, opset=site.spec.rule.since_version)
    return None


def _count(site: SplitSite[Scope]) -> int | None:
    """The number of parts, where it is known now: from the sizes, or the number of sizes
    given at run time."""
    sizes = _sizes(site)
    if sizes is not None:
        return len(sizes)
    if site.split_length is not None and site.split_rank == 1:
        return site.split_length
    return None


def _removable_unread(site: SplitSite[Scope]) -> bool:
    """Whether a sequence nothing reads is valid at every run (inference checked all there
    is), so that it goes without a trace."""
    spec, constant = site.spec, site.split_value is not None
    return site.rank is not None and (
        spec.split_input is None
        or (constant and site.split_rank == 0)
        or (constant and site.split_rank == 1 and site.length is not None)
    )


def _checkable_unread(site: SplitSite[Scope]) -> bool:
    """Whether what the spec checks at run time of a sequence nothing reads can be written
    as run-time checks: not where its split's rank is unknown, or above 1."""
    return site.spec.split_input is None or site.split_rank in (0, 1)


def _why_kept(facts: SequenceFacts, site: SplitSite[Scope]) -> Reason | None:
    """:meth:`SequenceFacts.why_kept`, found."""
    readers, why = facts.readers(site)
    if why is not None:
        return why
    if site.drops_axis is None and site.rank is None:
        return Reason(
            "whether its parts lose the split axis is known only at run time (keepdims=0, "
            "and a 0-d split given then), and the rank of its input is not known"
        )
    if site.drops_axis is None and any(r.node.op_type == "ConcatFromSequence" for r in readers):
        return Reason(
            "ConcatFromSequence reads it, and whether its parts lose the split axis is known "
            "only at run time (keepdims=0, and a 0-d split given then: the scalar 1 is the "
            "default split, which drops it)"
        )
    if not readers:
        if _removable_unread(site) or _checkable_unread(site):
            return Reason("nothing reads its sequence")
        return Reason(
            "nothing reads its sequence, but what the spec checks of its split at run time "
            "depends on the split's rank, which is not known"
        )
    concat = [r for r in readers if r.node.op_type == "ConcatFromSequence"]
    count = _count(site)
    if count is not None:
        for reader in readers:
            at = reader.position if reader.erase is None else reader.erased
            if at is not None and not -count <= at < count:
                about = reader.erase or reader.node
                name = node_label(about.proto)
                return Reason(
                    f"{name!r} reads part {at} of {count}: the model fails there at run time",
                    (about,),
                )
            if reader.erase is not None and count == 0:
                name = node_label(reader.erase.proto)
                return Reason(
                    f"{name!r} erases a part of its empty sequence: it fails at run time",
                    (reader.erase,),
                )
            if reader.erase is not None and count == 1:
                return Reason("ConcatFromSequence of its empty sequence fails at run time")
        if count == 0 and concat:
            return Reason("ConcatFromSequence of its empty sequence fails at run time")
        sizes = _sizes(site)
        for reader in concat if sizes is not None else []:
            why = _unequal_join(site, reader, sizes)
            if why is not None:
                return why
        stacked = [reader for reader in readers if reader.stacked]
        if stacked and sizes is not None and len(set(sizes)) > 1:
            loop = stacked[0].loop
            assert loop is not None
            return Reason(
                f"Loop {loop.label!r} stacks its parts, of unequal lengths {list(sizes)}, as a "
                "scan output, which stacks values of one shape: the model fails there at run "
                "time",
                (loop,),
            )
        return None
    if site.spec.split_input is not None and site.split_rank is None:
        return Reason("the rank of its split is not known")
    if site.split_rank is not None and site.split_rank > 1:
        return Reason("its split has more than one axis")
    for reader in concat:
        if reader.erase is not None:
            return Reason(
                "ConcatFromSequence reads what a SequenceErase leaves of it, and its number "
                "of parts is known only at run time"
            )
        attributes = reader.node.attributes
        axis, new_axis = attributes.get("axis", 0), bool(attributes.get("new_axis", 0))
        if (not_join := not_joinable(site, axis, new_axis)) is not None:
            return Reason(not_join, (reader.node,))
    return None


def _unequal_join(
    site: SplitSite[Scope], reader: SequenceReader, sizes: tuple[int, ...] | None
) -> Reason | None:
    """Why ConcatFromSequence ``reader`` fails at run time: it joins parts of unequal lengths
    along another axis than theirs (or stacks them), which no static form can write (Concat
    of such parts fails to load: "Can't merge shape info"); ``None`` where it can be."""
    if sizes is None or site.drops_axis or site.rank is None:
        return None
    attributes = reader.node.attributes
    axis, new_axis = int(attributes.get("axis", 0)), bool(attributes.get("new_axis", 0))
    if not new_axis and axis % site.rank == site.axis:
        return None
    parts = list(sizes)
    if reader.erase is not None:
        del parts[-1 if reader.erased is None else reader.erased]
    if len(set(parts)) <= 1:
        return None
    name = node_label(reader.node.proto)
    return Reason(
        f"{name!r} joins parts of unequal lengths ({parts}) along another axis than the "
        "split's: the model fails there at run time",
        (reader.node,),
    )


def _read(context: Context, site: SplitSite[Scope]) -> list[SequenceReader]:
    """The readers, where :func:`_why_kept` found none blocking."""
    return _readers(context, site)[0]


# --- the rules -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SequenceRewritten:
    """What a form made of a SplitToSequence node (its edits are made): the report row's
    outcome ("removed" or "kept") and detail."""

    outcome: str
    detail: str


#: One form of a SplitToSequence node (:class:`~splitops.onnx.rewrite._forms.Form`): it
#: says whether it applies to a site or why not, and makes its edits.
SequenceForm = Form[SplitSite[Scope], SequenceRewritten]


class _Unread(SequenceForm):
    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        readers, why = _readers(context, site)
        if why is not None:
            return why
        if readers:
            return Reason("something reads its sequence", tuple(r.node for r in readers))
        return self._check(context, site)

    def _check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None


class _UnreadRemoved(_Unread):
    """A sequence nothing reads, valid at every run: removed."""

    name = "unread-removed"

    def _check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        if _removable_unread(site):
            return None
        return Reason("what the spec checks of its split is known only at run time")

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        _Edits(context, site).replace([])
        return SequenceRewritten("removed", "nothing reads its sequence")


class _UnreadChecked(_Unread):
    """A sequence nothing reads, removed, but what the spec checks of it at run time (the
    axis against an unknown rank, a chunk length >= 1, sizes adding up to an axis known only
    then) stays as run-time checks: onnx.reference and onnxruntime run a node nobody reads,
    and fail where it fails."""

    name = "unread-checked"

    def _check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None if _checkable_unread(site) else context.sequences.why_kept(site)

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        reduce_min18 = context.forms.reduce_min18
        shared = GraphBuilder(
            site.scope, context.edits, name_base(site.proto), reduce_min18=reduce_min18
        )
        RuntimeParts(site, shared).check()
        _Edits(context, site).replace(shared.nodes)
        detail = "nothing reads its sequence -> run-time checks of its split"
        return SequenceRewritten("removed", detail)


def _without_split18(context: Context, site: SplitSite[Scope]) -> bool:
    """Whether a Split would be at opset 18 or later, which the target's runtime lacks."""
    return (site.scope.opset or 0) >= 18 and not context.forms.split18


class _BySplit(SequenceForm):
    """A number of parts known now: one Split cuts them (a Squeeze of each part read where
    ``keepdims=0`` drops the axis); SequenceLength becomes a constant, ConcatFromSequence a
    Concat (of the parts a SequenceErase left)."""

    name = "by-split"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        why = context.sequences.why_kept(site)
        if why is not None:
            return why
        if _count(site) is None:
            return Reason("its number of parts is known only at run time")
        for reader in _read(context, site):
            if reader.at_run_time:
                return Reason(
                    f"{reader.node.op_type} {reader.node.label!r} in {reader.node.scope.label} "
                    "reads its parts at the Loop's iteration, known only at run time",
                    (reader.node,),
                )
        if _sizes(site) is None and (site.scope.opset or 0) < 13:
            return Reason(
                "its sizes are known at run time, and Split takes them as an attribute only"
            )
        if _sizes(site) is None and _without_split18(context, site):
            return Reason(f"its sizes are known at run time, and {context.target} has no Split-18")
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        count = _count(site)
        assert count is not None
        context.spend(site.node, count)
        return _Edits(context, site).by_split(_read(context, site), _sizes(site), count)


class _KeptForOnnxruntime(SequenceForm):
    """A sequence whose parts would each need their own Slice stays where onnxruntime has a
    SplitToSequence kernel for its element type (it runs the kept form as the spec says, in
    fewer nodes)."""

    name = "kept-for-onnxruntime"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        why = context.sequences.why_kept(site)
        if why is not None:
            return why
        if site.element not in ONNXRUNTIME_SEQUENCE_TYPES:
            return Reason("onnxruntime has no SplitToSequence kernel for its element type")
        if site.drops_axis is None:
            return Reason(
                "onnxruntime drops the axis of any 0-d split with keepdims=0, and fails where "
                "it is not 1"
            )
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        why = "onnxruntime runs it as the spec says, in fewer nodes than one Slice per part"
        return _Edits(context, site).keep(why)


@dataclass(frozen=True)
class _ByPosition(SequenceForm):
    """Each SequenceAt reads its own part (a Slice, or a Gather of sizes' bounds), for a
    number of parts known only at run time, or for sizes known only then where Split takes
    sizes as an attribute only; SequenceLength gets the count (or computes it).

    ``check``: the form of its run-time checks (``None``: the target's). ``end_by_min``: a
    chunk's end as ``Min(start + chunk, length)``; before opset 12 (where Min takes no int64)
    the form does not apply to chunks of an axis known only at run time (tract fails a Slice
    whose end a Where, or arithmetic, picks: "DynSlice"); else by a Where. ``counts``:
    whether the runtime computes a number of parts of a chunk length given at run time (tract
    fails the Div of two lengths known only then, "Failed analyse ... Div"; a constant chunk
    it divides). ``unsqueezed_chunk``: a
    scalar chunk length given at run time becomes ``[1]`` by an Unsqueeze and a Cast, not a
    Reshape (TVM's importer reads a 0-d value computed from ``Shape`` as a symbolic scalar,
    which its Reshape refuses; an Unsqueeze makes it a shape, and a Cast a tensor)."""

    check_form: CheckForm | None = None
    end_by_min: bool = False
    counts: bool = True
    unsqueezed_chunk: bool = False
    name = "by-position"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        why = context.sequences.why_kept(site)
        if why is not None:
            return why
        # Chunks of 1 (torch's unbind) end one past their start: no Min, no clamp.
        chunks = (site.spec.split_input is None or site.split_rank == 0) and site.chunk != 1
        if self.end_by_min and chunks and site.length is None and (site.scope.opset or 0) < 12:
            return Reason(
                "the ends of its chunks of an axis known only at run time need Min, which takes "
                f"int64 from opset 12 only ({context.target} fails a Slice whose end a Where "
                "picks: docs/portability.md)"
            )
        chunks = site.spec.split_input is None or site.split_rank == 0
        if self.counts or _count(site) is not None or not chunks or site.chunk is not None:
            return None  # a constant chunk divides a length known at run time: tract runs it
        for reader in _read(context, site):
            if reader.node.op_type == "SequenceLength" or (reader.position or 0) < 0:
                what = f"{reader.node.op_type} {node_label(reader.node.proto)!r}"
                return Reason(
                    f"{what} needs its number of parts, the axis's length over a chunk's, "
                    f"both known only at run time, which {context.target} cannot compute (it "
                    "fails a Div of two lengths known only at run time: docs/portability.md)",
                    (reader.node,),
                )
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        readers, count = _read(context, site), _count(site)
        if count is not None and any(r.node.op_type == "ConcatFromSequence" for r in readers):
            context.spend(site.node, count)
        check = self.check_form or context.check_form(site)
        edits = _Edits(context, site)
        return edits.by_position(readers, count, check, self.end_by_min, self.unsqueezed_chunk)


class _Last(SequenceForm):
    """The last form of a target: it applies to every node, for the reason the model gives
    or, where none, the form before it."""

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        why = context.sequences.why_kept(site)
        return self.stays(context, site, "no form removes it" if why is None else why.text)

    def rewrite_after(
        self,
        context: Context,
        site: SplitSite[Scope],
        before: Chosen[SplitSite[Scope], SequenceRewritten],
    ) -> SequenceRewritten:
        reasons = before.reasons
        why = context.sequences.why_kept(site) or (reasons[-1] if reasons else None)
        return self.stays(context, site, "no form removes it" if why is None else why.text)

    def stays(self, context: Context, site: SplitSite[Scope], why: str) -> SequenceRewritten:
        """What becomes of the sequence, which stays for ``why``: what in the model keeps it,
        else why the last form before this one does not apply."""
        raise NotImplementedError


class _Kept(_Last):
    """The sequence stays, in the form onnxruntime runs as the spec says: a scalar split on a
    static axis spelled out as the sizes it stands for, ``keepdims`` dropped wherever a split
    is given (the spec ignores it there; onnxruntime applies it to a scalar split)."""

    name = "kept"

    def stays(self, context: Context, site: SplitSite[Scope], why: str) -> SequenceRewritten:
        return _Edits(context, site).keep(why)


class _Refused(_Last):
    """A :class:`~splitops.SplitError` naming the node and why its sequence stays, for a
    target whose runtime has no sequences."""

    name = "refused"

    def stays(self, context: Context, site: SplitSite[Scope], why: str) -> SequenceRewritten:
        raise SplitError(
            f"{site.scope.label}: node {site.label!r} (SplitToSequence) cannot become a "
            f"Split: {why}.",
            rule=Rule.CONVERSION,
            hint="Lower with target 'portable' to keep the sequence in a form onnxruntime "
            "runs as the spec says",
        )


class _KeptOutputForTvm(SequenceForm):
    """A sequence that is a graph output and that nothing else reads stays where TVM computes
    it as the spec says: on an axis of static length, or cut by constant sizes (unchecked on
    an axis known only at run time: sizes that do not add up to it cut parts). TVM refuses a
    scalar split on an axis known only at run time."""

    name = "kept-output-for-tvm"

    def check(self, context: Context, site: SplitSite[Scope]) -> Reason | None:
        sequence = site.node.output(0)
        if sequence is None or not sequence.output_of or sequence.uses:
            return Reason("it is not a graph output that nothing else reads")
        constant_sizes = site.split_value is not None and site.split_rank == 1
        if checkable_length(site) is None and not constant_sizes:
            return Reason("its parts are chunks of an axis known only at run time")
        return None

    def rewrite(self, context: Context, site: SplitSite[Scope]) -> SequenceRewritten:
        why = "a graph output, which TVM computes as the spec says"
        if checkable_length(site) is None:
            why += " (unchecked: sizes that do not add up to the axis cut parts)"
        return _Edits(context, site).keep(why)


UNREAD: tuple[SequenceForm, ...] = (_UnreadRemoved(), _UnreadChecked())
BY_SPLIT: SequenceForm = _BySplit()
KEPT_FOR_ONNXRUNTIME: SequenceForm = _KeptForOnnxruntime()
KEPT_OUTPUT_FOR_TVM: SequenceForm = _KeptOutputForTvm()
BY_POSITION: SequenceForm = _ByPosition()
KEPT: SequenceForm = _Kept()
REFUSED: SequenceForm = _Refused()


def by_position(
    *,
    check: CheckForm | None = None,
    end_by_min: bool = False,
    counts: bool = True,
    unsqueezed_chunk: bool = False,
) -> SequenceForm:
    return _ByPosition(check, end_by_min, counts, unsqueezed_chunk)


def sequence_forms(
    *,
    kept: bool,
    before_position: Sequence[SequenceForm] = (),
    position: SequenceForm = BY_POSITION,
) -> tuple[SequenceForm, ...]:
    """A target's SplitToSequence forms: a sequence nothing reads removed, one Split where
    the number of parts is known, the target's ``before_position`` forms, its ``position``
    form (a Slice per part read), then :data:`KEPT` (with ``kept``) or :data:`REFUSED`."""
    return (*UNREAD, BY_SPLIT, *before_position, position, KEPT if kept else REFUSED)


# --- the edits -----------------------------------------------------------------------------


class _Edits:
    """The edits of one SplitToSequence site and the nodes that read its sequence."""

    def __init__(self, context: Context, site: SplitSite[Scope]) -> None:
        self.context, self.site, self.spec = context, site, site.spec
        self.scope, self.proto, self.x = site.scope, site.proto, site.data

    def replace(self, nodes: Sequence[NodeProto]) -> None:
        """Put ``nodes`` in the node's place; its sequence and split go."""
        context = self.context
        context.edits.replace(self.site.node, nodes)
        sequence = self.site.node.output(0)
        if sequence is not None:
            context.edits.forget(sequence)
        if self.spec.split_input is not None:
            context.drop_input(self.site.node, 1)

    def replace_node(self, nodes: Sequence[NodeProto]) -> None:
        """Put ``nodes`` in the node's place, its sequence kept."""
        self.context.edits.replace(self.site.node, nodes)

    def _done(self, reader: SequenceReader, nodes: list[NodeProto]) -> None:
        """``nodes`` replace ``reader`` (and the SequenceErase it reads through)."""
        context = self.context
        context.edits.replace(reader.node, nodes)
        for position in range(1, len(reader.node.input_names)):
            context.drop_input(reader.node, position)
        erase = reader.erase
        if erase is not None and not context.edits.is_replaced(erase):
            context.edits.replace(erase, [])
            if erase.input_value(1) is not None:
                context.drop_input(erase, 1)
            left = erase.output(0)
            if left is not None:
                context.edits.forget(left)

    @staticmethod
    def _left(reader: SequenceReader, count: int) -> list[int]:
        """The positions a ConcatFromSequence concatenates: all but the one erased."""
        if reader.erase is None:
            return list(range(count))
        erased = (count - 1 if reader.erased is None else reader.erased) % count
        return [i for i in range(count) if i != erased]

    def by_split(
        self, readers: list[SequenceReader], sizes: tuple[int, ...] | None, count: int
    ) -> SequenceRewritten:
        """One Split cuts every part; each reader takes its part, or their count."""
        context, scope, spec = self.context, self.scope, self.spec
        label = name_base(self.proto)
        build = context.scope_builder(scope, label)
        squeeze = bool(self.site.drops_axis)
        # A part read once by a SequenceAt that needs no Squeeze is written under its name.
        named: dict[int, str] = {}
        for reader in readers:
            if reader.position is not None and not squeeze:
                named.setdefault(reader.position % count, reader.node.output_names[0])
        outputs = [
            named.get(i) or context.view.fresh_name(f"{label}_part{i}") for i in range(count)
        ]
        nodes: list[NodeProto] = []
        # A target whose runtime fails a Split of sizes given at run time (tract, TVM) cuts
        # the parts as its Split form does; one without Split-18 (onnx2torch) cuts constant
        # sizes with Slices.
        cut = context.forms.runtime_sizes_cut if sizes is None else None
        constant = sizes is not None and _without_split18(context, self.site)
        if count and sizes is not None and constant:
            static = self.site.length is not None
            slices = constant_slices(build, self.x, spec.axis, outputs, sizes, static=static)
            nodes += [*build.nodes, *slices]
        elif count and cut is not None:
            assert spec.split_input is not None
            runtime = build.as_int64(spec.split_input, self.site.split_element)
            slices = cut(build, self.x, runtime, spec.axis, outputs)
            nodes += [*build.nodes, *slices]
        elif count:
            split = helper.make_node(
                "Split", [self.x], outputs, name=self.site.node.name, axis=spec.axis
            )
            if sizes is not None:
                nodes += write_split_sizes(
                    split, scope, scope.opset or 0, sizes, context.edits, label
                )
            else:
                assert spec.split_input is not None
                runtime = build.as_int64(spec.split_input, self.site.split_element)
                checked = build.add("Reshape", [runtime, build.ints([count])], "split")
                build.nodes[-1].name = context.view.fresh_name(f"{label}/one_size_per_part")
                split.input.append(checked)
            nodes += [*build.nodes, split]
        self.replace(nodes)
        for reader in readers:
            out = reader.node.output_names[0]
            op = reader.node.op_type
            step = context.scope_builder(scope, name_base(reader.node.proto))
            if op == "SequenceAt":
                assert reader.position is not None
                part = outputs[reader.position % count]
                if squeeze:
                    step.squeeze(part, spec.axis, output=out)
                elif part != out:
                    step.add("Identity", [part], "part", output=out)
            elif op == "SequenceLength":
                step.nodes.append(count_constant(out, count))
            else:
                chosen = [outputs[i] for i in self._left(reader, count)]
                elements = [step.squeeze(p, spec.axis) for p in chosen] if squeeze else chosen
                concat_parts(step, reader.node, elements)
            self._done(reader, step.nodes)
        kind = "a Slice per part" if cut is not None or constant else "Split"
        kind += " + Squeeze" if squeeze else ""
        where = "constant sizes" if sizes is not None else "sizes known at run time"
        return SequenceRewritten("removed", f"sequence of {count} part(s) -> {kind} ({where})")

    def by_position(
        self,
        readers: list[SequenceReader],
        count: int | None,
        check: CheckForm,
        end_by_min: bool,
        unsqueezed_chunk: bool = False,
    ) -> SequenceRewritten:
        """Each SequenceAt reads its own part; SequenceLength gets the ``count`` (or computes
        it), ConcatFromSequence concatenates the parts (when ``count`` is known). What the
        readers share (the axis length, the checked chunk length or sizes) is computed once,
        in the SplitToSequence's place."""
        context, scope = self.context, self.scope
        reduce_min18 = context.forms.reduce_min18

        def builder(label: str, where: Scope = scope) -> GraphBuilder:
            return GraphBuilder(where, context.edits, label, check, reduce_min18=reduce_min18)

        shared = builder(name_base(self.proto))
        parts = RuntimeParts(
            self.site, shared, end_by_min=end_by_min, unsqueezed_chunk=unsqueezed_chunk
        )
        for reader in readers:
            step = builder(name_base(reader.node.proto), reader.node.scope)
            out = reader.node.output_names[0]
            if reader.node.op_type == "ConcatFromSequence" and count is None:
                attributes = reader.node.attributes
                axis, new_axis = attributes.get("axis", 0), bool(attributes.get("new_axis", 0))
                why = parts.concatenated(step, axis, new_axis, out)
                assert not why, why  # the form's check found none
            elif reader.node.op_type == "ConcatFromSequence":
                assert count is not None
                left = self._left(reader, count)
                names = [step.name(f"part{i}") for i in left]
                for position, name in zip(left, names, strict=True):
                    parts.part(step, position, name)
                concat_parts(step, reader.node, names)
            elif reader.at_run_time:
                at = reader.node.input_names[1]
                parts.part_at(step, at, out, inside=reader.inside, equal=reader.stacked)
            elif reader.position is not None:
                parts.part(step, reader.position, out)
            elif count is not None:
                step.nodes.append(count_constant(out, count))
            else:
                parts.count(step, out)
            if shared.pending:  # the checks of the ``part`` form, on the first reader's path
                step.nodes[:] = shared.on_part(step.nodes)
            self._done(reader, step.nodes)
        self.replace(shared.nodes)
        number = "a number of parts known at run time" if count is None else f"{count} part(s)"
        how = parts.how
        if any(r.at_run_time for r in readers):
            how += " (in the Loop's body, at its iteration)"
        return SequenceRewritten("removed", f"sequence of {number} -> {how}")

    def keep(self, why: str) -> SequenceRewritten:
        """Keep the sequence, in the form onnxruntime runs as the spec says."""
        context, site = self.context, self.site
        new = NodeProto()
        new.CopyFrom(self.proto)
        changes = self._scalar_positions()
        given = self.spec.split_input is not None
        if given and site.drops_axis and is_default_split(site.split_value):
            # The scalar 1 is the default split, whose parts lose the axis with keepdims=0
            # (torch's unbind): written as the default, which every runtime squeezes.
            del new.input[1:]
            context.drop_input(site.node, 1)
            self.replace_node([new])
            changes.insert(0, "scalar split 1 -> the default split")
            return SequenceRewritten("kept", f"{why}; " + ", ".join(changes))
        if given and site.drops_axis is None and site.element and (self.scope.opset or 0) >= 13:
            # A 0-d split given at run time with keepdims=0: the default split where it is
            # 1, which drops the axis, else chunks that keep it. An If of the two (If takes
            # sequences from opset 13), which onnxruntime (which drops the axis of every 0-d
            # split) and onnx.reference run.
            self._either_split()
            changes.insert(0, "0-d split given at run time -> an If of the default split")
            return SequenceRewritten("kept", f"{why}; " + ", ".join(changes))
        if given and has_attribute(new, "keepdims"):
            drop_attributes(new, {"keepdims"})
            changes.append(
                "keepdims dropped (ignored with a split)"
                if site.drops_axis is not None
                else "keepdims dropped: a 0-d split given at run time as 1 keeps the axis "
                "(an If of sequences takes opset 13)"
            )
        chunk = site.chunk if given else None
        length = checkable_length(site)
        if chunk is not None and length:
            sizes = sequence_sizes(length, chunk, opset=self.spec.rule.since_version)
            context.spend(site.node, len(sizes))
            name = context.view.fresh_name(f"{name_base(self.proto)}_split")
            constants = context.edits.int64_constant(self.scope, name, sizes)
            new.input[1] = name
            context.drop_input(site.node, 1)
            shown = list(sizes) if len(sizes) <= 8 else f"[{', '.join(map(str, sizes[:8]))}, ...]"
            changes.append(f"scalar split {chunk} -> {shown}")
            self.replace_node([*constants, new])
        elif changes:
            self.replace_node([new])
        return SequenceRewritten("kept", f"{why}; " + (", ".join(changes) or "unchanged"))

    def _either_split(self) -> None:
        """The SplitToSequence as an If: of the default split (no split, ``keepdims=0``)
        where its 0-d split is 1, else of the split (no keepdims)."""
        context, site = self.context, self.site
        label = name_base(self.proto)
        build = context.scope_builder(self.scope, label)
        assert self.spec.split_input is not None
        assert site.element
        split = build.as_int64(self.spec.split_input, site.split_element)
        default = build.add("Equal", [split, build.scalar(1)], "default_split")
        branches = {}
        for branch, inputs in (("then", [self.x]), ("else", [self.x, self.spec.split_input])):
            out = context.view.fresh_name(f"{label}_{branch}")
            keep: dict[str, Any] = {"keepdims": 0} if branch == "then" else {}
            part = helper.make_node("SplitToSequence", inputs, [out], axis=self.spec.axis, **keep)
            info = helper.make_tensor_sequence_value_info(out, site.element, None)
            branches[f"{branch}_branch"] = helper.make_graph([part], out, [], [info])
        choose = helper.make_node("If", [default], [*site.node.output_names], **branches)
        self.replace_node([*build.nodes, choose])

    def _scalar_positions(self) -> list[str]:
        """Each SequenceAt of the kept sequence at a constant position of shape [1] given
        that position 0-d, as the spec takes it (onnx.reference fails one of shape [1])."""
        sequence = self.site.node.output(0)
        changed = 0
        for usage in () if sequence is None else sequence.uses:
            reader = usage.node
            given = reader.input_value(1) if reader.is_op("SequenceAt") else None
            value = None if given is None or usage.index else given.constant()
            position = _constant_position(reader)
            if value is None or value.shape != (1,) or position is None:
                continue
            step = self.context.scope_builder(reader.scope, name_base(reader.proto))
            new = NodeProto()
            new.CopyFrom(reader.proto)
            new.input[1] = step.scalar(position)
            self.context.edits.replace(reader, [*step.nodes, new])
            self.context.drop_input(reader, 1)
            changed += 1
        return [f"{changed} position(s) of shape [1] made 0-d"] if changed else []


def concat_parts(step: GraphBuilder, node: Node, parts: list[str]) -> None:
    """ConcatFromSequence ``node`` over the sequence's elements ``parts``: a Concat (of the
    parts given a new axis first, with ``new_axis=1``)."""
    axis = int(node.attribute("axis", 0))
    if node.attribute("new_axis", 0):
        parts = [step.unsqueeze(p, axis) for p in parts]
    step.add("Concat", parts, "concat", output=node.output_names[0], axis=axis)


def count_constant(name: str, count: int) -> NodeProto:
    """SequenceLength's count: a Constant node, not an initializer, which some converters
    (onnx2tf) drop when it is also a graph output."""
    value = numpy_helper.from_array(np.array(count, dtype=np.int64), name)
    return helper.make_node("Constant", [], [name], value=value)
