"""The outcome of one Split or SplitToSequence node: its outputs' types from the planner, or
every check it fails; where it lies; and what one pass over a model finds of them all.

The sizes of the parts come from the planner, through :meth:`SplitNode.part_sizes`, the
same call that :func:`~splitops.run_node` makes, so an inferred shape is the executed shape
by construction. A dim that is a symbol ``N`` gives sizes that are expressions in ``N``
(:mod:`~splitops.onnx.inference._symbolic`): the planner's own formula, evaluated over sympy.

SplitToSequence's output is ``seq(tensor(T))``: the element shape keeps the other dims;
its axis dim is the common part length when all parts have the same one (1 when the chunks
are of length 1), absent with ``keepdims=0`` and the default split, unknown otherwise (e.g.
a scalar ``split`` on a symbolic dim, where the last part may be shorter), and the items'
rank is unknown where a 0-d split given at run time decides whether they keep the axis.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, NamedTuple, Protocol

from onnx import ModelProto, NodeProto

from ...arrays import host_sizes
from ...core import (
    INT_ARITHMETIC,
    DimArithmetic,
    Rule,
    SplitError,
    opset_rule,
    plan_sequence_parts,
)
from ..model import (
    Dim,
    FunctionId,
    Node,
    Scope,
    ScopeKey,
    ScopePlace,
    SequenceType,
    SiteScope,
    SplitNode,
    SplitSite,
    TensorType,
    ValueType,
)
from ..model.describe import describe_type
from ..model.protobuf import parts_drop_axis
from ._symbolic import SYMBOLIC, DimParams, sympy  # sympy: an optional extra
from ._values import Items

__all__ = [
    "Inferred",
    "Outcome",
    "PlaceOutcomes",
    "Site",
    "SplitScope",
    "infer_split",
    "merge",
    "outcome_key",
    "size_dim",
    "with_declarations",
]


@cache
def _unknown() -> Any:
    """A dim whose value nobody knows: sizes that involve it are written as unknown dims."""
    return sympy.Dummy("unknown", integer=True, nonnegative=True)


class SplitScope(SiteScope, Protocol):
    """What a Split's outcome reads of the scope it lies in: what its site reads, the value
    followed for a name, the type the model declares for one, and how dim names read."""

    @property
    def params(self) -> DimParams: ...

    def value_of(self, name: str) -> Items | None: ...

    def declared(self, name: str) -> ValueType | None: ...


@dataclass(frozen=True)
class Outcome:
    """What inference finds for one node: its outputs' types by name (none where it is
    invalid, or its input's type unknown), or each check it fails as (check, error)."""

    outputs: tuple[tuple[str, ValueType], ...] = ()
    problems: tuple[tuple[str, SplitError], ...] = ()


def outcome_key(outcome: Outcome) -> tuple[Any, ...]:
    """What tells outcomes apart: call sites alike add one outcome, not one per call."""
    return (
        outcome.outputs,
        tuple((check, error.rule, str(error)) for check, error in outcome.problems),
    )


class Site(NamedTuple):
    """A Split or SplitToSequence node, where it lies: what a record of it needs once the
    view that read it is gone (a tuple: a model of Ifs 14 deep has 16,384 of them)."""

    #: The label of its scope (see :class:`~splitops.onnx.model.Scope`).
    label: str
    #: Its scope's identity, and its index there.
    key: ScopeKey
    position: int
    node: NodeProto
    op_type: str
    opset: int | None
    #: Whether it lies inside a branch of an If.
    in_branch: bool

    @classmethod
    def of(cls, node: Node, in_branch: bool, scope: Scope | None = None) -> Site:
        """The site of ``node``, of ``scope`` (its own, where not given)."""
        scope = node.scope if scope is None else scope
        label, key, opset = scope.label, scope.key, scope.opset
        return cls(label, key, node.index, node.proto, node.op_type, opset, in_branch)

    @classmethod
    def at(cls, place: ScopePlace, index: int) -> Site:
        """The site of the node at ``index`` of the scope at ``place``, whose scope need not
        be made."""
        return cls(
            place.label,
            place.key,
            index,
            place.node_proto(index),
            place.op_type(index),
            place.opset,
            place.in_branch,
        )

    @property
    def where(self) -> tuple[Any, ...]:
        """The steps down to its scope from its function's body (or the main graph)."""
        return self.key[1]

    @property
    def output_names(self) -> tuple[str, ...]:
        return Node.alone(self.node).output_names


#: Per place in a function's body (the steps down to its scope, and its index there), the
#: outcomes its call sites met, each once (by :func:`outcome_key`), in the order first met.
PlaceOutcomes = dict[tuple[tuple[Any, ...], int], dict[tuple[Any, ...], Outcome]]


@dataclass
class Inferred:
    """What one pass over a model found."""

    #: The model onnx's pass typed, with splitops' types where written.
    model: ModelProto
    #: The model's own Split and SplitToSequence nodes (main graph and subgraphs), in the
    #: order of :attr:`ModelView.scopes <splitops.onnx.model.ModelView.scopes>`.
    own: list[tuple[Site, Outcome]]
    #: The types of the main graph's outputs, by name.
    outputs: dict[str, ValueType] = field(default_factory=dict)
    #: Per local function, per place in its body: the outcome at each call site.
    functions: dict[FunctionId, PlaceOutcomes] = field(default_factory=dict)


def merge(outcomes: Sequence[Outcome]) -> Outcome:
    """The outcome all call sites agree on: the first problems, else the types they share."""
    for outcome in outcomes:
        if outcome.problems:
            return outcome
    merged = []
    for name, first in outcomes[0].outputs:
        common: ValueType | None = first
        for other in outcomes[1:]:
            found = dict(other.outputs).get(name)
            if found is None or common is None:
                common = None
            elif found != common:
                common = common.union(found)
        if common is not None:
            merged.append((name, common))
    return Outcome(tuple(merged))


def infer_split(node: Node, scope: SplitScope) -> Outcome:
    """Infer one node's outputs from its inputs' types and the values followed, or find
    every check it fails: those of its site (:meth:`SplitSite.checked`), then its sizes,
    with sympy where the axis or the sizes are symbolic."""
    site, found = SplitSite.checked(scope, node.index, node.proto)
    if site is None:
        return Outcome(problems=found)
    problems = list(found)
    spec, axis = site.spec, site.axis
    data = scope.type_of(site.data)
    elem, dims = (data.element, data.dims) if isinstance(data, TensorType) else (0, None)
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
        return Outcome(problems=tuple(problems))
    shape = None if dims is None else list(dims)
    at = None if dims is None else axis
    if spec.op == "Split":
        return Outcome(tuple(_split_types(spec, elem, shape, at, sizes, params)))
    known = None if value is None or not value.known else value.host()
    drop = parts_drop_axis(spec, known, site.split_rank)
    sequence = _sequence_type(elem, shape, at, length, params, drop)
    return Outcome(((spec.outputs[0], sequence),))


def with_declarations(outcome: Outcome, node: Node, scope: SplitScope) -> Outcome:
    """``outcome`` with a problem for each output whose type the model declares contradicts
    it."""
    if outcome.problems:
        return outcome
    problems = []
    for name, found in outcome.outputs:
        given = scope.declared(name)
        if given is None:
            continue
        contradictions = list(given.conflicts(found))
        if contradictions:
            error = SplitError(
                f"{opset_rule(node.op_type, scope.opset or 0).name} output {name!r} is declared "
                f"{_type_words(given)}, but its parts make it {_type_words(found)}: "
                f"{'; '.join(contradictions)}.",
                rule=Rule.DECLARED_SHAPE,
            )
            problems.append(("declared", error))
    return replace(outcome, problems=tuple(problems)) if problems else outcome


def _type_words(found: ValueType) -> str:
    return describe_type(found, in_words=True)


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


def _split_types(
    spec: SplitNode,
    elem: int,
    shape: list[Dim] | None,
    axis: int | None,
    sizes: tuple[Any, ...] | None,
    params: DimParams,
) -> Iterator[tuple[str, ValueType]]:
    # Parts of one size share one type: a node may list a million outputs.
    types: dict[Dim, ValueType] = {}
    for i, output in enumerate(spec.outputs):
        if not output:
            continue
        size = None
        if sizes is not None and shape is not None and axis is not None:
            size = size_dim(sizes[i], params)
        if size not in types:
            dims = None
            if shape is not None and axis is not None:
                dims = (*shape[:axis], size, *shape[axis + 1 :])
            types[size] = TensorType(elem, dims)
        yield output, types[size]


def _sequence_type(
    elem: int,
    shape: list[Dim] | None,
    axis: int | None,
    length: Any,
    params: DimParams,
    drop: bool | None,
) -> ValueType:
    """The sequence's type; its items' rank is unknown where whether they lose the axis
    (``drop``) is known only at run time."""
    dims = None
    if shape is not None and axis is not None and drop is not None:
        if drop:
            dims = (*shape[:axis], *shape[axis + 1 :])
        else:
            size = None if length is None else size_dim(length, params)
            dims = (*shape[:axis], size, *shape[axis + 1 :])
    return SequenceType(TensorType(elem, dims))


def _axis_dim(dims: Sequence[Dim] | None, axis: int | None, params: DimParams) -> Any:
    """The length of the split axis: an int, a sympy expression (a name, or an expression
    this inference wrote), or ``_unknown()``."""
    if dims is None or axis is None:
        return _unknown()
    dim = dims[axis]
    if dim is None:
        return _unknown()
    return dim if isinstance(dim, int) else params.read(dim)


def size_dim(size: Any, params: DimParams) -> Dim:
    """A size as a dim; one that involves an unknown dim is unknown (see
    :meth:`DimParams.write`)."""
    if size is None or isinstance(size, int):
        return size
    return params.write(size)
