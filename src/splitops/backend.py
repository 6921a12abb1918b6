"""An ``onnx.backend`` that runs whole models: Split and SplitToSequence on splitops, every
other operator on ``onnx.reference``.

The module itself is the backend (``prepare``, ``run_model``, ``run_node``,
``supports_device``), so it plugs into ``onnx.backend.test.BackendTest(splitops.backend)``.
Split nodes inside subgraphs (If, Loop, Scan) and model-local functions run on splitops too:
the evaluator passes its op classes down to every graph it creates.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> from splitops import backend
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "ab"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> backend.run_model(model, [np.arange(3, dtype=np.float32)])
(array([0., 1.], dtype=float32), array([2.], dtype=float32))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType
from onnx.reference import ReferenceEvaluator

from .onnx_node import run_node as _run_node
from .onnx_reference import reference_ops

__all__ = [
    "SplitopsBackend",
    "SplitopsEvaluator",
    "SplitopsRep",
    "prepare",
    "run_model",
    "run_node",
    "supports_device",
]


class SplitopsEvaluator(ReferenceEvaluator):
    """``ReferenceEvaluator`` with splitops' Split and SplitToSequence, also in functions."""

    def __init__(self, proto: Any, new_ops: Any = None, **kwargs: Any) -> None:
        super().__init__(proto, new_ops=[*reference_ops(), *(new_ops or [])], **kwargs)


class SplitopsRep(BackendRep):
    """A prepared model: ``run(inputs)`` returns the graph outputs in order."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self.evaluator = SplitopsEvaluator(model)
        initialized = {init.name for init in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initialized]

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Run on ``inputs``: a mapping by name, a sequence in graph-input order, or one array."""
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(values) > len(self.input_names):
                raise ValueError(
                    f"the model takes {len(self.input_names)} inputs {self.input_names}; "
                    f"{len(values)} were given."
                )
            feeds = dict(zip(self.input_names, values))  # noqa: B905 (optional inputs may be left out)
        return tuple(self.evaluator.run(None, feeds))


class SplitopsBackend(Backend):
    """The backend class; the module-level functions below are its methods."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> SplitopsRep:
        super().prepare(model, device, **kwargs)
        return SplitopsRep(model)

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Sequence[Any],
        device: str = "CPU",
        outputs_info: Any = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        opset = int(kwargs.get("opset_version", onnx.defs.onnx_opset_version()))
        return tuple(_run_node(node, list(inputs), opset=opset))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return bool(Device(device).type == DeviceType.CPU)


prepare = SplitopsBackend.prepare
run_model = SplitopsBackend.run_model
run_node = SplitopsBackend.run_node
supports_device = SplitopsBackend.supports_device
