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

import hashlib
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import numpy as np
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
)

from ...core import require_argument
from ._fields import declared_entries
from ._node import DEFAULT_DOMAINS, SPLIT_OPS, is_split_node, node_label
from ._types import dim_params
from ._value_type import TensorType, ValueType, value_type
from ._walk import (
    FunctionId,
    GraphsAt,
    ScopeKey,
    constant_value,
    declared_types,
    default_opset,
    function_id,
    function_label,
    function_opset,
    graph_attributes,
    graphs_below,
    has_graphs,
    location,
    subgraph_label,
)

__all__ = [
    "Linked",
    "ModelView",
    "Node",
    "Scope",
    "ScopePlace",
    "Usage",
    "Value",
    "constant_initializers",
    "defined_names",
    "fed_inputs",
    "input_types",
    "interface_entries",
    "is_overridable",
    "model_nodes",
    "output_types",
    "split_nodes",
]


def is_overridable(ir_version: int, graph_inputs: Iterable[str], name: str) -> bool:
    """Whether the initializer ``name`` of a graph whose inputs are ``graph_inputs`` is a
    default a caller may replace (IR >= 4 and listed as an input) rather than a constant.

    >>> is_overridable(3, ["x", "s"], "s"), is_overridable(8, ["x", "s"], "s")
    (False, True)
    """
    return ir_version >= 4 and name in graph_inputs


def defined_names(proto: GraphProto | FunctionProto) -> set[str]:
    """The names of the values a graph or function body defines: its inputs, its
    initializers and its nodes' outputs (the keys of its scope's :attr:`Scope.values`).

    >>> from onnx import helper
    >>> sorted(defined_names(helper.make_graph(
    ...     [helper.make_node("Neg", ["x"], ["y"])], "g", [], [])))
    ['y']
    """
    if isinstance(proto, GraphProto):
        names = {entry.name for entry in proto.input}
        names.update(tensor.name for tensor in proto.initializer)
    else:
        names = set(proto.input)
    for node in proto.node:
        names.update(name for name in node.output if name)
    return names


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


class _Unread:
    """What a scope holds of a graph it has not looked up yet."""


_UNREAD = _Unread()


def _alive(reference: weakref.ReferenceType[_Owner]) -> _Owner:
    """What ``reference`` points to: a scope or a view, which its view keeps alive."""
    found = reference()
    if found is None:
        raise ReferenceError(
            "the ModelView this belongs to is gone: keep the view while its scopes, nodes and "
            "values are in use."
        )
    return found


class Linked(NamedTuple):
    """An attribute of a function body's node that takes the value of the call's attribute
    ``name`` (ONNX's ``ref_attr_name``): known only at each call."""

    name: str


@dataclass(eq=False, slots=True)
class Node:
    """One node of a scope: where it lies, its fields as values (its domain, operator,
    inputs and outputs as :class:`Value` objects, attributes as Python values), and the
    protobuf it was read from.

    >>> from onnx import TensorProto, helper
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Split", ["x", ""], ["a", "b"], axis=1, num_outputs=2)], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])], [])
    >>> view = ModelView.read(helper.make_model(graph))
    >>> node = view.main.nodes[0]
    >>> [v and v.name for v in node.inputs], [v.name for v in node.outputs if v]
    (['x', None], ['a', 'b'])
    >>> dict(node.attributes), node.inputs[0].type
    ({'axis': 1, 'num_outputs': 2}, TensorType(element=1, dims=(2, 4)))
    """

    _scope: weakref.ReferenceType[Scope] | None
    index: int
    proto: NodeProto
    _attributes: Mapping[str, Any] | None = None
    _input_names: tuple[str, ...] | None = None
    _output_names: tuple[str, ...] | None = None

    @classmethod
    def alone(cls, proto: NodeProto) -> Node:
        """``proto`` read as a node of no model: its fields and attributes, for a rule of one
        operator asked alone. It lies in no scope: it holds no scopes, and a graph
        attribute reads as ``None``.

        >>> from onnx import helper
        >>> node = Node.alone(helper.make_node("Cast", ["x"], ["y"], to=7))
        >>> node.op_type, node.input_names, node.attribute("to")
        ('Cast', ('x',), 7)
        """
        return cls(None, 0, proto)

    @property
    def scope(self) -> Scope:
        if self._scope is None:
            raise ReferenceError("a node read alone (Node.alone) lies in no scope.")
        return _alive(self._scope)

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    @property
    def domain(self) -> str:
        return self.proto.domain

    @property
    def name(self) -> str:
        return self.proto.name

    @property
    def function_id(self) -> FunctionId:
        """The function it calls where the model has a local function of this identity
        (:data:`~splitops.onnx.model.FunctionId`): its domain, operator and overload."""
        proto = self.proto
        return proto.domain, proto.op_type, proto.overload

    @property
    def label(self) -> str:
        """Its name, or its first output's where it has none (for messages only: two nodes
        may share a label)."""
        return node_label(self.proto)

    @property
    def where(self) -> str:
        """Where it is, as every command prints it (``main/loop_1.body/split_3``)."""
        return location(self.scope.label, self.label)

    def is_op(self, *op_types: str) -> bool:
        """Whether it is one of the operators ``op_types`` of ONNX's own domain."""
        proto = self.proto
        return proto.op_type in op_types and proto.domain in DEFAULT_DOMAINS

    @property
    def is_split(self) -> bool:
        """Whether it is a Split or SplitToSequence of the default domain."""
        proto = self.proto
        return proto.op_type in SPLIT_OPS and proto.domain in DEFAULT_DOMAINS

    @property
    def input_names(self) -> tuple[str, ...]:
        """The names it reads, as given (``""`` for an input left out); read once."""
        names = self._input_names
        if names is None:
            names = self._input_names = tuple(self.proto.input)
        return names

    @property
    def output_names(self) -> tuple[str, ...]:
        """The names it writes, as given (``""`` for an output left out); read once."""
        names = self._output_names
        if names is None:
            names = self._output_names = tuple(self.proto.output)
        return names

    @property
    def inputs(self) -> tuple[Value | None, ...]:
        """The value it reads at each input position, by ONNX's scoping (``None`` for an
        input left out, or a name nothing defines)."""
        scope = self.scope
        return tuple(scope.value(name) if name else None for name in self.proto.input)

    @property
    def outputs(self) -> tuple[Value | None, ...]:
        """The value it computes at each output position (``None`` for one left out)."""
        values = self.scope.values
        return tuple(values.get(name) if name else None for name in self.proto.output)

    def input_value(self, position: int) -> Value | None:
        """The value the node reads at input ``position`` (``None`` when absent or unknown)."""
        names = self.proto.input
        if position >= len(names) or not names[position]:
            return None
        return self.scope.value(names[position])

    def output(self, position: int = 0) -> Value | None:
        """The value it computes at output ``position`` (``None`` when absent)."""
        names = self.proto.output
        if position >= len(names) or not names[position]:
            return None
        return self.scope.values.get(names[position])

    @property
    def attributes(self) -> Mapping[str, Any]:
        """Its attributes by name, as Python values: ``int``, ``float``, ``str``, tuples of
        them, a numpy array for a tensor (``None`` where its data is not at hand), a
        :class:`~splitops.onnx.model.ValueType` for a type, a :class:`Scope` for a graph
        (a tuple of them for ``graphs``), and :class:`Linked` for an attribute that takes a
        function call's. Read once, at the first ask; read-only."""
        if self._attributes is None:
            self._attributes = _Attributes(self)
        return self._attributes

    def attribute(self, name: str, default: Any = None) -> Any:
        """The value of its attribute ``name`` (see :attr:`attributes`), or ``default``: the
        one attribute read, where the others have not been."""
        if self._attributes is not None:
            return self._attributes.get(name, default)
        found = None
        for attribute in self.proto.attribute:
            if attribute.name == name:
                found = attribute  # of two of one name, the last (as the mapping keeps)
        return default if found is None else _attribute_value(lambda: self.held, found)

    @property
    def held(self) -> list[Scope]:
        """The scopes of the graphs it holds (an If's branches, a Loop's body), in order."""
        if self._scope is None:
            return []
        scope = self.scope
        return scope.held(self.index) if scope._holds(self.index) else []


class _Attributes(Mapping[str, Any]):
    """A node's attributes read as Python values, each at its first ask. It knows its node
    by its scope (weakly) and index, not by the node, which holds it: no reference cycle."""

    __slots__ = ("_index", "_protos", "_read", "_scope")

    def __init__(self, node: Node) -> None:
        self._scope, self._index = node._scope, node.index
        self._protos = {attribute.name: attribute for attribute in node.proto.attribute}
        self._read: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        read = self._read
        if name not in read:
            read[name] = _attribute_value(self._held, self._protos[name])
        return read[name]

    def _held(self) -> list[Scope]:
        scope = self._scope
        return [] if scope is None else _alive(scope).held(self._index)

    def __iter__(self) -> Iterator[str]:
        return iter(self._protos)

    def __len__(self) -> int:
        return len(self._protos)

    def __repr__(self) -> str:
        return repr(dict(self))


def _attribute_value(held: Callable[[], list[Scope]], attribute: AttributeProto) -> Any:
    """An attribute as a Python value (see :attr:`Node.attributes`); ``held`` gives the
    scopes of its node's graphs."""
    if attribute.ref_attr_name:
        return Linked(attribute.ref_attr_name)
    kind = attribute.type
    if kind == AttributeProto.INT:
        return int(attribute.i)
    if kind == AttributeProto.FLOAT:
        return float(attribute.f)
    if kind == AttributeProto.STRING:
        return attribute.s.decode("utf-8", "replace")
    if kind == AttributeProto.INTS:
        return tuple(int(v) for v in attribute.ints)
    if kind == AttributeProto.FLOATS:
        return tuple(float(v) for v in attribute.floats)
    if kind == AttributeProto.STRINGS:
        return tuple(v.decode("utf-8", "replace") for v in attribute.strings)
    if kind == AttributeProto.TENSOR:
        return constant_value(attribute.t)
    if kind == AttributeProto.TENSORS:
        return tuple(constant_value(t) for t in attribute.tensors)
    if kind == AttributeProto.TYPE_PROTO:
        return value_type(attribute.tp)
    if kind == AttributeProto.TYPE_PROTOS:
        return tuple(value_type(t) for t in attribute.type_protos)
    if attribute.HasField("g") or attribute.graphs:
        # A graph is found by the field that holds it, whatever the attribute's type says
        # (as onnx's inference and every walk of the view find it).
        found = [s for s in held() if s.key[1][-1][1] == attribute.name]
        if attribute.HasField("g") and not attribute.graphs:
            return found[-1] if found else None
        return tuple(found)
    return None


@dataclass(frozen=True, slots=True)
class Usage:
    """One read of a value: the node that reads it and the input position it reads it at
    (as onnx-ir's ``Usage``). A node reading a value twice makes two usages."""

    node: Node
    index: int


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
    # Made at the first use, or output, found: most values of a large model have neither a
    # second use nor a place among outputs, and every object the view holds costs the
    # reading and Python's cycle collector alike.
    _uses: list[Usage] | None = None
    _output_of: tuple[weakref.ReferenceType[Scope], ...] = ()

    @property
    def scope(self) -> Scope:
        return _alive(self._scope)

    @property
    def uses(self) -> list[Usage]:
        """Each read of it, as a node and the input position it reads it at, in this scope
        or in any scope below it, in model order."""
        self.scope.view._link_all()
        return [] if self._uses is None else list(self._uses)

    @property
    def consumers(self) -> list[Node]:
        """The nodes that read it, each once, in model order."""
        return list(dict.fromkeys(usage.node for usage in self.uses))

    @property
    def output_of(self) -> list[Scope]:
        """The scopes whose outputs list it (its own scope, or a subgraph returning it)."""
        self.scope.view._link_all()
        return [_alive(scope) for scope in self._output_of]

    @property
    def overridable(self) -> bool:
        """An initializer that a caller may replace (see :func:`is_overridable`)."""
        return self.initializer is not None and self.is_input and self.scope.view.ir_version >= 4

    @property
    def type(self) -> ValueType | None:
        """Its type: inferred where the view was read with types, else declared."""
        return self.scope.own_type(self.name)

    @property
    def is_graph_output(self) -> bool:
        """Whether a graph (its own, or a subgraph that returns it) lists it as an output."""
        return bool(self.output_of)

    def constant(self) -> np.ndarray[Any, Any] | None:
        """Its value when it is a constant whose data is at hand, else ``None``."""
        if self.initializer is not None:
            return None if self.overridable else constant_value(self.initializer)
        producer = self.producer
        if producer is not None and producer.is_op("Constant"):
            return constant_value(producer.proto)
        return None

    def constant_length(self) -> int | None:
        """The number of elements of a constant, read from its dims alone (nothing decoded),
        or ``None`` when it is no constant."""
        source: TensorProto | None = None
        if self.initializer is not None and not self.overridable:
            source = self.initializer
        elif self.producer is not None and self.producer.is_op("Constant"):
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


class Scope:
    """One list of nodes (a graph or a function body), the values it defines, and the scope
    around it."""

    # Its nodes, values and types are read at the first ask: a tool that reads some scopes'
    # nodes only (the run's description of each split node) builds no more, and every
    # object a view holds costs the reading and Python's cycle collector alike.
    # Its holder is found from its parent when asked: a tuple of the nodes that hold it
    # would keep a protobuf object per level alive for every scope.
    __slots__ = (
        "__weakref__",
        "_declared",
        "_digest",
        "_free",
        "_held",
        "_holding",
        "_nodes",
        "_parent",
        "_read_types",
        "_typed_graph",
        "_types",
        "_values",
        "_view",
        "key",
        "label",
        "opset",
        "proto",
    )

    def __init__(
        self,
        view: weakref.ReferenceType[ModelView],
        label: str,
        proto: GraphProto | FunctionProto,
        opset: int | None,
        key: ScopeKey,
        parent: weakref.ReferenceType[Scope] | None,
    ) -> None:
        self._view = view
        self.label = label
        self.proto = proto
        #: The default-domain opset its nodes run at; ``None`` when it imports none.
        self.opset = opset
        #: Its identity in the model (see :data:`~splitops.onnx.model.ScopeKey`).
        self.key = key
        self._parent = parent
        #: The scopes its nodes hold, by the node's index, once asked for.
        self._held: dict[int, list[Scope]] | None = None
        self._nodes: list[Node] | None = None
        self._values: dict[str, Value] | None = None
        self._types: dict[str, TypeProto] | None = None
        self._read_types: dict[str, ValueType | None] | None = None
        self._declared: dict[str, TypeProto] | None = None
        self._free: list[str] | None = None
        self._digest: bytes | None = None
        #: The indexes of its nodes that hold graphs, once found.
        self._holding: tuple[int, ...] | None = None
        #: Its graph in the model the view reads types from, once found (see
        #: :meth:`ModelView._typed_proto`).
        self._typed_graph: GraphProto | FunctionProto | _Unread | None = _UNREAD

    def __repr__(self) -> str:
        return f"Scope({self.label!r})"

    @property
    def nodes(self) -> list[Node]:
        """Its nodes, in order."""
        if self._nodes is None:
            owner = weakref.ref(self)
            self._nodes = [Node(owner, i, proto) for i, proto in enumerate(self.proto.node)]
        return self._nodes

    @property
    def values(self) -> dict[str, Value]:
        """The values it defines, by name: its inputs, initializers and nodes' outputs."""
        if self._values is None:
            self._values = self._define()
        return self._values

    def _type_protos(self) -> dict[str, TypeProto]:
        """The types its protobuf gives its values (and outer values it types), as read:
        inferred where the view was read with types, else declared."""
        if self._types is None:
            self._types = self.view._types_of(self)
        return self._types

    def own_type(self, name: str) -> ValueType | None:
        """The type this scope itself gives ``name``, not an ancestor's (see
        :meth:`type_of`); read once."""
        read = self._read_types
        if read is None:
            read = self._read_types = {}
        elif name in read:
            return read[name]
        found = read[name] = self.view._type_value(self._type_protos().get(name))
        return found

    def declared(self, name: str) -> ValueType | None:
        """The type the model itself declares for ``name`` in this scope (in its
        ``value_info`` or its outputs), whatever types the view reads: ``None`` where it
        declares none, or one that gives no kind."""
        if self._declared is None:
            self._declared = declared_types(self.proto, inputs=False)
        return value_type(self._declared.get(name))

    def _define(self) -> dict[str, Value]:
        proto = self.proto
        owner = weakref.ref(self)
        values = {name: Value(name, owner, is_input=True) for name in self.input_names()}
        if isinstance(proto, GraphProto):
            for tensor in proto.initializer:
                found = values.get(tensor.name)
                if found is None:
                    values[tensor.name] = Value(tensor.name, owner, initializer=tensor)
                else:
                    found.initializer = tensor
        for node in self.nodes:
            for name in node.proto.output:
                if name:
                    values[name] = Value(name, owner, node)
        return values

    @property
    def view(self) -> ModelView:
        return _alive(self._view)

    @property
    def parent(self) -> Scope | None:
        """The scope whose node holds this subgraph; ``None`` for the main graph and
        functions."""
        return None if self._parent is None else _alive(self._parent)

    @property
    def holder(self) -> Node | None:
        """The node of its parent that holds it (an If, Loop, Scan, ...); ``None`` for the
        main graph and function bodies."""
        parent = self.parent
        return None if parent is None else parent.nodes[self.key[1][-1][0]]

    @property
    def attribute_name(self) -> str | None:
        """The name of the attribute of its holder that holds it (``body``,
        ``then_branch``, ...); ``None`` for the main graph and function bodies."""
        path = self.key[1]
        return path[-1][1] if path else None

    @property
    def is_branch(self) -> bool:
        """Whether it is a branch of an If (of the default domain): a graph that some inputs
        never take."""
        parent = self.parent
        if parent is None:
            return False
        # The holder's protobuf, not the view's node: asking every scope of a deep tree
        # would read each parent's nodes into the view.
        holder = parent.proto.node[self.key[1][-1][0]]
        return holder.op_type == "If" and holder.domain in DEFAULT_DOMAINS

    @property
    def in_branch(self) -> bool:
        """Whether it lies inside a branch of an If (of the default domain) at any depth:
        a branch that some inputs never take."""
        scope: Scope | None = self
        while scope is not None:
            if scope.is_branch:
                return True
            scope = scope.parent
        return False

    def free_names(self) -> list[str]:
        """The names it reads from outside itself (its nodes' inputs, its outputs, and what
        the scopes below it read from outside them, that it does not define), in the order
        first read; found once per scope.

        >>> from onnx import helper
        >>> inner = helper.make_graph([helper.make_node("Add", ["a", "k"], ["b"])], "i", [], [])
        >>> loop = helper.make_node("Loop", ["n", ""], ["y"], body=inner, name="loop")
        >>> graph = helper.make_graph([helper.make_node("Neg", ["x"], ["a"]), loop], "g", [], [])
        >>> view = ModelView.read(helper.make_model(graph))
        >>> view.main.held(1)[0].free_names(), view.main.free_names()
        (['a', 'k'], ['x', 'n', 'k'])
        """
        if self._free is not None:
            return self._free
        # Graphs of one digest (:meth:`digest`, where it was asked) read the same names:
        # If branches alike are read once, not once per branch.
        alike = self.view._free_by_digest
        found = None if self._digest is None else alike.get(self._digest)
        if found is None:
            proto = self.proto
            defined = set(self.input_names())
            if isinstance(proto, GraphProto):
                defined.update(tensor.name for tensor in proto.initializer)
            read: list[str] = []
            holds = self._holds
            for index, node in enumerate(proto.node):
                read += node.input
                if holds(index):
                    for scope in self.held(index):
                        read += scope.free_names()
                defined.update(node.output)
            read += self.output_names()
            found = [name for name in dict.fromkeys(read) if name and name not in defined]
            if self._digest is not None:
                alike[self._digest] = found
        self._free = found
        return found

    def digest(self) -> bytes:
        """A digest of its graph as the view reads it (the typed copy's, where the view reads
        types from one): graphs alike, typed alike, have the same digest."""
        if self._digest is None:
            view = self.view
            view._types_read = True
            proto = None if view._typed is None else view._typed_proto(self, view._typed)
            found = self.proto if proto is None else proto
            self._digest = hashlib.blake2b(found.SerializeToString(deterministic=True)).digest()
        return self._digest

    def below(self) -> Iterator[Scope]:
        """This scope, then every scope below it (the graphs its nodes hold, at any depth),
        depth first."""
        # A stack, not nested generators: each scope costs the same at any depth; the
        # scopes a scope holds are found once the caller is done with it.
        stack = [self]
        while stack:
            scope = stack.pop()
            yield scope
            below: list[Scope] = []
            for index in scope.holding():
                below += scope.held(index)
            below.reverse()
            stack += below

    def holding(self) -> list[int]:
        """The indexes of its nodes that hold graphs (found once)."""
        if self._holding is None:
            # A tuple of ints, which Python's cycle collector leaves alone: a model of 32,767
            # scopes keeps one per scope.
            found = []
            for index, node in enumerate(self.proto.node):
                if has_graphs(node):
                    found.append(index)
            self._holding = tuple(found)
        return list(self._holding)

    def _holds(self, index: int) -> bool:
        """Whether its node at ``index`` holds graphs."""
        holding = self._holding
        if holding is None:
            self.holding()
            holding = self._holding
        return index in holding  # type: ignore[operator]

    def held(self, index: int) -> list[Scope]:
        """The scopes of the graphs that its node at ``index`` holds, in order."""
        held = self._held
        if held is None:
            held = self._held = {}
        found = held.get(index)
        if found is None:
            view, node, owner = self._view, self.proto.node[index], weakref.ref(self)
            root, path = self.key
            found = held[index] = [
                Scope(
                    view,
                    subgraph_label(self.label, node, name, k),
                    graph,
                    self.opset,
                    (root, (*path, (index, name, k))),
                    owner,
                )
                for name, k, graph in graph_attributes(node)
            ]
        return found

    @property
    def is_function(self) -> bool:
        return isinstance(self.proto, FunctionProto)

    def value(self, name: str) -> Value | None:
        """The value ``name`` means here: this scope's own, else an ancestor's."""
        found = self.values.get(name)
        if found is not None or self._parent is None:
            return found
        outer: Value | None = self.view._outer(self, name, types=False)
        return outer

    def type_of(self, name: str) -> ValueType | None:
        """The type ``name`` has here (a frozen :class:`~splitops.onnx.model.TensorType`,
        :class:`~splitops.onnx.model.SequenceType` or other): this scope's own, else an
        ancestor's; inferred where the view was read with types, else declared."""
        found = self.own_type(name)
        if found is not None or self._parent is None:
            return found
        outer: ValueType | None = self.view._outer(self, name, types=True)
        return outer

    def tensor_type(self, name: str) -> TensorType | None:
        """The type of ``name`` here where it is a tensor's, else ``None``."""
        found = self.type_of(name)
        return found if isinstance(found, TensorType) else None

    def element(self, name: str) -> int | None:
        """The ``TensorProto`` element type of a tensor value, or ``None`` when unknown."""
        found = self.tensor_type(name)
        return None if found is None else found.element or None

    def dims(self, name: str) -> list[int | None] | None:
        """The static length of each axis of a tensor value (``None`` for a symbolic or
        unknown one), or ``None`` when its rank is unknown."""
        found = self.tensor_type(name)
        dims = None if found is None else found.static_dims
        return None if dims is None else list(dims)

    def split_nodes(self) -> list[Node]:
        """Its Split and SplitToSequence nodes of the default domain, in order; its nodes are
        read only where it holds one."""
        if self._nodes is None and not any(map(is_split_node, self.proto.node)):
            return []
        return [node for node in self.nodes if node.is_split]

    def walk(self) -> Iterator[Node]:
        """Its nodes and those of every scope below it, in model order: each node, then the
        nodes of the graphs it holds (depth first)."""
        stack: list[Iterator[Node]] = [iter(self.nodes)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            yield node
            for scope in reversed(node.held):
                stack.append(iter(scope.nodes))

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

    Read it with :meth:`read`; it does not follow later changes to the protobuf made through
    :class:`~splitops.onnx.model._edits.ModelEdits` (see :meth:`keep`). The view
    owns its scopes, and each scope its nodes and values; they point back to their owners
    weakly, so that a view holds no reference cycle and its memory (the protobuf's, which
    may hold gigabytes of weights) goes back as soon as the view is dropped, without waiting
    for Python's cycle collector. Keep the view while its scopes, nodes and values are used.
    """

    model: ModelProto
    #: The main graph and each function body (the scopes below them are found when asked).
    _tops: list[Scope] = field(default_factory=list)
    _scopes: list[Scope] | None = None
    #: Per base name, the suffix that :meth:`fresh_name` tries next.
    _next: dict[str, int] = field(default_factory=dict)
    _by_key: dict[ScopeKey, Scope] = field(default_factory=dict)
    #: The model inference typed, whose types the scopes take (``None``: their own), and
    #: its graphs and function bodies by scope, each found from its parent's at the first
    #: ask.
    _typed: ModelProto | None = None
    _typed_protos: GraphsAt | None = None
    _names: set[str] | None = None
    _linked: bool = False
    #: The names the graphs of each digest read from outside them (:meth:`Scope.free_names`).
    _free_by_digest: dict[bytes, list[str]] = field(default_factory=dict)
    #: Whether a scope read its types, a digest or its typed graph (:meth:`take_types`).
    _types_read: bool = False
    #: The frozen types read, by the bytes of their message (:meth:`_type_value`).
    _type_values: dict[bytes, ValueType | None] = field(default_factory=dict)
    #: What a name means (its value, or its type) from a scope where the scope itself does
    #: not define it, by scope, once looked up: each scope of a deep nest looks no further
    #: than its parent for a name its siblings looked up already.
    _found: dict[tuple[bool, int, str], Any] = field(default_factory=dict)

    @property
    def ir_version(self) -> int:
        return int(self.model.ir_version)

    @property
    def main(self) -> Scope:
        return self._tops[0]

    @property
    def functions(self) -> dict[FunctionId, Scope]:
        """The body of each model-local function, by its identity (of two functions of one
        identity, the last, as a model's runtime finds it)."""
        return {scope.key[0]: scope for scope in self._tops[1:] if scope.key[0] is not None}

    @property
    def opsets(self) -> dict[str, int]:
        """The opset version the model imports for each domain."""
        return {entry.domain: int(entry.version) for entry in self.model.opset_import}

    def dim_names(self) -> set[str]:
        """Every dim name the model itself declares: in the inputs, ``value_info`` and
        outputs of its graphs, and the ``value_info`` of its function bodies."""
        names: set[str] = set()
        for scope in self.scopes:
            proto = scope.proto
            entries = declared_entries(proto, outputs=True)
            if isinstance(proto, GraphProto):
                entries += proto.input
            for entry in entries:
                names.update(dim_params(entry.type))
        return names

    def take_types(self, typed: ModelProto) -> None:
        """Read types from ``typed`` from now on: a copy of the model with the same nodes
        that inference typed (onnx's own pass over it), found by identity for each scope.
        The types read so far are forgotten; the scopes, nodes and values stay."""
        self._typed, self._typed_protos = typed, None
        self._found.clear()
        self._free_by_digest.clear()
        if not self._types_read:
            return  # nothing to forget: no scope read a type, nor a typed graph
        self._types_read = False
        for top in self._tops:
            stack = [top]
            while stack:
                scope = stack.pop()
                scope._types, scope._read_types, scope._typed_graph = None, None, _UNREAD
                scope._digest = None
                if scope._held:
                    stack += (s for found in scope._held.values() for s in found)

    def _walk(self) -> Iterator[Scope]:
        for top in self._tops:
            yield from top.below()

    @property
    def scopes(self) -> list[Scope]:
        """Every scope: the main graph, every subgraph (depth first) and every function body
        with its subgraphs."""
        if self._scopes is None:
            found = list(self._walk())
            self._scopes = found
        return self._scopes

    @property
    def names(self) -> set[str]:
        """Every name in use anywhere in the model, and the names given out since."""
        if self._names is None:
            self._names = set()
            for scope in self.scopes:
                _add_names(self._names, scope.proto)
        return self._names

    @classmethod
    def read(cls, model: ModelProto, *, types: ModelProto | None = None) -> ModelView:
        """The view of ``model``; with ``types``, a copy of it with the same nodes that
        inference typed (its types stand in for the model's own).

        A scope below the main graph or a function body is found at the first ask (by
        :meth:`scope`, or all of them by :attr:`scopes`), and what each holds is read at the
        first ask too (see :meth:`keep`).
        """
        require_argument(model, ModelProto, "ModelView.read", "an onnx.ModelProto")
        view = cls(model, _typed=types)
        owner = weakref.ref(view)
        opset = default_opset(model.opset_import)
        tops = [Scope(owner, "main", model.graph, opset, (None, ()), None)]
        for function in model.functions:
            key = (function_id(function), ())
            own = function_opset(function, opset)
            tops.append(Scope(owner, function_label(function), function, own, key, None))
        view._tops = tops
        # The main graph and each function body by their identity: of two functions of one
        # identity, the last (as a model's runtime finds it).
        view._by_key = {scope.key: scope for scope in tops}
        return view

    def scope(self, key: ScopeKey) -> Scope | None:
        """The scope whose identity is ``key`` (see
        :data:`~splitops.onnx.model._walk.ScopeKey`), or ``None``: found from its function's
        body (or the main graph) one step down at a time, each scope once."""
        root, path = key
        scope = self._by_key.get((root, ()))
        for step in path:
            index = step[0]
            if scope is None or not 0 <= index < len(scope.proto.node):
                return None
            # Of two graphs of one attribute name, the last (as held_graph finds it).
            scope = next((s for s in reversed(scope.held(index)) if s.key[1][-1] == step), None)
        return scope

    def split_nodes(self) -> Iterator[Node]:
        """Every Split and SplitToSequence node of the default domain, in model order; the
        scopes are found as the walk reaches them."""
        scopes = self._scopes
        for scope in scopes if scopes is not None else self._walk():
            yield from scope.split_nodes()

    def fresh_name(self, base: str) -> str:
        """A name no value of the model has: ``base``, else ``base_1``, ``base_2``, ...; each
        base remembers where it stopped, so naming K values costs K steps, not K^2."""
        names = self.names
        index = self._next.get(base, 0)
        name = base if index == 0 else f"{base}_{index}"
        while name in names:
            index += 1
            name = f"{base}_{index}"
        self._next[base] = index + 1
        names.add(name)
        return name

    def keep(self) -> None:
        """Read now all that the view has not read yet of its model, which is about to
        change (:meth:`ModelEdits.apply <splitops.onnx.model._edits.ModelEdits.apply>`
        calls it): the view goes on telling the model as it was read. (The names in use
        are read later where they are first asked: a name the edits wrote is in use too.)"""
        keep_types = self._typed is None or self._typed is self.model
        for scope in self.scopes:
            _ = scope.values
            if keep_types:
                _ = scope._type_protos()

    def fed_inputs(self) -> list[ValueInfoProto]:
        """The main graph's inputs that a caller must feed (see :func:`fed_inputs`)."""
        return fed_inputs(self.model.graph)

    # -- reading --

    def _link_all(self) -> None:
        """Find every value's uses and the scopes it is an output of, once."""
        if self._linked:
            return
        self._linked = True
        for scope in self.scopes:
            _link(scope)

    def _outer(self, scope: Scope, name: str, *, types: bool) -> Any:
        """What ``name`` means from ``scope``'s parent outwards: its value, or its type."""
        found = self._found
        passed = []
        meaning = None
        around = scope.parent
        while around is not None:
            key = (types, id(around), name)
            if key in found:
                meaning = found[key]
                break
            meaning = around.own_type(name) if types else around.values.get(name)
            if meaning is not None:
                break
            passed.append(key)
            around = around.parent
        for key in passed:
            found[key] = meaning
        return meaning

    def _type_value(self, message: TypeProto | None) -> ValueType | None:
        """``message`` read as a frozen type (:func:`value_type`), once per type of its bytes:
        the values of a model share a few types, which need not be read again."""
        if message is None:
            return None
        key = message.SerializeToString()
        known = self._type_values
        found = known.get(key, _UNREAD)
        if isinstance(found, _Unread):
            found = known[key] = value_type(message)
        return found

    def _types_of(self, scope: Scope) -> dict[str, TypeProto]:
        """The types ``scope`` gives its values: those of its body in the typed model where
        the view was read with one (none where that model lacks the body), else its own."""
        self._types_read = True
        typed = self._typed
        if typed is None:
            return declared_types(scope.proto)
        proto = self._typed_proto(scope, typed)
        return {} if proto is None else declared_types(proto)

    def _typed_proto(self, scope: Scope, typed: ModelProto) -> GraphProto | FunctionProto | None:
        """The graph or function body of ``typed`` where ``scope`` lies in the view's model,
        or ``None``: one step down from its parent's, rather than a walk over ``typed``. A
        graph below is the same graph of the same node: of two graphs of one attribute
        name, which share a key, the one this scope is."""
        found = scope._typed_graph
        if not isinstance(found, _Unread):
            return found
        self._types_read = True
        parent = scope.parent
        proto: GraphProto | FunctionProto | None = None
        if parent is None:
            if self._typed_protos is None:
                self._typed_protos = GraphsAt(typed)
            proto = self._typed_protos(scope.key)
        else:
            above = self._typed_proto(parent, typed)
            index, name, _ = scope.key[1][-1]
            if above is not None and index < len(above.node):
                position = next(k for k, s in enumerate(parent.held(index)) if s is scope)
                graphs = list(graph_attributes(above.node[index]))
                if position < len(graphs) and graphs[position][0] == name:
                    proto = graphs[position][2]
        scope._typed_graph = proto
        return proto

    def places(self) -> Iterator[ScopePlace]:
        """Every scope by its place (:class:`ScopePlace`), in the order of :attr:`scopes`,
        read from the protobufs: a scope is made only where its place's
        :attr:`~ScopePlace.scope` is asked."""
        for top in self._tops:
            stack = [ScopePlace.of(top)]
            while stack:
                place = stack.pop()
                yield place
                below: list[ScopePlace] = []
                for index, node in enumerate(place.proto.node):
                    if has_graphs(node):
                        below += place.held(index)
                below.reverse()
                stack += below

    def place_types(self, place: ScopePlace) -> Callable[[str], ValueType | None]:
        """The type a name has at ``place``, as its scope's :meth:`Scope.type_of` says: read
        from the place's graph where the view reads the model's own types and that graph
        types the name, else from its scope (made then)."""
        own = declared_types(place.proto) if self._typed is None else {}

        def type_of(name: str) -> ValueType | None:
            message = own.get(name)
            found = None if message is None else self._type_value(message)
            return place.scope.type_of(name) if found is None else found

        return type_of


def interface_entries(scope: Scope) -> tuple[list[ValueInfoProto], list[ValueInfoProto]]:
    """Copies of a graph's inputs and outputs as it declares them (for a rewrite that gives
    a subgraph others: :meth:`~splitops.onnx.model.ModelEdits.interface`)."""
    proto = scope.proto
    assert isinstance(proto, GraphProto), "a graph's interface, not a function body's"

    def copied(entries: Iterable[ValueInfoProto]) -> list[ValueInfoProto]:
        found = []
        for entry in entries:
            copy = ValueInfoProto()
            copy.CopyFrom(entry)
            found.append(copy)
        return found

    return copied(proto.input), copied(proto.output)


def split_nodes(model: ModelProto) -> Iterator[tuple[Scope, NodeProto]]:
    """Every Split and SplitToSequence node of the default domain, with its scope, in model
    order; a scope not holding one is not read. The scopes' labels, opsets, protobufs and
    identities outlive the walk; what else a scope reads needs a view kept
    (:class:`ModelView`).

    >>> from onnx import helper
    >>> body = helper.make_graph([helper.make_node("Split", ["x"], ["a"])], "body", [], [])
    >>> loop = helper.make_node("Loop", ["n", ""], [], body=body, name="loop_1")
    >>> graph = helper.make_graph([loop], "g", [], [])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    >>> [(scope.label, node.op_type) for scope, node in split_nodes(model)]
    [('main/loop_1.body', 'Split')]
    """
    require_argument(model, ModelProto, "split_nodes", "an onnx.ModelProto")
    return _split_nodes(ModelView.read(model))


def _split_nodes(view: ModelView) -> Iterator[tuple[Scope, NodeProto]]:
    for node in view.split_nodes():
        yield node.scope, node.proto


def fed_inputs(graph: GraphProto) -> list[ValueInfoProto]:
    """The inputs of ``graph`` (a model's main graph) that a caller must feed: those no
    initializer fills (one that fills an input is a constant before IR 4, a default the
    caller may replace by name from IR 4 on). A node's output of an input's name is no
    initializer's.

    >>> from onnx import TensorProto, helper
    >>> x, w = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [1]) for n in "xw")
    >>> graph = helper.make_graph([], "g", [x, w], [x],
    ...     initializer=[helper.make_tensor("w", TensorProto.FLOAT, [1], [0.5])])
    >>> [entry.name for entry in fed_inputs(graph)]
    ['x']
    """
    filled = {tensor.name for tensor in graph.initializer}
    if filled:
        filled.difference_update(name for node in graph.node for name in node.output if name)
    return [entry for entry in graph.input if entry.name not in filled]


def input_types(model: ModelProto, *, fed: bool = False) -> dict[str, ValueType | None]:
    """The inputs of ``model``'s main graph by name, in order, each with the type it declares
    (``None`` where it declares none), a negative length as written (no tensor has one: a
    check of what is fed names it); with ``fed``, only those a caller must feed
    (:func:`fed_inputs`).

    >>> from onnx import TensorProto, helper
    >>> x, w = (helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", -1]) for n in "xw")
    >>> graph = helper.make_graph([], "g", [x, w], [x],
    ...     initializer=[helper.make_tensor("w", TensorProto.FLOAT, [1], [0.5])])
    >>> input_types(helper.make_model(graph), fed=True)
    {'x': TensorType(element=1, dims=('N', -1))}
    """
    graph = model.graph
    entries = fed_inputs(graph) if fed else graph.input
    return {entry.name: value_type(entry.type, as_written=True) for entry in entries}


def model_nodes(model: ModelProto) -> Iterator[tuple[int | None, Node]]:
    """Each node of ``model`` read alone (:meth:`Node.alone`), with the default-domain opset
    its body runs at, in the order of :func:`~splitops.onnx.model.model_graphs`: for a check
    of each node by itself, which reads no more than the protobufs (a view of a model of
    thousands of nested graphs takes seconds to read).

    >>> from onnx import helper
    >>> graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g", [], [])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    >>> [(opset, node.op_type) for opset, node in model_nodes(model)]
    [(18, 'Neg')]
    """
    main = default_opset(model.opset_import)
    bodies: list[tuple[int | None, GraphProto | FunctionProto]] = [(main, model.graph)]
    bodies += ((function_opset(function, main), function) for function in model.functions)
    for opset, body in bodies:
        for proto in graphs_below(body):
            for node in proto.node:
                yield opset, Node.alone(node)


def output_types(model: ModelProto) -> list[tuple[str, ValueType | None]]:
    """The outputs of ``model``'s main graph in order, each as its name and the type it
    declares (``None`` where it declares none); a graph may list one value twice.

    >>> from onnx import TensorProto, helper
    >>> y = helper.make_tensor_value_info("y", TensorProto.INT64, [2])
    >>> output_types(helper.make_model(helper.make_graph([], "g", [y], [y, y])))
    [('y', TensorType(element=7, dims=(2,))), ('y', TensorType(element=7, dims=(2,)))]
    """
    return [(entry.name, value_type(entry.type)) for entry in model.graph.output]


def _add_names(names: set[str], proto: GraphProto | FunctionProto) -> None:
    """Add the names ``proto`` uses to ``names``: its inputs, initializers, ``value_info``,
    outputs, and its nodes' inputs and outputs."""
    if isinstance(proto, GraphProto):
        names.update(entry.name for entry in proto.input)
        names.update(tensor.name for tensor in proto.initializer)
        names.update(entry.name for entry in proto.value_info)
        names.update(entry.name for entry in proto.output)
    else:
        names.update(proto.input)
        names.update(proto.output)
    for node in proto.node:
        names.update(node.input)
        names.update(name for name in node.output if name)


def _link(scope: Scope) -> None:
    for node in scope.nodes:
        for index, name in enumerate(node.proto.input):
            if name:
                found = scope.value(name)
                if found is None:
                    continue
                usage = Usage(node, index)
                if found._uses is None:
                    found._uses = [usage]
                else:
                    found._uses.append(usage)
    for name in scope.output_names():
        found = scope.value(name)
        if found is not None:
            found._output_of += (weakref.ref(scope),)


@dataclass(eq=False, slots=True)
class ScopePlace:
    """Where a scope lies, read from the protobufs alone: its label, identity, opset and
    graph, and whether it lies inside a branch of an If. Its :class:`Scope` is made only
    when asked (:attr:`scope`), one step down from its parent's, so that a walk that passes
    every graph of a model but reads few of them (the placing of inference's outcomes in a
    model of 32,767 graphs) makes few scopes.

    >>> from onnx import helper
    >>> branch = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "b", [], [])
    >>> node = helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch,
    ...                         name="if")
    >>> view = ModelView.read(helper.make_model(helper.make_graph([node], "g", [], [])))
    >>> first, _ = ScopePlace.of(view.main).held(0)  # onnx sorts attributes by name
    >>> first.label, first.key, first.in_branch, first.op_type(0)
    ('main/if.else_branch', (None, ((0, 'else_branch', -1),)), True, 'Neg')
    >>> first.scope is view.main.held(0)[0]
    True
    """

    label: str
    #: Its identity (see :data:`~splitops.onnx.model.ScopeKey`).
    key: ScopeKey
    opset: int | None
    proto: GraphProto | FunctionProto
    #: Whether it lies inside a branch of an If (of the default domain), at any depth.
    in_branch: bool
    #: Where its scope is found: among those its parent's node at ``index`` holds, at
    #: ``position``.
    parent: ScopePlace | None = None
    index: int = 0
    position: int = 0
    #: Its scope, once made.
    made: Scope | None = None

    @classmethod
    def of(cls, scope: Scope) -> ScopePlace:
        """The place of ``scope``."""
        return cls(scope.label, scope.key, scope.opset, scope.proto, scope.in_branch, made=scope)

    @property
    def scope(self) -> Scope:
        """Its scope, made where not yet made (its ancestors' too), as :meth:`Scope.held`
        makes it."""
        pending: list[ScopePlace] = []
        place = self
        while place.made is None:
            pending.append(place)
            assert place.parent is not None  # a place below one made from a scope
            place = place.parent
        found = place.made
        for place in reversed(pending):
            found = place.made = found.held(place.index)[place.position]
        return found

    def held(self, index: int) -> list[ScopePlace]:
        """The places of the graphs its node at ``index`` holds, in order (those of
        :meth:`Scope.held`)."""
        node = self.proto.node[index]
        in_branch = self.in_branch or (node.op_type == "If" and node.domain in DEFAULT_DOMAINS)
        root, path = self.key
        label, opset = self.label, self.opset
        return [
            ScopePlace(
                subgraph_label(label, node, name, k),
                (root, (*path, (index, name, k))),
                opset,
                graph,
                in_branch,
                parent=self,
                index=index,
                position=position,
            )
            for position, (name, k, graph) in enumerate(graph_attributes(node))
        ]

    def node_proto(self, index: int) -> NodeProto:
        """The protobuf of its node at ``index``."""
        node: NodeProto = self.proto.node[index]
        return node

    def op_type(self, index: int) -> str:
        """The operator of its node at ``index``."""
        op: str = self.proto.node[index].op_type
        return op
