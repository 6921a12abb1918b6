"""``splitops.backend``: an ``onnx.backend`` that runs whole models, Split and SplitToSequence
on splitops and every other operator on ``onnx.reference`` (or, with
``engine="onnxruntime"``, the lowered model on onnxruntime).

The module is the backend (``prepare``, ``run_model``, ``run_node``, ``supports_device``), so
both ``import splitops.backend`` and ``from splitops import backend`` give something that
plugs into ``onnx.backend.test.BackendTest``. It is the public face of
:mod:`splitops.onnx.run.backend`, where the engines live.

>>> import splitops.backend
>>> splitops.backend.supports_device("CPU"), splitops.backend.ENGINES
(True, ('reference', 'onnxruntime'))
"""

from __future__ import annotations

from .onnx.run.backend import *  # noqa: F403
from .onnx.run.backend import __all__ as __all__
