"""The inference engine and the checker over it: one pass that types every value of a model,
Split's outputs from the planner (``_engine``, with ``_symbolic`` for symbolic dims and
``_values`` for shape computations followed), and ``check_model``, which reports the problems
that pass finds (``_check``, ``_diagnostics``). The checker asks the engine rather than
re-deriving the rules, so that a model it passes is one that inference and execution agree on.

What this face exports is what the other sub-packages of :mod:`splitops.onnx` use; its
modules are private to it (an import-linter contract checks it).
"""

from ._check import check_model, check_model_counted
from ._diagnostics import Diagnostic
from ._engine import (
    SplitNodeInference,
    infer_model_and_nodes,
    infer_shapes,
)

__all__ = [
    "Diagnostic",
    "SplitNodeInference",
    "check_model",
    "check_model_counted",
    "infer_model_and_nodes",
    "infer_shapes",
]
