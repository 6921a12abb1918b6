"""Lower a model's Split and SplitToSequence nodes to the forms every runtime computes alike.

The runtimes agree on a Split with explicit int64 sizes, and disagree on everything else
these operators allow: uneven ``num_outputs``, a node listing fewer outputs than
``num_outputs``, a scalar SplitToSequence split with ``keepdims=0``, and sequences at all
(TensorRT, tract and others have none). :func:`lower_model` rewrites every such node, in the
main graph, in subgraphs and in model-local functions, into the agreed form with the same
outputs:

- **Split without sizes** (``num_outputs`` at 18, equal parts by output count before): the
  planner's sizes as an int64 constant when the axis length is static; else the sizes
  computed in the graph from ``Shape`` by the planner's formula
  (:mod:`~splitops.onnx.rewrite._graph_sizes`), with a run-time check where the spec rejects the
  split. A node listing fewer outputs than ``num_outputs`` gets sizes for its listed parts
  and one extra, unused output for the rest, so that every listed part keeps its size. One
  part covering the whole axis becomes an ``Identity``. Before opset 13, where Split takes
  sizes as an attribute only, a static axis gets the attribute; an axis known only at run
  time keeps equal parts by output count, which every runtime computes alike.
- **Split-1 of static sizes** (given, or equal parts of a static axis), for the target
  ``onnxruntime``: a ``Slice-1`` per part, bounds as attributes (onnxruntime has no
  Split-1). Every other target keeps Split-1, which OpenVINO, tract and TVM run (TVM fails
  Slice-1; onnx.reference has no Split-1 either), a constant second input (sizes
  typed like the data) made the ``split`` attribute.
- **A Split that leaves outputs out** (``["a", "", "b"]``): each omitted output gets a
  name of its own, which nothing reads (onnxruntime 1.31 and 1.32 die by SIGSEGV running
  such a node; tract refuses it).
- **SplitToSequence whose sequence nothing reads**: removed, but what the spec checks of it
  at run time (a chunk length >= 1, sizes adding up to an axis known only then, the axis
  against a rank known only then) stays as run-time checks: onnx.reference and onnxruntime
  run a node nobody reads, and fail where it fails.
- **SplitToSequence whose sequence is read only by** ``SequenceAt`` with a constant index,
  ``SequenceLength`` and ``ConcatFromSequence``: the sequence is removed.
  When the number of parts is known (a constant or static 1-d split, or an axis of static
  length), one Split cuts the parts (with a Squeeze of each part read where ``keepdims=0``
  drops the axis); ``SequenceLength`` becomes a constant and ``ConcatFromSequence`` a
  Concat. When the number of parts depends on a length known only at run time (chunks of
  a scalar length, or of 1), each ``SequenceAt`` reads its part with one ``Slice`` (a
  ``Gather`` for chunks of 1), which fails at run time where the index lies past the last
  part, as ``SequenceAt`` does; ``SequenceLength`` becomes ``ceil(length / chunk)``.
- **SplitToSequence that keeps its sequence** (``target="portable"``): a scalar split on a
  static axis becomes the 1-d split it stands for, and ``keepdims`` is dropped wherever a
  split is given (the spec ignores it there; onnxruntime applies it to a scalar split).
  With ``target="no-sequences"`` such a node is a :class:`~splitops.SplitError` that names
  it and what reads its sequence. ``target="onnxruntime"``, the onnxruntime engine's, also
  keeps (in that form) a sequence whose parts would each need their own Slice, where
  onnxruntime has a SplitToSequence kernel for its element type.

Decisions where the spec leaves the lowered form open:

- Sizes given at run time (a Split-13/18 split input that is no constant) go through a
  ``Reshape`` to the node's number of outputs: onnxruntime takes an empty split input for
  an absent one and cuts equal parts, where the spec needs one size per output. For
  target ``tvm``, whose runtime refuses such a Split, they are also checked (no size below
  0, their sum the axis length) and cut by a Slice per part.
- A node whose attributes come from its function's call (``ref_attr_name``) is left as it
  is: its form is known only per call.
- Invalid nodes stop the lowering with the first problem :func:`~splitops.check_model`
  reports (the command prints them all), and nothing is returned.
- The parts lowering writes for a sequence it removes (a Split of one output per part) or a
  scalar split it spells out count against the ``max_model_parts`` limit for the whole
  model, before they are written: a SplitToSequence of 2^20 chunks is a few dozen bytes.
- An axis of 2^31 or more gets its sizes computed in the graph, as one known only at run
  time: onnx's inference of Split reads the axis as 32 bits, and its check refuses constant
  sizes there.

The model keeps its opset, IR version, graph inputs and outputs. Lowering costs time in
proportion to the model: one inference (:mod:`~splitops.onnx.inference._engine`) and one pass over
the nodes; every body is rebuilt once.

>>> import numpy as np
>>> from onnx import TensorProto, helper, numpy_helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b", "c", "d"], num_outputs=4, name="s")], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [9])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcd"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> lowered = lower_model(model)
>>> list(lowered.graph.node[0].input), numpy_helper.to_array(lowered.graph.initializer[0])
(['x', 's_split'], array([3, 3, 3, 0]))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from ...core import (
    Rule,
    SplitError,
    current_limits,
    drops_axis,
    require_argument,
    sequence_sizes,
)
from ..inference import infer_model_and_nodes
from ..model import (
    DEFAULT_DOMAINS,
    ModelEdits,
    ModelView,
    Node,
    Scope,
    SplitNode,
    SplitSite,
    location,
    node_label,
    remove_where,
    types_only,
    write_split_sizes,
)
from ._contract import RewriteError
from ._graph_sizes import CheckForm, GraphBuilder
from ._rewrite import Rewrite
from ._split_forms import (
    FOLD_STATIC_SIZES,
    RUNTIME_SIZES_AS_CHECKED_SLICES,
    RUNTIME_SIZES_AS_SLICES,
    RUNTIME_SIZES_CHECKED,
    SPLIT1_AS_SLICES,
    SPLIT1_SIZES,
    UNSIZED,
    ZERO_SIZES_AS_SLICES,
    SplitForm,
    axis_symbol,
    checkable_length,
    computed_part_sizes,
    computed_sizes,
    copy_node,
    copy_without_split,
    explicit_sizes_kept,
    kept_at_run_time,
    name_base,
    slices_per_part,
)

__all__ = [
    "SEQUENCE_OPS",
    "TARGETS",
    "Lowering",
    "SequenceReader",
    "check_target",
    "lower_model",
    "lower_model_with_report",
    "sequence_readers",
]

Target = Literal["portable", "no-sequences", "onnxruntime", "openvino", "tract", "tvm"]


@dataclass(frozen=True)
class Forms:
    """The forms one target's runtime computes as the spec says, as found by running them
    (``python -m benchmarks.portability``; the table is in docs/portability.md)."""

    #: The forms of a Split, in order: the first that applies to a node lowers it
    #: (:mod:`~splitops.onnx.rewrite._split_forms`).
    split: tuple[SplitForm, ...]
    #: How the run-time checks fail where the spec rejects a length.
    check: CheckForm
    #: Whether a SplitToSequence whose sequence cannot be removed may stay.
    sequences: bool = True
    #: Whether a sequence that would take a Slice per part stays, where onnxruntime has a
    #: SplitToSequence kernel for its element type (fewer nodes for onnxruntime to run).
    onnxruntime_sequences: bool = False


def _split_forms(
    *,
    split1_slices: bool = False,
    runtime_sizes: SplitForm = RUNTIME_SIZES_CHECKED,
    checks_sum: bool = True,
    zero_sizes: bool,
    num_outputs: Sequence[SplitForm],
    equal: Sequence[SplitForm],
) -> tuple[SplitForm, ...]:
    """A target's Split forms: with ``split1_slices``, Split-1 of static sizes as Slices
    (for runtimes without Split-1); explicit sizes (with ``zero_sizes``, those holding a 0
    as a Slice per part), sizes computed from static shapes folded, sizes given at run time
    in the ``runtime_sizes`` form (``checks_sum``: whether the runtime checks that constant
    sizes add up to a run-time axis); then without sizes, one part, a static axis, before
    opset 13, and on an axis known only at run time the target's own forms for
    ``num_outputs`` and equal parts."""
    kept = explicit_sizes_kept(checks_sum=checks_sum)
    split1 = (SPLIT1_AS_SLICES,) if split1_slices else ()
    zero = (ZERO_SIZES_AS_SLICES,) if zero_sizes else ()
    sized = (*split1, *SPLIT1_SIZES, *zero, kept, FOLD_STATIC_SIZES, runtime_sizes)
    return (*sized, *UNSIZED, *num_outputs, *equal)


_SLICES = (slices_per_part("num_outputs"),)

#: What lowering aims for, and the forms it picks for it (each measured on its runtime:
#: docs/portability.md):
#:
#: - ``portable``: the forms every listed runtime (onnxruntime, onnx.reference, OpenVINO,
#:   tract, TVM) loads and runs exactly: a Slice per part on an axis known at run time,
#:   without run-time checks, since no check form loads on both tract and TVM. Its bounds
#:   are computed as 0-d values, then unsqueezed: TVM follows 0-d shape arithmetic as
#:   symbolic expressions and knows each part's shape, where from ``[1]`` bounds it cuts
#:   parts of unknown shape, and a Shape, Concat or Add of such parts then fails (a part
#:   split again, halves joined back). Where a length is invalid the lowered node cuts parts
#:   instead of failing (tract and TVM still fail it); the report says so, node by node.
#:   Explicit sizes holding a 0 become a Slice per part (TVM's Split refuses them).
#:   ``no-sequences``: the same, and a sequence that cannot be removed is refused.
#: - ``onnxruntime`` (the onnxruntime engine's): sizes computed in the graph, checked by a
#:   Reshape (onnxruntime 1.31 fails uneven ``num_outputs``, 1.32 fewer listed parts);
#:   equal parts by output count kept (1.31 and 1.32 cut and check them as the spec says);
#:   sequences kept where onnxruntime has a kernel; Split-1 of static sizes as Slice-1
#:   (onnxruntime has no Split-1).
#: - ``openvino``: a Slice per part, checked by an Expand (OpenVINO's Split by
#:   ``num_outputs`` wants the count to divide the axis; the check fails every invalid
#:   length on OpenVINO 2026.4, run live); equal parts kept; no sequences
#:   (OpenVINO refuses a sequence as an output, and ConcatFromSequence of one of unknown
#:   length).
#: - ``tract``: the node kept where tract computes it as the spec says (every part listed),
#:   else a Slice per part, unchecked (tract loads no check form after a Slice's bounds are
#:   added to); sizes given at run time as a Slice per part (tract fails such a Split); no
#:   sequences (tract has none).
#: - ``tvm``: ``num_outputs`` kept where TVM computes it as the spec says, else (and equal
#:   parts, which TVM does not check) a Slice per part checked by an Expand then a Gather
#:   (TVM needs a Slice's bounds of static length); no
#:   sequences (TVM cuts a sequence output wrong, and refuses ConcatFromSequence of one);
#:   explicit sizes holding a 0 as a Slice per part (TVM's Split refuses them); sizes given
#:   at run time (torch's ``tensor_split``, whose SplitToSequence becomes a Split of them
#:   once its sequence is removed) as a Slice per part after checks of the sizes (TVM
#:   refuses a Split of sizes that are not constant, "Dynamic Split not yet supported").
_PORTABLE = _split_forms(
    zero_sizes=True,
    num_outputs=(slices_per_part("num_outputs", scalars=True),),
    equal=(slices_per_part("equal", scalars=True),),
)
FORMS: dict[Target, Forms] = {
    "portable": Forms(_PORTABLE, "none"),
    "no-sequences": Forms(_PORTABLE, "none", sequences=False),
    "onnxruntime": Forms(
        _split_forms(
            split1_slices=True,
            zero_sizes=False,
            num_outputs=(computed_sizes("num_outputs"),),
            equal=(kept_at_run_time("equal"), computed_sizes("equal")),
        ),
        "reshape",
        onnxruntime_sequences=True,
    ),
    "openvino": Forms(
        _split_forms(
            zero_sizes=False,
            num_outputs=_SLICES,
            equal=(kept_at_run_time("equal"), slices_per_part("equal")),
        ),
        "expand",
        sequences=False,
    ),
    "tract": Forms(
        _split_forms(
            runtime_sizes=RUNTIME_SIZES_AS_SLICES,
            checks_sum=False,
            zero_sizes=False,
            num_outputs=(kept_at_run_time("num_outputs"), *_SLICES),
            equal=(kept_at_run_time("equal"), slices_per_part("equal")),
        ),
        "none",
        sequences=False,
    ),
    "tvm": Forms(
        _split_forms(
            runtime_sizes=RUNTIME_SIZES_AS_CHECKED_SLICES,
            zero_sizes=True,
            num_outputs=(kept_at_run_time("num_outputs"), *_SLICES),
            equal=(slices_per_part("equal"),),
        ),
        "expand-gather",
        sequences=False,
    ),
}
TARGETS: tuple[Target, ...] = tuple(FORMS)

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


@dataclass(frozen=True)
class Lowering:
    """What lowering did to one Split or SplitToSequence node."""

    #: Where the node lives: "main", "main/loop_1.body", "function:domain.name".
    graph: str
    node: str
    op: str
    #: The operator version (since_version) the node was read at.
    opset: int
    #: "rewritten", "removed" (a sequence and its readers replaced), "kept" or "unchanged".
    outcome: str
    #: What it became, or why it stays.
    detail: str

    def __str__(self) -> str:
        where = location(self.graph, self.node)
        return f"{where} ({self.op}-{self.opset}) {self.outcome}: {self.detail}"

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


def lower_model(model: ModelProto, *, target: Target = "portable") -> ModelProto:
    """A copy of ``model`` whose Split and SplitToSequence nodes every runtime computes as the
    spec says (see the module's documentation for each rewrite).

    Raises :class:`~splitops.SplitError` for the first invalid node, as
    :func:`~splitops.check_model` reports it, and with ``target="no-sequences"`` for a
    SplitToSequence whose sequence cannot be removed.
    """
    return lower_model_with_report(model, target=target)[0]


def lower_model_with_report(
    model: ModelProto, *, target: Target = "portable"
) -> tuple[ModelProto, list[Lowering]]:
    """:func:`lower_model`, and what it did to each node."""
    require_argument(model, ModelProto, "lower_model", "an onnx.ModelProto")
    lowering = Lower(target)
    return lowering(model), lowering.report


class Lower(Rewrite):
    """The lowering for ``target`` as a :class:`~splitops.onnx.rewrite._rewrite.Rewrite`;
    :attr:`report` tells what became of each node of the last model it lowered."""

    what = "lowering"

    def __init__(self, target: Target) -> None:
        check_target(target)
        self.target: Target = target
        self.report: list[Lowering] = []
        self._forms = FORMS[target]

    def types(self, model: ModelProto) -> ModelProto:
        # Types only: the weights stay out of the inferred copy.
        inferred, records = infer_model_and_nodes(types_only(model))
        for record in records:
            error = record.error
            if error is not None:
                raise error.in_context(f"{record.graph}: ") from record.problems[0][1]
        return inferred

    def plan(self, view: ModelView, edits: ModelEdits) -> None:
        plan = Plan(view, self.target, edits)
        for node in list(view.split_nodes()):
            plan.lower(node)
        self.report = plan.report

    def finish(self, model: ModelProto) -> None:
        if not self._forms.sequences:
            _refuse_sequences(model, self.target)


#: The operators that make, read or hold sequences.
SEQUENCE_OPS = frozenset(
    {
        "SequenceEmpty",
        "SequenceConstruct",
        "SequenceInsert",
        "SequenceErase",
        "SequenceAt",
        "SequenceLength",
        "SequenceMap",
        "ConcatFromSequence",
        "SplitToSequence",
    }
)


def _refuse_sequences(model: ModelProto, target: str) -> None:
    """A SplitError naming the sequence operators still in a model lowered for a target
    without sequences (those another operator, such as torch's Loop of SequenceInsert,
    made; lowering removes only SplitToSequence's)."""
    left = [
        f"{op} {label!r} in {scope.label}"
        for scope in ModelView.read(model).scopes
        for node in scope.nodes
        if (op := node.op_type) in SEQUENCE_OPS and node.proto.domain in DEFAULT_DOMAINS
        for label in [node_label(node.proto)]
    ]
    if left:
        shown = "; ".join(left[:5]) + (f"; and {len(left) - 5} more" if len(left) > 5 else "")
        raise SplitError(
            f"the model still holds sequences, which target {target!r} cannot run: {shown}.",
            rule=Rule.CONVERSION,
            hint="Export the model without sequences (for torch: split by sizes rather than "
            "tensor_split by indices), or lower with target 'portable'",
        )


def check_target(target: object) -> None:
    """Raise :class:`~splitops.SplitError` unless ``target`` is one of :data:`TARGETS`."""
    if target not in TARGETS:
        raise SplitError(
            f"the lowering target must be one of {', '.join(TARGETS)}; {target!r} was given.",
            rule=Rule.ARGUMENT,
        )


# --- the plan ------------------------------------------------------------------------------


@dataclass
class Plan:
    """The lowering's plan for one model: the edits of its nodes, in a target's forms, and
    what became of each node."""

    view: ModelView
    target: Target
    edits: ModelEdits
    report: list[Lowering] = field(default_factory=list)
    #: The parts written so far by rewrites that write one value (or more) per part.
    parts: int = 0

    #: The computed sizes of a Split on an axis known at run time, shared by the nodes of
    #: one scope that cut an axis of the same symbolic length into as many parts.
    shared: dict[tuple[Any, ...], tuple[str, ...]] = field(default_factory=dict)
    #: The 1-d sizes tensor, and the bounds of the parts, of each such shared sizes.
    sizes: dict[tuple[str, ...], str] = field(default_factory=dict)
    bounds: dict[tuple[str, ...], list[tuple[str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.forms = FORMS[self.target]

    def scope_builder(self, scope: Scope, label: str, *, scalars: bool = False) -> GraphBuilder:
        """Nodes computing values in ``scope``, checked in the target's form (sizes 0-d
        with ``scalars``)."""
        return GraphBuilder(scope, self.edits, label, self.forms.check, scalars=scalars)

    def spend(self, node: Node, parts: int) -> None:
        """Count ``parts`` that the rewrite of ``node`` is about to write (a sequence of 2^20
        parts becomes a Split of 2^20 outputs) against the ``max_model_parts`` limit, which
        holds for the whole model."""
        self.parts += parts
        limit = current_limits().max_model_parts
        if self.parts > limit:
            raise SplitError(
                f"{node.scope.label}: node {node_label(node.proto)!r} ({node.op_type}): "
                f"lowering would write {self.parts} parts in all, over the max_model_parts "
                f"limit of {limit} for a whole model, so that a small file cannot make a huge "
                "one.",
                rule=Rule.LIMIT,
                hint="Raise the limit with --max-model-parts N "
                "(splitops.limits(max_model_parts=N)) if the model really needs it.",
            )

    def lower(self, node: Node) -> None:
        scope, proto = node.scope, node.proto
        if scope.opset is None:
            self.note(node, None, "unchanged", "its body imports no default opset")
            return
        if any(a.ref_attr_name for a in proto.attribute):
            if "" in proto.output and proto.op_type == "Split":
                named = copy_node(proto)
                self._name_omitted_outputs(proto, [named])
                self.edits.replace(node, [named])
                detail = "omitted outputs named (its attributes come from the call)"
                self.note(node, None, "rewritten", detail)
                return
            self.note(node, None, "unchanged", "its attributes come from the call")
            return
        site = SplitSite.read(node)
        if site.spec.op == "Split":
            self._lower_split(site)
        else:
            _Sequence(self, site).lower()

    def note(self, node: Node, spec: SplitNode | None, outcome: str, detail: str) -> None:
        """Report what became of a node."""
        scope, proto = node.scope, node.proto
        version = spec.rule.since_version if spec is not None else scope.opset or 0
        self.report.append(
            Lowering(scope.label, node_label(proto), proto.op_type, version, outcome, detail)
        )

    def drop_input(self, node: Node, position: int) -> None:
        """The constant that ``node`` reads at ``position`` goes once nothing reads it."""
        self.edits.drop(node.input_value(position))

    # --- Split ---------------------------------------------------------------------------

    def _lower_split(self, site: SplitSite) -> None:
        node, spec = site.node, site.spec
        reasons = []
        for form in self.forms.split:
            why_not = form.check(self, site)
            if why_not is not None:
                reasons.append(f"{form.name}: {why_not}")
                continue
            done = form.rewrite(self, site)
            nodes, outcome, detail = done.nodes, done.outcome, done.detail
            # onnxruntime 1.31 and 1.32 die by SIGSEGV running a Split that leaves an output
            # out, and tract refuses it ("Op says 3, node says 1"): every target names them.
            if "" in site.proto.output:
                if nodes is None:
                    nodes, outcome = [copy_node(site.proto)], "rewritten"
                    detail = f"omitted outputs named ({detail})"
                self._name_omitted_outputs(site.proto, nodes)
            if nodes is not None:
                self.edits.replace(node, nodes)
            if done.drops_split:
                self.drop_input(node, 1)
            self.note(node, spec, outcome, detail)
            return
        raise RewriteError(  # every target's last forms apply to any valid node
            f"{site.where}: no form of target {self.target!r} applies ({'; '.join(reasons)})."
        )

    def _name_omitted_outputs(self, proto: NodeProto, nodes: list[NodeProto]) -> None:
        """Give each output that a Split among ``nodes`` (what ``proto`` became) leaves out
        a fresh name."""
        for new in nodes:
            if new.op_type == "Split" and "" in new.output:
                base = f"{name_base(proto)}_unused"
                for index, name in enumerate(new.output):
                    if not name:
                        new.output[index] = self.view.fresh_name(base)

    def builder(self, site: SplitSite, *, scalars: bool = False) -> GraphBuilder:
        """Nodes computing values in ``site``'s scope, checked in the target's form (sizes
        0-d with ``scalars``)."""
        return self.scope_builder(site.scope, name_base(site.proto), scalars=scalars)

    def computed_sizes(self, site: SplitSite, build: GraphBuilder) -> tuple[tuple[str, ...], bool]:
        """The sizes of a Split without sizes, computed in the graph by ``build``; and whether
        they are shared by the nodes of the scope that cut an axis of the same symbolic
        length into as many parts (computed once for them all)."""
        symbol = axis_symbol(site)
        spec = site.spec
        key = (
            site.scope.key,
            symbol,
            spec.num_outputs or len(spec.outputs),
            spec.rule.since_version,
            build.scalars,
        )
        planned = self.shared.get(key) if symbol is not None else None
        if planned is None:
            planned = computed_part_sizes(site, build)
            if symbol is not None:
                self.shared[key] = planned
        return planned, symbol is not None

    def new_split(self, site: SplitSite, parts: int) -> NodeProto:
        """A copy of a Split node without its sizes, listing ``parts`` outputs: its own, then
        one unused output for the rest where it lists fewer than there are parts."""
        new = copy_without_split(site.proto)
        rest = range(parts - len(site.spec.outputs))
        label = name_base(site.proto)
        outputs = [*site.spec.outputs, *(self.view.fresh_name(f"{label}_rest") for _ in rest)]
        del new.output[:]
        new.output.extend(outputs)
        return new


def _count_constant(name: str, count: int) -> NodeProto:
    """SequenceLength's count: a Constant node, not an initializer, which some converters
    (onnx2tf) drop when it is also a graph output."""
    value = numpy_helper.from_array(np.array(count, dtype=np.int64), name)
    return helper.make_node("Constant", [], [name], value=value)


# --- SplitToSequence ---------------------------------------------------------------------


@dataclass
class SequenceReader:
    """One node that reads a sequence: SequenceAt (with its part), SequenceLength or
    ConcatFromSequence."""

    node: Node
    #: SequenceAt's constant position, as given (negative counts from the back).
    position: int | None = None


def sequence_readers(node: Node) -> tuple[list[SequenceReader], str | None]:
    """The nodes that read the sequence of a SplitToSequence ``node``, when every one is a
    SequenceAt at a constant position, a SequenceLength or a ConcatFromSequence of its own
    scope; else why the sequence must stay."""
    sequence = node.scope.values.get(node.proto.output[0])
    if sequence is None:
        return [], None
    if sequence.output_of:
        return [], f"it is an output of {sequence.output_of[0].label}"
    found = []
    for reader in sequence.uses:
        proto = reader.proto
        what = f"{proto.op_type} {node_label(proto)!r}"
        if reader.scope is not node.scope:
            return [], f"{what} in {reader.scope.label} reads it"
        if proto.op_type not in _SEQUENCE_READERS or proto.domain not in DEFAULT_DOMAINS:
            return [], f"{what} reads it"
        if proto.input[0] != sequence.name or sequence.name in proto.input[1:]:
            return [], f"{what} reads it as a tensor"
        found.append(SequenceReader(reader))
        if proto.op_type == "SequenceAt":
            index = reader.input_value(1)
            position = None if index is None else index.constant()
            if position is None or position.ndim != 0 or position.dtype.kind not in "iu":
                return [], f"{what} reads it at a position known only at run time"
            found[-1].position = int(position)
    return found, None


class _Sequence:
    """The lowering of one SplitToSequence node."""

    def __init__(self, plan: Plan, site: SplitSite) -> None:
        self.plan, self.site, self.node, self.spec = plan, site, site.node, site.spec
        self.scope, self.proto = site.scope, site.proto
        self.x = site.data
        self.sequence = site.proto.output[0]
        self.rank, self.axis = site.rank, site.axis
        self.dim = checkable_length(site)
        self.static_length = site.length
        self.split_element = site.split_element
        self.split_value = site.split_value
        split_dims = site.split_dims
        self.split_rank = None if split_dims is None else len(split_dims)
        if self.split_value is not None:
            self.split_rank = self.split_value.ndim
        self.split_length = split_dims[0] if split_dims and len(split_dims) == 1 else None

    # The split: None (chunks of 1), a constant chunk or sizes, or a value known at run time.

    @property
    def chunk(self) -> int | None:
        """The chunk length, when the parts are chunks of a constant length."""
        if self.spec.split_input is None:
            return 1
        if self.split_value is not None and self.split_value.ndim == 0:
            return int(self.split_value)
        return None

    def part_sizes(self) -> tuple[int, ...] | None:
        """The size of every part, where the planner can tell them now."""
        version = self.spec.rule.since_version
        if self.split_value is not None and self.split_value.ndim == 1:
            return tuple(int(v) for v in self.split_value)
        if self.dim is not None and self.chunk is not None:
            return sequence_sizes(self.dim, self.chunk, opset=version)
        return None

    def lower(self) -> None:
        readers, why_kept = self._readers()
        if why_kept is None and not readers:
            why_kept = self._remove_unread()
            if why_kept is None:
                return
        if why_kept is None:
            why_kept = self._remove(readers)
            if why_kept is None:
                return
        self._keep(why_kept)

    def note(self, outcome: str, detail: str) -> None:
        self.plan.note(self.node, self.spec, outcome, detail)

    def _replace(self, nodes: Sequence[NodeProto]) -> None:
        self.plan.edits.replace(self.node, nodes)
        sequence = self.scope.values.get(self.sequence)
        if sequence is not None:
            self.plan.edits.forget(sequence)
        if self.spec.split_input is not None:
            self.plan.drop_input(self.node, 1)

    def _readers(self) -> tuple[list[SequenceReader], str | None]:
        return sequence_readers(self.node)

    def _remove(self, readers: list[SequenceReader]) -> str | None:
        """Replace the sequence and its readers; or say why it cannot be removed."""
        sizes = self.part_sizes()
        count = None if sizes is None else len(sizes)
        if count is None and self.split_length is not None and self.split_rank == 1:
            count = self.split_length  # sizes known at run time, their number is static
        opset = self.scope.opset or 0
        if count is not None:
            for reader in readers:
                if reader.position is not None and not -count <= reader.position < count:
                    name = node_label(reader.node.proto)
                    return (
                        f"{name!r} reads part {reader.position} of {count}: "
                        "the model fails there at run time"
                    )
            if count == 0 and any(r.node.op_type == "ConcatFromSequence" for r in readers):
                return "ConcatFromSequence of its empty sequence fails at run time"
            if sizes is None and opset < 13:
                # Split-11 takes sizes only as an attribute: one Slice per part instead.
                kept = self._runs_on_onnxruntime()
                if kept is None and any(r.node.op_type == "ConcatFromSequence" for r in readers):
                    self.plan.spend(self.node, count)
                return kept or self._by_position(readers, count)
            self.plan.spend(self.node, count)
            self._by_split(readers, sizes, count)
            return None
        if self.spec.split_input is not None and self.split_rank is None:
            return "the rank of its split is not known"
        if self.split_rank is not None and self.split_rank > 1:
            return "its split has more than one axis"
        if any(r.node.op_type == "ConcatFromSequence" for r in readers):
            return "ConcatFromSequence reads it, and its number of parts is known only at run time"
        return self._runs_on_onnxruntime() or self._by_position(readers, None)

    def _remove_unread(self) -> str | None:
        """Remove a sequence nothing reads, keeping as run-time checks what the spec checks
        of it at run time (the axis against an unknown rank, a chunk length >= 1, sizes
        adding up to an axis known only then): onnx.reference and onnxruntime run a node
        nobody reads, and fail where it fails. Or say why it must stay."""
        spec, constant = self.spec, self.split_value is not None
        if self.rank is not None and (
            spec.split_input is None
            or (constant and self.split_rank == 0)
            or (constant and self.split_rank == 1 and self.static_length is not None)
        ):
            self._replace([])  # valid at every run: inference checked all there is
            self.note("removed", "nothing reads its sequence")
            return None
        if spec.split_input is not None and self.split_rank not in (0, 1):
            return (
                "nothing reads its sequence, but what the spec checks of its split at run time "
                "depends on the split's rank, which is not known"
            )
        shared = GraphBuilder(self.scope, self.plan.edits, name_base(self.proto))
        _RuntimeParts(self, shared).check()
        self._replace(shared.nodes)
        self.note("removed", "nothing reads its sequence -> run-time checks of its split")
        return None

    def _runs_on_onnxruntime(self) -> str | None:
        """With target ``onnxruntime``: why a sequence whose parts would be read one Slice at
        a time stays a sequence (onnxruntime has a kernel for its type and, in the kept form,
        computes it as the spec says), or ``None``."""
        element = self.scope.element(self.x)
        if not self.plan.forms.onnxruntime_sequences or element not in ONNXRUNTIME_SEQUENCE_TYPES:
            return None
        return "onnxruntime runs it as the spec says, in fewer nodes than one Slice per part"

    def _by_split(
        self, readers: list[SequenceReader], sizes: tuple[int, ...] | None, count: int
    ) -> None:
        """One Split cuts every part; each reader takes its part, or their count."""
        plan, scope = self.plan, self.scope
        label = name_base(self.proto)
        build = plan.scope_builder(scope, label)
        squeeze = drops_axis(self.spec.split_input is not None, self.spec.keepdims)
        # A part read once by a SequenceAt that needs no Squeeze is written under its name.
        named: dict[int, str] = {}
        for reader in readers:
            if reader.position is not None and not squeeze:
                named.setdefault(reader.position % count, reader.node.proto.output[0])
        outputs = [named.get(i) or plan.view.fresh_name(f"{label}_part{i}") for i in range(count)]
        # Sizes known at run time, for a target whose runtime refuses a Split of them (TVM):
        # its form of Slices.
        by_slices = sizes is None and RUNTIME_SIZES_AS_CHECKED_SLICES in plan.forms.split
        nodes: list[NodeProto] = []
        if count:
            split = helper.make_node(
                "Split", [self.x], outputs, name=self.proto.name, axis=self.spec.axis
            )
            if sizes is not None:
                nodes += write_split_sizes(split, scope, scope.opset or 0, sizes, plan.edits, label)
                nodes += [*build.nodes, split]
            elif by_slices:
                assert self.spec.split_input is not None
                runtime = build.as_int64(self.spec.split_input, self.split_element)
                slices = RUNTIME_SIZES_AS_CHECKED_SLICES.cut(
                    build, self.x, runtime, self.spec.axis, outputs
                )
                nodes += [*build.nodes, *slices]
            else:
                assert self.spec.split_input is not None
                runtime = build.as_int64(self.spec.split_input, self.split_element)
                checked = build.add("Reshape", [runtime, build.ints([count])], "split")
                build.nodes[-1].name = plan.view.fresh_name(f"{label}/one_size_per_part")
                split.input.append(checked)
                nodes += [*build.nodes, split]
        self._replace(nodes)
        used = set()
        for reader in readers:
            out = reader.node.proto.output[0]
            op = reader.node.op_type
            step = plan.scope_builder(scope, name_base(reader.node.proto))
            if op == "SequenceAt":
                assert reader.position is not None
                part = outputs[reader.position % count]
                if squeeze:
                    step.squeeze(part, self.spec.axis, output=out)
                elif part != out:
                    step.add("Identity", [part], "part", output=out)
                used.add(reader.position % count)
            elif op == "SequenceLength":
                step.nodes.append(_count_constant(out, count))
            else:
                elements = (
                    [step.squeeze(p, self.spec.axis) for p in outputs] if squeeze else outputs
                )
                self._concat(step, reader.node.proto, elements)
            plan.edits.replace(reader.node, step.nodes)
            for position in range(1, len(reader.node.proto.input)):
                plan.drop_input(reader.node, position)
        kind = "Slice per part" if by_slices else "Split"
        kind += " + Squeeze" if squeeze else ""
        where = "constant sizes" if sizes is not None else "sizes known at run time"
        self.note("removed", f"sequence of {count} part(s) -> {kind} ({where})")

    def _concat(self, step: GraphBuilder, node: NodeProto, parts: list[str]) -> None:
        """ConcatFromSequence over the sequence's elements ``parts``: a Concat (of the parts
        given a new axis first, with ``new_axis=1``)."""
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        axis = int(attributes.get("axis", 0))
        if attributes.get("new_axis", 0):
            parts = [step.unsqueeze(p, axis) for p in parts]
        step.add("Concat", parts, "concat", output=node.output[0], axis=axis)

    def _by_position(self, readers: list[SequenceReader], count: int | None) -> str | None:
        """Each SequenceAt reads its own part (a Gather for chunks of 1, else a Slice), for a
        number of parts known only at run time, or for sizes known only at run time where
        Split takes sizes as an attribute only. SequenceLength gets the ``count`` (or
        computes it), ConcatFromSequence concatenates every part (when ``count`` is known).
        What the readers share (the axis length, the checked chunk length or sizes) is
        computed once, in the SplitToSequence's place."""
        plan, scope = self.plan, self.scope
        shared = plan.scope_builder(scope, name_base(self.proto))
        parts = _RuntimeParts(self, shared)
        for reader in readers:
            step = plan.scope_builder(scope, name_base(reader.node.proto))
            out = reader.node.proto.output[0]
            if reader.node.op_type == "ConcatFromSequence":
                assert count is not None
                names = [step.name(f"part{i}") for i in range(count)]
                for position, name in enumerate(names):
                    parts.part(step, position, name)
                self._concat(step, reader.node.proto, names)
            elif reader.position is not None:
                parts.part(step, reader.position, out)
            elif count is not None:
                step.nodes.append(_count_constant(out, count))
            else:
                parts.count(step, out)
            plan.edits.replace(reader.node, step.nodes)
            for position in range(1, len(reader.node.proto.input)):
                plan.drop_input(reader.node, position)
        self._replace(shared.nodes)
        number = "a number of parts known at run time" if count is None else f"{count} part(s)"
        self.note("removed", f"sequence of {number} -> {parts.how}")
        return None

    def _keep(self, why: str) -> None:
        """Keep the sequence: refused without sequences, else in the form onnxruntime runs
        as the spec says."""
        if not self.plan.forms.sequences:
            raise SplitError(
                f"{self.scope.label}: node {node_label(self.proto)!r} (SplitToSequence) cannot "
                f"become a Split: {why}.",
                rule=Rule.CONVERSION,
                hint="Lower with target 'portable' to keep the sequence in a form onnxruntime "
                "runs as the spec says",
            )
        new = NodeProto()
        new.CopyFrom(self.proto)
        changes = []
        if self.spec.split_input is not None and any(a.name == "keepdims" for a in new.attribute):
            remove_where(new.attribute, lambda a: a.name == "keepdims")
            changes.append("keepdims dropped (ignored with a split)")
        chunk = self.chunk if self.spec.split_input is not None else None
        if chunk is not None and self.dim:
            sizes = sequence_sizes(self.dim, chunk, opset=self.spec.rule.since_version)
            self.plan.spend(self.node, len(sizes))
            name = self.plan.view.fresh_name(f"{name_base(self.proto)}_split")
            constants = self.plan.edits.int64_constant(self.scope, name, sizes)
            new.input[1] = name
            self.plan.drop_input(self.node, 1)
            shown = list(sizes) if len(sizes) <= 8 else f"[{', '.join(map(str, sizes[:8]))}, ...]"
            changes.append(f"scalar split {chunk} -> {shown}")
            self.plan.edits.replace(self.node, [*constants, new])
        elif changes:
            self.plan.edits.replace(self.node, [new])
        self.note("kept", f"{why}; " + (", ".join(changes) if changes else "unchanged"))


class _RuntimeParts:
    """The parts of a SplitToSequence read one by one, as Slices of its input.

    The spec's three forms: chunks of 1 (no split; ``keepdims=0`` drops the axis, a Squeeze
    here), chunks of a scalar length ``s`` (the last smaller), and 1-d sizes. A position past
    the parts fails at run time, as SequenceAt does: a run-time check for chunks, Gather for
    sizes. The checks of the split itself (``s >= 1``; sizes >= 0 adding up to the axis)
    lie on the path of every part. (A Gather of the input itself would read chunks of 1 in
    one node, but onnxruntime's Gather copies only the first string of each row of a string
    tensor.)
    """

    def __init__(self, sequence: _Sequence, shared: GraphBuilder) -> None:
        self.sequence = sequence
        self.shared = shared
        self.x = sequence.x
        self.axis = sequence.spec.axis
        self.squeeze = drops_axis(sequence.spec.split_input is not None, sequence.spec.keepdims)
        self._values: dict[str, str] = {}
        if sequence.spec.split_input is None or sequence.split_rank == 0:
            self.kind, self.how = "chunks", "Slice per SequenceAt"
        else:
            self.kind, self.how = "sizes", "Slice per SequenceAt, offsets by CumSum"

    def _value(self, name: str) -> str:
        """A shared value, made at first use."""
        if name not in self._values:
            self._values[name] = getattr(self, f"_make_{name}")()
        return self._values[name]

    def _make_length(self) -> str:
        return self.shared.axis_length(self.x, self.axis)

    def _make_chunk(self) -> str:
        build, sequence = self.shared, self.sequence
        if sequence.chunk is not None:  # a constant, checked >= 1 by the model check
            return build.ints([sequence.chunk])
        assert sequence.spec.split_input is not None
        given = build.as_int64(sequence.spec.split_input, sequence.split_element)
        flat = build.add("Reshape", [given, build.ints([1])], "chunk")
        small = build.add("Less", [flat, build.ints([1])], "below_one")
        return build.checked(flat, small, "chunk_length_must_be_at_least_1")

    def _make_chunk_count(self) -> str:
        build, chunk = self.shared, self._value("chunk")
        less = build.add("Sub", [chunk, build.ints([1])], "chunk_less_one")
        raised = build.add("Add", [self._value("length"), less], "raised")
        return build.add("Div", [raised, chunk], "count")

    def _make_sizes(self) -> str:
        sequence = self.sequence
        assert sequence.spec.split_input is not None
        return self.shared.as_int64(sequence.spec.split_input, sequence.split_element)

    def _make_ends(self) -> str:
        build, sizes = self.shared, self._value("sizes")
        ends = build.add("CumSum", [sizes, build.scalar(0)], "ends")
        total = build.add("Gather", [ends, build.ints([-1])], "total", axis=0)
        same = build.add("Equal", [total, self._value("length")], "sum")
        wrong_sum = build.add("Not", [same], "wrong_sum")
        least = build.add("ReduceMin", [sizes], "least")
        negative = build.add("Less", [least, build.ints([0])], "negative")
        bad = build.add("Or", [wrong_sum, negative], "bad_sizes")
        checked = build.checked(total, bad, "sizes_must_be_non_negative_and_add_up_to_the_axis")
        return build.add("Add", [ends, build.add("Sub", [checked, total], "zero")], "ends")

    def check(self) -> None:
        """What the spec checks of the split at run time, reading no part: the axis (through
        the axis length), the chunk length, or the sizes."""
        if self.kind == "sizes":
            self._value("ends")
            return
        if self.sequence.rank is None:
            self._value("length")  # the axis, against a rank known only at run time
        if self.sequence.spec.split_input is not None:
            self._value("chunk")

    def count(self, step: GraphBuilder, out: str) -> None:
        """SequenceLength: the number of parts, a 0-d int64 tensor."""
        if self.kind == "chunks":
            step.add("Reshape", [self._value("chunk_count"), step.ints([])], "n", output=out)
        else:
            self._value("ends")  # the sizes are checked wherever the sequence is read
            step.add("Size", [self._value("sizes")], "count", output=out)

    def part(self, step: GraphBuilder, position: int, out: str) -> None:
        """SequenceAt at a constant ``position`` (negative counts from the back)."""
        if self.kind == "sizes":
            where = step.ints([position])
            end = step.add("Gather", [self._value("ends"), where], "end", axis=0)
            size = step.add("Gather", [self._value("sizes"), where], "size", axis=0)
            start = step.add("Sub", [end, size], "start")
        else:
            chunk, length = self._value("chunk"), self._value("length")
            if position < 0:
                index = step.add("Add", [self._value("chunk_count"), step.ints([position])], "i")
                before = step.add("Less", [index, step.ints([0])], "before_first")
                index = step.checked(index, before, "sequence_position_out_of_range")
                start = step.add("Mul", [index, chunk], "start")
            else:
                start = step.add("Mul", [step.ints([position]), chunk], "start")
                past = step.add("Not", [step.add("Less", [start, length], "inside")], "past")
                start = step.checked(start, past, "sequence_position_out_of_range")
            # The last chunk may be shorter: its end is the axis's, not past it (ONNX's
            # Slice clamps an end past the axis; tract's does not).
            # (Where, not Min: Min takes int64 from opset 12 on.)
            end = step.add("Add", [start, chunk], "end")
            inside = step.add("Less", [end, length], "inside")
            end = step.add("Where", [inside, end, length], "end")
        where = step.ints([self.axis])
        if self.squeeze:
            step.squeeze(step.add("Slice", [self.x, start, end, where], "slice"), self.axis, out)
        else:
            step.add("Slice", [self.x, start, end, where], "part", output=out)
