"""The ONNX layer: Split and SplitToSequence nodes read from protobufs, and the model tools.

It adapts protobufs to :mod:`splitops.core` and runs nodes with :mod:`splitops.arrays`;
nothing below it imports onnx (an import-linter contract checks it). What this module exports
is the layer's API; its sub-packages' modules are private. Importing it imports nothing: each
name loads its module when it is first used, so that a command loads only what it needs.

- :mod:`~splitops.onnx.model`: a model read once (:class:`ModelView`: scopes, values,
  types, constants), loaded and saved safely (:func:`load_model`, :func:`save_model`), its
  Split nodes and opset found without reading it whole (:func:`split_nodes`,
  :func:`default_opset`), a node run by its version (:func:`run_node`), and described for
  people (:func:`describe_type`, :func:`describe_split_nodes`, :func:`split_output_rows`,
  :func:`describe_array`);
- :mod:`~splitops.onnx.inference`: :func:`infer_shapes`, and :func:`check_model` over it
  (:class:`Diagnostic`);
- :mod:`~splitops.onnx.rewrite`: :func:`convert_model`, :func:`lower_model` (and
  :func:`lower_model_with_report`, a :class:`Lowering` per node), and the lowering as an
  onnx-ir pass, :class:`LowerSplits` (onnx-ir is optional: only this name needs it);
- :mod:`~splitops.onnx.run`: :func:`reference_ops` for onnx.reference, the backend
  (:mod:`splitops.backend`), input feeds (:func:`model_feeds`, :func:`load_npy`,
  :func:`write_arrays`) and the portability probes (:func:`check_portability`, on the
  runtimes of :data:`RUNTIMES`).

>>> import splitops.onnx
>>> "ModelView" in dir(splitops.onnx)
True
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .inference._check import check_model
    from .inference._diagnostics import Diagnostic
    from .inference._engine import infer_shapes
    from .model._describe import (
        SplitOutputRow,
        describe_array,
        describe_split_nodes,
        describe_type,
        split_output_rows,
    )
    from .model._io import load_model, save_model
    from .model._node import run_node
    from .model._view import ModelView
    from .model._walk import default_opset, split_nodes
    from .rewrite._convert import convert_model
    from .rewrite._ir_pass import LowerSplits
    from .rewrite._lower import Lowering, lower_model, lower_model_with_report
    from .run._feeds import load_npy, model_feeds, write_arrays
    from .run._ort import session_version
    from .run._portability import Departure, Portability, check_portability
    from .run._reference import reference_ops
    from .run._runtimes import RUNTIMES

__all__ = [
    "RUNTIMES",
    "Departure",
    "Diagnostic",
    "LowerSplits",
    "Lowering",
    "ModelView",
    "Portability",
    "SplitOutputRow",
    "check_model",
    "check_portability",
    "convert_model",
    "default_opset",
    "describe_array",
    "describe_split_nodes",
    "describe_type",
    "infer_shapes",
    "load_model",
    "load_npy",
    "lower_model",
    "lower_model_with_report",
    "model_feeds",
    "reference_ops",
    "run_node",
    "save_model",
    "session_version",
    "split_nodes",
    "split_output_rows",
    "write_arrays",
]

#: Where each name lives, by module (below this package).
_MODULES = {
    "inference._check": ["check_model"],
    "inference._diagnostics": ["Diagnostic"],
    "inference._engine": ["infer_shapes"],
    "model._describe": [
        "SplitOutputRow",
        "describe_array",
        "describe_split_nodes",
        "describe_type",
        "split_output_rows",
    ],
    "model._io": ["load_model", "save_model"],
    "model._node": ["run_node"],
    "model._view": ["ModelView"],
    "model._walk": ["default_opset", "split_nodes"],
    "rewrite._convert": ["convert_model"],
    "rewrite._ir_pass": ["LowerSplits"],
    "rewrite._lower": ["Lowering", "lower_model", "lower_model_with_report"],
    "run._feeds": ["load_npy", "model_feeds", "write_arrays"],
    "run._ort": ["session_version"],
    "run._portability": ["Departure", "Portability", "check_portability"],
    "run._reference": ["reference_ops"],
    "run._runtimes": ["RUNTIMES"],
}
_LAZY = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
