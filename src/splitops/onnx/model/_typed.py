"""onnx's own inference, asked in the view's terms: a typed copy of a model (onnx's pass over
it, the nodes it must not see hidden from it), the types onnx infers for one node or one call
of a local function, a model of one such call, and the inferred types written back into the
typed copy.

Inference (:mod:`splitops.onnx.inference`) decides what to ask and what to write; the
protobufs it takes and gives (``TypeProto``, ``TensorProto``, the graphs of the typed copy)
are read and written here, where a model is read and written. A node is named by its
identity, its scope's :data:`~splitops.onnx.model.ScopeKey` and its index there, never by a
walk of a second protobuf.

>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> given, typed = typed_copy(model)
>>> view = ModelView.read(given)
>>> view.take_types(typed)
>>> view.main.type_of("y")
TensorType(element=1, dims=('N',))
>>> from splitops.onnx.model import TensorType
>>> infer_node(view.main.nodes[0], {"x": TensorType(1, (3,))}, {})
{'y': TensorType(element=1, dims=(3,))}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnx.inliner
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    TypeProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)
from onnx.checker import ValidationError
from onnx.shape_inference import InferenceError

from ...core import OtherOperatorError
from ._fields import (
    declared_entries,
    drop_value_info,
    function_default_attributes,
    initializers,
    replace_initializers,
    value_info_entry,
)
from ._node import DEFAULT_DOMAINS
from ._types import declared_type, has_negative_dim, has_type, rename_all
from ._value_type import Dim, ValueType, renamed, value_type
from ._view import ModelView, Node, Scope
from ._walk import (
    FunctionId,
    GraphsAt,
    ScopeKey,
    Step,
    check_node_total,
    declared_types,
    graph_attributes,
    operator_schema,
    without_large_weights,
)

__all__ = [
    "InputFacts",
    "NodeKey",
    "call_model",
    "call_output",
    "infer_call_outputs",
    "infer_node",
    "inline_call",
    "onnx_output_types",
    "onnx_takes",
    "typed_copy",
    "with_functions",
    "write_types",
]

#: A node by its identity: its scope's and its index there.
NodeKey = tuple[ScopeKey, int]

#: The domain prefix that hides a node from onnx's pass.
_HIDDEN = "splitops.masked."
#: The most parts onnx's pass is left to infer for a Split-18 that lists fewer outputs.
_ONNX_MOST_PARTS = 4096

#: The errors onnx's own inference of a node or a call raises where it cannot infer it.
_ONNX_ERRORS = (InferenceError, ValidationError, RuntimeError, ValueError, TypeError)


# --- onnx's pass over a whole model --------------------------------------------------------


def onnx_takes(node: Node) -> bool:
    """Whether onnx's own inference of a node is safe to run: every node but a Split whose
    ``num_outputs`` is below the outputs it lists (onnx 1.23 aborts the process), or far
    above them (it allocates ``num_outputs`` sizes whatever the node lists: ``2**31 - 1``
    exhausts the memory).

    >>> from onnx import helper
    >>> onnx_takes(Node.alone(helper.make_node("Split", ["x"], ["a", "b", "c"], num_outputs=2)))
    False
    """
    return node.op_type != "Split" or node.domain not in DEFAULT_DOMAINS or _takes_split(node.proto)


def _takes_split(proto: NodeProto) -> bool:
    """:func:`onnx_takes` of a Split of the default domain, read from its protobuf: the
    walk of :func:`typed_copy` asks it of every Split of a model."""
    found = None
    for attribute in proto.attribute:
        if attribute.name == "num_outputs":
            found = attribute  # of two of one name, the last (as Node.attribute reads it)
    if found is None or found.ref_attr_name or found.type != AttributeProto.INT:
        return True  # no number of outputs (a function's attribute is no number yet)
    listed = len(proto.output)
    return bool(listed <= found.i <= max(listed, _ONNX_MOST_PARTS))


def typed_copy(
    model: ModelProto, calls: Collection[FunctionId] = (), *, count_nodes: bool = False
) -> tuple[ModelProto, ModelProto]:
    """onnx's own inference of ``model`` (without its data propagation): the model onnx was
    given, and the typed copy it returned.

    The nodes onnx cannot take (:func:`onnx_takes`) and the calls of the local functions
    ``calls`` are hidden from its pass: moved to a domain onnx does not know, and back in the
    copy it returns. A ``value_info`` entry with a negative dim (no tensor has one; an
    earlier pass of onnx writes them for invalid nodes) is dropped first: the model onnx was
    given is then a copy without them, else ``model`` itself. One walk of the protobufs of
    the main graph and the graphs below it finds both, before any scope is read; with
    ``count_nodes`` (for a model without local functions) it counts their nodes too, and a
    model of more than the ``max_nodes`` limit is a :class:`~splitops.SplitError` before
    onnx's pass (:func:`~splitops.onnx.model.check_node_count`, without a walk of its own).
    A failure of onnx's pass (on another operator: those hidden are splitops') is an
    :class:`~splitops.OtherOperatorError`.
    """
    hidden: list[NodeKey] = []
    negative: list[ScopeKey] = []
    nodes = 0
    stack: list[tuple[tuple[Step, ...], GraphProto]] = [((), model.graph)]
    while stack:
        path, graph = stack.pop()
        entries = graph.value_info
        if entries and any(has_negative_dim(entry.type) for entry in entries):
            negative.append((None, path))
        nodes += len(graph.node)
        for index, node in enumerate(graph.node):
            domain = node.domain
            if domain in DEFAULT_DOMAINS:
                if node.op_type == "Split" and not _takes_split(node):
                    hidden.append(((None, path), index))
            elif calls and (domain, node.op_type, node.overload) in calls:
                hidden.append(((None, path), index))
            for name, k, held in graph_attributes(node):
                stack.append(((*path, (index, name, k)), held))
    if count_nodes:
        check_node_total(nodes)
    given = model
    if negative:
        given = ModelProto()
        given.CopyFrom(model)
        graphs = GraphsAt(given)
        for key in negative:
            found = graphs(key)
            assert found is not None  # a key of the model copied
            drop_value_info(found, has_negative_dim)
    if not hidden:
        return given, _onnx_infers(given)
    masked = ModelProto()
    masked.CopyFrom(given)
    domains = set()
    for node in _nodes_at(masked, hidden):
        node.domain = _HIDDEN + node.domain
        domains.add(node.domain)
    masked.opset_import.extend(helper.make_opsetid(d, 1) for d in sorted(domains))
    base = _onnx_infers(masked)
    for node in _nodes_at(base, hidden):
        node.domain = node.domain.removeprefix(_HIDDEN)
    kept = [o for o in base.opset_import if not o.domain.startswith(_HIDDEN)]
    del base.opset_import[:]
    base.opset_import.extend(kept)
    return given, base


def _nodes_at(model: ModelProto, keys: Collection[NodeKey]) -> list[NodeProto]:
    graphs = GraphsAt(model)
    found = []
    for key, index in keys:
        graph = graphs(key)
        assert graph is not None  # a key of a copy of the model
        found.append(graph.node[index])
    return found


def _onnx_infers(model: ModelProto) -> ModelProto:
    """onnx's pass over ``model``, given with its large weights set aside as typed inputs
    (their values are never followed); the weights are put back, in their order, into what
    it returns."""
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


# --- onnx's inference of one node, or one call ----------------------------------------------


def infer_node(
    node: Node, types: Mapping[str, ValueType], data: Mapping[str, np.ndarray[Any, Any]]
) -> dict[str, ValueType]:
    """onnx's inference of ``node`` alone (as the view's typed copy holds it, its subgraphs
    typed), from ``types`` of its inputs and of the outer values its subgraphs read, and the
    values ``data`` of some inputs: its outputs' types, by name; ``{}`` where onnx has no
    schema for it or cannot infer it."""
    scope = node.scope
    view = scope.view
    opsets = view.opsets
    schema = operator_schema(node.op_type, opsets.get(node.domain or "", 0), node.domain)
    if schema is None:
        return {}
    tensors = {}
    for name, array in data.items():
        try:
            tensors[name] = numpy_helper.from_array(array, name)
        except (KeyError, TypeError, ValueError, OverflowError):
            continue
    try:
        found = onnx.shape_inference.infer_node_outputs(
            schema,
            _typed_node(view, node),
            {name: found.proto() for name, found in types.items()},
            tensors,
            opset_imports=list(view.model.opset_import),
            ir_version=view.ir_version,
        )
    except _ONNX_ERRORS:
        return {}
    return {name: t for name, proto in found.items() if (t := value_type(proto)) is not None}


def _typed_node(view: ModelView, node: Node) -> NodeProto:
    """``node`` as the view's typed copy holds it (its subgraphs typed by onnx's pass)."""
    typed = view._typed
    graph = None if typed is None else view._typed_proto(node.scope, typed)
    if graph is None or node.index >= len(graph.node):
        return node.proto
    found: NodeProto = graph.node[node.index]
    return found


def infer_call_outputs(
    function: Scope, call: Node, inputs: Sequence[ValueType | None]
) -> list[ValueType | None]:
    """onnx's inference of the outputs of ``call``, a call of the local function whose body
    is ``function``, from the types of its inputs (by position, ``None`` where unknown);
    ``[]`` where onnx cannot infer it."""
    body = function.proto
    assert isinstance(body, FunctionProto)  # a function's scope
    given = [TypeProto() if t is None else t.proto() for t in inputs]
    try:
        found = onnx.shape_inference.infer_function_output_types(
            body, given, list(call.proto.attribute)
        )
    except _ONNX_ERRORS:
        return []
    return [value_type(proto) for proto in found]


#: What a call's model is given of one input: its type (``None`` where unknown) and its
#: value (``None`` where not constant), an array of its type's dtype.
InputFacts = tuple[ValueType | None, np.ndarray[Any, Any] | None]


def call_output(k: int) -> str:
    """The name of a call's output ``k`` in its model (:func:`call_model`)."""
    return f"call_out{k}"


def call_model(
    function: Scope, call: Node | None, facts: Callable[[str], InputFacts]
) -> tuple[ModelProto, bytes]:
    """A model of the single call ``call`` of the local function whose body is ``function``
    (without ``call``, a call of its inputs and outputs that gives only its attributes'
    defaults), each input typed or constant by ``facts``, without the model's functions
    (:func:`with_functions` adds them); and its bytes, which tell calls alike.

    Its values are named by position (``call_in0``, :func:`call_output`) and the call keeps
    only what its inference depends on (operator, attributes): calls alike have the same
    model whatever their names.
    """
    body = function.proto
    assert isinstance(body, FunctionProto)  # a function's scope
    model = function.view.model
    if call is None:
        node_proto = helper.make_node(
            body.name, list(body.input), list(body.output), domain=body.domain,
            overload=body.overload,
        )  # fmt: skip
        node_proto.attribute.extend(function_default_attributes(body))
    else:
        node_proto = call.proto
    opsets = {o.domain: o.version for o in model.opset_import}
    opsets.update({o.domain: o.version for o in body.opset_import})
    graph = GraphProto(name=f"call_{body.name}")
    node = graph.node.add()
    node.op_type, node.domain, node.overload = (
        node_proto.op_type,
        node_proto.domain,
        node_proto.overload,
    )
    node.attribute.extend(node_proto.attribute)
    positions: dict[str, str] = {}
    for name in node_proto.input:
        if name and name not in positions:
            positions[name] = position = f"call_in{len(positions)}"
            type_found, array = facts(name)
            tensor = None if array is None else _tensor(array, position)
            if tensor is not None:
                graph.initializer.append(tensor)
                continue
            entry = graph.input.add()
            entry.name = position
            if type_found is not None:
                entry.type.CopyFrom(type_found.proto())
        node.input.append(positions.get(name, ""))
    node.output.extend(call_output(k) if name else "" for k, name in enumerate(node_proto.output))
    graph.output.extend(ValueInfoProto(name=n) for n in node.output if n)
    made = helper.make_model(
        graph,
        ir_version=model.ir_version,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()],
    )
    return made, made.SerializeToString(deterministic=True)


def _tensor(array: np.ndarray[Any, Any], name: str) -> Any:
    try:
        return numpy_helper.from_array(array, name)
    except (KeyError, TypeError, ValueError, OverflowError):
        return None


def with_functions(call: ModelProto, view: ModelView) -> ModelProto:
    """``call``, a model of one call, with the functions of the view's model that its opsets
    allow."""
    opsets = {o.domain: o.version for o in call.opset_import}
    call.functions.extend(
        f
        for f in view.model.functions
        if all(opsets.get(o.domain, o.version) == o.version for o in f.opset_import)
    )
    return call


def inline_call(call: ModelProto, function: Scope) -> ModelProto | None:
    """``call`` (:func:`with_functions`) with its call of ``function`` inlined, or ``None``
    where onnx cannot inline it, or its inliner made other nodes than the body's."""
    body = function.proto
    assert isinstance(body, FunctionProto)  # a function's scope
    try:
        inlined = onnx.inliner.inline_selected_functions(call, [(body.domain, body.name)])
    except (RuntimeError, ValueError, ValidationError):
        return None
    return inlined if len(inlined.graph.node) == len(body.node) else None


# --- writing the types back ---------------------------------------------------------------


def write_types(
    scope: Scope, types: Mapping[str, ValueType | None], names: Mapping[str, Dim]
) -> None:
    """Write inferred ``types`` into the graph of the view's typed copy where ``scope`` lies,
    and name there (and in ``types``) each of onnx's placeholders that ``names`` holds.

    A type is merged into what the model declares (a graph output, or ``value_info`` the
    model gave; see :func:`~splitops.onnx.model.declared_type`), else written in a
    ``value_info`` entry of its own; ``None`` leaves only what the model declared.
    """
    view = scope.view
    typed = view._typed
    proto = None if typed is None else view._typed_proto(scope, typed)
    if proto is None:
        return
    if names:
        rename_all(declared_entries(proto, outputs=True), names)
    if not types:
        return
    declared = declared_types(scope.proto, inputs=False, untyped=True)
    outputs = {v.name: v for v in proto.output} if isinstance(proto, GraphProto) else {}
    infos = {v.name: v for v in declared_entries(proto)}
    cleared = False
    for name, found in types.items():
        given = declared.get(name)
        inferred = None if found is None else renamed(found, names).proto()
        if inferred is None:
            written = given
        elif given is None:
            written = inferred
        else:
            written = declared_type(given, inferred)
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


def onnx_output_types(
    model: ModelProto, shapes: Mapping[str, Sequence[int]]
) -> list[ValueType | None]:
    """The types onnx's shape inference (strict, propagating values) gives the outputs of
    ``model``'s main graph once each of its inputs has the lengths ``shapes`` gives it, a
    negative length as onnx writes it (it writes one for some nodes the spec rejects). onnx's
    ``InferenceError`` where it finds the model wrong, and a ``ValueError`` for a shape of
    another rank than its input's.

    >>> from onnx import TensorProto
    >>> graph = helper.make_graph([helper.make_node("Split", ["x"], ["a", "b"], axis=0)], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
    ...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    >>> onnx_output_types(model, {"x": (6,)})
    [TensorType(element=1, dims=(3,)), TensorType(element=1, dims=(3,))]
    """
    static = ModelProto()
    static.CopyFrom(model)
    for entry in static.graph.input:
        dims = entry.type.tensor_type.shape.dim
        for dim, length in zip(dims, shapes[entry.name], strict=True):
            dim.Clear()
            dim.dim_value = length
    inferred = onnx.shape_inference.infer_shapes(static, strict_mode=True, data_prop=True)
    return [value_type(entry.type, as_written=True) for entry in inferred.graph.output]
