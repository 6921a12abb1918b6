"""One fixture set for every array library: run a test once per ``Backend``.

``library`` is parametrized over :class:`Backend` and skips a library that is not installed
(or a CUDA backend without a CUDA device); ``xp`` is that library's array API namespace,
``device`` a device of it (not the default one where the library has several),
``asarray`` puts a numpy array there and ``to_numpy`` brings a result back, so that numpy
itself can be the oracle for every library. A test module that is about one library
overrides ``library`` with a fixture returning that member.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import Enum
from types import ModuleType
from typing import Any

import array_api_compat
import ml_dtypes
import numpy as np
import pytest

ToBackend = Callable[..., Any]
ToNumpy = Callable[[Any], np.ndarray]

#: numpy dtypes of the 16 ONNX element types; "string" is numpy's str dtype.
NUMPY_DTYPES: dict[str, np.dtype[Any]] = {
    "bool": np.dtype(bool),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
    "string": np.dtype(str),
}


class Backend(Enum):
    """An array library (and, for CUDA, where its arrays live) that splitops must serve."""

    NUMPY = "numpy"
    ARRAY_API_STRICT = "array_api_strict"
    TORCH = "torch"
    TORCH_CUDA = "torch_cuda"
    JAX = "jax"
    CUPY = "cupy"
    DASK = "dask"

    @property
    def modname(self) -> str:
        """The module to import for this backend."""
        return {"torch_cuda": "torch", "jax": "jax.numpy", "dask": "dask.array"}.get(
            self.value, self.value
        )

    @property
    def onnx_types(self) -> dict[str, np.dtype[Any]]:
        """The ONNX element types this library has, each with its numpy dtype."""
        if self is Backend.NUMPY:
            return NUMPY_DTYPES
        lacks = {"string"}  # torch, jax (with x64) and dask (numpy chunks) have all the rest
        if self is Backend.ARRAY_API_STRICT:
            lacks |= {"float16", "bfloat16"}
        if self is Backend.CUPY:
            lacks |= {"bfloat16"}
        return {name: dtype for name, dtype in NUMPY_DTYPES.items() if name not in lacks}

    @property
    def needs_cuda(self) -> bool:
        """Whether the backend runs only where a CUDA device exists."""
        return self in (Backend.TORCH_CUDA, Backend.CUPY)


def _cuda_available(backend: Backend, module: ModuleType) -> bool:
    if backend is Backend.CUPY:
        try:
            return bool(module.cuda.runtime.getDeviceCount())
        except module.cuda.runtime.CUDARuntimeError:
            return False
    return bool(module.cuda.is_available())


def available(backend: Backend) -> Backend:
    """``backend``, or a skip when its library (or its CUDA device) is absent."""
    module = pytest.importorskip(backend.modname)
    if backend.needs_cuda and not _cuda_available(backend, module):
        pytest.skip(f"{backend.value} needs a CUDA device and this machine has none")
    return backend


@pytest.fixture(params=list(Backend), ids=lambda backend: backend.value)
def library(request: pytest.FixtureRequest) -> Backend:
    """Each backend in turn; skips one whose library (or CUDA device) is absent."""
    return available(request.param)


@pytest.fixture
def xp(library: Backend) -> Iterator[ModuleType]:
    """The array API namespace of ``library`` (jax with 64-bit types on)."""
    module = pytest.importorskip(library.modname)
    namespace: ModuleType = array_api_compat.array_namespace(module.empty(0))
    if library is Backend.JAX:
        import jax

        with jax.enable_x64(True):
            yield namespace
        return
    yield namespace


@pytest.fixture
def device(library: Backend, xp: ModuleType) -> Any:
    """A device of ``library``: the second one where the library models several."""
    if library is Backend.ARRAY_API_STRICT:
        return xp.Device("device1")
    if library is Backend.TORCH_CUDA:
        # The device torch puts an array on when asked for "cuda": cuda:0 (or the current
        # one), which is what a part's device compares equal to; torch.device("cuda") is not.
        return xp.empty(0, device="cuda").device
    return array_api_compat.device(xp.empty(0))


@pytest.fixture
def asarray(library: Backend, xp: ModuleType, device: Any) -> ToBackend:
    """``asarray(values, chunks=None)``: the numpy array ``values`` in ``library`` on ``device``."""

    def convert(values: np.ndarray, chunks: Any = None) -> Any:
        if library is Backend.DASK:
            dask_array = pytest.importorskip("dask.array")
            return dask_array.from_array(values, chunks=chunks or values.shape)
        if library is Backend.CUPY:
            return xp.asarray(values)  # on the current device, the one ``device`` names
        if library in (Backend.TORCH, Backend.TORCH_CUDA) and values.dtype == ml_dtypes.bfloat16:
            wide = xp.asarray(values.astype(np.float32), device=device)
            return wide.to(xp.bfloat16)
        return xp.asarray(values, device=device)

    return convert


@pytest.fixture
def to_numpy(library: Backend, xp: ModuleType) -> ToNumpy:
    """``to_numpy(part)``: a result of ``library`` as a numpy array, with its values and dtype."""

    def convert(part: Any) -> np.ndarray:
        if library is Backend.DASK:
            return np.asarray(part.compute())
        if library is Backend.CUPY:
            return np.asarray(part.get())
        if library is Backend.ARRAY_API_STRICT:
            return np.asarray(xp.asarray(part, device=xp.Device("CPU_DEVICE")))
        if library in (Backend.TORCH, Backend.TORCH_CUDA):
            host = part.detach().cpu()
            if host.dtype == xp.bfloat16:
                return np.asarray(host.float()).astype(ml_dtypes.bfloat16)
            return np.asarray(host)
        return np.asarray(part)

    return convert


def numpy_parts(values: np.ndarray, sizes: list[int], axis: int) -> list[np.ndarray]:
    """The oracle: numpy's own split of ``values`` at the running sums of ``sizes``."""
    return np.split(values, np.cumsum(sizes)[:-1], axis=axis)


@pytest.fixture
def oracle() -> Callable[[np.ndarray, list[int], int], list[np.ndarray]]:
    """numpy's split at the running sums of the sizes: ``oracle(values, sizes, axis)``."""
    return numpy_parts
