"""The overlay walk: one walk over the view's scopes, in order, each scope walked given an
overlay of what inference adds to it.

The view (:class:`~splitops.onnx.model.ModelView`) holds the user's model and, for each of
its scopes, onnx's typed copy of it; it says what a name means where (ONNX's scoping), what
onnx typed it, and what is constant. An overlay (:class:`_Overlay`) adds to one scope only
what inference finds there: its types where they differ from onnx's, the values followed
through shape computations, and each Split's outcome. It asks the view for everything else:
a name is looked up where the view's scoping defines it, in that scope's overlay.

A Split or SplitToSequence gets its outputs from the planner (:mod:`._split`); an operator
whose output shape a followed value decides (Reshape, Expand, Range, Tile,
ConstantOfShape) gets it from that value. Every other node keeps onnx's types unless one of
its inputs now has a different type; then that node alone is inferred again (onnx's
inference of one node, or of a call of a local function), and what onnx's first pass said
is kept where the new types say less, as long as the new input types only refine the old
ones (a Split that splitops finds invalid gets no types, and nothing after it keeps onnx's).
Nodes alike (attributes, types and values of their inputs) are worked out once. Where onnx
wrote a placeholder such as ``unk__0`` and splitops finds the dim, the placeholder is named
in the whole model (:meth:`_Pass._set`).

A subgraph alike one already walked (the same graph as onnx typed it, reading the same outer
types and values) takes that walk's results: If branches that each hold the same nested Ifs
are walked once per level, not once per branch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from onnx import helper

from ..model import (
    DEFAULT_DOMAINS,
    SPLIT_OPS,
    Dim,
    FunctionId,
    ModelView,
    Node,
    Scope,
    ScopeKey,
    ScopePlace,
    TensorType,
    ValueType,
)
from ..model.protobuf import (
    attribute_key,
    call_output,
    infer_call_outputs,
    infer_node,
    named_placeholders,
    operator_schema,
    renamed,
    unnamed_placeholders,
)
from ._calls import Calls
from ._onnx_pass import onnx_takes_bodies
from ._split import Inferred, Outcome, Site, infer_split, size_dim, with_declarations
from ._symbolic import DimParams
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
from ._write import write_place

__all__ = ["SAME_TYPE_OPS", "Place"]

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


@dataclass(eq=False)
class _Overlay:
    """What the pass adds to one scope of the view: splitops' types where they differ from
    onnx's, the values followed, and each Split's outcome. Everything else, the scope's own
    and the meaning of a name there, it asks the view."""

    scope: Scope
    #: The overlays of the pass, by their scope: a name's facts lie in the overlay of the
    #: scope that defines it.
    at: dict[Scope, _Overlay]
    #: What onnx's placeholders (``unk__3``) stand for, as splitops found: shared by the
    #: scopes of one pass (onnx's symbols are the model's).
    names: dict[str, Dim]
    #: What the dim names read stand for, and the texts of the sizes written.
    params: DimParams
    #: splitops' types where they differ from onnx's (``None``: splitops leaves it untyped).
    ours: dict[str, ValueType | None] = field(default_factory=dict)
    #: The values among ``ours`` whose type is no refinement of onnx's: onnx's types of the
    #: nodes after them came from something splitops found impossible.
    loose: set[str] = field(default_factory=set)
    #: The values followed, by name (``None``: a constant that is not followed).
    values: dict[str, Items | None] = field(default_factory=dict)
    #: The outcome of each of its Split and SplitToSequence nodes, by the node's index, and
    #: the overlays of the graphs its nodes hold (by the node's index, in order).
    outcomes: list[tuple[int, Outcome]] = field(default_factory=list)
    children: list[tuple[int, list[_Overlay]]] = field(default_factory=list)
    #: The graph walked whose results this one shares, being alike (:meth:`_Pass._subgraph`):
    #: its outcomes and the graphs its nodes hold are that graph's, at this graph's place.
    like: _Overlay | None = None

    @property
    def opset(self) -> int:
        return self.scope.opset or 0

    @property
    def label(self) -> str:
        return self.scope.label

    @property
    def key(self) -> ScopeKey:
        return self.scope.key

    def __post_init__(self) -> None:
        #: The values its scope defines, by name (the view's; asked for every name looked up).
        self.defined = self.scope.values

    def _defining(self, name: str) -> _Overlay | None:
        """The overlay of the scope that defines ``name`` here, by the view's scoping."""
        if name in self.defined:
            return self
        found = self.scope.value(name)  # an ancestor's, or none
        return None if found is None else self.at.get(found.scope)

    def type_of(self, name: str) -> ValueType | None:
        """The type ``name`` has here: splitops' where it differs from onnx's, else onnx's
        (its placeholders named where splitops found what they stand for)."""
        owner = self._defining(name)
        if owner is None:
            return None
        ours = owner.ours
        return ours[name] if name in ours else owner.onnx_type(name)

    def onnx_type(self, name: str) -> ValueType | None:
        """onnx's type of ``name``, a value of this scope, its placeholders named where
        splitops found what they stand for."""
        typed = self.scope.own_type(name) if name in self.defined else None
        return typed if typed is None else renamed(typed, self.names)

    def changed(self, name: str) -> bool:
        owner = self._defining(name)
        return owner is not None and name in owner.ours

    def is_loose(self, name: str) -> bool:
        owner = self._defining(name)
        return owner is not None and name in owner.loose

    def value_of(self, name: str) -> Items | None:
        """The value followed for ``name``: a constant, or one computed by earlier nodes."""
        found = self.scope.value(name)
        owner = None if found is None else self.at.get(found.scope)
        if found is None or owner is None:
            return None
        values = owner.values
        if name in values or found.producer is not None:
            return values.get(name)
        # An initializer a caller cannot replace, read once where it is small.
        length = found.constant_length()
        array = None if length is None or length > MAX_ITEMS else found.constant()
        values[name] = value = None if array is None else from_array(array)
        return value

    def constant(self, name: str) -> np.ndarray[Any, Any] | None:
        """The value followed for ``name`` where every item is a number, else ``None``."""
        value = self.value_of(name)
        return None if value is None or not value.concrete else np.array(value.host())

    def declared(self, name: str) -> ValueType | None:
        return self.scope.declared(name)

    def dims_of(self, name: str) -> list[Any] | None:
        """The dims of ``name`` as value items (ints, expressions, ``None`` unknown)."""
        found = self.type_of(name)
        if not isinstance(found, TensorType) or found.dims is None:
            return None
        read = self.params.read
        return [d if d is None or isinstance(d, int) else read(d) for d in found.dims]


#: A scope the pass entered (:meth:`_Pass.placed`), by its place, and the overlay that holds
#: its results (its own, unless it is alike one walked).
Place = tuple[ScopePlace, _Overlay]


@dataclass
class _Derived:
    """What a node's inputs decide of it: its value, the dims splitops works out, and
    onnx's inference of its outputs (by position; ``None`` until asked)."""

    value: Items | None
    shape: list[Any] | None
    inferred: list[ValueType | None] | None = None
    #: The type of those dims, by element type.
    typed: dict[int, ValueType | None] = field(default_factory=dict)


class _Pass:
    """The walk over one model's view, its types onnx's."""

    def __init__(
        self, view: ModelView, holders: set[FunctionId], params: DimParams, calls: Calls
    ) -> None:
        self.view = view
        self.opsets = view.opsets
        self.functions = view.functions
        self.holders = holders
        #: The graphs entered: those walked, and those alike one walked; and by scope.
        self.graphs: list[_Overlay] = []
        self.at: dict[Scope, _Overlay] = {}
        self.names: dict[str, Dim] = {}
        self.params = params
        #: Each call alike of a local function holding a Split (by its model, see
        #: :func:`~splitops.onnx.model.call_model`), with what its inference found: once,
        #: however many calls.
        self.calls = calls
        self.met: dict[bytes, tuple[Scope, Inferred]] = {}
        #: Nodes alike (attributes, outputs, types and values of their inputs) have outcomes
        #: alike: the layers of a model repeat their nodes.
        self._split_outcomes: dict[tuple[Any, ...], Outcome] = {}
        self._derived: dict[tuple[Any, ...], _Derived] = {}
        #: The subgraphs walked, by what their walk depends on (:meth:`_subgraph_key`).
        self._walked: dict[tuple[Any, ...], _Overlay] = {}
        #: The digests of the subgraphs keyed so far: only a graph of one of them can be
        #: alike one walked.
        self._keyed: set[bytes] = set()

    # -- graphs --

    def release(self) -> None:
        """Break the links between the overlays (each knows the others by scope, and its
        children), so that their memory goes back when the pass ends rather than at the next
        run of the cycle collector."""
        for graph in self.graphs:
            graph.like = None
            graph.children.clear()
        self.graphs.clear()
        self.at.clear()
        self._walked.clear()

    def walk_main(self) -> _Overlay:
        main = self._graph(self.view.main)
        self._walk(main)
        return main

    def _graph(self, scope: Scope, like: _Overlay | None = None) -> _Overlay:
        if like is None:
            graph = _Overlay(scope, self.at, self.names, self.params)
        else:
            graph = _Overlay(
                scope, self.at, self.names, self.params, like.ours, like.loose, like.values,
                like=like,
            )  # fmt: skip
        self.graphs.append(graph)
        self.at[scope] = graph
        return graph

    def _subgraph(self, scope: Scope, parent: _Overlay) -> _Overlay:
        """A graph that a node of ``parent`` holds, walked; or, where a graph alike (the same
        graph as onnx typed it, reading the same outer types and values) was walked
        already, one that shares its results (an overlay ``like`` the one walked)."""
        digest = scope.digest()
        key = None
        # Only a graph of the same digest can be alike: the names it reads outside, which
        # the key holds, are found for the graphs walked (once their own subgraphs are).
        if digest in self._keyed:
            key = self._subgraph_key(digest, scope, parent)
            walked = self._walked.get(key)
            if walked is not None:
                return self._graph(scope, like=walked)
        named = len(self.names)
        graph = self._graph(scope)
        self._walk(graph)
        if len(self.names) == named:  # no placeholder was named meanwhile
            self._walked[self._subgraph_key(digest, scope, parent) if key is None else key] = graph
        return graph

    def _subgraph_key(self, digest: bytes, scope: Scope, parent: _Overlay) -> tuple[Any, ...]:
        """What the walk of a subgraph depends on: the graph (``scope``'s, of ``digest``),
        and what it reads outside."""
        self._keyed.add(digest)
        outer = []
        for name in scope.free_names():
            value = parent.value_of(name)
            outer.append(
                (
                    name,
                    parent.type_of(name),
                    None if value is None else value.key,
                    parent.changed(name),
                    parent.is_loose(name),
                )
            )
        return digest, parent.opset, tuple(outer), len(self.names)

    def placed(self) -> Iterator[Place]:
        """Every scope the pass entered, in the order of :attr:`ModelView.scopes`: those
        walked, those alike one walked, and the scopes inside a scope alike, each with the
        overlay of the scope walked whose results it has. A scope alike one walked is
        passed by its place: its :class:`~splitops.onnx.model.Scope` is made only where
        asked."""
        main = self.graphs[0]
        stack: list[Place] = [(ScopePlace.of(main.scope), main)]
        while stack:
            place, graph = stack.pop()
            yield place, graph
            below = []
            for index, children in graph.children:
                for held, child in zip(place.held(index), children, strict=True):
                    below.append((held, child.like or child))
            below.reverse()
            stack += below

    def _walk(self, graph: _Overlay) -> None:
        # The main graph's values are its own: whether one changed is one set operation.
        ours = graph.ours.keys()
        main = graph.scope.parent is None
        for node in graph.scope.nodes:
            if node.domain in DEFAULT_DOMAINS:
                op = node.op_type
                if op in SPLIT_OPS:
                    self._split(graph, node)
                    continue
                inputs = node.input_names
                if (
                    op not in _OWN_OPS
                    and (ours.isdisjoint(inputs) if main else not _any_changed(graph, inputs))
                    and not self._vague(graph, node)
                ):
                    continue  # onnx's types stand
            self._node(graph, node)

    def sites(self, *, write: bool) -> list[tuple[Site, Outcome]]:
        """Every Split and SplitToSequence node of the scopes entered, with its outcome; with
        ``write``, splitops' types are written into each scope's typed graph on the way."""
        found: list[tuple[Site, Outcome]] = []
        names = self.names
        for place, graph in self.placed():
            if write and (graph.ours or names):
                write_place(place.scope, graph.ours, names)
            if graph.outcomes:
                found += ((Site.at(place, index), outcome) for index, outcome in graph.outcomes)
        return found

    # -- one node --

    def _split(self, graph: _Overlay, node: Node) -> None:
        key = _node_key(node, graph)
        found = self._split_outcomes.get(key)
        if found is None:
            outcome = self._split_outcomes[key] = infer_split(node, graph)
        else:
            names = [name for name in node.output_names if name]
            outputs = tuple((n, t) for n, (_, t) in zip(names, found.outputs, strict=False))
            outcome = replace(found, outputs=outputs)
        outcome = with_declarations(outcome, node, graph)
        graph.outcomes.append((node.index, outcome))
        inferred = {} if outcome.problems else dict(outcome.outputs)
        for name in node.output_names:
            if name:
                self._set(graph, name, inferred.get(name), trust_base=False, authority=True)

    def _node(self, graph: _Overlay, node: Node) -> None:
        default = node.domain in DEFAULT_DOMAINS
        op = node.op_type
        subgraphs = []
        if op in _CONTROL_FLOW or not default:
            held = node.held
            if held:
                subgraphs = [self._subgraph(scope, graph) for scope in held]
                graph.children.append((node.index, subgraphs))
        function = self.functions.get(node.function_id) if self.functions else None
        if function is not None:
            self._call(graph, node, function)
            return
        outputs = node.output_names
        changed = [n for n in node.input_names if n and graph.changed(n)]
        changed += [o for s in subgraphs for o in s.scope.output_names() if s.changed(o)]
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
        if value is not None and outputs:
            graph.values[outputs[0]] = value
        known = shape is not None and None not in shape  # splitops has every dim
        vague = not changed and not known and self._vague(graph, node)
        if not changed and shape is None and not vague:
            return
        types = {o: graph.onnx_type(o) for o in outputs if o}
        trust = not any(graph.is_loose(n) or _loose_in(subgraphs, n) for n in changed)
        if changed or vague:
            if derived.inferred is None:
                found = self._reinfer(graph, node, subgraphs)
                derived.inferred = [found.get(o) for o in outputs]
            inferred = dict(zip(outputs, derived.inferred, strict=True))
            types = {o: _refined(inferred[o], t if trust else None) for o, t in types.items()}
            if op == "If" and default and len(subgraphs) == 2:
                types = _branch_union(node, subgraphs, types)
        if shape is not None and outputs and outputs[0] != "":
            out = outputs[0]
            given = types.get(out)
            elem = given.element if isinstance(given, TensorType) else 0
            if elem not in derived.typed:
                derived.typed[elem] = _shape_type(shape, elem, self.params)
            types[out] = _refined(derived.typed[elem], types.get(out))
        for name, found_type in types.items():
            self._set(graph, name, found_type, trust_base=trust)

    def _vague(self, graph: _Overlay, node: Node) -> bool:
        """Whether onnx left a placeholder in ``node``'s outputs that splitops has not named,
        after splitops named some: onnx may have made it up for dims it could not tell
        apart then (``seq`` against ``unk__1``, which splitops found to be ``seq``), so the
        node is inferred again from the named types."""
        if not self.names:
            return False
        outputs, inputs, scope = node.output_names, node.input_names, graph.scope
        if len(outputs) == 1 and inputs and scope.type_of(outputs[0]) == scope.type_of(inputs[0]):
            return False  # onnx gave the output its input's type: no placeholder of its own
        for name in outputs:
            base = scope.type_of(name) if name else None
            if base is not None and unnamed_placeholders(base, self.names):
                return True
        return False

    def _follow(
        self, graph: _Overlay, node: Node, changed: bool
    ) -> tuple[Items | None, list[Any] | None]:
        """``node``'s value, and the dims of its output when splitops works them out
        (:data:`SHAPE_OPS`), else ``None``. A Concat's dims are worked out where onnx's may
        fall short: an input ``changed`` from onnx's type, or a name on the axis."""
        op = node.op_type
        names = node.input_names
        inputs = [graph.value_of(name) if name else None for name in names]
        shapes: list[list[Any] | None] = []
        if op in READS_SHAPES:
            shapes = [graph.dims_of(name) if name else None for name in names]
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
        found: ValueType | None,
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
        base = graph.scope.own_type(name) if name in graph.defined else None
        if found == base:
            return
        trusted = trust_base or authority
        if trusted and base is not None and found is not None:
            for placeholder, dim in named_placeholders(base, found):
                self.names.setdefault(placeholder, dim)
        seen = graph.onnx_type(name)
        if trust_base and found is not None:
            found = _refined(found, seen)
        if found == seen:
            return
        graph.ours[name] = found
        if seen is not None and (
            not trusted
            or found is None
            or _contradicts(seen, found)
            or (authority and seen.says_more(found))
        ):
            graph.loose.add(name)

    def _reinfer(
        self, graph: _Overlay, node: Node, subgraphs: Sequence[_Overlay]
    ) -> dict[str, ValueType]:
        """onnx's inference of ``node`` alone, from splitops' types of its inputs (and of the
        outer values its subgraphs read); ``{}`` where onnx cannot infer it."""
        domain = node.domain
        if operator_schema(node.op_type, self.opsets.get(domain or "", 0), domain) is None:
            return {}
        inputs, outputs = node.input_names, node.output_names
        if node.op_type in SAME_TYPE_OPS and not node.domain and len(outputs) == 1:
            first = graph.type_of(inputs[0]) if inputs and inputs[0] else None
            return {} if first is None else {outputs[0]: first}
        if subgraphs and not onnx_takes_bodies(node):
            # onnx infers the subgraphs with the node: a Split it cannot take aborts it.
            return {}
        types: dict[str, ValueType] = {}
        data: dict[str, np.ndarray[Any, Any]] = {}
        # The names the subgraphs read from outside themselves.
        outer = [name for subgraph in subgraphs for name in subgraph.scope.free_names()]
        for name in dict.fromkeys([*inputs, *outer]):
            if not name:
                continue
            found = graph.type_of(name)
            if found is None or not found.known:
                if name in inputs:
                    return {}
                continue
            types[name] = found
            if name in inputs:
                array = _array(graph.value_of(name), found)
                if array is not None:
                    data[name] = array
        return infer_node(node, types, data)

    # -- calls of local functions --

    def _call(self, graph: _Overlay, node: Node, function: Scope) -> None:
        inputs = node.input_names
        trust = not any(graph.is_loose(n) for n in inputs if n)
        if node.function_id in self.holders:

            def facts(name: str) -> tuple[ValueType | None, np.ndarray[Any, Any] | None]:
                found = graph.type_of(name)
                return found, None if found is None else _array(graph.value_of(name), found)

            key, inferred = self.calls.infer(function, node, facts, self.params)
            if inferred is not None:
                self.met.setdefault(key, (function, inferred))
            given = {} if inferred is None else inferred.outputs
            for k, name in enumerate(node.output_names):
                if name:
                    self._set(graph, name, given.get(call_output(k)), trust_base=trust)
            return
        if not any(graph.changed(n) for n in inputs if n):
            return
        types = [graph.type_of(n) if n else None for n in inputs]
        outputs = infer_call_outputs(function, node, types)
        found = dict(zip(node.output_names, outputs, strict=False))
        for name in node.output_names:
            if name:
                self._set(graph, name, found.get(name), trust_base=trust)


def _any_changed(graph: _Overlay, names: Sequence[str]) -> bool:
    return any(graph.changed(name) for name in names if name)


def _node_key(node: Node, graph: _Overlay) -> tuple[Any, ...]:
    """What a node's outcome depends on, but the names of its values (and subgraphs, which
    a node with subgraphs gets no key for): its attributes, which inputs and outputs it
    lists, and the types and values of its inputs."""
    inputs = node.input_names
    types, values = [], []
    for name in inputs:
        value = graph.value_of(name) if name else None
        types.append(graph.type_of(name) if name else None)
        values.append(None if value is None else value.key)
    return (
        node.op_type,
        node.domain,
        graph.opset,
        attribute_key(node.proto),
        tuple(map(bool, inputs)),
        tuple(map(bool, node.output_names)),
        tuple(types),
        tuple(values),
    )


def _names_on_axis(node: Node, shapes: Sequence[Sequence[Any] | None]) -> bool:
    """Whether a Concat joins inputs (of ``shapes``) of which one has a name on the axis."""
    axis = node.attribute("axis", 0)
    for dims in shapes:
        dims = dims or []
        if -len(dims) <= axis < len(dims) and not isinstance(dims[axis], (int, type(None))):
            return True
    return False


def _loose_in(subgraphs: Sequence[_Overlay], name: str) -> bool:
    return any(s.is_loose(name) for s in subgraphs)


def _refined(ours: ValueType | None, other: ValueType | None) -> ValueType | None:
    """``ours``, with what ``other`` (onnx's type of the same value, from less precise
    inputs) knows and ours does not (see :meth:`TensorType.refine`); ``other`` where ours
    says nothing."""
    if ours is None or not ours.known:
        return other
    return ours.refine(other)


def _contradicts(base: ValueType, ours: ValueType) -> bool:
    """Whether ``ours`` says something of a value that onnx's type of it rules out."""
    return next(base.conflicts(ours), None) is not None


def _branch_union(
    node: Node, branches: Sequence[_Overlay], types: dict[str, ValueType | None]
) -> dict[str, ValueType | None]:
    """An If's outputs with what both of splitops' branches agree on refining onnx's."""
    then_branch, else_branch = branches
    then_outputs, else_outputs = then_branch.scope.output_names(), else_branch.scope.output_names()
    merged = dict(types)
    for k, name in enumerate(node.output_names):
        if not name or k >= min(len(then_outputs), len(else_outputs)):
            continue
        a = then_branch.type_of(then_outputs[k])
        b = else_branch.type_of(else_outputs[k])
        if a is not None and b is not None:
            union = a if a == b else a.union(b)
            merged[name] = _refined(union, types.get(name))
    return merged


def _shape_type(dims: list[Any], elem: int, params: DimParams) -> ValueType | None:
    """A tensor type of ``dims`` (value items) and element type ``elem`` (``None`` for 0)."""
    if not elem:
        return None
    sizes = [size_dim(d, params) for d in dims]
    # A size left negative (two -1 in a Reshape), or beyond int64 (a Tile's count times a
    # dim), is no dim.
    return TensorType(
        elem, tuple(None if isinstance(s, int) and not 0 <= s < 2**63 else s for s in sizes)
    )


def _array(value: Items | None, found: ValueType) -> np.ndarray[Any, Any] | None:
    """A concrete value as an array of its type, for onnx's inference."""
    elem = found.element if isinstance(found, TensorType) else 0
    if value is None or not elem or not value.concrete:
        return None
    try:
        return np.array(value.host(), dtype=helper.tensor_dtype_to_np_dtype(elem))
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
