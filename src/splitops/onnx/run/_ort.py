"""onnxruntime, an optional runtime: importing it with an error that says how to install it,
sessions, and values in and out (bfloat16, float8, int4 and every other element type its
numpy bridge lacks, as the ml_dtypes arrays onnx maps them to).

The onnxruntime engine of :mod:`splitops.backend` and the portability probes of
``splitops check --portability`` both run models through here.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from onnx import ModelProto, TensorProto, numpy_helper

from ..model import Linked
from ..model.protobuf import code_of_array, dtype_of_code, model_nodes, reserve_memory, weight_bytes

__all__ = [
    "INSTALL",
    "avoid_crashes",
    "import_onnxruntime",
    "make_session",
    "needs_raw_values",
    "run_session",
    "session_version",
]

#: How to install onnxruntime.
INSTALL = "pip install onnxruntime (or pip install 'splitops[onnxruntime]')"


def import_onnxruntime() -> Any:
    """The ``onnxruntime`` module, or ImportError saying how to install it."""
    try:
        import onnxruntime
    except ImportError as missing:
        raise ImportError(f"the onnxruntime engine needs onnxruntime: {INSTALL}") from missing
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


def avoid_crashes(model: ModelProto) -> str | None:
    """Why ``model`` must not run on onnxruntime, whose process dies by a signal (which no
    ``except`` catches) on it, else ``None``.

    onnxruntime 1.31 and 1.32 die on two valid forms. A Split that leaves an output out
    (``["a", "", "b"]``) dies by SIGSEGV: the lowering names each omitted output, for every
    target, so a lowered model holds none. A Scan whose scan output is stacked along an axis
    other than the first (``scan_output_axes``) dies by SIGFPE when a part is empty, which
    only the run knows: such a model does not run on onnxruntime.
    """
    for _, node in model_nodes(model):
        if node.is_op("Scan"):
            axes = node.attribute("scan_output_axes", ())
            if not isinstance(axes, Linked) and any(axes):
                return (
                    "onnxruntime dies (SIGFPE) on a Scan stacking an empty scan output along "
                    f"an axis other than the first, and node {node.name or node.op_type!r} "
                    f"stacks along axes {list(axes)}."
                )
    return None


def needs_raw_values(session: Any) -> bool:
    """Whether a session takes or gives a tensor of an element type that numpy's own dtypes
    lack (bfloat16, float8, int4, float4e2m1, ...): onnxruntime's numpy bridge refuses such
    inputs and gives such outputs as bytes, or not at all."""
    values = [*session.get_inputs(), *session.get_outputs()]
    return any(_raw_code(str(value.type)) is not None for value in values)


def run_session(session: Any, feeds: Mapping[str, Any], *, raw: bool = True) -> list[Any]:
    """``session.run(None, feeds)``; where ``raw`` (see :func:`needs_raw_values`), values of
    the types numpy lacks go in and come back as the ml_dtypes arrays onnx maps them to,
    through their bytes as ONNX lays them out (sub-byte types packed)."""
    if not raw:
        return list(session.run(None, {name: _plain(value) for name, value in feeds.items()}))
    ort = import_onnxruntime()
    values, held = {}, []
    for name, value in feeds.items():
        holder, code = _holder(value)
        held.append(holder)
        values[name] = (
            ort.OrtValue.ortvalue_from_numpy(holder)
            if code is None
            else ort.OrtValue.ortvalue_from_numpy_with_onnx_type(holder, onnx_element_type=code)
        )
    # The OrtValues read the holders' memory without a copy: they stay alive until the run ends.
    outputs = session.run_with_ort_values(None, values)
    del held
    return [_read(value) for value in outputs]


def _plain(value: Any) -> Any:
    """A numpy scalar as a 0-d array: onnxruntime takes arrays (and lists for sequences)."""
    return np.asarray(value) if isinstance(value, np.generic) else value


def _holder(value: Any) -> tuple[np.ndarray[Any, Any], int | None]:
    """An array onnxruntime can read ``value`` from, and the ONNX element type to read it
    as where numpy has no such dtype (``None`` otherwise): its bytes as ONNX lays them out
    (``numpy_helper.from_array``: int4 two to a byte), in an array of ``value``'s shape."""
    array = np.asarray(value)
    code = code_of_array(array.dtype) if array.dtype.isbuiltin == 2 else None
    if code is None:
        return array, None
    raw = np.frombuffer(numpy_helper.from_array(array).raw_data, np.uint8)
    holder = np.zeros(array.shape, f"u{array.dtype.itemsize}")
    holder.reshape(-1).view(np.uint8)[: raw.size] = raw
    return holder, code


def _raw_code(type_text: str) -> int | None:
    """The ONNX element type of a tensor (or of a sequence's tensors) of type ``type_text``,
    such as ``tensor(float8e4m3fn)``, where numpy's own dtypes lack it; ``None`` otherwise."""
    found = re.search(r"tensor\((\w+)\)", type_text)
    if found is None:
        return None
    try:
        code = int(TensorProto.DataType.Value(found[1].upper()))
    except ValueError:  # a type this onnx does not know
        return None
    dtype = dtype_of_code(code)
    return code if dtype is not None and dtype.isbuiltin == 2 else None


def _read(value: Any) -> Any:
    """An OrtValue as numpy: a list for a sequence; a type numpy lacks from its bytes, as
    the ml_dtypes array onnx maps it to."""
    if not value.is_tensor():
        items = value.as_sequence()
        return [_read(items[i]) for i in range(len(items))]
    code = _raw_code(value.data_type())
    if code is None:
        return value.numpy()
    size = value.tensor_size_in_bytes()
    raw = ctypes.string_at(value.data_ptr(), size) if size else b""
    tensor = TensorProto(data_type=code, dims=list(value.shape()), raw_data=raw)
    return numpy_helper.to_array(tensor)
