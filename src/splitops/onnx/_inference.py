"""Shape and type inference for Split and SplitToSequence that agrees with execution.

The sizes of the parts come from the planner, through :meth:`SplitNode.part_sizes`, the
same call that :func:`~splitops.run_node` makes, so an inferred shape is the executed shape
by construction. A dim that is a symbol ``N`` gives sizes that are expressions in ``N``
(:mod:`splitops.symbolic_dims`): the planner's own formula, evaluated over sympy.

How the results meet ``onnx.shape_inference`` (the scheme):

1. A working copy *masks* every call of a local function that holds a Split, and every
   Split and SplitToSequence node in which splitops finds a problem from the declared types
   alone: their domain is moved to ``splitops.masked.<domain>``, which onnx does not know,
   so onnx never infers them (its own Split inference writes wrong shapes for some invalid
   nodes and aborts the process on others). Stale entries for the outputs of every Split
   node, and any ``value_info`` with a negative dim (never a valid shape), are dropped.
2. Round: a fresh copy of the model, with the masked nodes masked, gets the types splitops
   knows so far for their outputs written into its ``value_info``; onnx infers every other
   node; splitops then reads the input types of all its nodes from onnx's result and infers
   their outputs. An unmasked node whose outputs onnx inferred otherwise than splitops does
   (symbolic sizes, which onnx writes as ``unk__`` symbols; a node invalid for these types)
   is masked from the next round on.
3. Rounds repeat until no node newly departs and the types splitops infers for the masked
   nodes stop changing: one round where onnx agrees on every node (all static sizes), else
   up to one round per link of a chain of masked Splits. Each round starts from the model,
   so no type that onnx inferred from an earlier, less complete round can linger.
4. A call of a local function is inferred by inlining that one call
   (``onnx.inliner.inline_selected_functions``) into a small model and running the same
   scheme on it; its body's Split nodes are thereby inferred per call site, and the
   function's ``value_info`` receives the types on which all call sites agree.

What is written: the element type and shape of each output of each node, in the graph's
``value_info`` (or in a graph output that lacks a shape), in the main graph, subgraphs and
local functions. SplitToSequence's output is ``seq(tensor(T))``: the element shape keeps
the other dims; its axis dim is the common part length when all parts have the same one
(1 when the chunks are of length 1), absent with ``keepdims=0`` and no ``split``, and
unknown otherwise (e.g. a scalar ``split`` on a symbolic dim, where the last part may be
shorter).

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

import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, cast

import numpy as np
import onnx
import onnx.inliner
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)

from ..arrays import host_sizes
from ..core import (
    SplitError,
    check_element_type,
    check_split_input_type,
    drops_axis,
    normalize_axis,
    read_sizes,
    sequence_part_length,
    sequence_part_sizes,
)
from ._graphs import (
    Body,
    Step,
    constant_sources,
    constant_value,
    declared_types,
    default_opset,
    function_body,
    graph_at,
    iter_nodes,
    main_body,
    with_subgraphs,
)
from ._node import DEFAULT_DOMAINS, SplitNode, is_split_node, node_error, node_label, read_node
from ._symbolic import SYMBOLIC, format_dim, parse_dim, sympy  # sympy: an optional extra
from ._types import dim_of, element_of_code, has_type, shape_text, tensor_parts, type_text

__all__ = [
    "SplitInferenceWarning",
    "SplitNodeInference",
    "SplitOutputDescription",
    "describe_split_outputs",
    "infer_model_and_nodes",
    "infer_shapes",
    "infer_split_nodes",
]

_MASK = "splitops.masked."
#: A dim whose value nobody knows: sizes that involve it are written as unknown dims.
_UNKNOWN = sympy.Dummy("unknown", integer=True, nonnegative=True)

#: Where a graph sits below the main graph or a function body.
_Where = tuple[Step, ...]
_FunctionKey = tuple[str, str, str]
_Dim = int | str | None


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
    #: "split-dtype", "axis" or "sizes"; the error does not name the node.
    problems: tuple[tuple[str, SplitError], ...] = ()
    #: Whether the node lies inside a branch of an If, which may never run: a branch for
    #: other input shapes may hold nodes that are invalid for these ones.
    in_branch: bool = False

    @property
    def label(self) -> str:
        """The node's name, or its first output's name when it has none."""
        return node_label(self.node)

    @property
    def error(self) -> SplitError | None:
        """The first problem, as the SplitError that names the node, or ``None``."""
        return node_error(self.node, self.problems[0][1]) if self.problems else None


class SplitOutputDescription(NamedTuple):
    """One output of a Split or SplitToSequence node, as text for people."""

    graph: str
    node: str
    output: str
    #: "tensor(float)", "seq(tensor(int64))" or "unknown".
    type: str
    #: "[2, N - 3*ceiling(N/4)]", "[?, 3]" (? is an unknown dim) or "unknown".
    shape: str
    #: Why the node is invalid, or "".
    error: str


def infer_shapes(model: ModelProto, *, strict: bool = True) -> ModelProto:
    """A copy of ``model`` with the types and shapes of all values, Split's exact.

    Every other node is inferred by ``onnx.shape_inference`` as usual. An invalid Split or
    SplitToSequence node raises SplitError (naming the graph and node), or with
    ``strict=False`` warns with :class:`SplitInferenceWarning` and leaves its outputs
    without shapes. An invalid node inside a branch of an If only warns, even when strict:
    the branch may be one that these inputs never take.
    """
    inferred = _infer_model(model)
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


def infer_split_nodes(model: ModelProto) -> list[SplitNodeInference]:
    """What inference finds for every Split and SplitToSequence node: main graph,
    subgraphs, then local functions (types on which all call sites agree, and the first
    error any call site meets)."""
    return _infer_model(model).records


def infer_model_and_nodes(model: ModelProto) -> tuple[ModelProto, list[SplitNodeInference]]:
    """:func:`infer_shapes` with ``strict=False`` (without its warnings) and
    :func:`infer_split_nodes`, from one inference: the inferred copy of ``model`` and what
    was found for every node."""
    inferred = _infer_model(model)
    return inferred.model, inferred.records


def describe_split_outputs(model: ModelProto) -> list[SplitOutputDescription]:
    """Every output of every Split and SplitToSequence node with its inferred type and shape.

    An invalid node's outputs come with the reason in ``error`` (nothing is raised).
    """
    rows = []
    for record in infer_split_nodes(model):
        types = dict(record.outputs)
        for output in record.node.output:
            if not output:
                continue
            type_proto = types.get(output)
            rows.append(
                SplitOutputDescription(
                    record.graph,
                    record.label,
                    output,
                    type_text(type_proto) or "unknown",
                    shape_text(type_proto) or "unknown",
                    "" if record.error is None else str(record.error),
                )
            )
    return rows


# --- the scheme -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Site:
    """A masked node: a Split or SplitToSequence, or a call of a function that holds one."""

    where: _Where
    index: int
    node: NodeProto
    function: FunctionProto | None = None


@dataclass(frozen=True)
class _Outcome:
    outputs: tuple[tuple[str, TypeProto], ...] = ()
    problems: tuple[tuple[str, SplitError], ...] = ()
    #: For a call: what inference found inside it.
    call: _Inferred | None = None

    def same(self, other: _Outcome) -> bool:
        return _outputs_key(self.outputs) == _outputs_key(other.outputs) and [
            str(e) for _, e in self.problems
        ] == [str(e) for _, e in other.problems]


_PlaceOutcomes = dict[tuple[_Where, int], list[_Outcome]]


@dataclass
class _Inferred:
    model: ModelProto
    #: The model's own Split and SplitToSequence nodes (main graph and subgraphs).
    own: list[tuple[_Site, _Outcome]]
    #: Per local function, per place in its body: the outcome at each call site.
    functions: dict[_FunctionKey, _PlaceOutcomes] = field(default_factory=dict)

    @property
    def records(self) -> list[SplitNodeInference]:
        main = main_body(self.model)
        bodies = {body.path: body for body in with_subgraphs(main)}
        found = [_record(bodies[site.where], site.index, outcome) for site, outcome in self.own]
        for function in self.model.functions:
            places = self.functions.get(_function_key(function), {})
            bodies = {
                body.path: body for body in with_subgraphs(function_body(function, main.opset))
            }
            for (where, index), outcomes in sorted(places.items()):
                found.append(_record(bodies[where], index, _merge(outcomes)))
        return found


def _infer_model(model: ModelProto, *, top: bool = True) -> _Inferred:
    functions = {_function_key(f): f for f in model.functions}
    holders = _split_holders(functions)
    base = ModelProto()
    base.CopyFrom(model)
    sites = list(_sites(base, holders, functions))
    _drop_stale(base, sites)
    opset = default_opset(model.opset_import) or 0
    calls: dict[bytes, _Inferred | None] = {}
    masked = _first_masked(base, sites, opset)
    outcomes = [_Outcome() for _ in sites]
    memo: dict[tuple[int, tuple[bytes, ...]], _Outcome] = {}
    for _ in range(2 * len(sites) + 2):
        work = ModelProto()
        work.CopyFrom(base)
        _mask(work, [sites[i] for i in masked])
        _write_outcomes(work.graph, [sites[i] for i in masked], [outcomes[i] for i in masked])
        work = onnx.shape_inference.infer_shapes(work, data_prop=True)
        scopes = _scopes(work)
        fresh = [
            _remembered(memo, i, work, site, scopes[site.where], opset, calls)
            for i, site in enumerate(sites)
        ]
        departed = {
            i
            for i, site in enumerate(sites)
            if i not in masked and not _onnx_agrees(fresh[i], site, scopes[site.where])
        }
        settled = not departed and all(fresh[i].same(outcomes[i]) for i in masked)
        outcomes = fresh
        masked |= departed
        if settled:
            break
    _unmask(work)
    inferred = _Inferred(work, [])
    for site, outcome in zip(sites, outcomes, strict=True):
        if site.function is None:
            inferred.own.append((site, outcome))
        elif outcome.call is not None:
            _add_call(inferred, site.function, outcome.call, nested=True)
    if top:
        _infer_uncalled(inferred, work, holders)
        _write_functions(inferred)
    return inferred


def _first_masked(model: ModelProto, sites: Sequence[_Site], opset: int) -> set[int]:
    """The sites masked from the first round on: every call of a function that holds a Split,
    and every Split or SplitToSequence in which splitops finds a problem from the declared
    types alone.

    The other Split nodes are left to onnx's own inference for as long as it infers them as
    splitops does: a model whose Splits all have static sizes then settles in one round
    instead of one round per link of a chain of Splits. onnx's own Split inference aborts
    the process on some invalid nodes (Split-18 listing more outputs than ``num_outputs``),
    which is why a node splitops finds a problem with never reaches it.
    """
    declared = _scopes(model)
    return {
        i
        for i, site in enumerate(sites)
        if site.function is not None
        or _infer_split(site.node, opset, declared[site.where]).problems
    }


def _onnx_agrees(outcome: _Outcome, site: _Site, scope: _Scope) -> bool:
    """Whether onnx inferred the outputs of an unmasked site exactly as splitops does."""
    if outcome.problems:
        return False
    found = tuple((name, scope.type_of(name)) for name, _ in outcome.outputs)
    if any(type_proto is None for _, type_proto in found):
        return False
    written = [name for name in site.node.output if name]
    return [name for name, _ in outcome.outputs] == written and _outputs_key(
        outcome.outputs
    ) == _outputs_key(cast("tuple[tuple[str, TypeProto], ...]", found))


def _remembered(
    memo: dict[tuple[int, tuple[bytes, ...]], _Outcome],
    index: int,
    work: ModelProto,
    site: _Site,
    scope: _Scope,
    opset: int,
    calls: dict[bytes, _Inferred | None],
) -> _Outcome:
    """:func:`_infer_site`, inferred once per site and input types: a round that changes
    nothing upstream of a node finds the types it found before (symbolic sizes cost sympy
    time)."""
    if site.function is not None:
        return _infer_site(work, site, scope, opset, calls)
    types = (scope.type_of(name) for name in site.node.input)
    key = (
        index,
        tuple(b"" if t is None else t.SerializeToString(deterministic=True) for t in types),
    )
    if key not in memo:
        memo[key] = _infer_site(work, site, scope, opset, calls)
    return memo[key]


def _infer_site(
    work: ModelProto, site: _Site, scope: _Scope, opset: int, calls: dict[bytes, _Inferred | None]
) -> _Outcome:
    if site.function is None:
        return _infer_split(site.node, opset, scope)
    call_model = _call_model(work, site.node, site.function, scope)
    key = call_model.SerializeToString(deterministic=True)
    if key not in calls:
        calls[key] = _infer_call(call_model, site.function)
    inferred = calls[key]
    if inferred is None:
        return _Outcome()
    found = {v.name: v.type for v in inferred.model.graph.output if has_type(v.type)}
    return _Outcome(tuple((n, found[n]) for n in site.node.output if n in found), call=inferred)


def _infer_call(call_model: ModelProto, function: FunctionProto) -> _Inferred | None:
    """The inference of one inlined call, or ``None`` where onnx cannot inline or infer it."""
    try:
        inlined = onnx.inliner.inline_selected_functions(
            call_model, [(function.domain, function.name)]
        )
        if len(inlined.graph.node) != len(function.node):
            return None
        return _infer_model(inlined, top=False)
    except (RuntimeError, ValueError, onnx.checker.ValidationError):
        return None


def _add_call(
    inferred: _Inferred, function: FunctionProto, call: _Inferred, *, nested: bool
) -> None:
    """Add what inference found inside one call to the outcomes of the function's body."""
    found = inferred.functions.setdefault(_function_key(function), {})
    for site, outcome in call.own:
        # The inliner renamed the values; a node keeps its place in the body.
        node = graph_at(function, site.where).node[site.index]
        names = dict(zip(site.node.output, node.output, strict=True))
        outputs = tuple((names[name], t) for name, t in outcome.outputs)
        found.setdefault((site.where, site.index), []).append(replace(outcome, outputs=outputs))
    if not nested:
        return
    for key, places in call.functions.items():
        target = inferred.functions.setdefault(key, {})
        for place, outcomes in places.items():
            target.setdefault(place, []).extend(outcomes)


def _infer_uncalled(inferred: _Inferred, work: ModelProto, holders: set[_FunctionKey]) -> None:
    """Infer the body of each function no call reached, from a call with untyped inputs and
    only the attributes' defaults. Nodes that refer to other attributes are left out."""
    for function in work.functions:
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
        call.attribute.extend(function.attribute_proto)
        found = _infer_call(_call_model(work, call, function, _Scope({}, {})), function)
        if found is None:
            continue
        defaults = {a.name for a in function.attribute_proto}
        found.own = [
            (site, outcome)
            for site, outcome in found.own
            if all(
                a.ref_attr_name in ("", *defaults)
                for a in graph_at(function, site.where).node[site.index].attribute
            )
        ]
        _add_call(inferred, function, found, nested=False)


def _write_functions(inferred: _Inferred) -> None:
    """Give each function's value_info the types on which all its call sites agree."""
    for function in inferred.model.functions:
        places = inferred.functions.get(_function_key(function), {})
        grouped: dict[_Where, list[tuple[str, TypeProto]]] = {}
        for (where, _), outcomes in places.items():
            grouped.setdefault(where, []).extend(_merge(outcomes).outputs)
        for where, outputs in grouped.items():
            _write(graph_at(function, where), outputs)


def _call_model(
    work: ModelProto, call: NodeProto, function: FunctionProto, scope: _Scope
) -> ModelProto:
    """A model of the single call ``call``, its inputs typed (or constant) as in ``scope``."""
    opsets = {o.domain: o.version for o in work.opset_import if not o.domain.startswith(_MASK)}
    opsets.update({o.domain: o.version for o in function.opset_import})
    graph = GraphProto(name=f"call_{function.name}")
    node = graph.node.add()
    node.CopyFrom(call)
    node.domain = node.domain.removeprefix(_MASK)
    for name in dict.fromkeys(n for n in call.input if n):
        value = scope.constant(name)
        if value is not None:
            graph.initializer.append(numpy_helper.from_array(value, name))
            continue
        entry = graph.input.add()
        entry.name = name
        type_proto = scope.type_of(name)
        if type_proto is not None:
            entry.type.CopyFrom(type_proto)
    graph.output.extend(ValueInfoProto(name=n) for n in call.output if n)
    compatible = [
        f
        for f in work.functions
        if all(opsets.get(o.domain, o.version) == o.version for o in f.opset_import)
    ]
    return helper.make_model(
        graph,
        ir_version=work.ir_version,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
        functions=compatible,
    )


# --- one node -------------------------------------------------------------------------


def _infer_split(node: NodeProto, opset: int, scope: _Scope) -> _Outcome:
    """Infer one node's outputs from its inputs' types, or find every check it fails.

    A node that cannot be read, whose split input has the wrong type, or whose axis is out
    of range, is checked no further; a wrong element type of the input does not stop the
    checks of the split, the axis and the sizes.
    """
    try:
        spec = read_node(node, opset)
    except SplitError as error:
        # read_node names the node; the record does that again where it is needed.
        cause = error.__cause__
        return _Outcome(problems=(("schema", cause if isinstance(cause, SplitError) else error),))
    rule = spec.rule
    problems: list[tuple[str, SplitError]] = []
    elem, dims = tensor_parts(scope.type_of(node.input[0]))
    values = None if spec.split_input is None else scope.constant(spec.split_input)
    try:
        if elem:
            check_element_type(element_of_code(elem), rule)
    except SplitError as error:
        problems.append(("dtype", error))
    try:
        split_elem, _ = tensor_parts(scope.type_of(spec.split_input or ""))
        if split_elem and (elem or rule.split_input_types is not None):
            input_element = element_of_code(elem) if elem else None
            check_split_input_type(element_of_code(split_elem), input_element, rule)
    except SplitError as error:
        # Execution stops here too: the values of a split of the wrong type are not read.
        return _Outcome(problems=(*problems, ("split-dtype", error)))
    try:
        axis = None if dims is None else normalize_axis(spec.axis, len(dims), spec.rule.name)
    except SplitError as error:
        return _Outcome(problems=(*problems, ("axis", error)))
    dim, named = _axis_dim(dims, axis)
    sizes: tuple[Any, ...] | None = None
    length: Any = None  # the length all of SplitToSequence's parts share, when known
    if spec.split_input is None or values is not None:
        try:
            sizes = _part_sizes(spec, dim, values)
            split = read_sizes(
                host_sizes(values, spec.op, rule.since_version), rule, allow_scalar=True
            )
            length = sequence_part_length(split, sizes)
        except SplitError as error:
            problems.append(("sizes", error))
    if problems or not elem:
        return _Outcome(problems=tuple(problems))
    shape = None if dims is None else [dim_of(d) for d in dims]
    if spec.op == "Split":
        return _Outcome(tuple(_split_types(spec, elem, shape, axis, sizes, named)))
    sequence = _sequence_type(spec, elem, shape, axis, length, named)
    return _Outcome(((spec.outputs[0], sequence),))


def _part_sizes(spec: SplitNode, dim: Any, values: object) -> tuple[Any, ...] | None:
    """The planner's sizes: ints for an int dim, sympy expressions for a symbolic one
    (``None`` when the number of SplitToSequence's parts depends on it)."""
    if isinstance(dim, int):
        return spec.part_sizes(dim, values)
    if spec.op == "Split":
        return spec.part_sizes(dim, values, arithmetic=SYMBOLIC)
    split = read_sizes(
        host_sizes(values, spec.op, spec.rule.since_version), spec.rule, allow_scalar=True
    )
    return sequence_part_sizes(dim, split, spec.rule, SYMBOLIC)


def _split_types(
    spec: SplitNode,
    elem: int,
    shape: list[_Dim] | None,
    axis: int | None,
    sizes: tuple[Any, ...] | None,
    named: dict[Any, str],
) -> Iterator[tuple[str, TypeProto]]:
    for i, output in enumerate(spec.outputs):
        if not output:
            continue
        dims = None
        if shape is not None and axis is not None:
            size = None if sizes is None else _size_dim(sizes[i], named)
            dims = [*shape[:axis], size, *shape[axis + 1 :]]
        yield output, helper.make_tensor_type_proto(elem, dims)


def _sequence_type(
    spec: SplitNode,
    elem: int,
    shape: list[_Dim] | None,
    axis: int | None,
    length: Any,
    named: dict[Any, str],
) -> TypeProto:
    dims = None
    if shape is not None and axis is not None:
        if drops_axis(spec.split_input is not None, spec.keepdims):
            dims = [*shape[:axis], *shape[axis + 1 :]]
        else:
            size = None if length is None else _size_dim(length, named)
            dims = [*shape[:axis], size, *shape[axis + 1 :]]
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, dims))


def _axis_dim(dims: list[Any] | None, axis: int | None) -> tuple[Any, dict[Any, str]]:
    """The length of the split axis: an int, a sympy expression, or ``_UNKNOWN``; and the
    dim_param of an opaque name standing for it."""
    if dims is None or axis is None:
        return _UNKNOWN, {}
    dim = dim_of(dims[axis])
    if dim is None:
        return _UNKNOWN, {}
    if isinstance(dim, int):
        return dim, {}
    expr = parse_dim(dim)
    if expr is None:
        name = sympy.Dummy("name", integer=True, nonnegative=True)
        return name, {name: dim}
    return (int(expr), {}) if isinstance(expr, sympy.Integer) else (expr, {})


def _size_dim(size: Any, named: dict[Any, str]) -> _Dim:
    if isinstance(size, int):
        return size
    if size in named:
        return named[size]
    if any(isinstance(s, sympy.Dummy) for s in size.free_symbols):
        return None
    return format_dim(size)


# --- graphs, scopes and types ---------------------------------------------------------


@dataclass
class _Scope:
    """The types and constant values visible in one graph (and its outer graphs)."""

    types: dict[str, TypeProto]
    constants: dict[str, TensorProto | NodeProto]
    parent: _Scope | None = None

    def type_of(self, name: str) -> TypeProto | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.types:
                return scope.types[name]
            scope = scope.parent
        return None

    def constant(self, name: str) -> np.ndarray[Any, Any] | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.types and name not in scope.constants:
                return None
            if name in scope.constants:
                return constant_value(scope.constants[name])
            scope = scope.parent
        return None


def _scope(graph: GraphProto, parent: _Scope | None) -> _Scope:
    constants = constant_sources(graph, overridable={v.name for v in graph.input})
    return _Scope(declared_types(graph), constants, parent)


def _graphs(model: ModelProto) -> Iterator[tuple[_Where, GraphProto]]:
    """The main graph and every subgraph below it, depth first, each with its place."""
    for body in with_subgraphs(main_body(model)):
        if isinstance(body.proto, GraphProto):  # always, below a graph
            yield body.path, body.proto


def _scopes(model: ModelProto) -> dict[_Where, _Scope]:
    """The scope of each graph of the main graph, inside the scopes of its outer graphs."""
    scopes: dict[_Where, _Scope] = {}
    for where, graph in _graphs(model):
        scopes[where] = _scope(graph, scopes[where[:-1]] if where else None)
    return scopes


def _sites(
    model: ModelProto, holders: set[_FunctionKey], functions: dict[_FunctionKey, FunctionProto]
) -> Iterator[_Site]:
    for where, graph in _graphs(model):
        for index, node in enumerate(graph.node):
            key = (node.domain, node.op_type, node.overload)
            if is_split_node(node):
                yield _Site(where, index, _copy(node))
            elif key in holders:
                yield _Site(where, index, _copy(node), functions[key])


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
    return (node for _, node in iter_nodes(with_subgraphs(function_body(function))))


def _holds_split(function: FunctionProto) -> bool:
    return any(is_split_node(node) for node in _function_nodes(function))


def _called(function: FunctionProto) -> Iterator[_FunctionKey]:
    for node in _function_nodes(function):
        yield node.domain, node.op_type, node.overload


def _drop_stale(model: ModelProto, sites: Sequence[_Site]) -> None:
    """Drop value_info for the masked nodes' outputs, and any with a negative dim."""
    stale = {(site.where, name) for site in sites for name in site.node.output}
    for where, entry_graph in _graphs(model):
        kept = [
            v
            for v in entry_graph.value_info
            if (where, v.name) not in stale and not _has_negative_dim(v.type)
        ]
        if len(kept) != len(entry_graph.value_info):
            del entry_graph.value_info[:]
            entry_graph.value_info.extend(kept)


def _has_negative_dim(type_proto: TypeProto) -> bool:
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return any(
            d.HasField("dim_value") and d.dim_value < 0 for d in type_proto.tensor_type.shape.dim
        )
    if kind == "sequence_type":
        return _has_negative_dim(type_proto.sequence_type.elem_type)
    return False


def _mask(model: ModelProto, sites: Sequence[_Site]) -> None:
    domains = set()
    for site in sites:
        node = graph_at(model.graph, site.where).node[site.index]
        node.domain = _MASK + node.domain
        domains.add(node.domain)
    model.opset_import.extend(helper.make_opsetid(d, 1) for d in sorted(domains))


def _unmask(model: ModelProto) -> None:
    for _, graph in _graphs(model):
        for node in graph.node:
            if node.domain == _MASK:
                node.ClearField("domain")
            elif node.domain.startswith(_MASK):
                node.domain = node.domain.removeprefix(_MASK)
    kept = [o for o in model.opset_import if not o.domain.startswith(_MASK)]
    del model.opset_import[:]
    model.opset_import.extend(kept)


def _write_outcomes(
    graph: GraphProto, sites: Sequence[_Site], outcomes: Sequence[_Outcome]
) -> None:
    grouped: dict[_Where, list[tuple[str, TypeProto]]] = {}
    for site, outcome in zip(sites, outcomes, strict=True):
        grouped.setdefault(site.where, []).extend(outcome.outputs)
    for where, outputs in grouped.items():
        _write(graph_at(graph, where), outputs)


def _write(proto: GraphProto | FunctionProto, outputs: Iterable[tuple[str, TypeProto]]) -> None:
    """Put each type in the graph output of that name when it lacks a shape, else in
    value_info (unless the graph output already has a shape)."""
    declared = {v.name: v for v in proto.output} if isinstance(proto, GraphProto) else {}
    entries = {v.name: v for v in proto.value_info}
    for name, type_proto in outputs:
        if name in declared:
            if not _has_shape(declared[name].type):
                declared[name].type.CopyFrom(type_proto)
            continue
        entry = entries.get(name)
        if entry is None:
            entry = entries[name] = proto.value_info.add()
            entry.name = name
        entry.type.CopyFrom(type_proto)


def _has_shape(type_proto: TypeProto) -> bool:
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return bool(type_proto.tensor_type.HasField("shape"))
    if kind == "sequence_type":
        return _has_shape(type_proto.sequence_type.elem_type)
    return kind is not None


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
            common = None if other is None or common is None else _merge_types(common, other)
        if common is not None:
            merged.append((name, common))
    return _Outcome(tuple(merged))


def _merge_types(a: TypeProto, b: TypeProto) -> TypeProto | None:
    if a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True):
        return a
    kinds = (a.WhichOneof("value"), b.WhichOneof("value"))
    if kinds == ("sequence_type", "sequence_type"):
        elem = _merge_types(a.sequence_type.elem_type, b.sequence_type.elem_type)
        return None if elem is None else helper.make_sequence_type_proto(elem)
    if kinds != ("tensor_type", "tensor_type"):
        return None
    elem_a, dims_a = tensor_parts(a)
    elem_b, dims_b = tensor_parts(b)
    if elem_a != elem_b:
        return None
    if dims_a is None or dims_b is None or len(dims_a) != len(dims_b):
        return helper.make_tensor_type_proto(elem_a, None)
    dims = [
        dim_of(x) if dim_of(x) == dim_of(y) else None for x, y in zip(dims_a, dims_b, strict=True)
    ]
    return helper.make_tensor_type_proto(elem_a, dims)


# --- names and text -------------------------------------------------------------------


def _record(body: Body, index: int, outcome: _Outcome) -> SplitNodeInference:
    # A branch of an If may never run: its problems only warn.
    branch = any(p.op_type == "If" and p.domain in DEFAULT_DOMAINS for p in body.parents)
    node = body.proto.node[index]
    return SplitNodeInference(
        body.label, node, body.opset or 0, outcome.outputs, outcome.problems, branch
    )


def _function_key(function: FunctionProto) -> _FunctionKey:
    return function.domain, function.name, function.overload


def _copy(node: NodeProto) -> NodeProto:
    copy = NodeProto()
    copy.CopyFrom(node)
    return copy


def _outputs_key(outputs: Iterable[tuple[str, TypeProto]]) -> list[tuple[str, bytes]]:
    return [(name, t.SerializeToString(deterministic=True)) for name, t in outputs]
