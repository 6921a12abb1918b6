"""cupy: on the GPU, parts are views of any input layout and copy=True detaches, as in numpy.

These tests need cupy and a CUDA device; elsewhere the whole module is skipped. The oracle
is numpy's slicing of the same data copied to the host.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np
import pytest

cp = pytest.importorskip("cupy")
try:
    _DEVICES = cp.cuda.runtime.getDeviceCount()
except cp.cuda.runtime.CUDARuntimeError:
    _DEVICES = 0
if not _DEVICES:
    pytest.skip("cupy is installed but this machine has no CUDA device", allow_module_level=True)

from splitops import split, split_to_sequence  # noqa: E402

#: Ways to lay out the same (2, 12, 3) values in GPU memory, all with array methods.
LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda a: a,
    "reversed": lambda a: a[::-1, ::-1, ::-1],
    "permuted": lambda a: a.transpose(1, 0, 2).copy().transpose(1, 0, 2),
    "fortran": lambda a: a.T.copy().T,
    "strided": lambda a: a.repeat(2, axis=1)[:, 1::2],
}

#: (function of x, sizes it cuts along axis 1 of length 12).
CUTS: dict[str, tuple[Callable[..., Any], list[int]]] = {
    "explicit": (lambda x, **kw: split(x, [5, 0, 7], axis=1, **kw), [5, 0, 7]),
    "num_outputs": (lambda x, **kw: split(x, num_outputs=5, axis=1, **kw), [3, 3, 3, 3, 0]),
    "chunks": (lambda x, **kw: split_to_sequence(x, 5, axis=1, **kw), [5, 5, 2]),
    "unit_chunks": (lambda x, **kw: split_to_sequence(x, axis=1, **kw), [1] * 12),
}


def _gpu_and_host(layout: str) -> tuple[Any, np.ndarray]:
    x = LAYOUTS[layout](cp.arange(2 * 12 * 3, dtype=cp.float32).reshape(2, 12, 3))
    return x, cp.asnumpy(x)


def _host_slices(host: np.ndarray, sizes: list[int]) -> list[np.ndarray]:
    return [
        host[:, stop - size : stop] for size, stop in zip(sizes, accumulate(sizes), strict=True)
    ]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cut", CUTS)
def test_parts_of_every_layout_are_gpu_views_with_numpy_values(layout: str, cut: str) -> None:
    function, sizes = CUTS[cut]
    x, host = _gpu_and_host(layout)
    parts = function(x)
    for part, want in zip(parts, _host_slices(host, sizes), strict=True):
        assert isinstance(part, cp.ndarray)
        assert part.device == x.device
        np.testing.assert_array_equal(cp.asnumpy(part), want, strict=True)
        assert part.size == 0 or cp.shares_memory(part, x)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cut", CUTS)
def test_copy_true_gives_c_contiguous_gpu_arrays_apart_from_the_input(
    layout: str, cut: str
) -> None:
    function, sizes = CUTS[cut]
    x, host = _gpu_and_host(layout)
    parts = function(x, copy=True)
    for part, want in zip(parts, _host_slices(host, sizes), strict=True):
        assert part.flags.c_contiguous
        assert not cp.shares_memory(part, x)
        np.testing.assert_array_equal(cp.asnumpy(part), want, strict=True)
        part[...] = -1
    np.testing.assert_array_equal(cp.asnumpy(x), host, strict=True)


@pytest.mark.parametrize("copy", [False, True])
def test_keepdims0_parts_drop_the_axis(copy: bool) -> None:
    x, host = _gpu_and_host("permuted")
    parts = split_to_sequence(x, axis=2, keepdims=0, copy=copy)
    for i, part in enumerate(parts):
        np.testing.assert_array_equal(cp.asnumpy(part), host[:, :, i], strict=True)
        assert cp.shares_memory(part, x) is not copy
        assert part.flags.c_contiguous or not copy


def test_split_sizes_may_be_a_gpu_array() -> None:
    x, host = _gpu_and_host("contiguous")
    parts = split(x, cp.asarray([4, 8]), axis=1)
    np.testing.assert_array_equal(cp.asnumpy(parts[1]), host[:, 4:], strict=True)
