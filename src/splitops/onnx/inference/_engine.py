"""Shape and type inference for Split and SplitToSequence that agrees with execution.

The sizes of the parts come from the planner, through :meth:`SplitNode.part_sizes`, the
same call that :func:`~splitops.run_node` makes, so an inferred shape is the executed shape
by construction. A dim that is a symbol ``N`` gives sizes that are expressions in ``N``
(:mod:`splitops.onnx.inference._symbolic`): the planner's own formula, evaluated over sympy. A
``split`` computed by other nodes (``Shape -> Gather -> Div -> Concat``) is followed by
:mod:`splitops.onnx.inference._values`, so that its sizes are expressions of the input's dims.

How the results meet ``onnx.shape_inference`` (one pass, linear in the size of the model):

1. onnx infers the whole model once, Split nodes included (but those that onnx cannot
   take, :func:`_onnx_pass`), without its data propagation (see there). That pass is right
   for every other operator, and for a valid Split it is right where it says something; it
   only says less (``unk__0`` for a size splitops can write as ``N - 3*ceiling(N/4)``), or
   something impossible for an invalid node (a dim of -1). Where onnx wrote a placeholder such as
   ``unk__0`` and splitops finds the dim, the placeholder is named in the whole model
   (:meth:`_Pass._set`).
2. One walk over the nodes in order, subgraphs where their node stands. A Split or
   SplitToSequence gets its outputs from the planner; an operator whose output shape a
   followed value decides (Reshape, Expand, Range, Tile, ConstantOfShape) gets it from
   that value. Every other node keeps onnx's types unless one of its inputs now has a
   different type; then that node alone is inferred again
   (``onnx.shape_inference.infer_node_outputs``, or ``infer_function_output_types`` for a
   call of a local function), and what onnx's first pass said is kept where the new types
   say less, as long as the new input types only refine the old ones (a Split that
   splitops finds invalid gets no types, and nothing after it keeps onnx's). Nodes alike
   (attributes, types and values of their inputs) are worked out once.
3. Types that differ from onnx's are written: into ``value_info``, or merged into a graph
   output or a ``value_info`` entry that the model declares, as onnx merges them (an
   unknown dim or onnx's ``unk__`` placeholder takes the inferred dim, a declared name
   stays unless a value is inferred). A Split output whose declaration contradicts the
   inferred type is a problem of that node (``declared-shape``).
4. A call of a local function that holds a Split is inferred by inlining that one call
   (``onnx.inliner.inline_selected_functions``) into a small model and running this
   scheme on it; its body's Split nodes are thereby inferred per call site, and the
   function's ``value_info`` receives the types on which all call sites agree. Calls alike
   (the same input types and constants, the same attributes) are inferred once, in the
   whole inference: functions that call one another twice per level make 2^k calls of a
   few alike. A model is first held against the ``max_nodes`` limit, each call counted as
   the nodes of its body.
5. A subgraph alike one already walked (the same graph after onnx's pass, reading the same
   outer types and values) takes that walk's results: If branches that each hold the same
   nested Ifs are walked once per level, not once per branch.

What is written: the element type and shape of each output of each node, in the graph's
``value_info`` (or in a graph output), in the main graph, subgraphs and local functions.
SplitToSequence's output is ``seq(tensor(T))``: the element shape keeps the other dims;
its axis dim is the common part length when all parts have the same one (1 when the chunks
are of length 1), absent with ``keepdims=0`` and no ``split``, and unknown otherwise (e.g.
a scalar ``split`` on a symbolic dim, where the last part may be shorter).

>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b", "c", "d"], axis=1, num_outputs=4)], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "N"])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcd"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> for row in describe_split_outputs(model)[-2:]:
...     print(row.output, row.type, row.shape)
c tensor(float) [2, ceiling(N/4)]
d tensor(float) [2, N - 3*ceiling(N/4)]
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, NamedTuple

import numpy as np
import onnx
import onnx.inliner
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TensorShapeProto,
    TypeProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)
from onnx.checker import ValidationError
from onnx.shape_inference import InferenceError

from ...arrays import host_sizes
from ...core import (
    INT_ARITHMETIC,
    DimArithmetic,
    OtherOperatorError,
    Rule,
    SplitError,
    opset_rule,
    plan_sequence_parts,
    require_argument,
)
from ..model import (
    DEFAULT_DOMAINS,
    SPLIT_OPS,
    FunctionId,
    ModelView,
    Scope,
    ScopeKey,
    SplitNode,
    SplitOutputDescription,
    SplitSite,
    Step,
    ValueType,
    add_initializers,
    attribute_key,
    attribute_protos,
    attribute_value,
    check_node_count,
    conflicts,
    constant_initializers,
    constant_value,
    copy_attributes,
    declared_entries,
    declared_type,
    declared_types,
    describe_type,
    dim_of,
    dim_params,
    drop_value_info,
    function_default_attributes,
    function_defaults,
    graph_at,
    graph_attributes,
    graphs_below,
    has_graphs,
    has_negative_dim,
    has_type,
    initializer_names,
    initializers,
    is_split_node,
    links_only,
    named_placeholders,
    node_error,
    node_label,
    operator_schema,
    parts_drop_axis,
    refined_type,
    rename_all,
    rename_in_place,
    renamed,
    replace_initializers,
    says_more,
    tensor_parts,
    union_type,
    unnamed_placeholders,
    value_info_entry,
    value_type,
    without_large_weights,
)
from ._symbolic import SYMBOLIC, DimParams, sympy  # sympy: an optional extra
from ._values import (
    MAX_ITEMS,
    READS_SHAPES,
    SHAPE_OPS,
    VALUE_OPS,
    Items,
    from_array,
    propagate,
)
from ._values import value_shape as values_shape

__all__ = [
    "SplitInferenceWarning",
    "SplitNodeInference",
    "SplitOutputDescription",
    "describe_split_outputs",
    "infer_model_and_nodes",
    "infer_shapes",
    "infer_split_nodes",
]

#: The domain prefix that hides a node from onnx's pass.
_MASK = "splitops.masked."
#: The most parts onnx's pass is left to infer for a Split-18 that lists fewer outputs.
_ONNX_MOST_PARTS = 4096


@cache
def _unknown() -> Any:
    """A dim whose value nobody knows: sizes that involve it are written as unknown dims."""
    return sympy.Dummy("unknown", integer=True, nonnegative=True)


#: Where a graph sits below the main graph or a function body.
_Where = tuple[Step, ...]
_FunctionKey = tuple[str, str, str]
_Dim = int | str | None
#: ONNX's own operators that hold subgraphs (other domains' are found by their attributes).
_CONTROL_FLOW = frozenset({"If", "Loop", "Scan", "SequenceMap"})

#: The operators of ONNX's domain that the pass looks at even when their inputs' types are
#: onnx's: their values are followed, or they hold subgraphs.
_OWN_OPS = frozenset(VALUE_OPS) | _CONTROL_FLOW

#: The operators whose one output has the type of their first input, element type and shape
#: (onnx infers them with ``propagateShapeAndTypeFromFirstInput``): the pass gives their
#: output the input's type without asking onnx, which costs more than the rest of a node.
SAME_TYPE_OPS = frozenset(
    {
        "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Ceil",
        "Celu", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid",
        "HardSwish", "Hardmax", "Identity", "LeakyRelu", "Log", "LogSoftmax", "Mish", "Neg",
        "Not", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh",
        "Softmax", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
    }
)  # fmt: skip


class SplitInferenceWarning(UserWarning):
    """An invalid Split or SplitToSequence node whose outputs were left without shapes."""


@dataclass(frozen=True)
class SplitNodeInference:
    """What inference found for one Split or SplitToSequence node."""

    #: Where the node lives: "main", "main/if_1.then_branch", "function:local.MyFn".
    graph: str
    node: NodeProto
    #: The default-domain opset the node is read at.
    opset: int
    #: The inferred type of each output, by name; empty when the input type is unknown or
    #: the node is invalid.
    outputs: tuple[tuple[str, TypeProto], ...] = ()
    #: Each problem found, as (check, error): the check is "schema", "dtype",
    #: "split-dtype", "split-shape", "axis", "sizes" or "declared"; the error does not name
    #: the node.
    problems: tuple[tuple[str, SplitError], ...] = ()
    #: Whether the node lies inside a branch of an If, which may never run: a branch for
    #: other input shapes may hold nodes that are invalid for these ones.
    in_branch: bool = False
    #: Its identity: the scope it lies in (see :data:`~splitops.onnx.model.ScopeKey`) and its
    #: index there. ``graph`` and ``label`` are for people: two nodes may share both.
    scope: ScopeKey = (None, ())
    index: int = 0

    @property
    def label(self) -> str:
        """The node's name, or its first output's name when it has none."""
        return node_label(self.node)

    @property
    def error(self) -> SplitError | None:
        """The first problem, as the SplitError that names the node, or ``None``."""
        return node_error(self.node, self.problems[0][1]) if self.problems else None


def infer_shapes(model: ModelProto, *, strict: bool = True) -> ModelProto:
    """A copy of ``model`` with the types and shapes of all values, Split's exact.

    Every other node is inferred by ``onnx.shape_inference`` as usual, from splitops' types.
    An invalid Split or SplitToSequence node raises SplitError (naming the graph and node),
    or with ``strict=False`` warns with :class:`SplitInferenceWarning` and leaves its outputs
    without shapes. An invalid node inside a branch of an If only warns, even when strict:
    the branch may be one that these inputs never take.
    """
    require_argument(model, ModelProto, "infer_shapes", "an onnx.ModelProto")
    inferred = _infer_model(model, write=True)
    for record in inferred.records:
        error = record.error
        if error is None:
            continue
        if strict and not record.in_branch:
            raise error.in_context(f"{record.graph}: ") from record.problems[0][1]
        reasons = SplitError(
            " ".join(str(problem) for _, problem in record.problems), rule=error.rule
        )
        warnings.warn(
            f"{record.graph}: {node_error(record.node, reasons)} "
            "Its outputs are left without shapes.",
            SplitInferenceWarning,
            stacklevel=2,
        )
    return inferred.model


def infer_model_and_nodes(model: ModelProto) -> tuple[ModelProto, list[SplitNodeInference]]:
    """:func:`infer_shapes` with ``strict=False`` (without its warnings) and
    :func:`infer_split_nodes`, from one inference: the inferred copy of ``model`` and what
    was found for every node."""
    inferred = _infer_model(model, write=True)
    return inferred.model, inferred.records


def infer_split_nodes(model: ModelProto) -> list[SplitNodeInference]:
    """What inference finds for every Split and SplitToSequence node: main graph,
    subgraphs, then local functions (types on which all call sites agree, and the first
    error any call site meets)."""
    return _infer_model(model, write=False).records


def describe_split_outputs(model: ModelProto) -> list[SplitOutputDescription]:
    """Every output of every Split and SplitToSequence node with its inferred type and shape.

    An invalid node's outputs come with the reason in ``error`` (nothing is raised).
    """
    rows: list[SplitOutputDescription] = []
    for record in infer_split_nodes(model):
        types = dict(record.outputs)
        error = "" if record.error is None else str(record.error)
        rows.extend(
            SplitOutputDescription.of(record.graph, record.label, output, types.get(output), error)
            for output in record.node.output
            if output
        )
    return rows


# --- what a pass finds ------------------------------------------------------------------


class _Site(NamedTuple):
    """A Split or SplitToSequence node, where it lies."""

    #: The label of its scope (see :class:`~splitops.onnx.model.Scope`).
    label: str
    where: _Where
    #: The node's index in its graph.
    position: int
    node: NodeProto
    opset: int | None
    #: Whether the node lies inside a branch of an If (see :class:`SplitNodeInference`).
    in_branch: bool


class _Place(NamedTuple):
    """A scope that the pass entered (:meth:`_Pass.placed`), and the overlay that holds its
    results."""

    scope: Scope
    #: The overlay of the graph walked whose results it has: its own, unless it is alike
    #: one walked.
    graph: _Overlay
    #: Whether it lies inside a branch of an If.
    in_branch: bool
    #: The graph as the model gives it, where asked for.
    original: GraphProto | None


@dataclass(frozen=True)
class _Outcome:
    outputs: tuple[tuple[str, TypeProto], ...] = ()
    problems: tuple[tuple[str, SplitError], ...] = ()


#: Per place in a function's body, the outcomes its call sites met, each once (by
#: :func:`_outcome_key`), in the order first met.
_PlaceOutcomes = dict[tuple[_Where, int], dict[tuple[Any, ...], _Outcome]]


@dataclass
class _Inferred:
    model: ModelProto
    #: The model's own Split and SplitToSequence nodes (main graph and subgraphs), in the
    #: order of :func:`with_subgraphs`.
    own: list[tuple[_Site, _Outcome]]
    #: The types of the main graph's outputs.
    outputs: dict[str, TypeProto] = field(default_factory=dict)
    #: Per local function, per place in its body: the outcome at each call site.
    functions: dict[_FunctionKey, _PlaceOutcomes] = field(default_factory=dict)

    @property
    def records(self) -> list[SplitNodeInference]:
        found = [_record(site, outcome, None) for site, outcome in self.own]
        if not self.functions:
            return found
        view = ModelView.read(self.model)
        for function in self.model.functions:
            root = _function_key(function)
            places = self.functions.get(root, {})
            for (where, index), outcomes in sorted(places.items()):
                scope = view.scope((root, where))
                assert scope is not None  # a place inference found in the function
                node = scope.proto.node[index]
                site = _Site(scope.label, where, index, node, scope.opset, scope.in_branch)
                found.append(_record(site, _merge(list(outcomes.values())), root))
        return found


def _infer_model(
    model: ModelProto,
    *,
    write: bool,
    params: DimParams | None = None,
    calls: _Calls | None = None,
) -> _Inferred:
    """One pass over ``model`` (see the module's docstring); ``write``: the types go into the
    returned model. ``params``: the dim_params of the inference that inlined this model (a
    call of a local function), ``None`` for the user's model. ``calls`` is the inference of
    the calls met so far, shared by the passes over the calls inside this one; without it,
    the model is the user's (not one inlined call): its size is checked against the limits
    first."""
    top = calls is None
    if calls is None:
        check_node_count(model)
        calls = {}
    functions = {_function_key(f): f for f in model.functions}
    holders = _split_holders(functions)
    given = model
    model, base = _onnx_pass(model, holders)
    if params is None:
        params = DimParams(lambda: _dim_param_names(given))
    run = _Pass(model, base, functions, holders, params, calls)
    main = run.walk_main()
    inferred = _Inferred(base, run.sites(write=write))
    inferred.outputs = {
        v.name: t for v in base.graph.output if (t := main.type_proto(v.name)) and has_type(t)
    }
    for function, call in run.calls.values():
        _add_call(inferred, function, call, nested=True)
    if top:
        _infer_uncalled(inferred, base, holders, params, calls)
        if write:
            _write_functions(inferred)
    run.release()
    return inferred


def _onnx_pass(model: ModelProto, holders: set[_FunctionKey]) -> tuple[ModelProto, ModelProto]:
    """onnx's own inference of ``model``: the model it read, and the new model it returned.

    onnx's data propagation stays off. splitops follows the values of shape computations
    itself (:mod:`~splitops.onnx.inference._values`, tensors of at most ``SMALL_TENSOR`` items), and
    onnx 1.23's propagation allocates some 150 bytes per item of every 1-d tensor whose
    length it knows when it meets an Add, a Cast or a Concat: an Add of a declared
    ``[2**31]`` vector took all memory (found by fuzzing). On the exported corpus splitops
    knows the same 580 of 582 split dims either way.

    onnx infers the Split and SplitToSequence nodes too, except those it cannot take: onnx
    1.23 aborts the process on a Split-18 that lists more outputs than ``num_outputs``, and
    allocates ``num_outputs`` sizes whatever the node lists (``2**31 - 1`` exhausts the
    memory). Those nodes, and calls of local functions that hold a Split (whose bodies onnx
    would infer with them), are masked: moved to a domain onnx does not know for its pass.
    A ``value_info`` entry with a negative dim (no tensor has one; an earlier pass of onnx
    writes them for invalid nodes) is dropped first.
    """
    risky: list[tuple[_Where, int]] = []
    negative: list[_Where] = []
    _scan(model.graph, (), holders, risky, negative)
    if negative:
        copy = ModelProto()
        copy.CopyFrom(model)
        for path in negative:
            drop_value_info(graph_at(copy.graph, path), has_negative_dim)
        model = copy
    if not risky:
        return model, _onnx_infers(model)
    masked = ModelProto()
    masked.CopyFrom(model)
    domains = set()
    for path, index in risky:
        node = graph_at(masked.graph, path).node[index]
        node.domain = _MASK + node.domain
        domains.add(node.domain)
    masked.opset_import.extend(helper.make_opsetid(d, 1) for d in sorted(domains))
    base = _onnx_infers(masked)
    for path, index in risky:
        node = graph_at(base.graph, path).node[index]
        node.domain = node.domain.removeprefix(_MASK)
    kept = [o for o in base.opset_import if not o.domain.startswith(_MASK)]
    del base.opset_import[:]
    base.opset_import.extend(kept)
    return model, base


def _onnx_infers(model: ModelProto) -> ModelProto:
    """onnx's pass over ``model``; its failure (on another operator: splitops' own nodes are
    checked by splitops) is an :class:`~splitops.OtherOperatorError`.

    onnx is given the model with its large weights set aside as typed inputs (their values
    are never followed), and the weights are put back, in their order, into what it returns.
    """
    light, added = without_large_weights(model)
    try:
        base = onnx.shape_inference.infer_shapes(light, data_prop=False)
    # onnx 1.23 raises ValueError ("Invalid tensor data type 0") for an If whose branches
    # declare an output of element type 0 and no output: any failure of its pass is its own.
    except (InferenceError, ValidationError, ValueError, TypeError, RuntimeError) as error:
        raise OtherOperatorError(
            f"onnx shape inference failed on the model: {' '.join(str(error).split())}"
        ) from error
    if len(initializers(light.graph)) != len(initializers(model.graph)):
        set_aside = set(added)
        inputs = [i for i in base.graph.input if i.name not in set_aside]
        del base.graph.input[:]
        base.graph.input.extend(inputs)
        replace_initializers(base.graph, initializers(model.graph))
    return base


def _scan(
    graph: GraphProto,
    path: _Where,
    holders: set[_FunctionKey],
    risky: list[tuple[_Where, int]],
    negative: list[_Where],
) -> None:
    """Find, in ``graph`` and the subgraphs it scans (:func:`_scans_below`), the nodes to
    mask from onnx's pass and the graphs whose value_info holds a negative dim."""
    if any(has_negative_dim(v.type) for v in declared_entries(graph)):
        negative.append(path)
    for index, node in enumerate(graph.node):
        op = node.op_type
        if node.domain in DEFAULT_DOMAINS:
            if op == "Split" and not _onnx_takes(node):
                risky.append((path, index))
        elif (node.domain, op, node.overload) in holders:
            risky.append((path, index))
        if _scans_below(node):
            for name, k, subgraph in graph_attributes(node):
                _scan(subgraph, (*path, (index, name, k)), holders, risky, negative)


def _scans_below(node: NodeProto) -> bool:
    """Whether the scans of a model before onnx's pass look in the graphs ``node`` holds:
    those of ONNX's control flow, and of any node of another domain."""
    return node.domain not in DEFAULT_DOMAINS or node.op_type in _CONTROL_FLOW


def _dim_param_names(model: ModelProto) -> set[str]:
    """The dim_params that ``model`` names (:class:`DimParams` writes no expression as one):
    in the inputs, outputs and value_info of its graphs (those :func:`_scans_below` finds),
    and in the value_info of its functions."""
    names: set[str] = set()
    graphs = [model.graph]
    while graphs:
        graph = graphs.pop()
        for entry in [*graph.input, *declared_entries(graph, outputs=True)]:
            names.update(dim_params(entry.type))
        for node in graph.node:
            if _scans_below(node):
                graphs += (subgraph for _, _, subgraph in graph_attributes(node))
    for function in model.functions:
        for proto in graphs_below(function):
            for entry in declared_entries(proto):
                names.update(dim_params(entry.type))
    return names


def _onnx_takes(node: NodeProto) -> bool:
    """Whether onnx's own inference of a Split or SplitToSequence node is safe to run: every
    node but a Split whose ``num_outputs`` is below the outputs it lists, or far above."""
    count = attribute_value(node, "num_outputs") if node.op_type == "Split" else None
    if not isinstance(count, int):
        return True
    listed = len(node.output)
    return bool(listed <= count <= max(listed, _ONNX_MOST_PARTS))


def _onnx_takes_bodies(node: NodeProto) -> bool:
    """Whether onnx can infer every Split in the subgraphs of ``node``, at any depth."""
    for _, _, body in graph_attributes(node):
        for inner in body.node:
            if inner.domain in DEFAULT_DOMAINS and not _onnx_takes(inner):
                return False
            if not _onnx_takes_bodies(inner):
                return False
    return True


# --- the pass -----------------------------------------------------------------------------


@dataclass(eq=False)
class _Overlay:
    """What the pass adds to one scope of the view of onnx's pass over the model: splitops'
    types where they differ from onnx's, the values followed, and what the model declares.
    The model is read through the view; an overlay adds to a scope, it is no second model."""

    scope: Scope
    #: The graph as the model gives it (the scope's is onnx's pass over it).
    original: GraphProto
    parent: _Overlay | None
    #: onnx's types (its inputs, initializers, value_info and outputs after onnx's pass).
    base: dict[str, TypeProto]
    #: The initializers a caller cannot replace: constant values.
    constants: dict[str, TensorProto]
    #: What onnx's placeholders (``unk__3``) stand for, as splitops found: shared by the
    #: graphs of one pass (onnx's symbols are the model's).
    names: dict[str, TensorShapeProto.Dimension]
    #: What the dim_params read stand for, and the texts of the sizes written.
    params: DimParams
    #: splitops' types where they differ from onnx's (``None``: splitops leaves it untyped).
    ours: dict[str, TypeProto | None] = field(default_factory=dict)
    #: The values among ``ours`` whose type is no refinement of onnx's: onnx's types of the
    #: nodes after them came from something splitops found impossible.
    loose: set[str] = field(default_factory=set)
    #: The values followed, by name (``None``: a constant that is not followed).
    values: dict[str, Items | None] = field(default_factory=dict)
    #: The outcome of each of its Split and SplitToSequence nodes, by the node's index, and
    #: the graphs its nodes hold (by the node's index, in order).
    outcomes: list[tuple[int, _Outcome]] = field(default_factory=list)
    children: list[tuple[int, list[_Overlay]]] = field(default_factory=list)
    #: The graph walked whose results this one shares, being alike (:meth:`_Pass._alike`):
    #: its outcomes and the graphs its nodes hold are that graph's, at this graph's place.
    like: _Overlay | None = None
    #: The types the model itself declares (value_info and outputs, before any inference);
    #: ``None`` until asked: most graphs declare nothing that a Split or a write reads.
    declared: dict[str, TypeProto] | None = None

    @property
    def proto(self) -> GraphProto:
        proto = self.scope.proto
        assert isinstance(proto, GraphProto)  # a model's graphs, never a function body
        return proto

    @property
    def opset(self) -> int:
        return self.scope.opset or 0

    @property
    def label(self) -> str:
        return self.scope.label

    @property
    def key(self) -> ScopeKey:
        return self.scope.key

    def constant(self, name: str) -> np.ndarray[Any, Any] | None:
        """The value followed for ``name`` where every item is a number, else ``None``."""
        value = self.value_of(name)
        return None if value is None or not value.concrete else np.array(value.host())

    def _owner(self, name: str) -> _Overlay | None:
        """The graph (this one or an outer one) that types ``name``."""
        graph: _Overlay | None = self
        while graph is not None:
            if name in graph.ours or name in graph.base:
                return graph
            graph = graph.parent
        return None

    def type_proto(self, name: str) -> TypeProto | None:
        graph = self._owner(name)
        if graph is None:
            return None
        return graph.ours[name] if name in graph.ours else graph.seen(name)

    def type_of(self, name: str) -> ValueType | None:
        """The type of ``name`` here, as the view gives types (for the Split's site)."""
        return value_type(self.type_proto(name))

    def seen(self, name: str) -> TypeProto | None:
        """onnx's type of ``name`` (of this graph), its placeholders named where splitops
        found what they stand for (renamed where onnx wrote it: every placeholder that
        splitops names is renamed in the model it returns)."""
        base = self.base.get(name)
        if base is not None and self.names:
            rename_in_place(base, self.names)
        return base

    def changed(self, name: str) -> bool:
        graph = self._owner(name)
        return graph is not None and name in graph.ours

    def is_loose(self, name: str) -> bool:
        graph = self._owner(name)
        return graph is not None and name in graph.loose

    def value_of(self, name: str) -> Items | None:
        """The value followed for ``name``: a constant, or one computed by earlier nodes."""
        graph: _Overlay | None = self
        while graph is not None:
            if name in graph.values:
                return graph.values[name]
            tensor = graph.constants.get(name)
            if tensor is not None:
                graph.values[name] = value = _constant(tensor)
                return value
            graph = graph.parent
        return None

    def dims_of(self, name: str) -> list[Any] | None:
        """The dims of ``name`` as value items (ints, expressions, ``None`` unknown)."""
        _, dims = tensor_parts(self.type_proto(name))
        if dims is None:
            return None
        read = self.params.read
        return [d if d is None or isinstance(d, int) else read(d) for d in map(dim_of, dims)]


def _constant(tensor: TensorProto) -> Items | None:
    """An initializer's value, or ``None`` when it is large or not at hand."""
    if np.prod(tensor.dims, dtype=np.int64) > MAX_ITEMS:
        return None
    array = constant_value(tensor)
    return None if array is None else from_array(array)


class _Pass:
    """The walk over one model, after onnx's pass gave ``base`` its types."""

    def __init__(
        self,
        model: ModelProto,
        base: ModelProto,
        functions: dict[_FunctionKey, FunctionProto],
        holders: set[_FunctionKey],
        params: DimParams,
        call_cache: _Calls,
    ) -> None:
        self.model = model
        self.base = base
        #: The view of onnx's pass over the model: the scopes the overlays add to.
        self.view = ModelView.read(base)
        self.opsets = {o.domain: o.version for o in base.opset_import}
        self.functions = functions
        self.holders = holders
        #: The graphs entered: those walked, and those alike one walked.
        self.graphs: list[_Overlay] = []
        self.names: dict[str, TensorShapeProto.Dimension] = {}
        self.params = params
        #: Each call alike of a local function holding a Split (by its model, see
        #: :func:`_call_model`), with what its inference found: once, however many calls.
        self.calls: dict[bytes, tuple[FunctionProto, _Inferred]] = {}
        #: The inference of every call alike met by this pass and the passes it started.
        self._call_cache = call_cache
        #: Nodes alike (attributes, outputs, types and values of their inputs) have outcomes
        #: alike: the layers of a model repeat their nodes.
        self._split_outcomes: dict[tuple[Any, ...], _Outcome] = {}
        self._derived: dict[tuple[Any, ...], _Derived] = {}
        #: The subgraphs walked, by what their walk depends on (:meth:`_subgraph_key`).
        self._walked: dict[tuple[Any, ...], _Overlay] = {}
        #: The names each graph reads from outside itself: by the graph's digest (graphs
        #: alike read the same names), and by the graph (with the graph, which keeps its id);
        #: asked while walking only.
        self._free_by_digest: dict[bytes, list[str]] = {}
        self._free: dict[int, tuple[GraphProto, list[str]]] = {}

    # -- graphs --

    def release(self) -> None:
        """Break the links between the graphs walked (a graph names its parent, and the
        parent its children), so that their memory, onnx's types of a whole model, goes back
        when the pass ends rather than at the next run of the cycle collector."""
        for graph in self.graphs:
            graph.parent = graph.like = None
            graph.children.clear()
        self.graphs.clear()
        self._walked.clear()
        self._free.clear()

    def walk_main(self) -> _Overlay:
        main = self._graph(self.view.main, self.model.graph, None)
        self._walk(main)
        self._free.clear()  # asked while walking only
        return main

    def _graph(self, scope: Scope, original: GraphProto, parent: _Overlay | None) -> _Overlay:
        proto = scope.proto
        assert isinstance(proto, GraphProto)  # a model's graphs, never a function body
        graph = _Overlay(
            scope,
            original,
            parent,
            declared_types(proto, untyped=True),
            constant_initializers(proto, self.base.ir_version),
            self.names,
            self.params,
        )
        self.graphs.append(graph)
        return graph

    def _subgraph(self, scope: Scope, original: GraphProto, parent: _Overlay) -> _Overlay:
        """A graph that a node of ``parent`` holds, walked; or, where a graph alike (the same
        graph after onnx's pass, reading the same outer types and values) was walked
        already, one that shares its results: If branches that hold the same nested Ifs are
        walked once per level, not once per branch."""
        proto = scope.proto
        assert isinstance(proto, GraphProto)
        digest = hashlib.blake2b(proto.SerializeToString(deterministic=True)).digest()
        key = None
        # Only a graph of the same digest can be alike: the names it reads outside, which
        # the key holds, are found for the graphs walked (once their own subgraphs are).
        if digest in self._free_by_digest:
            key = self._subgraph_key(digest, proto, parent)
            walked = self._walked.get(key)
            if walked is not None:
                return self._alike(walked, scope, original, parent)
        named = len(self.names)
        graph = self._graph(scope, original, parent)
        self._walk(graph)
        if len(self.names) == named:  # no placeholder was named meanwhile
            self._walked[self._subgraph_key(digest, proto, parent) if key is None else key] = graph
        return graph

    def _subgraph_key(self, digest: bytes, proto: GraphProto, parent: _Overlay) -> tuple[Any, ...]:
        """What the walk of a subgraph depends on: the graph (``proto``, of ``digest``), and
        what it reads outside."""
        names = self._free_by_digest.get(digest)
        if names is None:
            names = self._free_by_digest[digest] = self.free_names(proto)
        self._free.setdefault(id(proto), (proto, names))
        outer = []
        for name in names:
            type_proto, value = parent.type_proto(name), parent.value_of(name)
            outer.append(
                (
                    name,
                    b"" if type_proto is None else type_proto.SerializeToString(deterministic=True),
                    None if value is None else (value.elem, value.shape, *value.flat()),
                    parent.changed(name),
                    parent.is_loose(name),
                )
            )
        return digest, parent.opset, tuple(outer), len(self.names)

    def free_names(self, graph: GraphProto) -> list[str]:
        """The names ``graph`` reads from outside itself, its subgraphs included; each graph
        is read once per pass, however many of the graphs around it are asked about."""
        known = self._free.get(id(graph))
        if known is not None:
            return known[1]
        defined = _names(graph.input) | initializer_names(graph)
        read: list[str] = []
        for node in graph.node:
            read += node.input
            for _, _, inner in graph_attributes(node):
                read += self.free_names(inner)
            defined.update(node.output)
        read += [o.name for o in graph.output]
        names = [name for name in dict.fromkeys(read) if name and name not in defined]
        self._free[id(graph)] = (graph, names)
        return names

    def _alike(
        self, walked: _Overlay, scope: Scope, original: GraphProto, parent: _Overlay
    ) -> _Overlay:
        """A graph like ``walked``, at ``scope``, that shares its types, values and Split
        outcomes, and those of every graph it holds (:meth:`placed`), without walking any
        of them."""
        graph = _Overlay(
            scope, original, parent, walked.base, walked.constants, self.names, self.params,
            walked.ours, walked.loose, walked.values, like=walked,
        )  # fmt: skip
        self.graphs.append(graph)
        return graph

    def placed(self, typed: Callable[[_Overlay], bool] | None = None) -> Iterator[_Place]:
        """Every graph the pass entered, in the order of :attr:`ModelView.scopes`, with the
        graph as the model gives it where ``typed`` says that the graph walked or one it
        holds has types of splitops. The graphs inside a graph alike are placed here, from
        the graphs of the one walked."""
        main = self.graphs[0]
        original = main.original if typed is not None else None
        stack = [_Place(main.scope, main, False, original)]
        while stack:
            place = stack.pop()
            yield place
            below = self._below(place, typed)
            below.reverse()
            stack += below

    def _below(self, place: _Place, typed: Callable[[_Overlay], bool] | None) -> list[_Place]:
        """The places of the graphs that the graph at ``place`` holds, in order."""
        scope, graph, in_branch, original = place
        found = []
        for index, children in graph.children:
            node = scope.proto.node[index]
            branch = in_branch or _is_branch(node)
            held: list[tuple[Scope, GraphProto | None]]
            if scope is graph.scope:  # the graph's own place: its children are placed
                held = [(c.scope, c.original) for c in children]
            else:  # the place of a graph alike: the graphs its node holds, by position
                originals: list[GraphProto | None] = [None] * len(children)
                if original is not None:  # a node may hold two graphs of one name
                    originals = [g for _, _, g in graph_attributes(original.node[index])]
                held = list(zip(scope.held(index), originals, strict=True))
            for (child_scope, child_original), child in zip(held, children, strict=True):
                source = child.like or child
                kept = child_original if typed is not None and typed(source) else None
                found.append(_Place(child_scope, source, branch, kept))
        return found

    def _walk(self, graph: _Overlay) -> None:
        # The main graph's values are its own: whether one changed is one set operation.
        ours = graph.ours.keys()
        main = graph.parent is None
        for index, node in enumerate(graph.proto.node):
            op = node.op_type
            if node.domain in DEFAULT_DOMAINS:
                if op in SPLIT_OPS:
                    self._split(graph, index, node)
                    continue
                if (
                    op not in _OWN_OPS
                    and (ours.isdisjoint(node.input) if main else not _any_changed(graph, node))
                    and not self._vague(graph, node)
                ):
                    continue  # onnx's types stand
            self._node(graph, index, node)

    def sites(self, *, write: bool) -> list[tuple[_Site, _Outcome]]:
        """Every Split and SplitToSequence node of the graphs entered, with its outcome; with
        ``write``, splitops' types are written into each graph on the way (:meth:`_write`)."""
        opset = self.graphs[0].scope.opset  # the opset of every graph of a model
        typed: dict[int, bool] = {}
        found = []
        for place in self.placed((lambda graph: _typed(graph, typed)) if write else None):
            if write:
                self._write(place)
            scope, graph, in_branch, _ = place
            for index, outcome in graph.outcomes:
                node = scope.proto.node[index]
                site = _Site(scope.label, scope.key[1], index, node, opset, in_branch)
                found.append((site, outcome))
        return found

    # -- one node --

    def _split(self, graph: _Overlay, index: int, node: NodeProto) -> None:
        key = _node_key(node, graph)
        found = self._split_outcomes.get(key)
        if found is None:
            outcome = self._split_outcomes[key] = _infer_split(node, index, graph)
        else:
            names = [name for name in node.output if name]
            outputs = tuple((n, t) for n, (_, t) in zip(names, found.outputs, strict=False))
            outcome = replace(found, outputs=outputs)
        if graph.declared is None:
            graph.declared = declared_types(graph.original, inputs=False, untyped=True)
        outcome = _with_declarations(outcome, node, graph.opset, graph.declared)
        graph.outcomes.append((index, outcome))
        inferred = {} if outcome.problems else dict(outcome.outputs)
        for name in node.output:
            if name:
                self._set(graph, name, inferred.get(name), trust_base=False, authority=True)

    def _node(self, graph: _Overlay, index: int, node: NodeProto) -> None:
        default = node.domain in DEFAULT_DOMAINS
        op = node.op_type
        subgraphs = []
        if (op in _CONTROL_FLOW) if default else has_graphs(node):
            originals = (g for _, _, g in graph_attributes(graph.original.node[index]))
            for scope, original in zip(graph.scope.held(index), originals, strict=True):
                subgraphs.append(self._subgraph(scope, original, graph))
            graph.children.append((index, subgraphs))
        key = (node.domain, op, node.overload)
        if key in self.functions:
            self._call(graph, node, self.functions[key])
            return
        changed = [n for n in node.input if n and graph.changed(n)]
        changed += [o.name for s in subgraphs for o in s.proto.output if s.changed(o.name)]
        # Nodes alike, in a graph whose layers repeat, are worked out once (no subgraphs).
        memo = None if subgraphs or not default else (_node_key(node, graph), bool(changed))
        derived = self._derived.get(memo) if memo else None
        if derived is None:
            value, shape = (
                self._follow(graph, node, bool(changed)) if op in VALUE_OPS else (None, None)
            )
            derived = _Derived(value, shape)
            if memo:
                self._derived[memo] = derived
        value, shape = derived.value, derived.shape
        if value is not None and node.output:
            graph.values[node.output[0]] = value
        known = shape is not None and None not in shape  # splitops has every dim
        vague = not changed and not known and self._vague(graph, node)
        if not changed and shape is None and not vague:
            return
        types = {o: graph.seen(o) for o in node.output if o}
        trust = not any(graph.is_loose(n) or _loose_in(subgraphs, n) for n in changed)
        if changed or vague:
            if derived.inferred is None:
                found = self._reinfer(graph, node, subgraphs)
                derived.inferred = [found.get(o) for o in node.output]
            inferred = dict(zip(node.output, derived.inferred, strict=True))
            types = {o: refined_type(inferred[o], t if trust else None) for o, t in types.items()}
            if op == "If" and default and len(subgraphs) == 2:
                types = _branch_union(node, subgraphs, types)
        if shape is not None and node.output and node.output[0] != "":
            out = node.output[0]
            elem, _ = tensor_parts(types.get(out))
            if elem not in derived.typed:
                derived.typed[elem] = _shape_type(shape, elem, self.params)
            types[out] = refined_type(derived.typed[elem], types.get(out))
        for name, type_proto in types.items():
            self._set(graph, name, type_proto, trust_base=trust)

    def _vague(self, graph: _Overlay, node: NodeProto) -> bool:
        """Whether onnx left a placeholder in ``node``'s outputs that splitops has not named,
        after splitops named some: onnx may have made it up for dims it could not tell
        apart then (``seq`` against ``unk__1``, which splitops found to be ``seq``), so the
        node is inferred again from the named types."""
        if not self.names:
            return False
        outputs, types = node.output, graph.base
        if len(outputs) == 1 and node.input and types.get(outputs[0]) == types.get(node.input[0]):
            return False  # onnx gave the output its input's type: no placeholder of its own
        for name in outputs:
            base = types.get(name)
            if base is not None and unnamed_placeholders(base, self.names):
                return True
        return False

    def _follow(
        self, graph: _Overlay, node: NodeProto, changed: bool
    ) -> tuple[Items | None, list[Any] | None]:
        """``node``'s value, and the dims of its output when splitops works them out
        (:data:`SHAPE_OPS`), else ``None``. A Concat's dims are worked out where onnx's may
        fall short: an input ``changed`` from onnx's type, or a name on the axis."""
        op = node.op_type
        inputs = [graph.value_of(name) if name else None for name in node.input]
        shapes: list[list[Any] | None] = []
        if op in READS_SHAPES:
            shapes = [graph.dims_of(name) if name else None for name in node.input]
            if op == "Concat" and not changed and not _names_on_axis(node, shapes):
                shapes = []  # onnx adds values up as well
        if not shapes and all(v is None for v in inputs) and op != "Constant":
            return None, None  # nothing to follow
        value = propagate(node, graph.opset, inputs, shapes)
        if op not in SHAPE_OPS:
            return value, None
        return value, values_shape(node, graph.opset, inputs, shapes)

    def _set(
        self,
        graph: _Overlay,
        name: str,
        type_proto: TypeProto | None,
        *,
        trust_base: bool,
        authority: bool = False,
    ) -> None:
        """Record ``name``'s type where it differs from onnx's; with ``trust_base``, what
        onnx's pass said of it fills in what splitops leaves unknown. A type that is no
        refinement of onnx's makes the value loose: the types onnx gave the nodes after it
        are not kept either. With ``authority`` (a Split's output, which splitops infers
        exactly), a type that says less than onnx's is loose too: onnx said too much (it
        reads an initializer that a graph input overrides as a constant).

        Where onnx wrote a placeholder (``unk__3``) and splitops knows the dim, the
        placeholder is named for the whole model: onnx wrote the same placeholder only
        where it found the dims equal, so the nodes whose types differ only by it keep
        onnx's types, renamed, and need not be inferred again."""
        base = graph.base.get(name)
        if type_proto == base:
            return
        trusted = trust_base or authority
        if trusted and base is not None and type_proto is not None:
            for placeholder, dim in named_placeholders(base, type_proto):
                self.names.setdefault(placeholder, dim)
        seen = graph.seen(name)
        if trust_base and type_proto is not None:
            type_proto = refined_type(type_proto, seen)
        if type_proto == seen:
            return
        graph.ours[name] = type_proto
        if seen is not None and (
            not trusted
            or type_proto is None
            or _contradicts(seen, type_proto)
            or (authority and says_more(seen, type_proto))
        ):
            graph.loose.add(name)

    def _reinfer(
        self, graph: _Overlay, node: NodeProto, subgraphs: Sequence[_Overlay]
    ) -> dict[str, TypeProto]:
        """onnx's inference of ``node`` alone, from splitops' types of its inputs (and of the
        outer values its subgraphs read); ``{}`` where onnx cannot infer it."""
        schema = operator_schema(node.op_type, self.opsets.get(node.domain or "", 0), node.domain)
        if schema is None:
            return {}
        if node.op_type in SAME_TYPE_OPS and not node.domain and len(node.output) == 1:
            first = graph.type_proto(node.input[0]) if node.input else None
            return {} if first is None else {node.output[0]: first}
        if subgraphs and not _onnx_takes_bodies(node):
            # onnx infers the subgraphs with the node: a Split it cannot take aborts it.
            return {}
        types: dict[str, TypeProto] = {}
        data: dict[str, TensorProto] = {}
        # The names the subgraphs read from outside themselves.
        outer = [name for subgraph in subgraphs for name in self.free_names(subgraph.proto)]
        for name in dict.fromkeys([*node.input, *outer]):
            if not name:
                continue
            type_proto = graph.type_proto(name)
            if type_proto is None or not has_type(type_proto):
                if name in node.input:
                    return {}
                continue
            types[name] = type_proto
            tensor = _tensor(graph.value_of(name), type_proto, name)
            if tensor is not None and name in node.input:
                data[name] = tensor
        try:
            return onnx.shape_inference.infer_node_outputs(
                schema,
                node,
                types,
                data,
                opset_imports=list(self.base.opset_import),
                ir_version=self.base.ir_version,
            )
        except (InferenceError, ValidationError, RuntimeError, ValueError, TypeError):
            return {}

    # -- calls of local functions --

    def _call(self, graph: _Overlay, node: NodeProto, function: FunctionProto) -> None:
        key = _function_key(function)
        trust = not any(graph.is_loose(n) for n in node.input if n)
        if key in self.holders:
            inferred = self._inferred_call(graph, node, function)
            found = {} if inferred is None else inferred.outputs
            for k, name in enumerate(node.output):
                if name:
                    self._set(graph, name, found.get(_call_output(k)), trust_base=trust)
            return
        if not any(graph.changed(n) for n in node.input if n):
            return
        inputs = [graph.type_proto(n) or TypeProto() for n in node.input]
        try:
            outputs = onnx.shape_inference.infer_function_output_types(
                function, inputs, attribute_protos(node)
            )
        except (InferenceError, ValidationError, RuntimeError, ValueError, TypeError):
            outputs = []
        found = dict(zip(node.output, outputs, strict=False))
        for name in node.output:
            if name:
                self._set(graph, name, found.get(name), trust_base=trust)

    def _inferred_call(
        self, graph: _Overlay, node: NodeProto, function: FunctionProto
    ) -> _Inferred | None:
        call_model = _call_model(self.base, node, function, graph)
        # The model of the call without the model's functions (the same for every call) says
        # all that its inference depends on: calls alike are inferred once.
        key = call_model.SerializeToString(deterministic=True)
        if key not in self._call_cache:
            self._call_cache[key] = _infer_call(
                _with_functions(call_model, self.base), function, self.params, self._call_cache
            )
        inferred = self._call_cache[key]
        if inferred is not None:
            self.calls.setdefault(key, (function, inferred))
        return inferred

    # -- writing --

    def _write(self, place: _Place) -> None:
        """Write splitops' types into the graph of ``base`` at ``place`` (see the module's
        docstring), and name onnx's placeholders where splitops found what they stand for."""
        proto, original = place.scope.proto, place.original
        types = place.graph.ours
        if self.names:
            rename_all(declared_entries(proto, outputs=True), self.names)
            types = {n: None if t is None else renamed(t, self.names) for n, t in types.items()}
        if types:
            assert original is not None  # placed gives it to every graph with types
            _write_graph(proto, types, declared_types(original, inputs=False, untyped=True))


def _typed(graph: _Overlay, memo: dict[int, bool]) -> bool:
    """Whether splitops has types of its own for ``graph`` (a graph walked) or a graph it
    holds, at any depth; ``memo`` keeps the answers by graph."""
    found = memo.get(id(graph))
    if found is None:
        below = (child.like or child for _, children in graph.children for child in children)
        found = memo[id(graph)] = bool(graph.ours) or any(_typed(g, memo) for g in below)
    return found


def _names(entries: Iterable[ValueInfoProto]) -> set[str]:
    return {entry.name for entry in entries}


def _any_changed(graph: _Overlay, node: NodeProto) -> bool:
    return any(graph.changed(name) for name in node.input if name)


def _names_on_axis(node: NodeProto, shapes: Sequence[Sequence[Any] | None]) -> bool:
    """Whether a Concat joins inputs (of ``shapes``) of which one has a name on the axis."""
    axis = attribute_value(node, "axis", 0)
    for dims in shapes:
        dims = dims or []
        if -len(dims) <= axis < len(dims) and not isinstance(dims[axis], (int, type(None))):
            return True
    return False


def _loose_in(subgraphs: Sequence[_Overlay], name: str) -> bool:
    return any(s.is_loose(name) for s in subgraphs)


def _contradicts(base: TypeProto, ours: TypeProto) -> bool:
    """Whether ``ours`` says something of a value that onnx's type of it rules out."""
    return next(conflicts(base, ours), None) is not None


def _branch_union(
    node: NodeProto, branches: Sequence[_Overlay], types: dict[str, TypeProto | None]
) -> dict[str, TypeProto | None]:
    """An If's outputs with what both of splitops' branches agree on refining onnx's."""
    then_branch, else_branch = branches
    merged = dict(types)
    for k, name in enumerate(node.output):
        if not name or k >= min(len(then_branch.proto.output), len(else_branch.proto.output)):
            continue
        a = then_branch.type_proto(then_branch.proto.output[k].name)
        b = else_branch.type_proto(else_branch.proto.output[k].name)
        if a is not None and b is not None:
            union = union_type(a, b)
            merged[name] = refined_type(union, types.get(name))
    return merged


def _shape_type(dims: list[Any], elem: int, params: DimParams) -> TypeProto | None:
    """A tensor type of ``dims`` (value items) and element type ``elem`` (``None`` for 0)."""
    if not elem:
        return None
    sizes = [_size_dim(d, params) for d in dims]
    # A size left negative (two -1 in a Reshape), or beyond int64 (a Tile's count times a
    # dim), is no dim.
    return helper.make_tensor_type_proto(
        elem, [None if isinstance(s, int) and not 0 <= s < 2**63 else s for s in sizes]
    )


def _tensor(value: Items | None, type_proto: TypeProto, name: str) -> TensorProto | None:
    """A concrete value as a ``TensorProto`` of its type, for onnx's inference."""
    elem, _ = tensor_parts(type_proto)
    if value is None or not elem or not value.concrete:
        return None
    try:
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        return numpy_helper.from_array(np.array(value.host(), dtype=dtype), name)
    except (KeyError, TypeError, ValueError, OverflowError):
        return None


def _write_graph(
    proto: GraphProto | FunctionProto,
    types: dict[str, TypeProto | None],
    declared: dict[str, TypeProto],
) -> None:
    """Write ``types`` into ``proto``: merged into a declared entry (a graph output, or
    value_info the model gave), else a value_info entry of their own; ``None`` leaves only
    what the model declared."""
    if not types:
        return
    outputs = {v.name: v for v in proto.output} if isinstance(proto, GraphProto) else {}
    infos = {v.name: v for v in declared_entries(proto)}
    cleared = False
    for name, type_proto in types.items():
        given = declared.get(name)
        if type_proto is None:
            written = given
        elif given is None:
            written = type_proto
        else:
            written = declared_type(given, type_proto)
        entry = outputs.get(name)
        if entry is None:
            entry = infos.get(name)
        if entry is None:
            if written is None:
                continue
            entry = infos[name] = value_info_entry(proto, name)
        entry.ClearField("type")
        if written is not None:
            entry.type.CopyFrom(written)
        elif name in infos:
            cleared = True
    if cleared:
        drop_value_info(proto, lambda type_proto: not has_type(type_proto))


# --- calls of local functions -------------------------------------------------------------


#: The inference of each call alike met in one inference of a model, by the call's model
#: (see :func:`_call_model`); ``None`` where onnx cannot inline or infer it.
_Calls = dict[bytes, "_Inferred | None"]


def _infer_call(
    call_model: ModelProto, function: FunctionProto, params: DimParams, calls: _Calls
) -> _Inferred | None:
    """The inference of one inlined call, or ``None`` where onnx cannot inline or infer it."""
    try:
        inlined = onnx.inliner.inline_selected_functions(
            call_model, [(function.domain, function.name)]
        )
        if len(inlined.graph.node) != len(function.node):
            return None
        return _infer_model(inlined, write=False, params=params, calls=calls)
    except (RuntimeError, ValueError, onnx.checker.ValidationError):
        return None


def _add_call(
    inferred: _Inferred, function: FunctionProto, call: _Inferred, *, nested: bool
) -> None:
    """Add what inference found inside one call to the outcomes of the function's body."""
    found = inferred.functions.setdefault(_function_key(function), {})
    for site, outcome in call.own:
        # The inliner renamed the values; a node keeps its place in the body.
        node = graph_at(function, site.where).node[site.position]
        names = dict(zip(site.node.output, node.output, strict=True))
        outputs = tuple((names[name], t) for name, t in outcome.outputs)
        renamed_outcome = replace(outcome, outputs=outputs)
        at_place = found.setdefault((site.where, site.position), {})
        at_place.setdefault(_outcome_key(renamed_outcome), renamed_outcome)
    if not nested:
        return
    for key, places in call.functions.items():
        target = inferred.functions.setdefault(key, {})
        for place, outcomes in places.items():
            kept = target.setdefault(place, {})
            for outcome_key, outcome in outcomes.items():
                kept.setdefault(outcome_key, outcome)


def _outcome_key(outcome: _Outcome) -> tuple[Any, ...]:
    """What tells outcomes apart: call sites alike add one outcome, not one per call."""
    return (
        tuple((name, t.SerializeToString(deterministic=True)) for name, t in outcome.outputs),
        tuple((check, error.rule, str(error)) for check, error in outcome.problems),
    )


class _NoScope:
    """A call site that types nothing and knows no values (a function nobody calls)."""

    def type_proto(self, name: str) -> TypeProto | None:
        return None

    def value_of(self, name: str) -> Items | None:
        return None


def _infer_uncalled(
    inferred: _Inferred,
    base: ModelProto,
    holders: set[_FunctionKey],
    params: DimParams,
    calls: _Calls,
) -> None:
    """Infer the body of each function no call reached, from a call with untyped inputs and
    only the attributes' defaults. Nodes that refer to other attributes are left out."""
    for function in base.functions:
        key = _function_key(function)
        if key not in holders or key in inferred.functions:
            continue
        call = helper.make_node(
            function.name,
            list(function.input),
            list(function.output),
            domain=function.domain,
            overload=function.overload,
        )
        copy_attributes(call, function_default_attributes(function))
        call_model = _with_functions(_call_model(base, call, function, _NoScope()), base)
        found = _infer_call(call_model, function, params, calls)
        if found is None:
            continue
        defaults = function_defaults(function).keys()
        found.own = [
            (site, outcome)
            for site, outcome in found.own
            if links_only(graph_at(function, site.where).node[site.position], defaults)
        ]
        _add_call(inferred, function, found, nested=False)


def _write_functions(inferred: _Inferred) -> None:
    """Give each function's value_info the types on which all its call sites agree."""
    for function in inferred.model.functions:
        places = inferred.functions.get(_function_key(function), {})
        for (where, _), outcomes in places.items():
            target = graph_at(function, where)
            declared = declared_types(target, inputs=False, untyped=True)
            _write_graph(target, dict(_merge(list(outcomes.values())).outputs), declared)


def _call_model(
    base: ModelProto, call: NodeProto, function: FunctionProto, scope: _Overlay | _NoScope
) -> ModelProto:
    """A model of the single call ``call``, its inputs typed (or constant) as in ``scope``,
    without the model's functions (:func:`_with_functions` adds them).

    Its values are named by position (``call_in0``, ``call_out0``, ...) and the call keeps
    only what its inference depends on (operator, attributes): calls alike have the same
    model whatever their names.
    """
    opsets = {o.domain: o.version for o in base.opset_import}
    opsets.update({o.domain: o.version for o in function.opset_import})
    graph = GraphProto(name=f"call_{function.name}")
    node = graph.node.add()
    node.op_type, node.domain, node.overload = call.op_type, call.domain, call.overload
    copy_attributes(node, call)
    positions: dict[str, str] = {}
    for name in call.input:
        if name and name not in positions:
            positions[name] = position = f"call_in{len(positions)}"
            type_proto = scope.type_proto(name)
            value = None if type_proto is None else scope.value_of(name)
            tensor = None if type_proto is None else _tensor(value, type_proto, position)
            if tensor is not None:
                add_initializers(graph, [tensor])
                continue
            entry = graph.input.add()
            entry.name = position
            if type_proto is not None:
                entry.type.CopyFrom(type_proto)
        node.input.append(positions.get(name, ""))
    node.output.extend(_call_output(k) if name else "" for k, name in enumerate(call.output))
    graph.output.extend(ValueInfoProto(name=n) for n in node.output if n)
    return helper.make_model(
        graph,
        ir_version=base.ir_version,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
    )


def _call_output(k: int) -> str:
    """The name of a call's output ``k`` in its model (:func:`_call_model`)."""
    return f"call_out{k}"


def _with_functions(call_model: ModelProto, base: ModelProto) -> ModelProto:
    """``call_model`` with the functions of ``base`` that its opsets allow."""
    opsets = {o.domain: o.version for o in call_model.opset_import}
    call_model.functions.extend(
        f
        for f in base.functions
        if all(opsets.get(o.domain, o.version) == o.version for o in f.opset_import)
    )
    return call_model


def _split_holders(functions: dict[_FunctionKey, FunctionProto]) -> set[_FunctionKey]:
    """The functions whose bodies hold a Split or SplitToSequence, directly or by a call."""
    calls = {key: set(_called(function)) for key, function in functions.items()}
    holders = {key for key, function in functions.items() if _holds_split(function)}
    grown = True
    while grown:
        grown = False
        for key, called in calls.items():
            if key not in holders and called & holders:
                holders.add(key)
                grown = True
    return holders


def _function_nodes(function: FunctionProto) -> Iterator[NodeProto]:
    """The nodes of a function body and of its subgraphs."""
    return (node for proto in graphs_below(function) for node in proto.node)


def _holds_split(function: FunctionProto) -> bool:
    return any(is_split_node(node) for node in _function_nodes(function))


def _called(function: FunctionProto) -> Iterator[_FunctionKey]:
    for node in _function_nodes(function):
        yield node.domain, node.op_type, node.overload


def _merge(outcomes: Sequence[_Outcome]) -> _Outcome:
    """The outcome all call sites agree on: the first problems, else the types they share."""
    for outcome in outcomes:
        if outcome.problems:
            return outcome
    merged = []
    for name, first in outcomes[0].outputs:
        types = [dict(o.outputs).get(name) for o in outcomes]
        common: TypeProto | None = first
        for other in types[1:]:
            common = None if other is None or common is None else union_type(common, other)
        if common is not None:
            merged.append((name, common))
    return _Outcome(tuple(merged))


# --- one Split or SplitToSequence node -----------------------------------------------------


def _infer_split(node: NodeProto, index: int, scope: _Overlay) -> _Outcome:
    """Infer one node's outputs from its inputs' types and the values followed, or find
    every check it fails: those of its site (:meth:`SplitSite.checked`), then its sizes,
    with sympy where the axis or the sizes are symbolic."""
    site, found = SplitSite.checked(scope, index, node)
    if site is None:
        return _Outcome(problems=found)
    problems = list(found)
    spec, axis = site.spec, site.axis
    elem, dims = tensor_parts(scope.type_proto(node.input[0]))
    value = None if spec.split_input is None else scope.value_of(spec.split_input)
    params = scope.params
    dim = _axis_dim(dims, None if dims is None else axis, params)
    sizes: tuple[Any, ...] | None = None
    length: Any = None  # the length all of SplitToSequence's parts share, when known
    if spec.split_input is None or (value is not None and value.known):
        given = None if value is None else value.host()
        try:
            sizes, length = _part_sizes(spec, dim, given)
        except SplitError as error:
            problems.append(("sizes", error))
    if problems or not elem:
        return _Outcome(problems=tuple(problems))
    shape = None if dims is None else [dim_of(d) for d in dims]
    at = None if dims is None else axis
    if spec.op == "Split":
        return _Outcome(tuple(_split_types(spec, elem, shape, at, sizes, params)))
    known = None if value is None or not value.known else value.host()
    drop = parts_drop_axis(spec, known, site.split_rank)
    sequence = _sequence_type(spec, elem, shape, at, length, params, drop)
    return _Outcome(((spec.outputs[0], sequence),))


def _part_sizes(spec: SplitNode, dim: Any, given: Any) -> tuple[tuple[Any, ...] | None, Any]:
    """The planner's sizes: ints for an int dim and concrete sizes, sympy expressions
    otherwise (``None`` when the number of SplitToSequence's parts depends on a symbol); and
    for SplitToSequence the length all parts share (``None`` when they may differ)."""
    concrete = isinstance(dim, int) and _is_concrete(given)
    arithmetic: DimArithmetic[Any] = INT_ARITHMETIC if concrete else SYMBOLIC
    if spec.op == "Split":
        return spec.part_sizes(dim, given, arithmetic=arithmetic), None
    split = host_sizes(given, spec.op, spec.rule.since_version)
    parts = plan_sequence_parts(dim, split, spec.rule, arithmetic)
    return parts.sizes, parts.part_length


def _is_concrete(given: Any) -> bool:
    """Whether host values (nested lists or one item) hold plain numbers only."""
    if isinstance(given, list):
        return all(_is_concrete(item) for item in given)
    return given is None or isinstance(given, (int, float))


def _node_key(node: NodeProto, graph: _Overlay) -> tuple[Any, ...]:
    """What a node's outcome depends on, but the names of its values (and subgraphs, which
    a node with subgraphs gets no key for): its attributes, which inputs and outputs it
    lists, and the types and values of its inputs."""
    types = [graph.type_proto(name) if name else None for name in node.input]
    values = [graph.value_of(name) if name else None for name in node.input]
    return (
        node.op_type,
        node.domain,
        graph.opset,
        attribute_key(node),
        tuple(bool(name) for name in node.input),
        tuple(bool(name) for name in node.output),
        tuple(b"" if t is None else t.SerializeToString() for t in types),
        tuple(None if v is None else v.key for v in values),
    )


@dataclass
class _Derived:
    """What a node's inputs decide of it: its value, the dims splitops works out, and
    onnx's inference of its outputs (by position; ``None`` until asked)."""

    value: Items | None
    shape: list[Any] | None
    inferred: list[TypeProto | None] | None = None
    #: The type of those dims, by element type.
    typed: dict[int, TypeProto | None] = field(default_factory=dict)


def _with_declarations(
    outcome: _Outcome, node: NodeProto, opset: int, declared: dict[str, TypeProto]
) -> _Outcome:
    """``outcome`` with a problem for each output whose ``declared`` type contradicts it."""
    if outcome.problems:
        return outcome
    problems = []
    for name, type_proto in outcome.outputs:
        given = declared.get(name)
        if given is None:
            continue
        found = list(conflicts(given, type_proto))
        if found:
            error = SplitError(
                f"{opset_rule(node.op_type, opset).name} output {name!r} is declared "
                f"{_type_words(given)}, but its parts make it {_type_words(type_proto)}: "
                f"{'; '.join(found)}.",
                rule=Rule.DECLARED_SHAPE,
            )
            problems.append(("declared", error))
    return replace(outcome, problems=tuple(problems)) if problems else outcome


def _type_words(type_proto: TypeProto) -> str:
    return describe_type(type_proto, in_words=True)


def _split_types(
    spec: SplitNode,
    elem: int,
    shape: list[_Dim] | None,
    axis: int | None,
    sizes: tuple[Any, ...] | None,
    params: DimParams,
) -> Iterator[tuple[str, TypeProto]]:
    # Parts of one size share one type: a node may list a million outputs.
    types: dict[_Dim, TypeProto] = {}
    for i, output in enumerate(spec.outputs):
        if not output:
            continue
        size = None
        if sizes is not None and shape is not None and axis is not None:
            size = _size_dim(sizes[i], params)
        if size not in types:
            dims = None
            if shape is not None and axis is not None:
                dims = [*shape[:axis], size, *shape[axis + 1 :]]
            types[size] = helper.make_tensor_type_proto(elem, dims)
        yield output, types[size]


def _sequence_type(
    spec: SplitNode,
    elem: int,
    shape: list[_Dim] | None,
    axis: int | None,
    length: Any,
    params: DimParams,
    drop: bool | None,
) -> TypeProto:
    """The sequence's type; its items' rank is unknown where whether they lose the axis
    (``drop``) is known only at run time."""
    dims = None
    if shape is not None and axis is not None and drop is not None:
        if drop:
            dims = [*shape[:axis], *shape[axis + 1 :]]
        else:
            size = None if length is None else _size_dim(length, params)
            dims = [*shape[:axis], size, *shape[axis + 1 :]]
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, dims))


def _axis_dim(dims: list[Any] | None, axis: int | None, params: DimParams) -> Any:
    """The length of the split axis: an int, a sympy expression (a name, or an expression
    this inference wrote), or ``_unknown()``."""
    if dims is None or axis is None:
        return _unknown()
    dim = dim_of(dims[axis])
    if dim is None:
        return _unknown()
    return dim if isinstance(dim, int) else params.read(dim)


def _size_dim(size: Any, params: DimParams) -> _Dim:
    """A size as a dim; one that involves an unknown dim is unknown (see
    :meth:`DimParams.write`)."""
    if size is None or isinstance(size, int):
        return size
    return params.write(size)


# --- names and text -------------------------------------------------------------------


def _record(site: _Site, outcome: _Outcome, root: FunctionId | None) -> SplitNodeInference:
    return SplitNodeInference(
        site.label,
        site.node,
        site.opset or 0,
        outcome.outputs,
        outcome.problems,
        site.in_branch,
        (root, site.where),
        site.position,
    )


def _is_branch(node: NodeProto) -> bool:
    """Whether ``node`` is an If, whose graphs are branches that may never run: the
    problems found in them only warn."""
    return node.op_type == "If" and node.domain in DEFAULT_DOMAINS


def _function_key(function: FunctionProto) -> _FunctionKey:
    return function.domain, function.name, function.overload
