"""One-node ONNX models of a case, for onnxruntime and onnx.reference.

>>> from benchmarks.cases import cpu_cases
>>> model = one_node_model(cpu_cases(quick=True)[0])
>>> [node.op_type for node in model.graph.node], [o.name for o in model.graph.output]
(['Split'], ['part0', 'part1'])
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from .cases import Case

__all__ = ["OPSET", "one_node_model"]

#: Split-18 and SplitToSequence-11, the versions every peer implements.
OPSET = 18

#: The newest IR version that onnxruntime 1.20 and later load.
IR_VERSION = 10


def _part_shape(case: Case, size: int) -> list[int]:
    return [*case.shape[: case.axis], size, *case.shape[case.axis + 1 :]]


def one_node_model(case: Case) -> onnx.ModelProto:
    """A model with input ``x`` and the case's node: Split with ``num_outputs``, or
    SplitToSequence with its scalar ``split`` as an initializer."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(case.shape))
    initializers = []
    if case.op == "Split":
        names = [f"part{i}" for i in range(case.parts)]
        node = helper.make_node("Split", ["x"], names, axis=case.axis, num_outputs=case.num_outputs)
        outputs = [
            helper.make_tensor_value_info(name, TensorProto.FLOAT, _part_shape(case, size))
            for name, size in zip(names, case.sizes(), strict=True)
        ]
    else:
        inputs = ["x"]
        if case.chunk is not None:
            inputs.append("split")
            initializers.append(helper.make_tensor("split", TensorProto.INT64, [], [case.chunk]))
        node = helper.make_node("SplitToSequence", inputs, ["parts"], axis=case.axis)
        outputs = [helper.make_tensor_sequence_value_info("parts", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], case.id, [x], outputs, initializer=initializers)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION
    )
    onnx.checker.check_model(model)
    return model
