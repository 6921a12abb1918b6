"""The ONNX layer: Split and SplitToSequence nodes read from protobufs, and the model tools.

It adapts protobufs to :mod:`splitops.core` and runs nodes with :mod:`splitops.arrays`;
nothing below it imports onnx (an import-linter contract checks it). What this module exports
is the layer's API; its sub-packages' modules are private. Importing it imports nothing: each
name loads its module when it is first used, so that a command loads only what it needs.

- :mod:`~splitops.onnx.model`: a model read once (:class:`ModelView`: scopes, values,
  types, constants), loaded and saved safely (:func:`load_model`, :func:`save_model`), a
  model file rewritten with its weights left where they lie (:func:`rewrite_file`), its
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
  :func:`write_arrays`), the portability probes (:func:`check_portability`), and the
  runtimes, each run in a worker process of its own (:data:`RUNTIMES`,
  :class:`RuntimeWorkers`).

>>> import splitops.onnx
>>> "ModelView" in dir(splitops.onnx)
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import lazy_attributes

if TYPE_CHECKING:
    from .inference import Diagnostic, check_model, check_model_counted, infer_shapes
    from .model import ModelView, load_model, rewrite_file, save_model
    from .model.describe import (
        SplitOutputRow,
        describe_array,
        describe_split_nodes,
        describe_type,
        split_output_rows,
    )
    from .model.protobuf import default_opset, run_node, split_nodes
    from .rewrite import (
        Lowering,
        LowerSplits,
        convert_model,
        lower_model,
        lower_model_with_report,
        target_forms,
    )
    from .run import (
        RUNTIMES,
        Departure,
        Portability,
        Runtime,
        RuntimeCrashError,
        RuntimeRunError,
        RuntimeWorkers,
        check_portability,
        import_onnxruntime,
        installed_runtimes,
        load_npy,
        model_feeds,
        reference_ops,
        runtime_named,
        session_version,
        write_arrays,
    )

__all__ = [
    "RUNTIMES",
    "Departure",
    "Diagnostic",
    "LowerSplits",
    "Lowering",
    "ModelView",
    "Portability",
    "Runtime",
    "RuntimeCrashError",
    "RuntimeRunError",
    "RuntimeWorkers",
    "SplitOutputRow",
    "check_model",
    "check_model_counted",
    "check_portability",
    "convert_model",
    "default_opset",
    "describe_array",
    "describe_split_nodes",
    "describe_type",
    "import_onnxruntime",
    "infer_shapes",
    "installed_runtimes",
    "load_model",
    "load_npy",
    "lower_model",
    "lower_model_with_report",
    "model_feeds",
    "reference_ops",
    "rewrite_file",
    "run_node",
    "runtime_named",
    "save_model",
    "session_version",
    "split_nodes",
    "split_output_rows",
    "target_forms",
    "write_arrays",
]

#: Where each name lives, by sub-package (each exports it from its face).
_MODULES = {
    "inference": ["Diagnostic", "check_model", "check_model_counted", "infer_shapes"],
    "model": ["ModelView", "load_model", "rewrite_file", "save_model"],
    "model.protobuf": ["default_opset", "run_node", "split_nodes"],
    "model.describe": [
        "SplitOutputRow",
        "describe_array",
        "describe_split_nodes",
        "describe_type",
        "split_output_rows",
    ],
    "rewrite": [
        "LowerSplits",
        "Lowering",
        "convert_model",
        "lower_model",
        "lower_model_with_report",
        "target_forms",
    ],
    "run": [
        "RUNTIMES",
        "Departure",
        "Portability",
        "Runtime",
        "RuntimeCrashError",
        "RuntimeRunError",
        "RuntimeWorkers",
        "check_portability",
        "installed_runtimes",
        "runtime_named",
        "load_npy",
        "model_feeds",
        "reference_ops",
        "import_onnxruntime",
        "session_version",
        "write_arrays",
    ],
}
__getattr__, __dir__ = lazy_attributes(__name__, _MODULES, globals())
