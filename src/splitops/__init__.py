"""ONNX Split (opsets 1, 2, 11, 13, 18) and SplitToSequence (11, 24), exactly as specified,
zero-copy on any array API library.

>>> import numpy as np, splitops
>>> splitops.split_sizes(7, num_outputs=4)
(2, 2, 2, 1)
>>> [p.shape for p in splitops.split(np.zeros((2, 7)), num_outputs=4, axis=1)]
[(2, 2), (2, 2), (2, 2), (2, 1)]

The layers, each a subpackage: :mod:`splitops.core` (the rules: pure Python),
:mod:`splitops.arrays` (cutting arrays), :mod:`splitops.onnx` (protobufs: nodes, models,
inference, the backend), and :mod:`splitops.cli` (the command). What this module exports is
the API; the layers' private modules are not.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .core import (
    OPSET_RULES,
    Limits,
    ModelCheckWarning,
    ModelInputError,
    ModelLoadError,
    OpsetRule,
    OtherOperatorError,
    PackError,
    Rule,
    SplitError,
    SplitopsError,
    SplitTypeError,
    limits,
    opset_rule,
    sequence_sizes,
    split_sizes,
)

if TYPE_CHECKING:
    from . import backend
    from .arrays import split, split_to_sequence
    from .onnx import (
        Diagnostic,
        check_model,
        convert_model,
        infer_shapes,
        load_model,
        lower_model,
        reference_ops,
        rewrite_file,
        run_node,
        save_model,
    )

__all__ = [
    "OPSET_RULES",
    "Diagnostic",
    "Limits",
    "ModelCheckWarning",
    "ModelInputError",
    "ModelLoadError",
    "OpsetRule",
    "OtherOperatorError",
    "PackError",
    "Rule",
    "SplitError",
    "SplitTypeError",
    "SplitopsError",
    "backend",
    "check_model",
    "convert_model",
    "infer_shapes",
    "limits",
    "load_model",
    "lower_model",
    "opset_rule",
    "reference_ops",
    "rewrite_file",
    "run_node",
    "save_model",
    "sequence_sizes",
    "split",
    "split_sizes",
    "split_to_sequence",
]

# The array functions import numpy, the ONNX layer onnx: each loads on first use, so that
# `import splitops` (and the command's start-up) costs only the pure-Python core.
_LAZY = {
    "split": ("splitops.arrays", "split"),
    "split_to_sequence": ("splitops.arrays", "split_to_sequence"),
    "backend": ("splitops.backend", None),
    "run_node": ("splitops.onnx", "run_node"),
    "reference_ops": ("splitops.onnx", "reference_ops"),
    "infer_shapes": ("splitops.onnx", "infer_shapes"),
    "check_model": ("splitops.onnx", "check_model"),
    "Diagnostic": ("splitops.onnx", "Diagnostic"),
    "convert_model": ("splitops.onnx", "convert_model"),
    "load_model": ("splitops.onnx", "load_model"),
    "save_model": ("splitops.onnx", "save_model"),
    "lower_model": ("splitops.onnx", "lower_model"),
    "rewrite_file": ("splitops.onnx", "rewrite_file"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'splitops' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__version__ = "0.1.0"
