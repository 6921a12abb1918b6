"""Running models: the engines (op classes for onnx.reference in ``_reference``, onnxruntime
in ``_ort``), the ``onnx.backend`` over them (``backend``, public as :mod:`splitops.backend`),
the inputs a model is fed and the ``.npy`` files a run reads and writes (``_feeds``), and the
portability probes that run each node on the installed runtimes (``_portability``). All of
them run nodes through the one reading of a node (:mod:`splitops.onnx.model`), so that
every engine computes what the planner says.

What this face exports is what the other sub-packages of :mod:`splitops.onnx` use; its
modules are private to it (an import-linter contract checks it). Importing it imports
nothing: each name loads its module when it is first used, so that a runtime's worker
process (``_runtimes``), which imports none of the others, starts in a fraction of the time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import lazy_attributes

if TYPE_CHECKING:
    from ._feeds import load_npy, model_feeds, write_arrays
    from ._ort import import_onnxruntime, session_version
    from ._portability import Departure, Portability, check_portability
    from ._reference import reference_ops
    from ._runtimes import (
        RUNTIMES,
        Runtime,
        RuntimeCrashError,
        RuntimeRunError,
        RuntimeWorkers,
        installed_runtimes,
        runtime_named,
    )

__all__ = [
    "RUNTIMES",
    "Departure",
    "Portability",
    "Runtime",
    "RuntimeCrashError",
    "RuntimeRunError",
    "RuntimeWorkers",
    "check_portability",
    "import_onnxruntime",
    "installed_runtimes",
    "load_npy",
    "model_feeds",
    "reference_ops",
    "runtime_named",
    "session_version",
    "write_arrays",
]

#: Where each name lives.
_MODULES = {
    "_feeds": ["load_npy", "model_feeds", "write_arrays"],
    "_ort": ["import_onnxruntime", "session_version"],
    "_portability": ["Departure", "Portability", "check_portability"],
    "_reference": ["reference_ops"],
    "_runtimes": [
        "RUNTIMES",
        "Runtime",
        "RuntimeCrashError",
        "RuntimeRunError",
        "RuntimeWorkers",
        "installed_runtimes",
        "runtime_named",
    ],
}
__getattr__, __dir__ = lazy_attributes(__name__, _MODULES, globals())
