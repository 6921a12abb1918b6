""":func:`~splitops.lower_model` as an onnx-ir pass, for the pipelines of onnxscript's optimizer
and ``torch.onnx`` (whose exporter hands over an ``onnx_ir.Model``).

onnx-ir is optional: importing this module imports it, and without it raises an ImportError
that says how to install it. :mod:`splitops.onnx` imports this module only when
:class:`LowerSplits` is first asked for.

>>> import onnx_ir as ir
>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abc"])
>>> model = ir.from_proto(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
>>> result = LowerSplits()(model)
>>> result.modified, [node.op_type for node in result.model.graph]
(True, ['Split'])
>>> result.model.graph.node(0).inputs[1].const_value.numpy()
array([3, 3, 1])
"""

from __future__ import annotations

try:
    import onnx_ir as ir
except ImportError as missing:
    raise ImportError(
        "splitops.onnx.LowerSplits, the lowering as an onnx-ir pass, needs onnx-ir: "
        "pip install onnx-ir (or pip install 'splitops[ir]')"
    ) from missing

from ..model.protobuf import SMALL_TENSOR
from ._lower import Target, check_target, lower_model

__all__ = ["LowerSplits"]

#: Where a weight's stand-in claims its data lies: a name no file of the model has, and
#: the weight's index among those set aside.
_STAND_IN = "splitops-weight-set-aside/{}"


class LowerSplits(ir.passes.FunctionalPass):
    """Lower every Split and SplitToSequence node of a model, as
    :func:`~splitops.lower_model` does, to forms every runtime computes as the spec says.

    ``target`` is one of :data:`~splitops.onnx.rewrite._lower.TARGETS`, as for
    :func:`~splitops.lower_model`; any other is a :class:`~splitops.SplitError` here, when
    the pipeline is built. ``modified`` is ``True`` exactly when the lowered model differs
    from the one given. An invalid node raises the ``SplitError`` that
    :func:`~splitops.lower_model` raises (a ``PassManager`` wraps it in a ``PassError``).

    A functional pass, not an in-place one: the lowering works on a ModelProto, so the model
    comes back as a new ``ir.Model``, and the one given is left as it was. The weights do not
    make the round trip: an initializer of more than ``SMALL_TENSOR`` (1,024) elements goes
    to the lowering as a stand-in that holds no data, and the new model holds the very
    tensor of the model given, as ``ir.Model.clone`` shares it. So a pass over a model of
    many gigabytes copies no weights, and a model read with ``onnx_ir.load`` reads its large
    external data from where it lies. What onnx-ir keeps in memory only (the ``meta`` of
    values and nodes) does not survive a pass that modifies the model.
    """

    def __init__(self, target: Target = "portable") -> None:
        super().__init__()
        check_target(target)
        self.target: Target = target

    def __repr__(self) -> str:
        return f"{type(self).__name__}(target={self.target!r})"

    def call(self, model: ir.Model) -> ir.passes.PassResult:
        light, weights = _with_weights_set_aside(model)
        proto = ir.serde.serialize_model(light)
        lowered = lower_model(proto, target=self.target)
        if lowered == proto:
            return ir.passes.PassResult(model.clone(), modified=False)
        result = ir.serde.deserialize_model(lowered)
        _put_weights_back(result, weights)
        return ir.passes.PassResult(result, modified=True)


def _with_weights_set_aside(model: ir.Model) -> tuple[ir.Model, list[ir.TensorProtocol]]:
    """A clone of ``model`` whose weights are stand-ins without data, and the weights, by
    the index their stand-in's location names.

    A weight is an initializer of more than ``SMALL_TENSOR`` elements, whose values the
    lowering never reads (inference follows values through small tensors only). A smaller
    one whose data lies in a file is read instead, so that the lowering sees a Split's
    constant sizes wherever they are stored (it reads no file itself).
    """
    light = model.clone()
    weights: list[ir.TensorProtocol] = []
    for graph in light.graphs():
        for value in graph.initializers.values():
            tensor = value.const_value
            if tensor is None:
                continue
            if tensor.size > SMALL_TENSOR:
                value.const_value = ir.ExternalTensor(
                    _STAND_IN.format(len(weights)),
                    offset=None,
                    length=None,
                    dtype=tensor.dtype,
                    shape=ir.Shape(tensor.shape.numpy()),
                    name=tensor.name or value.name or "",
                )
                weights.append(tensor)
            elif isinstance(tensor, ir.ExternalTensor):
                value.const_value = ir.Tensor(tensor.numpy(), dtype=tensor.dtype, name=tensor.name)
    return light, weights


def _put_weights_back(model: ir.Model, weights: list[ir.TensorProtocol]) -> None:
    """Give each stand-in's initializer its weight again."""
    locations = {_STAND_IN.format(index): tensor for index, tensor in enumerate(weights)}
    for graph in model.graphs():
        for value in graph.initializers.values():
            tensor = value.const_value
            if isinstance(tensor, ir.ExternalTensor) and tensor.location in locations:
                value.const_value = locations[tensor.location]
