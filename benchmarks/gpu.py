"""The GPU section: splitops on torch CUDA tensors and cupy arrays, against torch, cupy and
onnxruntime's CUDAExecutionProvider, views and copies.

It reuses the CPU machinery (cases, statements, the same timing and checks); each GPU
statement is followed by the library's synchronisation, so copies are timed to completion.
Peers whose library or device is missing are left out; with no CUDA device at all the suite
prints ``skipped: no CUDA``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case
from .peers import (
    Peer,
    copied,
    pinned_torch,
    session_options,
    splitops_statement,
    torch_parts,
)

__all__ = ["GPU_PEERS", "cuda_available"]


def _torch_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _cupy_cuda() -> bool:
    import cupy

    try:
        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except cupy.cuda.runtime.CUDARuntimeError:
        return False


def _onnxruntime_cuda() -> bool:
    import onnxruntime

    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


def _on_gpu(case: Case) -> bool:
    return case.device == "cuda"


def _nothing_to_wait_for() -> None:
    """The host runs everything synchronously: nothing to wait for."""


# The torch and onnxruntime peers take the device from the case: "cuda" in the GPU section,
# "cpu" in the tests that run this module's statements on a machine without a GPU.


def _with_torch_device(case: Case, x: Any) -> dict[str, Any]:
    import splitops

    torch = pinned_torch()
    on_gpu = case.device.startswith("cuda")
    return {
        "splitops": splitops,
        "torch": torch,
        "t": torch.from_numpy(x).to(case.device),
        "sync": torch.cuda.synchronize if on_gpu else _nothing_to_wait_for,
    }


def _with_cupy(case: Case, x: Any) -> dict[str, Any]:
    import cupy

    import splitops

    return {
        "splitops": splitops,
        "cp": cupy,
        "c": cupy.asarray(x),
        "sync": cupy.cuda.get_current_stream().synchronize,
    }


def _cupy_parts(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return [part.get() for part in value]


def _with_onnxruntime_device(case: Case, x: Any) -> dict[str, Any]:
    import onnxruntime

    from .onnx_models import one_node_model

    provider = "CUDAExecutionProvider" if case.device == "cuda" else "CPUExecutionProvider"
    session = onnxruntime.InferenceSession(
        one_node_model(case).SerializeToString(), session_options(), providers=[provider]
    )
    binding = session.io_binding()
    device_input = onnxruntime.OrtValue.ortvalue_from_numpy(x, case.device, 0)
    binding.bind_ortvalue_input("x", device_input)
    for output in session.get_outputs():
        binding.bind_output(output.name, case.device)
    names = {"sess": session, "binding": binding, "sync": binding.synchronize_outputs}
    names["device_input"] = device_input  # the binding refers to it: keep it alive
    return names


def _onnxruntime_cuda_parts(value: Any, ns: dict[str, Any], case: Case) -> list[Any]:
    return [np.asarray(output.numpy()) for output in ns["binding"].get_outputs()]


GPU_PEERS = (
    Peer(
        "splitops (torch)",
        "torch",
        _on_gpu,
        lambda case: splitops_statement(case, "t"),
        _with_torch_device,
        torch_parts,
        _torch_cuda,
    ),
    Peer(
        "torch.split",
        "torch",
        _on_gpu,
        lambda case: copied(f"torch.split(t, {case.part_length})", case, "p.clone()"),
        _with_torch_device,
        torch_parts,
        _torch_cuda,
    ),
    Peer(
        "splitops (cupy)",
        "cupy",
        _on_gpu,
        lambda case: splitops_statement(case, "c"),
        _with_cupy,
        _cupy_parts,
        _cupy_cuda,
    ),
    Peer(
        "cupy.split",
        "cupy",
        _on_gpu,
        lambda case: copied(f"cp.split(c, {case.parts})", case),
        _with_cupy,
        _cupy_parts,
        _cupy_cuda,
    ),
    Peer(
        "onnxruntime (CUDA)",
        "onnxruntime",
        _on_gpu,
        lambda case: "sess.run_with_iobinding(binding)",
        _with_onnxruntime_device,
        _onnxruntime_cuda_parts,
        _onnxruntime_cuda,
    ),
)


def cuda_available() -> bool:
    """Whether any GPU peer can run here."""
    return any(peer.available() for peer in GPU_PEERS)
