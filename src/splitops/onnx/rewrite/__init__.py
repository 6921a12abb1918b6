"""Convert and lower: ``convert_model`` moves Split nodes to another opset (``_convert``),
``lower_model`` rewrites them into forms every runtime computes alike (``_lower``, with
``_graph_sizes`` for sizes computed in the graph, and ``_ir_pass`` for the same as an onnx-ir
pass), and both keep one contract (``_contract``).
Each plans its edits on the one reading of the model (:mod:`splitops.onnx.model`) and checks
its result before anyone sees it, as onnx-ir's passes state ``requires`` and ``ensures``; the
rule for a node comes from one place, as onnxscript's optimizer keeps one evaluator per op.

What this face exports is what the other sub-packages of :mod:`splitops.onnx` use; its
modules are private to it (an import-linter contract checks it).

:class:`LowerSplits` needs onnx-ir, an optional library: it loads when first asked for.
"""

from typing import TYPE_CHECKING, Any

from ._contract import RewriteError, check_rewrite
from ._convert import convert_model
from ._lower import (
    FORMS,
    TARGETS,
    Lowering,
    SequenceReader,
    Target,
    check_target,
    lower_model,
    lower_model_with_report,
    sequence_readers,
    target_forms,
)

if TYPE_CHECKING:
    from ._ir_pass import LowerSplits

__all__ = [
    "FORMS",
    "TARGETS",
    "LowerSplits",
    "Lowering",
    "RewriteError",
    "SequenceReader",
    "Target",
    "check_rewrite",
    "check_target",
    "convert_model",
    "lower_model",
    "lower_model_with_report",
    "sequence_readers",
    "target_forms",
]


def __getattr__(name: str) -> Any:
    if name == "LowerSplits":
        from ._ir_pass import LowerSplits

        return LowerSplits
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
