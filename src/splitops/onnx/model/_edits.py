"""Rewriting the Split and SplitToSequence nodes of a model: edits planned against its
:class:`~splitops.onnx.model._view.ModelView`, applied in one pass per scope.

:func:`~splitops.convert_model` and :func:`~splitops.lower_model` read the model once (its
view: scopes, values, types, constants, uses, names), plan each node's new form as
replacement nodes and constants (:class:`ModelEdits`), and apply everything at the end. An
edit names the view's own :class:`~splitops.onnx.model._view.Node` or
:class:`~splitops.onnx.model._view.Value`, never a label or an index, so two sibling
branches that share names, or two nodes that share a label, are never confused. Each edited
scope is rebuilt once, whatever the number of edits in it, so a rewrite costs time in
proportion to the model.

What a rewrite no longer reads, :meth:`ModelEdits.apply` removes when nothing else reads
it: a constant (an initializer or a Constant node) given to :meth:`ModelEdits.drop`, and the
``value_info`` of a value given to :meth:`ModelEdits.forget`. A graph input is never
removed, nor the initializer of one: the inputs a caller feeds stay exactly as they were.

>>> from onnx import TensorProto, helper
>>> from splitops.onnx.model._view import ModelView
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x", "s"], ["a", "b"], name="halves")], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
>>> view = ModelView.read(model)
>>> node = next(view.split_nodes())
>>> edits = ModelEdits(view)
>>> new = helper.make_node("Split", ["x", view.fresh_name("halves_split")], ["a", "b"])
>>> edits.replace(node, [*edits.int64_constant(node.scope, new.input[1], [1, 3]), new])
>>> edits.apply()
>>> [i.name for i in model.graph.initializer], list(model.graph.node[0].input)
(['halves_split'], ['x', 'halves_split'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)

from ...core import SplitSource, opset_rule, read_sizes
from ._node import DEFAULT_DOMAINS, SplitNode
from ._view import ModelView, Node, Scope, Value
from ._walk import ScopeKey, model_graphs

__all__ = [
    "ModelEdits",
    "given_sizes",
    "name_nodes",
    "remove_where",
    "renamed_copy",
    "rewrite_body",
    "route_outputs",
    "set_default_opset",
    "write_split_sizes",
]


@dataclass
class ModelEdits:
    """Replacements of nodes, new constants, and values to drop, planned against one view and
    applied at once.

    :meth:`apply` rebuilds each edited scope once, the deepest first, so that a subgraph's
    edits are inside its node when that node is copied.
    """

    view: ModelView
    _scopes: dict[ScopeKey, Scope] = field(default_factory=dict)
    _replaced: dict[ScopeKey, dict[int, list[NodeProto]]] = field(default_factory=dict)
    _initializers: dict[ScopeKey, list[TensorProto]] = field(default_factory=dict)
    _dropped: list[Value] = field(default_factory=list)
    #: The dropped values whose computing nodes go too (by identity).
    _computed: set[int] = field(default_factory=set)
    _forgotten: list[Value] = field(default_factory=list)
    #: What :meth:`key_after` found, and the shifts of each edited scope's nodes.
    _moved: dict[ScopeKey, ScopeKey] = field(default_factory=dict)
    _shifts: dict[ScopeKey, list[tuple[int, int]]] = field(default_factory=dict)
    #: The main graph's shared int64 constants, by their values (:meth:`shared_int64`).
    _shared: dict[tuple[int, ...], str] = field(default_factory=dict)
    #: The nodes that keep their place but read and write other values (:meth:`reconnect`),
    #: and the subgraphs given other inputs and outputs (:meth:`interface`).
    _reconnected: dict[ScopeKey, dict[int, tuple[list[str], list[str]]]] = field(
        default_factory=dict
    )
    _interfaces: dict[ScopeKey, tuple[list[ValueInfoProto], list[ValueInfoProto]]] = field(
        default_factory=dict
    )
    #: Nodes placed before a node that stays (:meth:`insert_before`).
    _before: dict[ScopeKey, dict[int, list[NodeProto]]] = field(default_factory=dict)

    def replace(self, node: Node, nodes: Sequence[NodeProto]) -> None:
        """Put ``nodes`` (none to remove it) in the place of ``node``."""
        self._scopes[node.scope.key] = node.scope
        self._replaced.setdefault(node.scope.key, {})[node.index] = list(nodes)

    def name_omitted(self, nodes: Sequence[NodeProto], base: str) -> None:
        """Give each output that a Split among ``nodes`` leaves out a fresh name from
        ``base``: onnxruntime 1.31 and 1.32 die by SIGSEGV running a Split that leaves an
        output out, and tract refuses it ("Op says 3, node says 1")."""
        for new in nodes:
            if new.op_type == "Split" and "" in new.output:
                for index, name in enumerate(new.output):
                    if not name:
                        new.output[index] = self.view.fresh_name(base)

    def is_replaced(self, node: Node) -> bool:
        return node.index in self._replaced.get(node.scope.key, {})

    def reconnect(self, node: Node, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        """``node`` keeps its place, operator and attributes (the graphs it holds, with their
        own edits) but reads ``inputs`` and writes ``outputs``: a Loop that carries other
        values. A node replaced (:meth:`replace`) is not reconnected."""
        self._scopes[node.scope.key] = node.scope
        self._reconnected.setdefault(node.scope.key, {})[node.index] = (list(inputs), list(outputs))

    def insert_before(self, node: Node, nodes: Sequence[NodeProto]) -> None:
        """Place ``nodes`` just before ``node``, which stays (or is reconnected)."""
        if nodes:
            self._scopes[node.scope.key] = node.scope
            self._before.setdefault(node.scope.key, {}).setdefault(node.index, []).extend(nodes)

    def interface(
        self, scope: Scope, inputs: Sequence[ValueInfoProto], outputs: Sequence[ValueInfoProto]
    ) -> None:
        """The subgraph ``scope`` takes ``inputs`` and gives ``outputs`` (a Loop's body that
        carries other values)."""
        assert scope.key[1], "a subgraph's interface, never the main graph's"
        self._scopes[scope.key] = scope
        self._interfaces[scope.key] = (list(inputs), list(outputs))

    def int64_constant(self, scope: Scope, name: str, values: Iterable[int]) -> list[NodeProto]:
        """A constant 1-d int64 tensor ``name``: an initializer in a graph (returns no node),
        a Constant node in a function, which has no initializers, or in a model before IR 4
        (returns that node, for the caller to place before the nodes that read it)."""
        tensor = numpy_helper.from_array(np.array(list(values), dtype=np.int64), name)
        return self.tensor_constant(scope, tensor)

    def shared_int64(
        self, scope: Scope, base: str, values: Iterable[int]
    ) -> tuple[str, list[NodeProto]]:
        """The name of a constant 1-d int64 tensor of ``values`` that ``scope`` reads, and
        the nodes to place before its readers. In the main graph and the graphs below it
        (from IR 4), one initializer of the main graph, which every graph below sees, serves
        every scope that asks for the same values: a model whose Ifs repeat one Split in
        16,384 branches gets one constant, not 16,384. Elsewhere (a function, which has no
        initializers and sees no outer value; a model before IR 4) a constant of its own
        (:meth:`int64_constant`), named from ``base``."""
        values = tuple(values)
        if scope.key[0] is not None or self.view.ir_version < 4:
            name = self.view.fresh_name(base)
            return name, self.int64_constant(scope, name, values)
        shared = self._shared.get(values)
        if shared is None:
            shared = self._shared[values] = self.view.fresh_name(base)
            self.int64_constant(self.view.main, shared, values)
        return shared, []

    def tensor_constant(self, scope: Scope, tensor: TensorProto) -> list[NodeProto]:
        """:meth:`int64_constant` for any tensor. Before IR version 4 every initializer must
        also be a graph input, and a rewrite adds no input: there, too, the constant is a
        Constant node."""
        if isinstance(scope.proto, FunctionProto) or self.view.ir_version < 4:
            return [helper.make_node("Constant", [], [tensor.name], value=tensor)]
        self._scopes[scope.key] = scope
        self._initializers.setdefault(scope.key, []).append(tensor)
        return []

    def copied_constant(self, value: Value, scope: Scope, name: str) -> list[NodeProto]:
        """The initializer of ``value`` (a subgraph's own constant) as the constant ``name``
        of ``scope`` (see :meth:`tensor_constant`): a Loop's body unrolled into its parent."""
        assert value.initializer is not None
        tensor = TensorProto()
        tensor.CopyFrom(value.initializer)
        tensor.name = name
        return self.tensor_constant(scope, tensor)

    def drop(self, value: Value | None, *, computed: bool = False) -> None:
        """Remove the constant ``value`` (an initializer or a Constant node) if nothing reads
        it once the edits are made; a graph input, or what is no constant, stays. With
        ``computed``, so does a value that nodes compute (of the default domain, holding no
        graph), with what they read that nothing else does: a Loop's trip count once the
        Loop is gone."""
        if value is not None:
            self._dropped.append(value)
            if computed:
                self._computed.add(id(value))

    def forget(self, value: Value) -> None:
        """``value`` is gone from the model: drop its ``value_info``."""
        self._forgotten.append(value)

    def apply(self) -> None:
        """Drop what is no longer read, then rebuild every edited scope once, the deepest
        first."""
        self.view.keep()
        self._drop_unread()
        for value in self._forgotten:
            proto = value.scope.proto
            if isinstance(proto, GraphProto):
                self._scopes[value.scope.key] = value.scope
        gone: dict[ScopeKey, set[str]] = {}
        for value in self._forgotten:
            gone.setdefault(value.scope.key, set()).add(value.name)
        # A node placed in the place of another may keep its name; no other node may.
        used = _NodeNames(
            node.proto.name
            for scope in self.view.scopes
            for node in scope.nodes
            if not self.is_replaced(node)
        )
        for key in sorted(self._scopes, key=lambda k: -len(k[1])):
            proto = self._scopes[key].proto
            replaced = self._replaced.get(key, {})
            reconnected = self._reconnected.get(key, {})
            before = self._before.get(key, {})
            for placed in (*replaced.values(), *before.values()):
                for node in placed:
                    if not node.name or node.name in used:
                        node.name = used.fresh(node)
                    used.add(node.name)
            if replaced or reconnected or before:
                nodes: list[NodeProto] = []
                for index, node in enumerate(proto.node):
                    nodes.extend(before.get(index, ()))
                    if index in reconnected and index not in replaced:
                        node = _copy(node)
                        inputs, outputs = reconnected[index]
                        del node.input[:], node.output[:]
                        node.input.extend(inputs)
                        node.output.extend(outputs)
                    nodes.extend(replaced.get(index, (node,)))
                kept = [_copy(node) for node in nodes]
                del proto.node[:]
                proto.node.extend(kept)
            interface = self._interfaces.get(key)
            if interface is not None and isinstance(proto, GraphProto):
                for entries, given in zip((proto.input, proto.output), interface, strict=True):
                    del entries[:]
                    entries.extend(given)
            if isinstance(proto, GraphProto):
                names = gone.get(key, set())
                remove_where(proto.initializer, partial(_named, names))
                remove_where(proto.value_info, partial(_named, names))
                proto.initializer.extend(self._initializers.get(key, ()))

    def edited_scopes(self) -> list[Scope]:
        """The scopes whose nodes, initializers or value_info the edits change."""
        return list(self._scopes.values())

    def key_after(self, key: ScopeKey) -> ScopeKey:
        """Where the scope ``key`` of the view lies once the edits are applied: each step
        down moves by the nodes that replaced those before its holder (a holder of graphs
        is never replaced itself). Each key is worked out once, from its parent's."""
        found = self._moved.get(key)
        if found is not None:
            return found
        root, path = key
        if not path:
            found = key
        else:
            _, parent_path = self.key_after((root, path[:-1]))
            index, name, k = path[-1]
            shifts = self._shifts.get((root, path[:-1]))
            if shifts is None:
                replaced = self._replaced.get((root, path[:-1]), {})
                shifts = sorted((at, len(nodes) - 1) for at, nodes in replaced.items())
                # Nodes placed before a node move it too: as if placed after the one before.
                before = self._before.get((root, path[:-1]), {})
                shifts += [(at - 1, len(nodes)) for at, nodes in before.items()]
                self._shifts[(root, path[:-1])] = shifts
            shift = sum(by for at, by in shifts if at < index)
            found = root, (*parent_path, (index + shift, name, k))
        self._moved[key] = found
        return found

    def _drop_unread(self) -> None:
        """Mark each value given to :meth:`drop` that nothing reads after the edits: its
        Constant node is removed, its initializer forgotten; a computed one's node removed
        too, and what that node read given to :meth:`drop` in turn, round by round."""
        while self._dropped:
            read = self._read_values()
            dropped, self._dropped = self._dropped, []
            for value in dropped:
                if id(value) in read or value.is_input or value.output_of:
                    continue
                producer = value.producer
                if value.initializer is not None:
                    self._forgotten.append(value)
                elif (
                    producer is not None
                    and producer.proto.domain in DEFAULT_DOMAINS
                    and not self.is_replaced(producer)
                    and (producer.op_type == "Constant" or id(value) in self._computed)
                    and not producer.held
                    and all(
                        out is None or (id(out) not in read and not out.output_of)
                        for out in producer.outputs
                    )
                ):
                    self.replace(producer, [])
                    self._forgotten.extend(out for out in producer.outputs if out is not None)
                    if id(value) in self._computed:
                        for given in producer.inputs:
                            if given is not None:
                                self.drop(given, computed=True)

    def _read_values(self) -> set[int]:
        """The values (by identity) that some node reads, or a graph gives, once the edits
        are made."""
        read: set[int] = set()
        for scope in self.view.scopes:
            replaced = self._replaced.get(scope.key, {})
            lists: list[Iterable[NodeProto]] = [
                [node.proto for node in scope.nodes if node.index not in replaced],
                *replaced.values(),
            ]
            names = {name for protos in lists for proto in protos for name in proto.input}
            names.update(scope.output_names())
            for name in names:
                found = scope.value(name) if name else None
                if found is not None:
                    read.add(id(found))
        return read


def name_nodes(model: ModelProto) -> int:
    """Give every node of ``model`` (its graphs at any depth, its functions' bodies) without a
    name, or with one an earlier node has, a name no other node has: its operator and what it
    computes (its first output's name), numbered where taken. Returns how many it named.

    onnx2torch keys the modules it converts by node name, and fails on two nodes named
    alike (an empty name included), and on a name that a ``torch.nn.Module`` attribute has
    (a node named ``half``: "attribute 'half' already exists"), which the operator in front
    avoids (as in the names of the nodes edits place); its target runs this on the whole
    lowered model. Every other rewrite names only
    the nodes it places (:meth:`ModelEdits.apply`) and leaves the model's own as they came.

    >>> graph = helper.make_graph([helper.make_node("Neg", ["x"], ["half"]),
    ...     helper.make_node("Neg", ["half"], ["z"], name="Neg_half")], "g", [], [])
    >>> model = helper.make_model(graph)
    >>> name_nodes(model), [node.name for node in model.graph.node]
    (1, ['Neg_half_1', 'Neg_half'])
    """
    graphs = list(model_graphs(model))
    taken: dict[str, int] = {}
    for graph in graphs:
        for node in graph.node:
            if node.name:
                taken[node.name] = taken.get(node.name, 0) + 1
    used = _NodeNames(taken)
    named = 0
    for graph in graphs:
        for node in graph.node:
            if node.name and taken.get(node.name, 0) == 1:
                continue
            if node.name:
                taken[node.name] -= 1  # the last of a repeated name keeps it
                if taken[node.name] == 0:
                    continue
            node.name = used.fresh(node)
            named += 1
    return named


class _NodeNames:
    """The node names taken in a model, and fresh ones: a node's operator and its first
    output's name (a bare output name may be a word that onnx2torch cannot take: ``half``),
    numbered when taken.

    Names are only ever added, so a number once found taken stays taken: each base's
    numbering resumes where it stopped, and naming n nodes alike costs n steps, not n²/2
    (16,384 Splits named ``halves`` took half a minute).

    >>> names = _NodeNames(["Neg_y", "Neg_y_1"])
    >>> [names.fresh(helper.make_node("Neg", ["x"], ["y"])) for _ in range(2)]
    ['Neg_y_2', 'Neg_y_3']
    """

    def __init__(self, taken: Iterable[str]) -> None:
        self._taken = set(taken)
        self._numbered: dict[str, int] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._taken

    def add(self, name: str) -> None:
        self._taken.add(name)

    def fresh(self, node: NodeProto) -> str:
        """A name for ``node`` that no node has, now taken."""
        output = next((name for name in node.output if name), "")
        base = f"{node.op_type}_{output}" if output else (node.op_type or "node")
        taken = self._taken
        name, index = base, self._numbered.get(base, 0)
        if index:
            name = f"{base}_{index}"
        while name in taken:
            index += 1
            name = f"{base}_{index}"
        self._numbered[base] = index
        taken.add(name)
        return name


def route_outputs(
    model: ModelProto,
    renamed: Mapping[str, str],
    passing: Callable[[str, str], Sequence[NodeProto]],
) -> int:
    """Each main graph output named in ``renamed`` written by its node under its new name,
    then by the nodes ``passing(new, output)`` gives, placed right after that node (so that
    what reads the output still reads it after it is written) under names no other node has.
    Returns how many.

    >>> graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g", [],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    >>> model = helper.make_model(graph)
    >>> route_outputs(model, {"y": "y0"}, lambda a, b: [helper.make_node("Identity", [a], [b])])
    1
    >>> [(n.op_type, list(n.input), list(n.output)) for n in model.graph.node]
    [('Neg', ['x'], ['y0']), ('Identity', ['y0'], ['y'])]
    """
    if not renamed:
        return 0
    used = _NodeNames(node.name for graph in model_graphs(model) for node in graph.node)
    nodes: list[NodeProto] = []
    for node in model.graph.node:
        nodes.append(node)
        for index, name in enumerate(node.output):
            if name in renamed:
                node.output[index] = renamed[name]
                for placed in passing(renamed[name], name):
                    if not placed.name or placed.name in used:
                        placed.name = used.fresh(placed)
                    used.add(placed.name)
                    nodes.append(placed)
    kept = [_copy(node) for node in nodes]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return len(renamed)


def renamed_copy(
    node: NodeProto, inputs: Mapping[str, str], outputs: Mapping[str, str]
) -> NodeProto:
    """A copy of ``node`` that reads ``inputs[name]`` for each name it reads that ``inputs``
    maps, also where a graph it holds reads that name from outside (not where the graph
    defines a name of its own), and writes ``outputs[name]`` for each output ``outputs``
    maps: a body copied once per iteration of an unrolled Loop.

    >>> body = helper.make_graph([helper.make_node("Neg", ["v"], ["w"])], "b", [],
    ...     [helper.make_tensor_value_info("w", TensorProto.FLOAT, None)])
    >>> node = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)
    >>> copy = renamed_copy(node, {"c": "c1", "v": "v1"}, {"y": "y1"})
    >>> list(copy.input), list(copy.output), list(copy.attribute[0].g.node[0].input)
    (['c1'], ['y1'], ['v1'])
    """
    copy = _copy(node)
    for index, name in enumerate(copy.input):
        copy.input[index] = inputs.get(name, name)
    for index, name in enumerate(copy.output):
        copy.output[index] = outputs.get(name, name)
    for attribute in copy.attribute:
        for graph in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
            _rename_free(graph, inputs)
    return copy


def _rename_free(graph: GraphProto, mapping: Mapping[str, str]) -> None:
    """Rename, in place, the names ``graph`` reads from outside (those it does not define)."""
    own = {entry.name for entry in graph.input}
    own.update(tensor.name for tensor in graph.initializer)
    own.update(name for node in graph.node for name in node.output)
    free = {name: new for name, new in mapping.items() if name not in own}
    if not free:
        return
    for node in graph.node:
        for index, name in enumerate(node.input):
            node.input[index] = free.get(name, name)
        for attribute in node.attribute:
            for held in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                _rename_free(held, free)
    for entry in graph.output:
        entry.name = free.get(entry.name, entry.name)


def _copy(node: NodeProto) -> NodeProto:
    copy = NodeProto()
    copy.CopyFrom(node)
    return copy


def given_sizes(scope: Scope, spec: SplitNode) -> tuple[int, ...] | None:
    """A Split node's explicit sizes as ints, or ``None`` when it has none or they are not
    constant (an initializer or a Constant node), as its ``scope`` sees them."""
    if spec.split_attribute is not None:
        return spec.split_attribute
    if spec.split_input is None:
        return None
    value = scope.constant(spec.split_input)
    if value is None:
        return None
    sizes = read_sizes(value, spec.rule, allow_scalar=False)
    return sizes if isinstance(sizes, tuple) else None


def write_split_sizes(
    new: NodeProto,
    scope: Scope,
    opset: int,
    sizes: Sequence[int],
    edits: ModelEdits,
    label: str,
) -> list[NodeProto]:
    """Give the Split node ``new`` (data input only, no ``split``) the explicit ``sizes`` in
    the form of the Split version of ``opset``: the ``split`` attribute (Split-1, 2, 11), or
    an int64 constant as the second input (Split-13, 18), shared by the Splits of the same
    sizes (:meth:`ModelEdits.shared_int64`). Returns the nodes to place before ``new`` (a
    Constant node, inside a function)."""
    if SplitSource.ATTRIBUTE in opset_rule("Split", opset).split_sources:
        new.attribute.append(helper.make_attribute("split", list(sizes)))
        return []
    name, nodes = edits.shared_int64(scope, f"{label}_split", sizes)
    new.input.append(name)
    return nodes


def remove_where(container: Any, doomed: Callable[[Any], bool]) -> None:
    """Remove the items of a repeated protobuf field for which ``doomed`` is true."""
    if not any(doomed(item) for item in container):
        return
    keep = [item for item in container if not doomed(item)]
    del container[:]
    container.extend(keep)


def _named(names: set[str], item: Any) -> bool:
    return item.name in names


def rewrite_body(function: Scope, rewrite: Callable[[ModelProto], ModelProto]) -> None:
    """Run ``rewrite``, a tool that takes and gives models (onnx.version_converter), on the
    body of the model-local function ``function``: its nodes go through it as the main graph
    of a model of the function's inputs and outputs (untyped) and opsets, and come back in
    its place. The view's scope of that body tells the nodes it had.

    >>> body = [helper.make_node("Neg", ["x"], ["y"])]
    >>> function = helper.make_function("d", "F", ["x"], ["y"], body, [])
    >>> model = helper.make_model(helper.make_graph([], "g", [], []), functions=[function])
    >>> def absolute(wrapper):
    ...     wrapper.graph.node[0].op_type = "Abs"
    ...     return wrapper
    >>> rewrite_body(ModelView.read(model).functions["d", "F", ""], absolute)
    >>> model.functions[0].node[0].op_type
    'Abs'
    """
    body = function.proto
    assert isinstance(body, FunctionProto)  # a function's scope
    graph = helper.make_graph(
        list(body.node),
        body.name,
        [helper.make_empty_tensor_value_info(name) for name in body.input],
        [helper.make_empty_tensor_value_info(name) for name in body.output],
    )
    rewritten = rewrite(helper.make_model(graph, opset_imports=list(body.opset_import)))
    del body.node[:]
    body.node.extend(rewritten.graph.node)


def set_default_opset(model: ModelProto, version: int) -> None:
    """Make ``model`` and its local functions import ONNX's own domain at ``version``, where
    they import it, and its IR version one that takes that opset (never a lower one).

    >>> model = helper.make_model(helper.make_graph([], "g", [], []), ir_version=6,
    ...                           opset_imports=[helper.make_opsetid("", 11)])
    >>> set_default_opset(model, 21)
    >>> model.opset_import[0].version, model.ir_version
    (21, 10)
    """
    for owner in (model, *model.functions):
        for entry in owner.opset_import:
            if entry.domain in DEFAULT_DOMAINS:
                entry.version = version
    needed = helper.find_min_ir_version_for([helper.make_opsetid("", version)], ignore_unknown=True)
    model.ir_version = max(model.ir_version, needed)
