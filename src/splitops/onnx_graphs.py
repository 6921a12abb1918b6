"""Every place a model keeps nodes: the main graph, the subgraphs of control-flow nodes (If,
Loop, Scan, at any depth) and model-local functions, each with the opset its nodes run at.

Locations are written as :class:`~splitops.diagnostics.Diagnostic` writes them: ``main``,
``main/loop_1.body``, ``function:domain.name``.

>>> from onnx import TensorProto, helper
>>> body = helper.make_graph([helper.make_node("Split", ["x"], ["a"])], "body", [], [])
>>> loop = helper.make_node("Loop", ["n", ""], [], body=body, name="loop_1")
>>> graph = helper.make_graph([loop], "g", [], [])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
>>> [(body.label, node.op_type) for body, node in split_nodes(model)]
[('main/loop_1.body', 'Split')]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    OperatorSetIdProto,
    TensorProto,
    TypeProto,
    helper,
)

from .onnx_node import SPLIT_OPS

__all__ = [
    "DEFAULT_DOMAINS",
    "Body",
    "default_opset",
    "iter_bodies",
    "iter_tensors",
    "node_label",
    "split_nodes",
    "value_types",
]

#: The names of ONNX's own operator domain.
DEFAULT_DOMAINS = frozenset({"", "ai.onnx"})


@dataclass(frozen=True)
class Body:
    """One list of nodes: a graph or a function body, and where it lives."""

    label: str
    proto: GraphProto | FunctionProto
    #: The default-domain opset its nodes run at; ``None`` when it imports none.
    opset: int | None
    #: The bodies around it, outermost first: their names are visible inside (outer scope).
    outer: tuple[GraphProto | FunctionProto, ...] = ()
    #: The label of the scope it belongs to: ``main`` or a function's label. Value names are
    #: unique within a scope (subgraphs may not shadow outer names).
    root: str = "main"

    @property
    def is_function(self) -> bool:
        return isinstance(self.proto, FunctionProto)


def default_opset(opset_imports: Iterable[OperatorSetIdProto]) -> int | None:
    """The version imported for ONNX's own domain, or ``None``."""
    for entry in opset_imports:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return None


def node_label(node: NodeProto) -> str:
    """A node's name, or its first output's name when it has none."""
    return node.name or (node.output[0] if node.output else "<unnamed>")


def iter_bodies(model: ModelProto) -> Iterator[Body]:
    """The main graph, every subgraph (depth first) and every function body."""
    opset = default_opset(model.opset_import)
    yield from _with_subgraphs(Body("main", model.graph, opset))
    for function in model.functions:
        own = default_opset(function.opset_import)
        label = f"function:{function.domain}.{function.name}"
        yield from _with_subgraphs(Body(label, function, opset if own is None else own, root=label))


def split_nodes(model: ModelProto) -> Iterator[tuple[Body, NodeProto]]:
    """Every Split and SplitToSequence node of the default domain, with its body."""
    for body in iter_bodies(model):
        for node in body.proto.node:
            if node.op_type in SPLIT_OPS and node.domain in DEFAULT_DOMAINS:
                yield body, node


def iter_tensors(model: ModelProto) -> Iterator[TensorProto]:
    """Every tensor the model stores: initializers (dense and sparse) and node attributes."""
    for body in iter_bodies(model):
        if isinstance(body.proto, GraphProto):
            yield from body.proto.initializer
            for sparse in body.proto.sparse_initializer:
                yield from (sparse.values, sparse.indices)
        for node in body.proto.node:
            for attribute in node.attribute:
                if attribute.type == AttributeProto.TENSOR:
                    yield attribute.t
                yield from attribute.tensors
                if attribute.type == AttributeProto.SPARSE_TENSOR:
                    yield from (attribute.sparse_tensor.values, attribute.sparse_tensor.indices)
                for sparse in attribute.sparse_tensors:
                    yield from (sparse.values, sparse.indices)


def _with_subgraphs(body: Body) -> Iterator[Body]:
    yield body
    outer = (*body.outer, body.proto)
    for node in body.proto.node:
        for attribute in node.attribute:
            where = f"{body.label}/{node_label(node)}.{attribute.name}"
            if attribute.type == AttributeProto.GRAPH:
                yield from _with_subgraphs(Body(where, attribute.g, body.opset, outer, body.root))
            for index, graph in enumerate(attribute.graphs):
                label = f"{where}[{index}]"
                yield from _with_subgraphs(Body(label, graph, body.opset, outer, body.root))


def value_types(model: ModelProto) -> dict[str, dict[str, TypeProto]]:
    """The declared or inferred type of every named value, per scope (``Body.root``): graph
    inputs and outputs, ``value_info`` (filled by shape inference) and initializers."""
    types: dict[str, dict[str, TypeProto]] = {}
    for body in iter_bodies(model):
        known = types.setdefault(body.root, {})
        proto = body.proto
        infos = [*proto.value_info]
        if isinstance(proto, GraphProto):
            infos += [*proto.input, *proto.output]
            for tensor in proto.initializer:
                known.setdefault(
                    tensor.name, helper.make_tensor_type_proto(tensor.data_type, tensor.dims)
                )
        for info in infos:
            known[info.name] = info.type
    return types
