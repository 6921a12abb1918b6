"""onnxruntime, an optional runtime: importing it with an error that says how to install it,
sessions, and values in and out (bfloat16 included, which its numpy bridge lacks).

The onnxruntime engine of :mod:`splitops.backend` and the portability probes of
``splitops check --portability`` both run models through here.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from onnx import ModelProto, TensorProto

from ..model._memory import reserve_memory, weight_bytes

__all__ = [
    "has_bfloat16",
    "import_onnxruntime",
    "make_session",
    "run_session",
    "session_version",
]

_INSTALL = "pip install onnxruntime (or pip install 'splitops[onnxruntime]')"


def import_onnxruntime() -> Any:
    """The ``onnxruntime`` module, or ImportError saying how to install it."""
    try:
        import onnxruntime
    except ImportError as missing:
        raise ImportError(f"the onnxruntime engine needs onnxruntime: {_INSTALL}") from missing
    return onnxruntime


def session_version() -> str | None:
    """The installed onnxruntime's version, or ``None`` when it is not installed."""
    try:
        return str(import_onnxruntime().__version__)
    except ImportError:
        return None


def make_session(
    model: ModelProto,
    *,
    session_options: Any = None,
    providers: Sequence[str] | None = None,
    threads: int | None = None,
) -> Any:
    """An ``InferenceSession`` of ``model``. Without ``session_options``, onnxruntime logs
    fatal errors only (its failures surface as exceptions) and uses ``threads`` intra-op
    threads (its default when ``None``)."""
    ort = import_onnxruntime()
    if session_options is None:
        session_options = ort.SessionOptions()
        session_options.log_severity_level = 4
        if threads is not None:
            session_options.intra_op_num_threads = threads
    reserve_memory(2 * weight_bytes(model))  # the model serialized, and onnxruntime's copy
    try:
        return ort.InferenceSession(
            model.SerializeToString(),
            session_options,
            providers=list(providers or ["CPUExecutionProvider"]),
        )
    except Exception as error:  # onnxruntime's own classes
        # onnxruntime reports running out of memory as an invalid model ("Failed to load
        # model with error: std::bad_alloc"): a session per subgraph, each some 50 KB.
        if "bad_alloc" in str(error):
            raise MemoryError(f"onnxruntime ran out of memory: {error}") from error
        raise


def has_bfloat16(session: Any) -> bool:
    """Whether a session takes or gives a bfloat16 tensor, which numpy cannot hand over."""
    values = [*session.get_inputs(), *session.get_outputs()]
    return any("bfloat16" in str(value.type) for value in values)


def run_session(session: Any, feeds: Mapping[str, Any], *, bfloat16: bool = True) -> list[Any]:
    """``session.run(None, feeds)``; where ``bfloat16`` (see :func:`has_bfloat16`), bfloat16
    values are handed over and read back as raw bits."""
    if not bfloat16:
        return list(session.run(None, dict(feeds)))
    ort = import_onnxruntime()
    values = {
        name: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            np.ascontiguousarray(value).view(np.uint16), onnx_element_type=TensorProto.BFLOAT16
        )
        if getattr(value, "dtype", None) == ml_dtypes.bfloat16
        else ort.OrtValue.ortvalue_from_numpy(np.asarray(value))
        for name, value in feeds.items()
    }
    return [_read(value) for value in session.run_with_ort_values(None, values)]


def _read(value: Any) -> Any:
    """An OrtValue as numpy: a list for a sequence, bfloat16 from its raw bits."""
    if not value.is_tensor():
        items = value.as_sequence()
        return [_read(items[i]) for i in range(len(items))]
    if value.data_type() != "tensor(bfloat16)":
        return value.numpy()
    shape = tuple(value.shape())
    size = value.tensor_size_in_bytes()
    raw = ctypes.string_at(value.data_ptr(), size) if size else b""
    return np.frombuffer(raw, dtype=np.uint16).reshape(shape).view(ml_dtypes.bfloat16)
