"""dask: splitting is lazy, parts reuse the input's chunks, and data may exceed memory.

Nothing is computed when splitting; each part's chunks are the input's chunks cut at the
part's bounds; an 8 GiB array splits and reduces in a few hundred MiB; parts compute on a
``dask.distributed`` cluster; unknown lengths and lazy sizes are clear SplitErrors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from itertools import accumulate
from typing import Any

import numpy as np
import pytest
from tests.processes import GUARD_SECONDS

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

from splitops import SplitError, split, split_to_sequence  # noqa: E402

#: Along axis 0, chunks of 4 rows: 5 blocks, 20 rows. Along axis 1, chunks (2, 1).
ROW_CHUNK, BLOCKS = 4, 5


class CountingBlocks:
    """A dask array whose blocks come from a delayed function that records each call."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self._lock = threading.Lock()

    def block(self, index: int) -> np.ndarray:
        with self._lock:
            self.calls.append(index)
        start = index * ROW_CHUNK * 3
        return np.arange(start, start + ROW_CHUNK * 3, dtype=np.float64).reshape(ROW_CHUNK, 3)

    def array(self) -> Any:
        blocks = [
            da.from_delayed(dask.delayed(self.block)(i), (ROW_CHUNK, 3), np.float64)
            for i in range(BLOCKS)
        ]
        return da.concatenate(blocks, axis=0).rechunk({1: (2, 1)})


def _cut_chunks(chunks: tuple[int, ...], start: int, stop: int) -> tuple[int, ...]:
    """The oracle: the pieces of ``chunks`` (lengths along one axis) inside [start, stop)."""
    pieces = []
    for chunk_stop, chunk in zip(accumulate(chunks), chunks, strict=True):
        low, high = max(start, chunk_stop - chunk), min(stop, chunk_stop)
        if high > low:
            pieces.append(high - low)
    return tuple(pieces) or (0,)


@pytest.mark.parametrize("copy", [False, True])
def test_split_computes_nothing_and_a_part_computes_only_its_blocks(copy: bool) -> None:
    source = CountingBlocks()
    x = source.array()
    parts = [*split(x, [6, 10, 4], copy=copy), *split_to_sequence(x, axis=0, keepdims=0)]
    assert source.calls == []
    with dask.config.set(scheduler="sync"):
        first = parts[0].compute()
    assert sorted(source.calls) == [0, 1]  # rows 0..5 live in blocks 0 and 1
    np.testing.assert_array_equal(first, np.arange(18.0).reshape(6, 3))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("copy", [False, True])
def test_part_chunks_are_the_input_chunks_cut_at_the_part_bounds(axis: int, copy: bool) -> None:
    x = da.from_array(np.arange(20 * 3).reshape(20, 3), chunks=((4,) * 5, (2, 1)))
    sizes = [6, 0, 10, 4] if axis == 0 else [1, 2]
    parts = split(x, sizes, axis=axis, copy=copy)
    for part, stop, size in zip(parts, accumulate(sizes), sizes, strict=True):
        expected = list(x.chunks)
        expected[axis] = _cut_chunks(x.chunks[axis], stop - size, stop)
        assert part.chunks == tuple(expected)
        np.testing.assert_array_equal(
            part.compute(), np.take(x.compute(), range(stop - size, stop), axis)
        )


def test_keepdims0_parts_keep_the_chunks_of_the_other_axes() -> None:
    x = da.from_array(np.arange(20 * 3).reshape(20, 3), chunks=((4,) * 5, (2, 1)))
    parts = split_to_sequence(x, axis=1, keepdims=0)
    assert [part.chunks for part in parts] == [((4,) * 5,)] * 3
    np.testing.assert_array_equal(parts[2].compute(), np.arange(2, 60, 3))


def test_an_unknown_length_on_the_split_axis_is_a_split_error() -> None:
    values = da.from_array(np.arange(10), chunks=5)
    x = values[values > 3]
    assert np.isnan(x.shape[0])
    with pytest.raises(SplitError, match=r"length of axis 0 .* unknown.*compute_chunk_sizes"):
        split(x, num_outputs=2)
    with pytest.raises(SplitError, match=r"length of axis 0 .* unknown"):
        split_to_sequence(x, 2)
    assert [p.compute().tolist() for p in split(x.compute_chunk_sizes(), num_outputs=2)] == [
        [4, 5, 6],
        [7, 8, 9],
    ]


def test_lazy_split_sizes_are_a_split_error_asking_to_compute_them() -> None:
    x = da.arange(10, chunks=5)
    with pytest.raises(SplitError, match=r"lazy dask array .* \.compute\(\)"):
        split(x, da.from_array(np.array([4, 6])))


def test_parts_compute_on_a_distributed_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    values = np.arange(40 * 6, dtype=np.float64).reshape(40, 6)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        x = da.from_array(values, chunks=(8, 3))
        parts = split(x, num_outputs=3, axis=0)
        sums = client.gather(client.compute([part.sum(axis=0) for part in parts]))
        rows = client.compute(split_to_sequence(x, axis=1, keepdims=0)[4]).result()
    for got, want in zip(sums, np.split(values, [14, 28]), strict=True):
        np.testing.assert_array_equal(got, want.sum(axis=0))
    np.testing.assert_array_equal(rows, values[:, 4])


PEAK_SCRIPT = """
import json, resource
import dask, dask.array as da
from splitops import split

dask.config.set(scheduler="threads", num_workers=2)
x = da.arange(2**30, dtype="float64", chunks=2**24)  # 8 GiB in 64 chunks of 128 MiB
sums = [float(part.sum().compute()) for part in split(x, num_outputs=3)]
try:  # this process's own high-water mark; ru_maxrss also counts that of pytest
    status = open("/proc/self/status").read().splitlines()
    peak_kib = int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
except OSError:
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
peak_mib = peak_kib / 1024
print(json.dumps({"sums": sums, "peak_mib": peak_mib, "nbytes": x.nbytes}))
"""


def test_an_8_gib_array_splits_and_reduces_in_under_1_5_gib() -> None:
    pytest.importorskip("resource")
    done = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ.copy(),
        timeout=GUARD_SECONDS,
    )
    report = json.loads(done.stdout)
    assert report["nbytes"] == 8 * 2**30
    chunk = -(-(2**30) // 3)  # Split-18: parts of ceil(n / 3), the rest last
    bounds = [(0, chunk), (chunk, 2 * chunk), (2 * chunk, 2**30)]
    expected = [(start + stop - 1) * (stop - start) / 2 for start, stop in bounds]
    np.testing.assert_allclose(report["sums"], expected, rtol=1e-12)
    assert report["peak_mib"] < 1.5 * 1024
