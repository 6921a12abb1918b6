"""Every place a model keeps nodes: the main graph, the subgraphs of control-flow nodes (If,
Loop, Scan, at any depth) and model-local functions, each with the opset its nodes run at.

Locations are written as :class:`~splitops.Diagnostic` writes them: ``main``,
``main/loop_1.body``, ``function:domain.name`` (``function:domain.name:overload`` for an
overload). A location is for people; a scope's identity is its :data:`ScopeKey`: the
function it lies in, by :data:`FunctionId` (``None`` for the main graph), and the steps down
to it.

>>> from onnx import helper
>>> loop = helper.make_node("Loop", ["n", ""], [], body=helper.make_graph([], "b", [], []),
...                         name="loop_1")
>>> subgraph_label("main", loop, "body", -1)
'main/loop_1.body'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
import onnx
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
    numpy_helper,
)

from ...core import Rule, SplitError, current_limits, require_argument
from ._node import DEFAULT_DOMAINS, node_label
from ._types import has_type, tensor_problem

__all__ = [
    "SMALL_TENSOR",
    "FunctionId",
    "GraphsAt",
    "ScopeKey",
    "Step",
    "check_node_total",
    "constant_value",
    "copy_without",
    "declared_types",
    "default_opset",
    "expanded_node_count",
    "function_id",
    "function_label",
    "function_opset",
    "graph_at",
    "graph_attributes",
    "graphs_below",
    "has_graphs",
    "is_large_weight",
    "iter_tensors",
    "location",
    "model_graphs",
    "operator_schema",
    "subgraph_label",
    "without_large_weights",
]


def location(graph: str, node: str) -> str:
    """Where a node is, as every command prints it: its graph's label, a slash, its label.

    TorchScript names nodes with paths of their own (``/m/transformer/Split``): they are not
    given a second slash.

    >>> location("main", "/m/transformer/Split"), location("main/if_1.then_branch", "s")
    ('main/m/transformer/Split', 'main/if_1.then_branch/s')
    """
    return f"{graph}/{node.lstrip('/')}"


#: One step down into a subgraph: (index of the node, name of its attribute, index in the
#: attribute's ``graphs``, or -1 for its ``g``).
Step = tuple[int, str, int]

#: A model-local function as ONNX calls it: (domain, name, overload). Two overloads of one
#: function are two functions; a label (:func:`function_label`) only prints.
FunctionId = tuple[str, str, str]

#: Where a scope lies in its model, whatever the labels of its nodes: the function it lies
#: in (``None`` for the main graph) and the steps down to it. Unique in a model, where labels
#: need not be (two nodes may share a name).
ScopeKey = tuple[FunctionId | None, tuple[Step, ...]]


def default_opset(opset_imports: Iterable[OperatorSetIdProto]) -> int | None:
    """The version imported for ONNX's own domain, or ``None``."""
    if isinstance(opset_imports, (str, bytes)) or not isinstance(opset_imports, Iterable):
        kind = type(opset_imports).__name__
        raise TypeError(f"default_opset takes a model's opset_import, not {kind}.")
    for entry in opset_imports:
        require_argument(entry, OperatorSetIdProto, "default_opset", "OperatorSetIdProto entries")
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return None


@lru_cache(maxsize=512)
def operator_schema(op: str, version: int, domain: str = "") -> onnx.defs.OpSchema | None:
    """onnx's schema of ``op`` in ``domain`` at opset ``version`` (the newest at or below it),
    or ``None`` where onnx has none. A file may claim any int64 opset: onnx's lookup takes
    32-bit versions only, and a version past them reads as the newest.

    >>> operator_schema("Split", 10**12).since_version, operator_schema("Nothing", 18)
    (18, None)
    """
    try:
        return onnx.defs.get_schema(op, max(0, min(version, 2**31 - 1)), domain)
    except onnx.defs.SchemaError:
        return None


def function_id(function: FunctionProto) -> FunctionId:
    """What a call names to run ``function``: its domain, name and overload."""
    return function.domain, function.name, function.overload


def function_opset(function: FunctionProto, model_opset: int | None) -> int | None:
    """The default-domain opset a model-local function's nodes run at: its own, else the
    model's (``model_opset``)."""
    own = default_opset(function.opset_import)
    return model_opset if own is None else own


def function_label(function: FunctionProto) -> str:
    """Where a model-local function's nodes live, for people: ``function:domain.name``, and
    ``function:domain.name:overload`` for an overload.

    >>> function_label(helper.make_function("d", "F", [], [], [], [], overload="fast"))
    'function:d.F:fast'
    """
    label = f"function:{function.domain}.{function.name}"
    return f"{label}:{function.overload}" if function.overload else label


def subgraph_label(label: str, node: NodeProto, name: str, k: int) -> str:
    """The label of the graph that ``node``, in the body labelled ``label``, holds in its
    attribute ``name`` (at ``k`` in the attribute's ``graphs``, or -1 for its ``g``).

    >>> node = helper.make_node("Scan", ["x"], ["y"], name="scan_1")
    >>> subgraph_label("main", node, "body", -1), subgraph_label("main", node, "bodies", 2)
    ('main/scan_1.body', 'main/scan_1.bodies[2]')
    """
    where = f"{location(label, node_label(node))}.{name}"
    return where if k < 0 else f"{where}[{k}]"


def graph_attributes(node: NodeProto) -> Iterator[tuple[str, int, GraphProto]]:
    """Each graph ``node`` holds: (attribute name, index in its ``graphs`` or -1, graph).

    A graph is found by the field that holds it, not by the attribute's ``type``: onnx's
    inference walks a branch whose attribute has no type, so every walk must see it too.
    """
    return iter(_held_graphs(node))


def has_graphs(node: NodeProto) -> bool:
    """Whether ``node`` holds a graph in an attribute (as :func:`graph_attributes` finds)."""
    # A loop, not any() of a generator: every walk asks this of every node.
    for attribute in node.attribute:  # noqa: SIM110
        if attribute.HasField("g") or attribute.graphs:
            return True
    return False


def _held_graphs(node: NodeProto) -> list[tuple[str, int, GraphProto]]:
    # A list rather than a generator: walks call this for every node of a model, and most
    # nodes hold no graph.
    found: list[tuple[str, int, GraphProto]] = []
    for attribute in node.attribute:
        if attribute.HasField("g"):
            found.append((attribute.name, -1, attribute.g))
        graphs = attribute.graphs
        if graphs:
            found += ((attribute.name, k, graph) for k, graph in enumerate(graphs))
    return found


def model_graphs(model: ModelProto) -> Iterator[GraphProto | FunctionProto]:
    """The main graph, every graph below it (depth first), then each function body and the
    graphs below it: the order of :attr:`ModelView.scopes
    <splitops.onnx.model.ModelView.scopes>`, for a walk that needs only the protobufs."""
    yield from graphs_below(model.graph)
    for function in model.functions:
        yield from graphs_below(function)


def graphs_below(proto: GraphProto | FunctionProto) -> Iterator[GraphProto | FunctionProto]:
    """``proto``, then every graph its nodes hold, depth first (see :func:`model_graphs`)."""
    stack: list[GraphProto | FunctionProto] = [proto]
    while stack:
        proto = stack.pop()
        yield proto
        below: list[GraphProto | FunctionProto] = [
            graph for node in proto.node for _, _, graph in _held_graphs(node)
        ]
        below.reverse()
        stack += below


def graph_at(proto: GraphProto | FunctionProto, path: Iterable[Step]) -> GraphProto | FunctionProto:
    """The graph that ``path`` leads to below ``proto`` (``proto`` itself for no steps); a
    ``KeyError`` where a step names no graph."""
    for index, name, k in path:
        held = held_graph(proto.node[index], name, k)
        if held is None:
            raise KeyError((index, name, k))
        proto = held
    return proto


class GraphsAt:
    """The graphs and function bodies of a model by their identity (:data:`ScopeKey`), each
    found one step down from its holder's, which is found once: looking up every scope of a
    model costs one step per scope, where :func:`graph_at` from the top costs its depth.
    ``None`` for a key whose graph the model lacks; of two functions of one identity, the
    last (as :attr:`ModelView.scopes <splitops.onnx.model.ModelView.scopes>` finds it
    last)."""

    def __init__(self, model: ModelProto) -> None:
        self._model = model
        self._functions = {function_id(f): f for f in model.functions}
        self._found: dict[ScopeKey, GraphProto | FunctionProto | None] = {}

    def __call__(self, key: ScopeKey) -> GraphProto | FunctionProto | None:
        found = self._found
        if key in found:
            return found[key]
        root, path = key
        depth = len(path)
        while depth and (root, path[:depth]) not in found:
            depth -= 1
        if depth:
            proto = found[(root, path[:depth])]
        else:
            proto = self._model.graph if root is None else self._functions.get(root)
            found[(root, ())] = proto
        for step in range(depth, len(path)):
            index, name, k = path[step]
            if proto is not None:
                proto = held_graph(proto.node[index], name, k) if index < len(proto.node) else None
            found[(root, path[: step + 1])] = proto
        return proto


def held_graph(node: NodeProto, name: str, k: int) -> GraphProto | None:
    """The graph ``node`` holds under attribute ``name`` (in its ``g`` for ``k < 0``, else
    at ``k`` in its ``graphs``), as :func:`graph_attributes` finds it: by the field that
    holds it; the last such attribute where several share the name."""
    found = None
    for attribute in node.attribute:
        if attribute.name != name:
            continue
        if (k < 0 and attribute.HasField("g")) or 0 <= k < len(attribute.graphs):
            found = attribute
    if found is None:
        return None
    graph: GraphProto = found.g if k < 0 else found.graphs[k]
    return graph


def expanded_node_count(model: ModelProto, cap: int) -> int:
    """How many nodes ``model`` holds with every call of a local function counted as the
    nodes of its body, at any depth, as onnxruntime inlines them (and as inference and
    onnx.reference go through them): the main graph's, and those of each function no other
    function calls. Subgraphs count as they are stored. Counts above ``cap`` are ``cap``.

    Functions calling one another twice per level hold 2^k calls in a few hundred bytes;
    this count is linear in the file, whatever it comes to.

    >>> body = [helper.make_node("Relu", ["x"], ["y"])]
    >>> twice = [helper.make_node("F", ["x"], ["t"], domain="d"),
    ...          helper.make_node("F", ["t"], ["y"], domain="d")]
    >>> functions = [helper.make_function("d", "F", ["x"], ["y"], body, []),
    ...              helper.make_function("d", "G", ["x"], ["y"], twice, [])]
    >>> graph = helper.make_graph([helper.make_node("G", ["x"], ["y"], domain="d")], "g", [], [])
    >>> expanded_node_count(helper.make_model(graph, functions=functions), cap=100)
    5
    """
    functions = {(f.domain, f.name, f.overload): f for f in model.functions}

    def own(proto: GraphProto | FunctionProto) -> tuple[int, list[FunctionId]]:
        nodes, calls = 0, []
        for graph in graphs_below(proto):
            nodes += len(graph.node)
            if functions:  # a model without functions calls none: its nodes need no look
                for node in graph.node:
                    key = (node.domain, node.op_type, node.overload)
                    if key in functions:
                        calls.append(key)
        return nodes, calls

    parts = {key: own(f) for key, f in functions.items()}
    sizes: dict[FunctionId, int] = {}
    started: set[FunctionId] = set()
    # Depth first without recursion (a chain of functions may be long); a function calling
    # itself, which load_model refuses, counts its own body once.
    pending: list[tuple[FunctionId, bool]] = [(key, False) for key in functions]
    while pending:
        key, children_done = pending.pop()
        if key in sizes:
            continue
        nodes, calls = parts[key]
        if not children_done:
            started.add(key)
            pending.append((key, True))
            pending.extend((c, False) for c in calls if c not in sizes and c not in started)
            continue
        sizes[key] = min(cap, nodes + sum(sizes.get(c, 0) for c in calls))
    main_nodes, main_calls = own(model.graph)
    called = set(main_calls) | {c for _, calls in parts.values() for c in calls}
    roots = [key for key in functions if key not in called]
    total = main_nodes + sum(sizes[c] for c in main_calls) + sum(sizes[k] for k in roots)
    return min(cap, total)


def check_node_total(count: int) -> None:
    """SplitError (rule ``limit``) where ``count``, a model's nodes once each call of a local
    function counts the nodes of its body (:func:`expanded_node_count`), is over the
    ``max_nodes`` limit."""
    limit = current_limits().max_nodes
    if count > limit:
        raise SplitError(
            f"the model holds more than {limit} nodes once each call of a local function "
            "counts the nodes of its body (the max_nodes limit), as onnxruntime inlines them "
            "and inference and onnx.reference go through them.",
            rule=Rule.LIMIT,
            hint="Raise the limit with --max-nodes N (splitops.limits(max_nodes=N)) if the "
            "model really needs it.",
        )


def constant_value(source: TensorProto | NodeProto) -> np.ndarray[Any, Any] | None:
    """The value of a numeric initializer or Constant node, or ``None`` when it is not at
    hand: data kept outside the model, a sparse or string Constant, or a tensor whose data
    does not fit its dims (:func:`~splitops.onnx.model._types.tensor_problem`; ``load_model``
    refuses such files, a model built in memory may still hold one).

    >>> constant_value(helper.make_node("Constant", [], ["c"], value_ints=[2, 3]))
    array([2, 3])
    """
    if isinstance(source, TensorProto):
        unreadable = tensor_problem(source, current_limits().max_tensor_elements)
        if unreadable or source.data_location == TensorProto.EXTERNAL:
            return None
        if source.data_type == TensorProto.STRING:
            return None  # sizes are numbers; decoding strings could fail on bad UTF-8
        return numpy_helper.to_array(source)
    for attribute in source.attribute:
        if attribute.name == "value":
            return constant_value(attribute.t)
        if attribute.name in ("value_int", "value_ints"):
            return np.array(helper.get_attribute_value(attribute), dtype=np.int64)
        if attribute.name in ("value_float", "value_floats"):
            return np.array(helper.get_attribute_value(attribute), dtype=np.float32)
    return None


def iter_tensors(model: ModelProto) -> Iterator[TensorProto]:
    """Every tensor the model stores: initializers (dense and sparse) and node attributes."""
    for proto in model_graphs(model):
        if isinstance(proto, GraphProto):
            yield from proto.initializer
            for sparse in proto.sparse_initializer:
                yield from (sparse.values, sparse.indices)
        for node in proto.node:
            for attribute in node.attribute:
                if attribute.type == AttributeProto.TENSOR:
                    yield attribute.t
                yield from attribute.tensors
                if attribute.type == AttributeProto.SPARSE_TENSOR:
                    yield from (attribute.sparse_tensor.values, attribute.sparse_tensor.indices)
                for sparse in attribute.sparse_tensors:
                    yield from (sparse.values, sparse.indices)


def declared_types(
    proto: GraphProto | FunctionProto, *, inputs: bool = True, untyped: bool = False
) -> dict[str, TypeProto]:
    """The types one body gives its values: its initializers', then those of its inputs,
    ``value_info`` (filled by shape inference) and outputs.

    Without ``inputs``, only what the body declares of the values it computes (``value_info``
    and outputs): what a write of inferred types merges into. With ``untyped``, the entries
    that give no type are kept too (as empty types): every name the body itself defines or
    declares, which is what tells an inner graph's name from an outer one's.
    """
    types: dict[str, TypeProto] = {}
    entries = [*proto.value_info]
    if isinstance(proto, GraphProto):
        if inputs:
            for tensor in proto.initializer:
                dims = list(tensor.dims)
                types[tensor.name] = helper.make_tensor_type_proto(tensor.data_type, dims)
            entries = [*proto.input, *entries]
        entries += proto.output
    # A loop, not a generator: every scope read with its types asks this.
    for entry in entries:
        found = entry.type
        if untyped or has_type(found):
            types[entry.name] = found
    return types


#: An initializer of more elements than this is a weight: its values decide no type or
#: shape (values are followed through tensors of up to this many items only).
SMALL_TENSOR = 1024

_Message = TypeVar("_Message", ModelProto, GraphProto)


def is_large_weight(tensor: TensorProto) -> bool:
    """Whether an initializer holds more than :data:`SMALL_TENSOR` elements.

    >>> is_large_weight(numpy_helper.from_array(np.zeros((2, 1024), np.float32)))
    True
    """
    return bool(math.prod(tensor.dims) > SMALL_TENSOR)


def copy_without(message: _Message, field_name: str) -> _Message:
    """A copy of a protobuf message without one of its fields, which is never copied."""
    copy = type(message)()
    for field, value in message.ListFields():
        if field.name == field_name:
            continue
        if hasattr(value, "extend"):
            getattr(copy, field.name).extend(value)
        elif hasattr(value, "CopyFrom"):
            getattr(copy, field.name).CopyFrom(value)
        else:
            setattr(copy, field.name, value)
    return copy


def without_large_weights(model: ModelProto) -> tuple[ModelProto, list[str]]:
    """A copy of ``model`` whose large initializers (:func:`is_large_weight`) are typed graph
    inputs instead, and the names of the inputs so added; ``model`` itself, and no name,
    where it holds no large weight (a copy would cost as much as the model).

    onnx's checker and shape inference copy a model they are given several times over
    (serialized, parsed, serialized back): given the weights, a model of 1 GiB of weights
    took 4 GiB of memory. Past 2 GB of weights, protobuf cannot serialize it at all.
    """
    if not any(is_large_weight(tensor) for tensor in model.graph.initializer):
        return model, []
    light = copy_without(model, "graph")
    light.graph.CopyFrom(copy_without(model.graph, "initializer"))
    inputs = {i.name for i in model.graph.input}
    added = []
    for tensor in model.graph.initializer:
        if not is_large_weight(tensor):
            light.graph.initializer.append(tensor)
        elif tensor.name not in inputs:
            light.graph.input.append(
                helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims)
            )
            added.append(tensor.name)
    return light, added
