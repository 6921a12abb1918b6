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
  split (the target ``onnxruntime`` for its release 1.32 or later keeps ``num_outputs``,
  which that release computes as the spec says). A node listing fewer outputs than
  ``num_outputs`` gets sizes for its listed parts and one extra, unused output for the rest,
  so that every listed part keeps its size (there, an unused output per part left out). One
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
- **A SequenceErase at a constant position read by ConcatFromSequence**, of a sequence
  whose number of parts is known: removed with the sequence, the Concat taking the parts
  it leaves.
- **torch's Loop of SequenceInsert** (``tensor_split`` by indices), for a target without
  sequences: where its trip count and the bounds of the Slice it inserts are constants,
  one Slice per part (:mod:`~splitops.onnx.rewrite._sequence_loops`).
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

from collections.abc import Callable, Sequence
from dataclasses import InitVar, asdict, dataclass, field, replace
from typing import Literal

from onnx import ModelProto

from ...core import (
    Rule,
    SplitError,
    current_limits,
    require_argument,
)
from ..inference import infer_model_and_nodes
from ..model import (
    DEFAULT_DOMAINS,
    ModelEdits,
    ModelView,
    Node,
    Scope,
    ScopeKey,
    SequenceType,
    SplitNode,
    SplitSite,
    Value,
    location,
    name_nodes,
    node_label,
    types_only,
)
from ..model.protobuf import links_attributes, model_graphs
from ._contract import RewriteError
from ._declared import downstream, loosen_declared, restore_agreeing, unbound_readers
from ._forms import Chosen, first_form
from ._graph_sizes import PART_CHECK_TYPES, CheckForm, GraphBuilder
from ._outputs import int64_outputs, one_node_per_output
from ._rewrite import Rewrite
from ._sequence_forms import (
    KEPT_FOR_ONNXRUNTIME,
    KEPT_OUTPUT_FOR_TVM,
    REFUSED,
    SequenceFacts,
    SequenceForm,
    SequenceReader,
    SequenceRewritten,
    by_position,
    sequence_forms,
    sequence_readers,
    stacks_unequal_parts,
)
from ._sequence_lists import LISTS_ACCUMULATED
from ._sequence_loops import (
    INSERTED_INTO_EMPTY,
    LOOP_OF_INSERTS_UNROLLED,
    LoopForm,
    sequence_loops,
)
from ._sequence_recomputed import LIST_RECOMPUTED
from ._split_forms import (
    FOLD_STATIC_SIZES,
    RUNTIME_SIZES_AS_CHECKED_SLICES,
    RUNTIME_SIZES_AS_SLICES,
    RUNTIME_SIZES_CHECKED,
    SPLIT1_AS_SLICES,
    SPLIT1_SIZES,
    SPLIT18_AS_SLICES,
    UNSIZED,
    ZERO_SIZES_AS_SLICES,
    SharedSizes,
    SizesCut,
    SplitForm,
    computed_sizes,
    copy_node,
    explicit_sizes_kept,
    kept_at_run_time,
    name_base,
    slices_per_part,
)
from ._unroll import MAX_UNROLLED_NODES, Unroll

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

Target = Literal[
    "portable", "no-sequences", "onnxruntime", "openvino", "tract", "tvm", "tinygrad", "onnx2torch"
]


@dataclass(frozen=True)
class Forms:
    """The forms one target's runtime computes as the spec says, as found by running them
    (``python -m benchmarks.portability``; the table is in docs/portability.md)."""

    #: The forms of a Split, in order: the first that applies to a node lowers it
    #: (:mod:`~splitops.onnx.rewrite._split_forms`).
    split: tuple[SplitForm, ...]
    #: How the run-time checks fail where the spec rejects a length.
    check: CheckForm
    #: Whether a SplitToSequence whose sequence cannot be removed may stay (and any other
    #: sequence with it).
    sequences: bool = True
    #: The forms of a SplitToSequence, in order
    #: (:mod:`~splitops.onnx.rewrite._sequence_forms`); none given: the shared forms, ending
    #: in the sequence kept or refused as ``sequences`` says.
    sequence: tuple[SequenceForm, ...] = ()
    #: The forms of a Loop that builds a sequence; none given: where the target has no
    #: sequences, torch's ``tensor_split`` by indices unrolled
    #: (:mod:`~splitops.onnx.rewrite._sequence_loops`), then a list built by appends joined
    #: by ConcatFromSequence a tensor carried through the Loop
    #: (:mod:`~splitops.onnx.rewrite._sequence_lists`).
    loops: tuple[LoopForm, ...] | None = None
    #: Whether the runtime runs a Split at opset 18 or later; where not, a sequence removed
    #: at such an opset becomes a Slice per part instead of one Split.
    split18: bool = True
    #: Whether the runtime runs ReduceMin at opset 18 or later; where not, the check that no
    #: size given at run time falls below 0 counts those below 0 with ReduceSum instead.
    reduce_min18: bool = True
    #: Whether the runtime runs control flow (If, Loop, Scan) and calls of model-local
    #: functions; where not, a model holding them is refused.
    control_flow: bool = True
    #: Whether a Loop whose trip count is known before it runs is unrolled first
    #: (:mod:`~splitops.onnx.rewrite._unroll`): for runtimes that run no Loop.
    unrolls: bool = False
    #: Whether the runtime returns a graph output that is a sequence (TVM hands it over as a
    #: tuple): the sequence operators that build one stay.
    returns_sequences: bool = False
    #: Whether the runtime runs a Loop; where not, a Loop left after unrolling (its trip
    #: count known only at run time) is refused before anything is lowered, with that
    #: reason: tract 0.23 ("Unimplemented(Loop)"), TVM's Relax frontend and tinygrad have
    #: no Loop, onnx2torch no converter for one.
    runs_loops: bool = True
    #: How the runtime's own API hands the graph's outputs over, where it needs them in
    #: another form (:mod:`~splitops.onnx.rewrite._outputs`): each written by a node of
    #: its own (onnx2torch), or an int64 computed from a shape as data (tract).
    outputs: tuple[Callable[[ModelProto], int], ...] = ()

    def __post_init__(self) -> None:
        if not self.sequence:
            object.__setattr__(self, "sequence", sequence_forms(kept=self.sequences))
        if self.loops is None:
            removed = () if self.sequences else _REMOVED_LISTS
            object.__setattr__(self, "loops", removed)

    @property
    def runtime_sizes_cut(self) -> SizesCut | None:
        """How sizes given at run time become a Slice per part, where the runtime fails a
        Split that takes them (the Split form that does it, which the parts of a sequence cut
        by such sizes take too); ``None`` where a Split of them runs."""
        for form in (RUNTIME_SIZES_AS_SLICES, RUNTIME_SIZES_AS_CHECKED_SLICES):
            if form in self.split:
                return form.cut
        return None


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
#:   checked on a part (the ``part`` check form: the one form found that loads and fails on
#:   all five; the candidates tried are in docs/portability.md). Its bounds are computed as
#:   0-d values, then unsqueezed: TVM follows 0-d shape arithmetic as symbolic expressions
#:   and knows each part's shape, where from ``[1]`` bounds it cuts parts of unknown shape,
#:   and a Shape, Concat or Add of such parts then fails (a part split again, halves joined
#:   back). The parts of a SplitToSequence read one by one are not checked (those checks
#:   compare sizes, which TVM fails on sizes it follows as symbols). Explicit sizes holding
#:   a 0 become a Slice per part (TVM's Split refuses them).
#:   ``no-sequences``: the same, and a sequence that cannot be removed is refused.
#: - ``onnxruntime`` (the onnxruntime engine's, and onnx.reference's): sizes computed in the
#:   graph, checked by a Reshape (onnxruntime 1.31 fails uneven ``num_outputs``, 1.32 fewer
#:   listed parts, onnx.reference cuts invalid lengths); for onnxruntime 1.32 and later
#:   (:data:`ONNXRUNTIME_FROM_1_32`, which the engine takes there), ``num_outputs`` kept;
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
#:   sequences (TVM refuses ConcatFromSequence of one);
#:   explicit sizes holding a 0 as a Slice per part (TVM's Split refuses them); sizes given
#:   at run time (torch's ``tensor_split``, whose SplitToSequence becomes a Split of them
#:   once its sequence is removed) as a Slice per part after checks of the sizes (TVM
#:   refuses a Split of sizes that are not constant, "Dynamic Split not yet supported").
#: - ``tinygrad``: sizes computed in the graph, checked by a Reshape (tinygrad's runner cuts
#:   ``num_outputs`` into balanced parts, [3, 2, 2] of 7 where the spec says [3, 3, 1], and
#:   equal parts of an uneven axis too; an Expand to [-1] does not fail there); no sequences
#:   (tinygrad has no sequence operators).
#: - ``onnx2torch``: a Slice per part for every Split at opset 18 or later (onnx2torch has no
#:   Split-18 converter), checked by a Reshape (an Expand checks as well, in more nodes;
#:   unchecked, invalid lengths cut parts); Split-2 to 13 kept with constant sizes, and
#:   equal parts of an axis known at run time given their sizes computed in the graph
#:   (onnx2torch's Split-13 cuts ``length // parts``, without an error where they are
#:   unequal); sizes given at run time checked for none below 0 by a ReduceSum of those
#:   below 0 (onnx2torch has no ReduceMin-18); no sequences, control flow or model-local
#:   functions (onnx2torch converts none of them, and refuses the whole model).
#:
#: Their SplitToSequence forms (:mod:`~splitops.onnx.rewrite._sequence_forms`) share the
#: removal of a sequence nothing reads and one Split where the number of parts is known, and
#: differ where the parts are read one at a time:
#:
#: - ``portable``, ``onnxruntime``: the sequence kept where no form removes it (onnxruntime
#:   runs it); ``onnxruntime`` also keeps one whose parts would each take a Slice, where it
#:   has a kernel for the element type (fewer nodes).
#: - ``openvino``: a Slice per part checked by an Expand then a Gather (OpenVINO's compiler
#:   fails the Expand check on a Slice's bounds, "BroadcastTransition").
#: - ``tract``: a chunk's end by Min (tract fails a Slice whose end a Where picks,
#:   "DynSlice"), so chunks of an axis known only at run time before opset 12 are refused;
#:   a number of parts known only at run time refused (tract fails the Div of two run-time
#:   lengths, "Failed analyse").
#: - ``tvm``: a sequence that is a graph output kept on a static axis or cut by constant
#:   sizes (TVM computes it as the spec says; it refuses a scalar split of a run-time axis);
#:   a scalar chunk length given at run time made ``[1]`` by an Unsqueeze and a Cast (TVM's
#:   importer reads a 0-d value computed from ``Shape`` as a symbolic scalar, which its
#:   Reshape refuses: "Reshape requires the input data to be Tensor").
#: - every target without sequences: torch's Loop of SequenceInsert of Slices of constant
#:   bounds (``tensor_split`` by indices) unrolled into those Slices
#:   (:mod:`~splitops.onnx.rewrite._sequence_loops`).
_PORTABLE = _split_forms(
    zero_sizes=True,
    num_outputs=(slices_per_part("num_outputs", scalars=True),),
    equal=(slices_per_part("equal", scalars=True),),
)
#: The forms of the nodes that build sequences, for a target without sequences: torch's Loop
#: of SequenceInsert of Slices unrolled, a list built in a Loop a carried tensor, what an
#: unrolled Loop left of one (SequenceInserts into a SequenceEmpty) given its parts.
_REMOVED_LISTS = (
    LOOP_OF_INSERTS_UNROLLED,
    LIST_RECOMPUTED,
    LISTS_ACCUMULATED,
    INSERTED_INTO_EMPTY,
)
FORMS: dict[Target, Forms] = {
    # OpenVINO's own import of a list built in a Loop joins values of unequal lengths wrong:
    # portable carries a tensor instead. tract and TVM run no Loop: portable unrolls those
    # of a trip count known before they run.
    "portable": Forms(_PORTABLE, "part", loops=_REMOVED_LISTS, unrolls=True),
    "no-sequences": Forms(_PORTABLE, "part", sequences=False, unrolls=True),
    "onnxruntime": Forms(
        _split_forms(
            split1_slices=True,
            zero_sizes=False,
            num_outputs=(computed_sizes("num_outputs"),),
            equal=(kept_at_run_time("equal"), computed_sizes("equal")),
        ),
        "reshape",
        sequence=sequence_forms(kept=True, before_position=(KEPT_FOR_ONNXRUNTIME,)),
    ),
    "openvino": Forms(
        _split_forms(
            zero_sizes=False,
            num_outputs=_SLICES,
            equal=(kept_at_run_time("equal"), slices_per_part("equal")),
        ),
        "expand",
        sequences=False,
        sequence=sequence_forms(kept=False, position=by_position(check="expand-gather")),
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
        sequence=sequence_forms(kept=False, position=by_position(end_by_min=True, counts=False)),
        unrolls=True,
        runs_loops=False,
        outputs=(int64_outputs,),
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
        sequence=(
            *sequence_forms(kept=False, position=by_position(unsqueezed_chunk=True))[:-1],
            KEPT_OUTPUT_FOR_TVM,
            REFUSED,
        ),
        unrolls=True,
        runs_loops=False,
        returns_sequences=True,
    ),
    "tinygrad": Forms(
        _split_forms(
            zero_sizes=False,
            num_outputs=(computed_sizes("num_outputs"),),
            equal=(computed_sizes("equal"),),
        ),
        "reshape",
        sequences=False,
        unrolls=True,
        runs_loops=False,
    ),
    "onnx2torch": Forms(
        (
            SPLIT18_AS_SLICES,
            *_split_forms(
                zero_sizes=False,
                num_outputs=_SLICES,
                equal=(computed_sizes("equal"),),
            ),
        ),
        "reshape",
        sequences=False,
        split18=False,
        reduce_min18=False,
        control_flow=False,
        unrolls=True,
        runs_loops=False,
        outputs=(one_node_per_output, name_nodes),
    ),
}
TARGETS: tuple[Target, ...] = tuple(FORMS)

#: The ``onnxruntime`` target's forms for onnxruntime 1.32 and later (``release="1.32"``),
#: which cuts a Split-18 by ``num_outputs`` as the spec says at every length, refusing the
#: lengths the spec rejects: the node stays, and costs nothing more. A node listing fewer
#: outputs than parts, which 1.32 refuses, gets an unused output for each part it leaves
#: out (within the ``max_model_parts`` limit). The target's own forms compute the sizes in
#: the graph instead, as onnxruntime 1.31 needs (it refuses 1 into 2, 9 into 4 and an empty
#: axis) and onnx.reference, which runs the target's forms too (it cuts 5 into 4 as
#: [2, 2, 1, 0], where the spec rejects it).
ONNXRUNTIME_FROM_1_32 = replace(
    FORMS["onnxruntime"],
    split=_split_forms(
        split1_slices=True,
        zero_sizes=False,
        num_outputs=(
            kept_at_run_time("num_outputs", lists_every_part=True),
            computed_sizes("num_outputs"),
        ),
        equal=(kept_at_run_time("equal"), computed_sizes("equal")),
    ),
)


def target_forms(target: Target, release: str | None = None) -> Forms:
    """The forms of ``target`` for the ``release`` of its runtime that will run the lowered
    model (its version, as ``onnxruntime.__version__`` gives it; ``None``: any release, and
    every runtime that takes the target's forms). Only onnxruntime's differ by release
    (:data:`ONNXRUNTIME_FROM_1_32`).

    >>> target_forms("onnxruntime", "1.32.0") is ONNXRUNTIME_FROM_1_32
    True
    >>> target_forms("onnxruntime", "1.31.1") is FORMS["onnxruntime"]
    True
    >>> target_forms("onnxruntime", "latest")
    Traceback (most recent call last):
    ...
    splitops.SplitError: the runtime release must be a version such as '1.32.0'; 'latest' was given.
    """
    check_target(target)
    if release is None:
        return FORMS[target]
    numbers = _release(release) if isinstance(release, str) else ()
    if not numbers:
        raise SplitError(
            f"the runtime release must be a version such as '1.32.0'; {release!r} was given.",
            rule=Rule.ARGUMENT,
        )
    if target == "onnxruntime" and numbers >= (1, 32):
        return ONNXRUNTIME_FROM_1_32
    return FORMS[target]


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version: ``"1.31.1"`` and ``"1.32.0.dev20260101"`` give
    ``(1, 31, 1)`` and ``(1, 32, 0)``; a version that starts with no number gives ``()``,
    below every release."""
    numbers = []
    for part in version.split("."):
        digits = part[: len(part) - len(part.lstrip("0123456789"))]
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:
            break
    return tuple(numbers)


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
    #: Whether its parts lose the axis of a scalar split 1 (torch's unbind), which the
    #: model's declared types may not say.
    squeezed: bool = False

    def __str__(self) -> str:
        where = location(self.graph, self.node)
        return f"{where} ({self.op}-{self.opset}) {self.outcome}: {self.detail}"

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


def lower_model(
    model: ModelProto, *, target: Target = "portable", release: str | None = None
) -> ModelProto:
    """A copy of ``model`` whose Split and SplitToSequence nodes every runtime computes as the
    spec says (see the module's documentation for each rewrite). ``release``: the version of
    the target's runtime that will run it, where its forms differ by release
    (:func:`target_forms`; ``None``: forms for every release).

    Raises :class:`~splitops.SplitError` for the first invalid node, as
    :func:`~splitops.check_model` reports it, and with ``target="no-sequences"`` for a
    SplitToSequence whose sequence cannot be removed.
    """
    return lower_model_with_report(model, target=target, release=release)[0]


def lower_model_with_report(
    model: ModelProto, *, target: Target = "portable", release: str | None = None
) -> tuple[ModelProto, list[Lowering]]:
    """:func:`lower_model`, and what it did to each node."""
    require_argument(model, ModelProto, "lower_model", "an onnx.ModelProto")
    lowering = Lower(target, release)
    return lowering(model), lowering.report


class Lower(Rewrite):
    """The lowering for ``target`` as a :class:`~splitops.onnx.rewrite._rewrite.Rewrite`;
    :attr:`report` tells what became of each node of the last model it lowered."""

    what = "lowering"

    def __init__(self, target: Target, release: str | None = None) -> None:
        self._forms = target_forms(target, release)
        self.target: Target = target
        self.release = release
        self.report: list[Lowering] = []
        self._kept: set[tuple[ScopeKey, str]] = set()
        #: The values computed from the parts of a SplitToSequence whose scalar split 1 the
        #: lowering read as the default (torch's unbind), and the edits that moved them.
        self._squeezed: list[Value] = []
        self._edits: ModelEdits | None = None

    def __call__(self, model: ModelProto) -> ModelProto:
        """The lowered copy of ``model``: for a target that unrolls Loops, unrolled first
        (each pass unrolls the Loops outside others; a Loop inside one, in the next), then
        lowered; :attr:`report` lists the unrolled Loops first."""
        unrolled: list[Lowering] = []
        for _ in range(_UNROLL_PASSES if self._forms.unrolls and _holds_loops(model) else 0):
            unroll = Unroll()
            result = unroll(model)
            if not unroll.unrolled:
                break
            model = result
            unrolled += [
                Lowering(
                    row.graph,
                    row.node,
                    "Loop",
                    row.opset,
                    "unrolled",
                    f"{row.trips} iteration(s): its trip count is known before it runs",
                )
                for row in unroll.unrolled
            ]
        lowered = super().__call__(model)
        self.report = [*unrolled, *self.report]
        return lowered

    def types(self, model: ModelProto) -> ModelProto:
        # Types only: the weights stay out of the inferred copy.
        inferred, records = infer_model_and_nodes(types_only(model))
        for record in records:
            error = record.error
            if error is not None:
                raise error.in_context(f"{record.graph}: ") from record.problems[0][1]
        return inferred

    def plan(self, view: ModelView, edits: ModelEdits) -> None:
        plan = Plan(view, self.target, edits, self.release)
        if not self._forms.runs_loops:
            removing = [form for form in self._forms.loops or () if form.removes_loop]
            _refuse_loops(view, self.target, lambda node: first_form(removing, plan, node, node))
        for node in list(view.split_nodes()):
            plan.lower(node)
        for node in sequence_loops(view.scopes) if self._forms.loops else ():
            plan.lower_loop(node)
        self.report = plan.report
        # Where each kept sequence lies once the edits move its scope: its identity.
        self._kept = {(edits.key_after(key), name) for key, name in plan.kept_sequences}
        self._squeezed = downstream(plan.squeezed)
        self._edits = edits

    def finish(self, model: ModelProto) -> None:
        if not self._forms.sequences:
            _refuse_sequences(model, self.target, self._kept, self._forms.returns_sequences)
        if not self._forms.control_flow:
            _refuse_control_flow(model, self.target)
        for rewrite_outputs in self._forms.outputs:
            rewrite_outputs(model)
        if self._squeezed and self._edits is not None:
            loosened = loosen_declared(model, self._edits, self._squeezed)
            changed = restore_agreeing(model, loosened)
            self.corrected = {(item.key, item.name) for item in changed}
            if changed:
                names = dict.fromkeys(item.name for item in changed)
                said = (
                    f"; the declared shapes of {', '.join(names)} corrected "
                    "(the model declares the axis its unbind drops)"
                )
                self.report = [
                    replace(row, detail=row.detail + said) if row.squeezed else row
                    for row in self.report
                ]


#: The most passes of unrolling: a Loop inside an unrolled body is unrolled in the next.
_UNROLL_PASSES = 4


def _holds_loops(model: ModelProto) -> bool:
    """Whether any graph of ``model`` holds a Loop (a model without one needs no unrolling,
    nor its inference)."""
    return any(node.op_type == "Loop" for graph in model_graphs(model) for node in graph.node)


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


def _refuse_sequences(
    model: ModelProto, target: str, kept: set[tuple[ScopeKey, str]], returns: bool
) -> None:
    """A SplitError naming the sequence operators still in a model lowered for a target
    without sequences (those another operator, such as torch's Loop of SequenceInsert,
    made; lowering removes only SplitToSequence's), but for the SplitToSequence nodes a form
    of the target ``kept`` (by scope and sequence: their identity, where labels may repeat)
    and, where the runtime ``returns`` sequences, those that build a returned one."""
    view = ModelView.read(model)
    building: set[int] = set()
    if returns:
        stack = [view.main.value(name) for name in view.main.output_names()]
        while stack:
            value = stack.pop()
            producer = None if value is None else value.producer
            if (
                producer is not None
                and producer.op_type in _BUILDING
                and id(producer) not in building
            ):
                building.add(id(producer))
                stack.extend(producer.inputs[:1])
    left = [
        f"{op} {node_label(node.proto)!r} in {scope.label}"
        for scope in view.scopes
        for node in scope.nodes
        if (op := node.op_type) in SEQUENCE_OPS and node.domain in DEFAULT_DOMAINS
        if not (op == "SplitToSequence" and (scope.key, node.output_names[0]) in kept)
        if id(node) not in building
    ]
    if not left:
        return
    shown = "; ".join(left[:5]) + (f"; and {len(left) - 5} more" if len(left) > 5 else "")
    returned = [
        name
        for name in view.main.output_names()
        if isinstance(view.main.type_of(name), SequenceType)
        and not any(name == out for key, out in kept if key == view.main.key)
    ]
    if returned:
        # The list is the model's interface: which tensors stand for it is its author's call.
        raise SplitError(
            f"the model returns a sequence ({', '.join(map(repr, returned))}: a list the "
            f"exported function returns), which target {target!r} cannot return: {shown}.",
            rule=Rule.CONVERSION,
            hint="Return a tuple of tensors, or torch.stack the list, before exporting; or "
            "lower with target 'portable'",
        )
    raise SplitError(
        f"the model still holds sequences, which target {target!r} cannot run: {shown}.",
        rule=Rule.CONVERSION,
        hint="Export the model without sequences (for torch: split by sizes rather than "
        "tensor_split by indices), or lower with target 'portable'",
    )


#: The operators that build a sequence from the one they read first (or from nothing).
_BUILDING = frozenset({"SequenceEmpty", "SequenceInsert", "SequenceConstruct"})

#: The operators that hold subgraphs.
_CONTROL_FLOW_OPS = frozenset({"If", "Loop", "Scan"})


def _refuse_control_flow(model: ModelProto, target: str) -> None:
    """A SplitError naming the control flow and function calls in a model lowered for a
    target whose runtime converts neither (onnx2torch has no If, Loop, Scan or function
    converter, and refuses the whole model)."""
    view = ModelView.read(model)

    def is_call(node: Node) -> bool:
        return node.function_id in view.functions

    left = [
        f"{node.op_type} {node.label!r} in {scope.label}"
        + (" (a model-local function)" if is_call(node) else "")
        for scope in view.scopes
        for node in scope.nodes
        if (node.op_type in _CONTROL_FLOW_OPS and node.domain in DEFAULT_DOMAINS) or is_call(node)
    ]
    if left:
        shown = "; ".join(left[:5]) + (f"; and {len(left) - 5} more" if len(left) > 5 else "")
        raise SplitError(
            f"the model holds control flow or function calls, which target {target!r} cannot "
            f"run: {shown}.",
            rule=Rule.CONVERSION,
            hint="Inline its functions (onnx.inliner.inline_local_functions) and export it "
            "without control flow, or lower with target 'portable'",
        )


def _refuse_loops(
    view: ModelView, target: str, removing: Callable[[Node], Chosen[Node, SequenceRewritten]]
) -> None:
    """A SplitError naming the Loops of a model lowered for a target whose runtime runs no
    Loop, once those of a trip count known before they run are unrolled, but for those one
    of the target's forms ``removing`` them applies to; each named with why none does."""
    left = []
    for scope in view.scopes:
        for node in scope.nodes:
            if not node.is_op("Loop"):
                continue
            chosen = removing(node) if scope.opset is not None else None
            if chosen is not None and chosen.form is not None:
                continue
            said = [why.named for why in chosen.reasons] if chosen is not None else []
            if stacks_unequal_parts(node):
                said.insert(
                    0,
                    "it stacks parts of unequal lengths as a scan output: the model fails "
                    "there at run time",
                )
            left.append(
                f"{node.label!r} in {scope.label}" + (f" ({'; '.join(said)})" if said else "")
            )
    if left:
        shown = "; ".join(left[:5]) + (f"; and {len(left) - 5} more" if len(left) > 5 else "")
        raise SplitError(
            f"target {target!r} runs no Loop, and the model holds Loops that lowering cannot "
            f"unroll (a trip count known only at run time, a condition the body computes, or "
            f"more than {MAX_UNROLLED_NODES} nodes once unrolled): {shown}.",
            rule=Rule.CONVERSION,
            hint="Export with the loop's count fixed (trace the module, or give the input "
            "the axis the loop runs over a static length), or lower for a runtime that runs "
            "Loop (target 'onnxruntime' or 'openvino')",
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
    #: The release of the target's runtime that will run the model (:func:`target_forms`).
    release: InitVar[str | None] = None
    report: list[Lowering] = field(default_factory=list)
    #: The SplitToSequence nodes a form kept, by scope and sequence (their identity).
    kept_sequences: set[tuple[ScopeKey, str]] = field(default_factory=set)
    #: The parts written so far by rewrites that write one value (or more) per part.
    parts: int = 0
    #: The sequences whose scalar split 1 (the default split) with ``keepdims=0`` drops the
    #: axis (torch's unbind): what follows from them may be declared with the axis.
    squeezed: list[Value] = field(default_factory=list)

    #: The sizes computed in the graph, shared by a scope's Splits of one symbolic length.
    sizes: SharedSizes = field(default_factory=SharedSizes)
    #: What reads each SplitToSequence's sequence, and why it stays, found once for all the
    #: forms of the target.
    sequences: SequenceFacts = field(default_factory=SequenceFacts)

    def __post_init__(self, release: str | None) -> None:
        self.forms = target_forms(self.target, release)

    def scope_builder(
        self, scope: Scope, label: str, *, scalars: bool = False, check: CheckForm | None = None
    ) -> GraphBuilder:
        """Nodes computing values in ``scope``, checked in the target's form, or ``check``
        (sizes 0-d with ``scalars``)."""
        forms = self.forms
        return GraphBuilder(
            scope,
            self.edits,
            label,
            check or forms.check,
            scalars=scalars,
            reduce_min18=forms.reduce_min18,
        )

    def check_form(self, site: SplitSite[Scope]) -> CheckForm:
        """The form of the checks of ``site``'s sizes: the target's, but none where it
        checks on a part and the part's element type is not one it takes
        (:data:`~splitops.onnx.rewrite._graph_sizes.PART_CHECK_TYPES`)."""
        check = self.forms.check
        if check == "part" and site.element not in PART_CHECK_TYPES:
            return "none"
        return check

    def can_spend(self, parts: int) -> bool:
        """Whether ``parts`` more parts keep the model within the ``max_model_parts`` limit."""
        return self.parts + parts <= current_limits().max_model_parts

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
        if links_attributes(proto):
            if "" in proto.output and proto.op_type == "Split":
                named = copy_node(proto)
                self.edits.name_omitted([named], f"{name_base(proto)}_unused")
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
            self._lower_sequence(site)

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

    def _lower_split(self, site: SplitSite[Scope]) -> None:
        node, spec = site.node, site.spec
        chosen = first_form(self.forms.split, self, site, node)
        if chosen.form is None:
            reasons = "; ".join(why.named for why in chosen.reasons)
            raise RewriteError(  # every target's last forms apply to any valid node
                f"{site.where}: no form of target {self.target!r} applies ({reasons})."
            )
        done = chosen.rewrite(self, site)
        nodes, outcome, detail = done.nodes, done.outcome, done.detail
        # Every target names the outputs a Split leaves out (ModelEdits.name_omitted).
        if "" in site.node.output_names:
            if nodes is None:
                nodes, outcome = [copy_node(site.proto)], "rewritten"
                detail = f"omitted outputs named ({detail})"
            self.edits.name_omitted(nodes, f"{name_base(site.proto)}_unused")
        if nodes is not None:
            self.edits.replace(node, nodes)
        if done.drops_split:
            self.drop_input(node, 1)
        self.note(node, spec, outcome, detail)

    # --- SplitToSequence -------------------------------------------------------------------

    def _lower_sequence(self, site: SplitSite[Scope]) -> None:
        chosen = first_form(self.forms.sequence, self, site, site.node)
        if chosen.form is None:
            raise RewriteError(  # every target's last form applies to any node
                f"{site.where}: no SplitToSequence form of target {self.target!r} applies."
            )
        done = chosen.rewrite(self, site)
        self.note(site.node, site.spec, done.outcome, done.detail)
        sequence = site.node.output(0)
        if site.drops_axis and site.spec.split_input is not None and sequence:
            self.squeezed.append(sequence)
            self.report[-1] = replace(self.report[-1], squeezed=True)
            self._unbound_readers(site, sequence)
        if done.outcome == "kept":
            self.kept_sequences.add((site.scope.key, site.node.output_names[0]))

    def _unbound_readers(self, site: SplitSite[Scope], sequence: Value) -> None:
        """The nodes reading the parts of an unbind whose axes torch's exporter wrote with
        the axis kept: rewritten for the parts' rank (:func:`unbound_readers`), the row
        saying so, and what is left."""
        if site.rank is None:
            return
        rewritten, left = unbound_readers(sequence, site.axis, site.rank)
        for node, new in rewritten:
            self.edits.replace(node, [new])
        said = ""
        if rewritten:
            names = ", ".join(f"{node.op_type} {node.label!r}" for node, _ in rewritten)
            said += (
                f"; the axes of {names} rewritten for the parts' rank (the model has them "
                "for the axis kept)"
            )
        if left:
            said += f"; left: {'; '.join(left)}"
        if said:
            self.report[-1] = replace(self.report[-1], detail=self.report[-1].detail + said)

    def lower_loop(self, node: Node) -> None:
        """The first of the target's Loop forms that applies to ``node``, if any (else the
        node stays, and a target without sequences refuses what it leaves)."""
        if node.scope.opset is None:
            return
        chosen = first_form(self.forms.loops or (), self, node, node)
        if chosen.form is not None:
            done = chosen.rewrite(self, node)
            self.note(node, None, done.outcome, done.detail)

    def builder(self, site: SplitSite[Scope], *, scalars: bool = False) -> GraphBuilder:
        """Nodes computing values in ``site``'s scope, checked in the target's form (sizes
        0-d with ``scalars``)."""
        label, check = name_base(site.proto), self.check_form(site)
        return self.scope_builder(site.scope, label, scalars=scalars, check=check)
