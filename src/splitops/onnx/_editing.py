"""Rewriting the Split and SplitToSequence nodes of a model: what a rewrite knows about the
model, and the edits, applied in one pass per body.

:func:`~splitops.convert_model` and :func:`~splitops.lower_model` both read every node first
(types, constant values, names in use: :class:`ModelFacts`), plan each node's new form as
replacement nodes and constants (:class:`ModelEdits`), and apply everything at the end. Each
edited body is rebuilt once, whatever the number of edits in it, so a rewrite costs time in
proportion to the model.

>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x", "s"], ["a", "b"], name="halves")], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
>>> from splitops.onnx._graphs import main_body
>>> body = main_body(model)
>>> facts = ModelFacts.read(model, {})
>>> edits = ModelEdits()
>>> new = helper.make_node("Split", ["x", facts.fresh_name("halves_split")], ["a", "b"])
>>> edits.replace(body, 0, [*edits.int64_constant(body, new.input[1], [1, 3]), new])
>>> edits.apply()
>>> [i.name for i in model.graph.initializer], list(model.graph.node[0].input)
(['halves_split'], ['x', 'halves_split'])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TensorProto,
    TypeProto,
    helper,
    numpy_helper,
)

from ..core import SplitSource, opset_rule, read_sizes
from ._graphs import (
    Body,
    ScopeConstants,
    iter_bodies,
    iter_nodes,
    scope_constants,
)
from ._node import SplitNode
from ._types import dim_of, tensor_parts

__all__ = [
    "ModelEdits",
    "ModelFacts",
    "drop_unused_constants",
    "given_sizes",
    "remove_where",
    "write_split_sizes",
]


@dataclass
class ModelFacts:
    """What a rewrite needs to know about names: types, constant values, and every name in
    use, per scope (the main graph with its subgraphs, or one function)."""

    model: ModelProto
    types: dict[str, dict[str, TypeProto]]
    constants: ScopeConstants = field(default_factory=lambda: ScopeConstants({}))
    names: set[str] = field(default_factory=set)
    #: Per base name, the suffix that fresh_name tries next: naming K outputs costs K steps.
    _next: dict[str, int] = field(default_factory=dict)

    @classmethod
    def read(cls, model: ModelProto, types: dict[str, dict[str, TypeProto]]) -> ModelFacts:
        """The facts of ``model``, given the type of each value per scope (``value_types``
        of an inferred copy)."""
        facts = cls(model, types, scope_constants(model))
        for body in iter_bodies(model):
            facts._read_names(body)
        return facts

    def type_of(self, body: Body, name: str) -> TypeProto | None:
        return self.types.get(body.root, {}).get(name)

    def element(self, body: Body, name: str) -> int | None:
        """The ``TensorProto`` element type of a tensor value, or ``None`` when unknown."""
        return tensor_parts(self.type_of(body, name))[0] or None

    def dims(self, body: Body, name: str) -> list[int | None] | None:
        """The static length of each axis of a tensor value (``None`` for a symbolic or
        unknown one), or ``None`` when its rank is unknown."""
        _, dims = tensor_parts(self.type_of(body, name))
        if dims is None:
            return None
        return [length if isinstance(length, int) else None for length in map(dim_of, dims)]

    def constant(self, body: Body, name: str) -> np.ndarray[Any, Any] | None:
        return self.constants.value(body, name)

    def fresh_name(self, base: str) -> str:
        """A name no value of the model has: ``base``, else ``base_1``, ``base_2``, ...; each
        base remembers where it stopped, so naming K outputs costs K steps, not K^2."""
        index = self._next.get(base, 0)
        name = base if index == 0 else f"{base}_{index}"
        while name in self.names:
            index += 1
            name = f"{base}_{index}"
        self._next[base] = index + 1
        self.names.add(name)
        return name

    def _read_names(self, body: Body) -> None:
        proto = body.proto
        for node in proto.node:
            self.names.update(node.input)
            self.names.update(node.output)
        if isinstance(proto, GraphProto):
            for infos in (proto.input, proto.output, proto.value_info, proto.initializer):
                self.names.update(info.name for info in infos)
        else:
            self.names.update(proto.input)
            self.names.update(proto.output)


@dataclass
class ModelEdits:
    """Replacements of nodes and new initializers, planned body by body and applied at once.

    A body is rebuilt once by :meth:`apply`, deeper bodies before the graphs that hold them,
    so that a subgraph's edits are inside its node when that node is copied.
    """

    _bodies: dict[str, Body] = field(default_factory=dict)
    _replaced: dict[str, dict[int, list[NodeProto]]] = field(default_factory=dict)
    _initializers: dict[str, list[TensorProto]] = field(default_factory=dict)

    def replace(self, body: Body, index: int, nodes: Sequence[NodeProto]) -> None:
        """Put ``nodes`` (none to remove it) in the place of node ``index`` of ``body``."""
        self._bodies[body.label] = body
        self._replaced.setdefault(body.label, {})[index] = list(nodes)

    def int64_constant(self, body: Body, name: str, values: Iterable[int]) -> list[NodeProto]:
        """A constant 1-d int64 tensor ``name``: an initializer in a graph (returns no node),
        a Constant node in a function, which has no initializers (returns that node, for the
        caller to place before the nodes that read it)."""
        tensor = numpy_helper.from_array(np.array(list(values), dtype=np.int64), name)
        return self.tensor_constant(body, tensor)

    def tensor_constant(self, body: Body, tensor: TensorProto) -> list[NodeProto]:
        """:meth:`int64_constant` for any tensor."""
        if isinstance(body.proto, FunctionProto):
            return [helper.make_node("Constant", [], [tensor.name], value=tensor)]
        self._bodies[body.label] = body
        self._initializers.setdefault(body.label, []).append(tensor)
        return []

    def apply(self) -> None:
        """Rebuild every edited body once, the deepest first."""
        for label in sorted(self._bodies, key=lambda b: -len(self._bodies[b].path)):
            proto = self._bodies[label].proto
            replaced = self._replaced.get(label, {})
            if replaced:
                nodes: list[NodeProto] = []
                for index, node in enumerate(proto.node):
                    nodes.extend(replaced.get(index, (node,)))
                kept = [_copy(node) for node in nodes]
                del proto.node[:]
                proto.node.extend(kept)
            if isinstance(proto, GraphProto):
                proto.initializer.extend(self._initializers.get(label, ()))


def _copy(node: NodeProto) -> NodeProto:
    copy = NodeProto()
    copy.CopyFrom(node)
    return copy


def given_sizes(body: Body, spec: SplitNode, facts: ModelFacts) -> tuple[int, ...] | None:
    """A Split node's explicit sizes as ints, or ``None`` when it has none or they are not
    constant (an initializer or a Constant node)."""
    if spec.split_attribute is not None:
        return spec.split_attribute
    if spec.split_input is None:
        return None
    value = facts.constant(body, spec.split_input)
    if value is None:
        return None
    sizes = read_sizes(value, spec.rule, allow_scalar=False)
    return sizes if isinstance(sizes, tuple) else None


def write_split_sizes(
    new: NodeProto,
    body: Body,
    opset: int,
    sizes: Sequence[int],
    facts: ModelFacts,
    edits: ModelEdits,
    label: str,
) -> list[NodeProto]:
    """Give the Split node ``new`` (data input only, no ``split``) the explicit ``sizes`` in
    the form of the Split version of ``opset``: the ``split`` attribute (Split-1, 2, 11), or
    a new int64 constant as the second input (Split-13, 18). Returns the nodes to place
    before ``new`` (a Constant node, inside a function)."""
    if SplitSource.ATTRIBUTE in opset_rule("Split", opset).split_sources:
        new.attribute.append(helper.make_attribute("split", list(sizes)))
        return []
    name = facts.fresh_name(f"{label}_split")
    new.input.append(name)
    return edits.int64_constant(body, name, sizes)


def drop_unused_constants(model: ModelProto, candidates: Collection[str]) -> None:
    """Remove the initializers and Constant nodes among ``candidates`` that nothing reads."""
    if not candidates:
        return
    read: set[str] = set()
    for body in iter_bodies(model):
        read.update(o if isinstance(o, str) else o.name for o in body.proto.output)
    for _, node in iter_nodes(iter_bodies(model)):
        read.update(node.input)
    unused = set(candidates) - read
    if not unused:
        return
    for body in iter_bodies(model):
        proto = body.proto
        if isinstance(proto, GraphProto):
            remove_where(proto.initializer, lambda t: t.name in unused)
            if body.label == "main":
                remove_where(proto.input, lambda i: i.name in unused)
        remove_where(
            proto.node,
            lambda n: n.op_type == "Constant" and bool(n.output) and n.output[0] in unused,
        )


def remove_where(container: Any, doomed: Callable[[Any], bool]) -> None:
    """Remove the items of a repeated protobuf field for which ``doomed`` is true."""
    if not any(doomed(item) for item in container):
        return
    keep = [item for item in container if not doomed(item)]
    del container[:]
    container.extend(keep)
