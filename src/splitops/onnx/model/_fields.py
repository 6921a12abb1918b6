"""The protobuf fields of a model that only this package reads and writes: a node's
attributes, a graph's initializers and declared types (``value_info``), a function's
attribute defaults.

Every other package asks these functions, so a rule about a field (an attribute that refers
to a function's attribute, a ``value_info`` entry left untyped, an initializer set aside)
lives once, and a test checks that no module outside :mod:`splitops.onnx.model` touches the
fields themselves.

>>> from onnx import helper
>>> node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)
>>> attribute_values(node)
{'axis': 1, 'num_outputs': 2}
>>> attribute_value(node, "axis"), attribute_value(node, "split", [])
(1, [])
>>> set_attributes(node, axis=0); keep_attributes(node, {"axis"}); attribute_values(node)
{'axis': 0}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    NodeProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
    helper,
    numpy_helper,
)

__all__ = [
    "add_initializers",
    "attribute_key",
    "attribute_protos",
    "attribute_value",
    "attribute_values",
    "copy_attributes",
    "declarations_of",
    "declared_entries",
    "drop_attributes",
    "drop_declared_shapes",
    "drop_value_info",
    "function_attribute_names",
    "function_default_attributes",
    "function_defaults",
    "has_attribute",
    "initializer_names",
    "initializers",
    "keep_attributes",
    "links_attributes",
    "links_only",
    "replace_initializers",
    "resolve_linked",
    "set_attributes",
    "set_declared_type",
    "value_info_entry",
]

_Proto = GraphProto | FunctionProto


# --- attributes ---------------------------------------------------------------------------


def attribute_values(node: NodeProto) -> dict[str, Any]:
    """The node's attributes as Python values (ints, floats, lists, tensors, graphs), by
    name; an attribute that refers to a function's attribute (``ref_attr_name``) reads as its
    own stored value, which is empty."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def attribute_value(node: NodeProto, name: str, default: Any = None) -> Any:
    """The value of the attribute ``name`` of ``node``, or ``default`` where it has none."""
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def has_attribute(node: NodeProto, name: str) -> bool:
    return any(a.name == name for a in node.attribute)


def links_attributes(node: NodeProto) -> bool:
    """Whether an attribute of ``node`` refers to an attribute of the function it lies in
    (``ref_attr_name``): its value is known only at each call."""
    return any(a.ref_attr_name for a in node.attribute)


def links_only(node: NodeProto, names: Collection[str]) -> bool:
    """Whether every attribute of ``node`` that refers to a function's attribute refers to
    one of ``names``."""
    return all(a.ref_attr_name in ("", *names) for a in node.attribute)


def attribute_key(node: NodeProto) -> tuple[bytes, ...]:
    """The node's attributes as bytes, in order: equal for nodes whose attributes are."""
    return tuple(a.SerializeToString() for a in node.attribute)


def set_attributes(node: NodeProto, **values: Any) -> None:
    """Give ``node`` these attributes, replacing any of the same names, in place."""
    keep_attributes(node, {a.name for a in node.attribute} - values.keys())
    node.attribute.extend(helper.make_attribute(name, value) for name, value in values.items())


def keep_attributes(node: NodeProto, names: Collection[str]) -> None:
    """Remove every attribute of ``node`` not named in ``names``, keeping the order."""
    kept = [a for a in node.attribute if a.name in names]
    if len(kept) != len(node.attribute):
        del node.attribute[:]
        node.attribute.extend(kept)


def drop_attributes(node: NodeProto, names: Collection[str]) -> None:
    """Remove the attributes of ``node`` named in ``names``, keeping the order."""
    keep_attributes(node, {a.name for a in node.attribute} - set(names))


def copy_attributes(target: NodeProto, source: NodeProto | Iterable[AttributeProto]) -> None:
    """Append the attributes of ``source`` (a node, or attributes) to ``target``'s."""
    given = source.attribute if isinstance(source, NodeProto) else source
    target.attribute.extend(given)


def function_defaults(function: FunctionProto, *, plain: bool = False) -> dict[str, Any]:
    """The defaults a function declares for its attributes, as Python values; with
    ``plain``, as onnx.reference passes attributes to nodes (texts as ``str``, tensors as
    numpy arrays)."""
    read = _plain_value if plain else helper.get_attribute_value
    return {a.name: read(a) for a in function.attribute_proto}


def _plain_value(attribute: AttributeProto) -> Any:
    value = helper.get_attribute_value(attribute)
    if attribute.type == AttributeProto.STRING:
        return value.decode("utf-8")
    if attribute.type == AttributeProto.STRINGS:
        return [item.decode("utf-8") for item in value]
    if attribute.type == AttributeProto.TENSOR:
        return numpy_helper.to_array(value)
    if attribute.type == AttributeProto.TENSORS:
        return [numpy_helper.to_array(item) for item in value]
    return value


def resolve_linked(node: NodeProto, values: dict[str, Any]) -> NodeProto:
    """A copy of a function body's node with ``ref_attr_name`` attributes given their values.

    A reference to an attribute the call does not set leaves the attribute out, as ONNX says.
    The value keeps its own type, so a FLOAT given for ``axis`` is reported by
    :func:`~splitops.onnx.model.read_node`, not truncated.
    """
    resolved = NodeProto()
    resolved.CopyFrom(node)
    del resolved.attribute[:]
    for attribute in node.attribute:
        if not attribute.ref_attr_name:
            resolved.attribute.append(attribute)
        elif attribute.ref_attr_name in values:
            value = values[attribute.ref_attr_name]
            empty = isinstance(value, (list, tuple)) and not value
            attr_type = attribute.type if empty else None
            resolved.attribute.append(
                helper.make_attribute(attribute.name, value, attr_type=attr_type)
            )
    return resolved


def function_attribute_names(function: FunctionProto) -> set[str]:
    """The names of the function's attributes: those without a default and those with."""
    return {*function.attribute, *(a.name for a in function.attribute_proto)}


def function_default_attributes(function: FunctionProto) -> list[AttributeProto]:
    """The function's attribute defaults, as attributes a call may carry."""
    return list(function.attribute_proto)


def attribute_protos(node: NodeProto) -> list[AttributeProto]:
    """The node's attributes as they are stored (for onnx's functions that take them)."""
    return list(node.attribute)


# --- initializers -------------------------------------------------------------------------


def initializers(graph: GraphProto) -> Sequence[TensorProto]:
    """The graph's initializers, in order (read only: :func:`add_initializers` and
    :func:`replace_initializers` change them)."""
    found: Sequence[TensorProto] = graph.initializer
    return found


def initializer_names(graph: GraphProto) -> set[str]:
    return {tensor.name for tensor in graph.initializer}


def add_initializers(graph: GraphProto, tensors: Iterable[TensorProto]) -> None:
    graph.initializer.extend(tensors)


def replace_initializers(graph: GraphProto, tensors: Iterable[TensorProto]) -> None:
    """Make ``tensors`` the graph's initializers, in their order."""
    kept = list(tensors)
    del graph.initializer[:]
    graph.initializer.extend(kept)


# --- declared types -----------------------------------------------------------------------


def declared_entries(proto: _Proto, *, outputs: bool = False) -> list[ValueInfoProto]:
    """The graph's (or body's) ``value_info`` entries, and with ``outputs`` its graph
    outputs after them (a function body's outputs are names, never typed)."""
    found = list(proto.value_info)
    if outputs and isinstance(proto, GraphProto):
        found += proto.output
    return found


def declarations_of(proto: GraphProto, name: str, *, inputs: bool) -> list[ValueInfoProto]:
    """Where the graph ``proto`` declares the value ``name``: its ``value_info`` entries, its
    outputs, and with ``inputs`` its inputs (of a subgraph: a main graph's inputs are the
    caller's). The entries themselves, to be read or changed in place."""
    entries = [*proto.value_info, *proto.output, *(proto.input if inputs else ())]
    return [entry for entry in entries if entry.name == name]


def value_info_entry(proto: _Proto, name: str) -> ValueInfoProto:
    """A new ``value_info`` entry named ``name`` in ``proto``, to be typed by the caller."""
    entry: ValueInfoProto = proto.value_info.add()
    entry.name = name
    return entry


def drop_value_info(proto: _Proto, doomed: Callable[[TypeProto], bool]) -> None:
    """Remove the ``value_info`` entries whose type ``doomed`` says, keeping the order."""
    kept = [v for v in proto.value_info if not doomed(v.type)]
    if len(kept) != len(proto.value_info):
        del proto.value_info[:]
        proto.value_info.extend(kept)


def drop_declared_shapes(proto: GraphProto, name: str, *, inputs: bool) -> list[TypeProto]:
    """Drop the shape of each declaration of ``name`` in ``proto`` (see
    :func:`declarations_of`) that gives a tensor one, its element type kept: the types they
    declared, in order.

    >>> graph = helper.make_graph([], "g", [], [helper.make_tensor_value_info("y", 1, [2])])
    >>> [declared] = drop_declared_shapes(graph, "y", inputs=False)
    >>> declared.tensor_type.shape.dim[0].dim_value
    2
    >>> tensor = graph.output[0].type.tensor_type
    >>> tensor.HasField("shape"), tensor.elem_type
    (False, 1)
    """
    declared = []
    for entry in declarations_of(proto, name, inputs=inputs):
        if entry.type.HasField("tensor_type"):
            tensor = entry.type.tensor_type
            if tensor.HasField("shape"):
                kept = TypeProto()
                kept.CopyFrom(entry.type)
                declared.append(kept)
                tensor.ClearField("shape")
    return declared


def set_declared_type(proto: GraphProto, name: str, declared: TypeProto, *, inputs: bool) -> None:
    """Give each declaration of ``name`` in ``proto`` (see :func:`declarations_of`) the type
    ``declared``."""
    for entry in declarations_of(proto, name, inputs=inputs):
        entry.type.CopyFrom(declared)
