"""A lowered model's graph outputs in the form a runtime's own API hands them over.

- onnx2torch's module returns one value per node that writes a graph output, a tuple of a
  node's outputs where it has several: a Split of three parts, each a graph output, comes
  back as one tuple, not as three tensors in the graph's order. :func:`one_node_per_output`
  gives each such output an Identity of its own, so that the module returns one tensor per
  graph output, in order.
- tract computes what follows from a shape as a symbolic dim (TDim), which its Python API
  cannot hand over ("Unsupported DatumType in the public API TDim"), even through a Cast.
  :func:`int64_outputs` computes such an int64 output (0-d, or 1-d of a static length) as
  data: the sum of a ConstantOfShape of ones of its length, which tract reduces as a tensor.
  A negative value fails there (a dim, a count of parts, is never negative).

>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph([helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)],
...     "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> one_node_per_output(model), [node.op_type for node in model.graph.node]
(2, ['Split', 'Identity', 'Identity'])
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from ..model import ModelView, Node, TensorType, route_outputs

__all__ = ["int64_outputs", "one_node_per_output"]


def one_node_per_output(model: ModelProto) -> int:
    """Each main graph output that a node of several outputs writes, written by an Identity
    of its own (in place); returns how many."""
    view = ModelView.read(model)
    renamed: dict[str, str] = {}
    for name in view.main.output_names():
        value = view.main.value(name)
        producer = None if value is None else value.producer
        if producer is not None and len(producer.output_names) > 1:
            renamed[name] = view.fresh_name(f"{name}_of_{producer.op_type.lower()}")
    return route_outputs(
        model, renamed, lambda inner, outer: [helper.make_node("Identity", [inner], [outer])]
    )


def int64_outputs(model: ModelProto) -> int:
    """Each main graph output of int64, 0-d or 1-d of a static length up to 16, computed from
    a Shape or a Size, computed as data instead (in place); returns how many."""
    view = ModelView.read(model)
    lengths: dict[str, int | None] = {}
    for name in view.main.output_names():
        value = view.main.value(name)
        kind = view.main.tensor_type(name)
        if value is None or value.producer is None or not _from_shape(value.producer):
            continue
        if not isinstance(kind, TensorType) or kind.element != TensorProto.INT64:
            continue
        dims = kind.static_dims
        if dims == ():
            lengths[name] = None
        elif dims is not None and len(dims) == 1 and dims[0] is not None and dims[0] <= 16:
            lengths[name] = dims[0]
    renamed = {name: view.fresh_name(f"{name}_dims") for name in lengths}

    def as_data(inner: str, outer: str) -> list[NodeProto]:
        return _as_data(view, inner, outer, lengths[outer])

    return route_outputs(model, renamed, as_data)


def _from_shape(node: Node) -> bool:
    """Whether ``node``'s value is computed from a Shape or a Size (in its scope)."""
    seen: set[int] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.is_op("Shape", "Size"):
            return True
        pending.extend(v.producer for v in current.inputs if v is not None and v.producer)
    return False


def _as_data(view: ModelView, inner: str, outer: str, length: int | None) -> list[NodeProto]:
    """``inner`` (int64, 0-d where ``length`` is ``None``, else 1-d of ``length``) as
    ``outer``, each element the sum of a ConstantOfShape of that many ones."""
    nodes: list[NodeProto] = []
    ones = numpy_helper.from_array(np.ones(1, np.int64))

    def fresh(what: str) -> str:
        return view.fresh_name(f"{outer}_{what}")

    def constant(values: list[int]) -> str:
        name = fresh("const")
        tensor = numpy_helper.from_array(np.array(values, np.int64), name)
        nodes.append(helper.make_node("Constant", [], [name], value=tensor))
        return name

    def summed(value: str, output: str, keepdims: int) -> None:
        many = fresh("ones")
        nodes.append(helper.make_node("ConstantOfShape", [value], [many], value=ones))
        nodes.append(helper.make_node("ReduceSum", [many], [output], keepdims=keepdims))

    if length is None:
        flat = fresh("flat")
        nodes.append(helper.make_node("Reshape", [inner, constant([1])], [flat]))
        summed(flat, outer, 0)
        return nodes
    pieces = []
    for index in range(length):
        element = fresh(f"dim{index}")
        nodes.append(helper.make_node("Gather", [inner, constant([index])], [element], axis=0))
        pieces.append(fresh(f"data{index}"))
        summed(element, pieces[-1], 1)
    nodes.append(helper.make_node("Concat", pieces, [outer], axis=0))
    return nodes
