"""One reading of a model: its scopes, and each value with its producer, its uses, its type
and its constant value, found by ONNX's scoping rules.

Every tool of the ONNX layer (inference, the checker, the converter, the lowering, the
portability probes, the backend and the command) asks this view, so that none re-derives what
a name means. It follows onnx-ir's design (one :class:`Value` that knows its producer, its
uses and its ``const_value``), kept read-only over the protobuf it was read from; rewrites
plan their edits against it (:mod:`~splitops.onnx.model._edits`) and read a new view of the
result.

The rules it applies, once:

- **Scopes.** The main graph, every subgraph of a control-flow node (If, Loop, Scan, any
  graph attribute, at any depth) and every model-local function body is a :class:`Scope`.
  A subgraph sees the values of its ancestors, never those of a sibling: two If branches
  may each define ``k``, and each branch's nodes read their own. A function body sees only
  itself.
- **Constants.** An initializer is a constant unless a caller may replace it: at IR version
  4 and later, an initializer that is also an input of its graph is a default that a caller
  may feed (:func:`is_overridable`); before IR 4 every initializer must be listed as an input
  and is a constant, as onnx.checker and onnxruntime read it. A ``Constant`` node of the
  default domain is a constant.
- **Names.** :meth:`ModelView.fresh_name` gives a name that no value, anywhere in the
  model, has.

>>> from onnx import TensorProto, helper
>>> def branch(name, values):
...     k = helper.make_node("Constant", [], ["k"], value_ints=values)
...     out = helper.make_node("Identity", ["k"], [name])
...     return helper.make_graph([k, out], name, [], [
...         helper.make_tensor_value_info(name, TensorProto.INT64, [len(values)])])
>>> node = helper.make_node("If", ["c"], ["y"], then_branch=branch("t", [2]),
...                         else_branch=branch("e", [3, 4]), name="choose")
>>> graph = helper.make_graph([node], "g",
...     [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
...     [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
>>> view = ModelView.read(helper.make_model(graph))
>>> sorted((scope.label, scope.constant("k").tolist()) for scope in view.scopes[1:])
[('main/choose.else_branch', [3, 4]), ('main/choose.then_branch', [2])]
>>> view.main.value("k") is None  # the main graph sees neither branch's k
True
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
)

from ._node import DEFAULT_DOMAINS, is_split_node
from ._types import dim_of, tensor_parts
from ._walk import Body, constant_value, declared_types, iter_bodies

__all__ = [
    "ModelView",
    "Node",
    "Scope",
    "Value",
    "constant_initializers",
    "is_overridable",
    "scope_key",
]

#: Where a scope lies in its model, whatever the labels of its nodes: the root ("main" or a
#: function's label) and the steps down to it.
ScopeKey = tuple[str, tuple[tuple[int, str, int], ...]]


def scope_key(body: Body) -> ScopeKey:
    """The key of ``body``'s scope: unique in a model (labels need not be: two nodes may
    share a name)."""
    return body.root, body.path


def is_overridable(ir_version: int, graph_inputs: Iterable[str], name: str) -> bool:
    """Whether the initializer ``name`` of a graph whose inputs are ``graph_inputs`` is a
    default a caller may replace (IR >= 4 and listed as an input) rather than a constant.

    >>> is_overridable(3, ["x", "s"], "s"), is_overridable(8, ["x", "s"], "s")
    (False, True)
    """
    return ir_version >= 4 and name in graph_inputs


def constant_initializers(proto: GraphProto, ir_version: int) -> dict[str, TensorProto]:
    """The initializers of ``proto`` that are constants by :func:`is_overridable`'s rule, by
    name: for a pass that reads one graph's constants and no more (inference, whose speed
    is measured against onnx's C++ pass, reads them so rather than building a whole view).
    """
    inputs = {entry.name for entry in proto.input} if ir_version >= 4 else ()
    return {
        tensor.name: tensor
        for tensor in proto.initializer
        if not is_overridable(ir_version, inputs, tensor.name)
    }


_Owner = TypeVar("_Owner")


def _alive(reference: weakref.ReferenceType[_Owner]) -> _Owner:
    """What ``reference`` points to: a scope or a view, which its view keeps alive."""
    found = reference()
    if found is None:
        raise ReferenceError(
            "the ModelView this belongs to is gone: keep the view while its scopes, nodes and "
            "values are in use."
        )
    return found


@dataclass(eq=False, slots=True)
class Node:
    """One node of a scope: where it lies and its protobuf."""

    _scope: weakref.ReferenceType[Scope]
    index: int
    proto: NodeProto

    @property
    def scope(self) -> Scope:
        return _alive(self._scope)

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def is_split(self) -> bool:
        """Whether it is a Split or SplitToSequence of the default domain."""
        return is_split_node(self.proto)

    def input_value(self, position: int) -> Value | None:
        """The value the node reads at input ``position`` (``None`` when absent or unknown)."""
        names = self.proto.input
        if position >= len(names) or not names[position]:
            return None
        return self.scope.value(names[position])


@dataclass(eq=False, slots=True)
class Value:
    """One named value of a scope: a graph input, an initializer or a node's output."""

    name: str
    _scope: weakref.ReferenceType[Scope]
    #: The node that computes it, or ``None`` for an input or an initializer.
    producer: Node | None = None
    #: Its initializer, where it has one.
    initializer: TensorProto | None = None
    #: Whether it is an input of its graph or function.
    is_input: bool = False
    #: The nodes that read it, in this scope or in any scope below it, in model order.
    uses: list[Node] = field(default_factory=list)
    _output_of: list[weakref.ReferenceType[Scope]] = field(default_factory=list)

    @property
    def scope(self) -> Scope:
        return _alive(self._scope)

    @property
    def output_of(self) -> list[Scope]:
        """The scopes whose outputs list it (its own scope, or a subgraph returning it)."""
        return [_alive(scope) for scope in self._output_of]

    @property
    def overridable(self) -> bool:
        """An initializer that a caller may replace (see :func:`is_overridable`)."""
        return self.initializer is not None and self.is_input and self.scope.view.ir_version >= 4

    @property
    def type(self) -> TypeProto | None:
        """Its type: inferred where the view was read with types, else declared."""
        return self.scope.types.get(self.name)

    def constant(self) -> np.ndarray[Any, Any] | None:
        """Its value when it is a constant whose data is at hand, else ``None``."""
        if self.initializer is not None:
            return None if self.overridable else constant_value(self.initializer)
        producer = self.producer
        if (
            producer is not None
            and producer.op_type == "Constant"
            and producer.proto.domain in DEFAULT_DOMAINS
        ):
            return constant_value(producer.proto)
        return None

    def constant_length(self) -> int | None:
        """The number of elements of a constant, read from its dims alone (nothing decoded),
        or ``None`` when it is no constant."""
        source: TensorProto | None = None
        if self.initializer is not None and not self.overridable:
            source = self.initializer
        elif self.producer is not None and self.producer.op_type == "Constant":
            for attribute in self.producer.proto.attribute:
                if attribute.name == "value" and attribute.HasField("t"):
                    source = attribute.t
                elif attribute.name == "value_ints":
                    return len(attribute.ints)
        if source is None:
            return None
        count = 1
        for dim in source.dims:
            count *= max(dim, 0)
        return count


@dataclass(eq=False)
class Scope:
    """One list of nodes (a graph or a function body), the values it defines, and the scope
    around it."""

    _view: weakref.ReferenceType[ModelView]
    body: Body
    _parent: weakref.ReferenceType[Scope] | None
    nodes: list[Node] = field(default_factory=list)
    #: The values it defines, by name.
    values: dict[str, Value] = field(default_factory=dict)
    #: The types of its values (and of outer values that its own protobuf types).
    types: dict[str, TypeProto] = field(default_factory=dict)

    @property
    def view(self) -> ModelView:
        return _alive(self._view)

    @property
    def parent(self) -> Scope | None:
        """The scope whose node holds this subgraph; ``None`` for the main graph and
        functions."""
        return None if self._parent is None else _alive(self._parent)

    @property
    def label(self) -> str:
        return self.body.label

    @property
    def proto(self) -> GraphProto | FunctionProto:
        return self.body.proto

    @property
    def opset(self) -> int | None:
        return self.body.opset

    @property
    def key(self) -> ScopeKey:
        return scope_key(self.body)

    @property
    def is_function(self) -> bool:
        return self.body.is_function

    def ancestors(self) -> Iterator[Scope]:
        """This scope, then each scope around it, outwards."""
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def value(self, name: str) -> Value | None:
        """The value ``name`` means here: this scope's own, else an ancestor's."""
        for scope in self.ancestors():
            found = scope.values.get(name)
            if found is not None:
                return found
        return None

    def type_of(self, name: str) -> TypeProto | None:
        for scope in self.ancestors():
            found = scope.types.get(name)
            if found is not None:
                return found
        return None

    def element(self, name: str) -> int | None:
        """The ``TensorProto`` element type of a tensor value, or ``None`` when unknown."""
        return tensor_parts(self.type_of(name))[0] or None

    def dims(self, name: str) -> list[int | None] | None:
        """The static length of each axis of a tensor value (``None`` for a symbolic or
        unknown one), or ``None`` when its rank is unknown."""
        _, dims = tensor_parts(self.type_of(name))
        if dims is None:
            return None
        return [length if isinstance(length, int) else None for length in map(dim_of, dims)]

    def constant(self, name: str) -> np.ndarray[Any, Any] | None:
        """The constant value ``name`` has here, or ``None``."""
        found = self.value(name)
        return None if found is None else found.constant()

    def input_names(self) -> list[str]:
        proto = self.proto
        if isinstance(proto, GraphProto):
            return [entry.name for entry in proto.input]
        return list(proto.input)

    def output_names(self) -> list[str]:
        proto = self.proto
        if isinstance(proto, GraphProto):
            return [entry.name for entry in proto.output]
        return list(proto.output)


@dataclass(eq=False)
class ModelView:
    """A model read once: every scope, value, use and type (see the module's documentation).

    Read it with :meth:`read`; it does not follow later changes to the protobuf. The view
    owns its scopes, and each scope its nodes and values; they point back to their owners
    weakly, so that a view holds no reference cycle and its memory (the protobuf's, which
    may hold gigabytes of weights) goes back as soon as the view is dropped, without waiting
    for Python's cycle collector. Keep the view while its scopes, nodes and values are used.
    """

    model: ModelProto
    scopes: list[Scope] = field(default_factory=list)
    #: Every name in use anywhere in the model, and the names given out since.
    names: set[str] = field(default_factory=set)
    #: Per base name, the suffix that :meth:`fresh_name` tries next.
    _next: dict[str, int] = field(default_factory=dict)
    _by_key: dict[ScopeKey, Scope] = field(default_factory=dict)

    @property
    def ir_version(self) -> int:
        return int(self.model.ir_version)

    @property
    def main(self) -> Scope:
        return self.scopes[0]

    @classmethod
    def read(cls, model: ModelProto, *, types: ModelProto | None = None) -> ModelView:
        """The view of ``model``; with ``types``, a copy of it with the same nodes that
        inference typed (its types stand in for the model's own)."""
        view = cls(model)
        typed = _types_by_scope(types) if types is not None else None
        by_key: dict[ScopeKey, Scope] = {}
        for body in iter_bodies(model):
            parent = by_key.get((body.root, body.path[:-1])) if body.path else None
            scope = Scope(weakref.ref(view), body, None if parent is None else weakref.ref(parent))
            scope.types = declared_types(body.proto) if typed is None else typed.get(scope.key, {})
            by_key[scope.key] = scope
            view.scopes.append(scope)
            view._define(scope)
        view._by_key = by_key
        for scope in view.scopes:
            view._link(scope)
        return view

    def scope_of(self, body: Body) -> Scope:
        """The scope of ``body`` (a body of this view's model)."""
        return self._by_key[scope_key(body)]

    def split_nodes(self) -> Iterator[Node]:
        """Every Split and SplitToSequence node of the default domain, in model order."""
        for scope in self.scopes:
            for node in scope.nodes:
                if node.is_split:
                    yield node

    def fresh_name(self, base: str) -> str:
        """A name no value of the model has: ``base``, else ``base_1``, ``base_2``, ...; each
        base remembers where it stopped, so naming K values costs K steps, not K^2."""
        index = self._next.get(base, 0)
        name = base if index == 0 else f"{base}_{index}"
        while name in self.names:
            index += 1
            name = f"{base}_{index}"
        self._next[base] = index + 1
        self.names.add(name)
        return name

    def fed_inputs(self) -> list[ValueInfoProto]:
        """The main graph's inputs that a caller must feed: those no initializer fills (one
        that fills an input is a constant before IR 4, a default the caller may replace by
        name from IR 4 on)."""
        graph = self.model.graph
        main = self.main
        return [
            entry
            for entry in graph.input
            if (value := main.values.get(entry.name)) is None or value.initializer is None
        ]

    # -- reading --

    def _define(self, scope: Scope) -> None:
        proto = scope.proto
        values = scope.values
        names = self.names
        inputs = scope.input_names()
        owner = weakref.ref(scope)
        for name in inputs:
            values[name] = Value(name, owner, is_input=True)
        if isinstance(proto, GraphProto):
            for tensor in proto.initializer:
                found = values.get(tensor.name)
                if found is None:
                    values[tensor.name] = Value(tensor.name, owner, initializer=tensor)
                else:
                    found.initializer = tensor
            names.update(entry.name for entry in proto.value_info)
        nodes = scope.nodes
        for index, proto_node in enumerate(proto.node):
            node = Node(owner, index, proto_node)
            nodes.append(node)
            for name in proto_node.output:
                if name:
                    values[name] = Value(name, owner, node)
            names.update(proto_node.input)
        names.update(values)
        names.update(scope.output_names())

    def _link(self, scope: Scope) -> None:
        for node in scope.nodes:
            for name in dict.fromkeys(node.proto.input):
                if name:
                    found = scope.value(name)
                    if found is not None:
                        found.uses.append(node)
        for name in scope.output_names():
            found = scope.value(name)
            if found is not None:
                found._output_of.append(weakref.ref(scope))


def _types_by_scope(model: ModelProto) -> dict[ScopeKey, dict[str, TypeProto]]:
    return {scope_key(body): declared_types(body.proto) for body in iter_bodies(model)}
