"""ONNX Split (opsets 1, 2, 11, 13, 18) and SplitToSequence (11, 24), exactly as specified,
zero-copy on any array API library.

>>> import numpy as np, splitops
>>> splitops.split_sizes(7, num_outputs=4)
(2, 2, 2, 1)
>>> [p.shape for p in splitops.split(np.zeros((2, 7)), num_outputs=4, axis=1)]
[(2, 2), (2, 2), (2, 2), (2, 1)]
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .buffers import BufferPool, buffer_pool
from .errors import SplitError, SplitTypeError
from .kernels import split, split_to_sequence
from .opset_rules import OPSET_RULES, OpsetRule, opset_rule
from .planner import sequence_sizes, split_sizes

if TYPE_CHECKING:
    from . import backend
    from .model_check import check_model
    from .model_convert import convert_model
    from .model_io import load_model
    from .onnx_node import run_node
    from .onnx_reference import reference_ops
    from .shape_inference import infer_shapes

__all__ = [
    "OPSET_RULES",
    "BufferPool",
    "OpsetRule",
    "SplitError",
    "SplitTypeError",
    "backend",
    "buffer_pool",
    "check_model",
    "convert_model",
    "infer_shapes",
    "load_model",
    "opset_rule",
    "reference_ops",
    "run_node",
    "sequence_sizes",
    "split",
    "split_sizes",
    "split_to_sequence",
]

# The ONNX layer imports onnx; it loads on first use so that `import splitops` stays light.
_LAZY = {
    "backend": ("splitops.backend", None),
    "run_node": ("splitops.onnx_node", "run_node"),
    "reference_ops": ("splitops.onnx_reference", "reference_ops"),
    "infer_shapes": ("splitops.shape_inference", "infer_shapes"),
    "check_model": ("splitops.model_check", "check_model"),
    "convert_model": ("splitops.model_convert", "convert_model"),
    "load_model": ("splitops.model_io", "load_model"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'splitops' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__version__ = "0.1.0"
