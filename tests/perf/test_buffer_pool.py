"""The buffer pool behind ``copy=True``: blocks are reused only once nothing refers to them.

The pool's promise is the one ``copy=True`` makes without it: parts are new, independent,
writeable, C-contiguous numpy arrays. What it adds (memory mapped once, handed out again) must
never be visible, above all never as a part whose memory a later call overwrites.
"""

from __future__ import annotations

import gc
import inspect
import mmap
import os
import pickle
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import numpy as np
import pytest

import splitops
from splitops import recipes
from splitops.buffers import BLOCK_BYTES, BufferPool, PooledBuffer

MiB = 1 << 20


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[BufferPool]:
    """A fresh pool in place of the one copy=True uses, so that its counters are this test's."""
    fresh = BufferPool(min_bytes=MiB, max_idle_bytes=64 * MiB)
    monkeypatch.setattr(recipes, "buffer_pool", fresh)
    yield fresh
    gc.collect()
    fresh.clear()


def _lease(array: Any) -> Any:
    """The :class:`PooledBuffer` that ``array``'s chain of bases ends on, else None."""
    while isinstance(array, np.ndarray) and not isinstance(array, PooledBuffer):
        array = array.base
    return array if isinstance(array, PooledBuffer) else None


def _pooled(array: Any) -> bool:
    """Whether ``array``'s chain of bases ends on a block of a pool."""
    return _lease(array) is not None


def _large(seed: int, rows: int = 1024) -> Any:
    """A (rows, 1024) float32 array: 4 MiB for the default 1024 rows."""
    return np.random.default_rng(seed).random((rows, 1024), dtype=np.float32)


def test_large_copies_come_from_the_pool_and_keep_the_copy_promise(pool: BufferPool) -> None:
    x = _large(0)
    parts = splitops.split(x, [300, 724], copy=True)
    assert all(type(p) is np.ndarray and _pooled(p) for p in parts)
    for part, expected in zip(parts, (x[:300], x[300:]), strict=True):
        np.testing.assert_array_equal(part, expected, strict=True)
        assert part.flags.c_contiguous
        assert part.flags.writeable
        assert not np.shares_memory(part, x)
    assert not np.shares_memory(parts[0], parts[1])
    assert (pool.hits, pool.misses) == (0, 1)


def test_a_freed_block_serves_the_next_request_of_its_size(pool: BufferPool) -> None:
    first = splitops.split(_large(1), num_outputs=2, copy=True)
    address = first[0].ctypes.data
    del first
    assert pool.idle_bytes == 2 * BLOCK_BYTES  # 4 MiB of parts: two 2 MiB pages' worth
    x = _large(2)
    again = splitops.split(x, num_outputs=2, copy=True)
    assert again[0].ctypes.data == address
    assert (pool.hits, pool.misses, pool.idle_bytes) == (1, 1, 0)
    np.testing.assert_array_equal(np.concatenate(again), x, strict=True)


def test_small_copies_are_plain_numpy_arrays(pool: BufferPool) -> None:
    parts = splitops.split(np.arange(64.0), num_outputs=2, copy=True)
    assert not _pooled(parts[0])
    assert (pool.hits, pool.misses) == (0, 0)


# Every way of keeping part of the memory of a part must keep the whole block from reuse.
KEEPERS: dict[str, Callable[[Any], Any]] = {
    "slice": lambda p: p[1:],
    "slice of a slice": lambda p: p[1:][::2],
    "reshape": lambda p: p.reshape(-1),
    "transpose": lambda p: p.T,
    "dtype view": lambda p: p.view(np.uint8),
    "subclass view": lambda p: p.view(np.recarray),
    "memoryview": memoryview,
    "as_strided": lambda p: np.lib.stride_tricks.as_strided(p, shape=(2, 2), strides=(8, 4)),
    "frombuffer": lambda p: np.frombuffer(p, dtype=np.float32),
    "view typed as the lease": lambda p: p.view(PooledBuffer),
    "the lease": _lease,
    "the bytes under the lease": lambda p: np.frombuffer(_lease(p).base, dtype=np.uint8),
    "memoryview under the lease": lambda p: memoryview(_lease(p).base),
}


@pytest.mark.parametrize("keep", KEEPERS.values(), ids=KEEPERS.keys())
def test_a_block_is_not_reused_while_anything_refers_to_it(
    pool: BufferPool, keep: Callable[[Any], Any]
) -> None:
    parts = splitops.split(_large(3), num_outputs=2, copy=True)
    kept = keep(parts[0])
    before = np.array(kept, copy=True)
    address = parts[0].ctypes.data
    del parts
    gc.collect()
    assert pool.idle_bytes == 0
    newer = splitops.split(_large(4) + 1, num_outputs=2, copy=True)
    assert newer[0].ctypes.data != address
    np.testing.assert_array_equal(np.array(kept, copy=True), before, strict=True)


def test_two_requests_never_share_one_idle_block() -> None:
    pool = BufferPool(min_bytes=MiB)
    pool.empty((BLOCK_BYTES,), np.uint8)  # freed at once: one idle block
    first = pool.empty((BLOCK_BYTES,), np.uint8)
    second = pool.empty((BLOCK_BYTES,), np.uint8)
    assert not np.shares_memory(first, second)
    assert (pool.hits, pool.misses) == (1, 2)


def test_torch_tensors_from_parts_keep_their_block() -> None:
    torch = pytest.importorskip("torch")
    pool = BufferPool(min_bytes=MiB)
    part = pool.empty((MiB,), np.float32)
    part[:] = 7
    tensor = torch.from_numpy(part)
    del part
    gc.collect()
    assert pool.idle_bytes == 0
    other = pool.empty((MiB,), np.float32)
    other[:] = 0
    assert bool((tensor == 7).all())


def test_unstacked_copies_come_from_the_pool(pool: BufferPool) -> None:
    wide = _large(5, rows=2048)  # 8 MiB
    rows = splitops.split_to_sequence(wide, axis=0, keepdims=0, copy=True)
    assert _pooled(rows[0])
    np.testing.assert_array_equal(np.stack(rows), wide, strict=True)
    small = _large(5, rows=8)  # 32 KiB, under min_bytes
    parts = splitops.split_to_sequence(small, keepdims=0, copy=True)
    assert not _pooled(parts[0])


def test_idle_memory_stays_under_max_idle_bytes_least_recently_freed_first() -> None:
    pool = BufferPool(min_bytes=MiB, max_idle_bytes=3 * BLOCK_BYTES)
    one = pool.empty((BLOCK_BYTES,), np.uint8)
    two = pool.empty((2 * BLOCK_BYTES,), np.uint8)
    other_one = pool.empty((BLOCK_BYTES,), np.uint8)
    kept_address = other_one.ctypes.data
    del one, two
    assert pool.idle_bytes == 3 * BLOCK_BYTES
    del other_one  # the block of one, freed first, makes room for it
    assert pool.idle_bytes == 3 * BLOCK_BYTES
    assert pool.empty((2 * BLOCK_BYTES,), np.uint8).base is not None
    assert pool.empty((BLOCK_BYTES,), np.uint8).ctypes.data == kept_address
    assert (pool.hits, pool.misses) == (2, 3)


def test_max_idle_bytes_zero_keeps_nothing_and_clear_unmaps_idle_blocks() -> None:
    pool = BufferPool(min_bytes=MiB, max_idle_bytes=0)
    pool.empty((4 * MiB,), np.uint8)
    assert pool.idle_bytes == 0
    pool.max_idle_bytes = 16 * MiB
    pool.empty((4 * MiB,), np.uint8)
    assert pool.idle_bytes == 4 * MiB
    assert pool.clear() == 4 * MiB
    assert pool.idle_bytes == 0


def test_lowering_max_idle_bytes_unmaps_the_least_recently_freed_at_once() -> None:
    pool = BufferPool(min_bytes=MiB, max_idle_bytes=16 * MiB)
    first, second, last = (pool.empty((BLOCK_BYTES,), np.uint8) for _ in range(3))
    last_address = last.ctypes.data
    del first, second, last  # in this order
    assert pool.idle_bytes == 3 * BLOCK_BYTES
    pool.max_idle_bytes = BLOCK_BYTES
    assert pool.idle_bytes == BLOCK_BYTES
    assert pool.empty((BLOCK_BYTES,), np.uint8).ctypes.data == last_address
    pool.max_idle_bytes = 0
    assert pool.idle_bytes == 0


def test_max_idle_bytes_set_to_zero_keeps_nothing_even_after_blocks_were_kept() -> None:
    pool = BufferPool(min_bytes=MiB, max_idle_bytes=16 * MiB)
    first, second = pool.empty((4 * MiB,), np.uint8), pool.empty((4 * MiB,), np.uint8)
    del first
    pool.max_idle_bytes = 0
    del second
    assert pool.idle_bytes == 0


@pytest.mark.parametrize("min_bytes", [0, -1])
def test_an_empty_request_is_a_plain_array_whatever_min_bytes(min_bytes: int) -> None:
    pool = BufferPool(min_bytes=min_bytes)
    array = pool.empty((0, 3), np.float32)
    assert array.shape == (0, 3)
    assert array.dtype == np.float32
    assert (pool.hits, pool.misses) == (0, 0)


def test_an_empty_copy_is_a_plain_array_when_every_size_is_pooled(pool: BufferPool) -> None:
    pool.min_bytes = 0
    parts = splitops.split(np.zeros((0, 4), np.float32), num_outputs=2, axis=1, copy=True)
    assert [p.shape for p in parts] == [(0, 2), (0, 2)]


@pytest.mark.skipif(not hasattr(mmap.mmap, "madvise"), reason="needs mmap.madvise")
def test_a_kernel_that_rejects_the_huge_page_advice_still_gets_pooled_arrays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Linux without transparent huge pages answers MADV_HUGEPAGE with EINVAL, as it answers -1.
    monkeypatch.setattr(mmap, "MADV_HUGEPAGE", -1, raising=False)
    array = BufferPool(min_bytes=MiB).empty((MiB,), np.uint8)
    assert _pooled(array)


def _blocks_ready(pool: BufferPool) -> int:
    """How many 2 MiB blocks the pool hands out without mapping; idle_bytes must say as much."""
    idle = pool.idle_bytes
    hits = pool.hits
    taken = [pool.empty((BLOCK_BYTES,), np.uint8) for _ in range(idle // BLOCK_BYTES)]
    assert pool.hits - hits == len(taken)
    assert pool.idle_bytes == 0
    return len(taken)


OPERATIONS: dict[str, Callable[[BufferPool, list[Any]], Any]] = {
    "give back and evict": lambda pool, held: held.clear(),
    "take": lambda pool, held: pool.empty((BLOCK_BYTES,), np.uint8),
    "clear": lambda pool, held: pool.clear(),
    "lower max_idle_bytes": lambda pool, held: setattr(pool, "max_idle_bytes", BLOCK_BYTES),
}


def _give_back_at_line(
    line: int, operation: Callable[[BufferPool, list[Any]], Any]
) -> BufferPool | None:
    """Run ``operation`` on a full pool, freeing one more block before its ``line``-th line;
    None if the pool's code ran fewer lines."""
    pool = BufferPool(min_bytes=MiB, max_idle_bytes=2 * BLOCK_BYTES)
    idle = [pool.empty((BLOCK_BYTES,), np.uint8) for _ in range(2)]
    held = [pool.empty((BLOCK_BYTES,), np.uint8)]
    inside = [pool.empty((BLOCK_BYTES,), np.uint8)]
    del idle  # the pool is full
    source = inspect.getsourcefile(BufferPool)
    events = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal events
        if frame.f_code.co_filename != source:
            return None
        if event == "line":
            if events == line:
                inside.clear()  # the last reference: its finalizer runs here
            events += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        result = operation(pool, held)
    finally:
        sys.settrace(previous)
    del result, held
    return None if inside else pool


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_a_block_given_back_at_any_line_of_the_pool_leaves_it_consistent(
    monkeypatch: pytest.MonkeyPatch, operation: Callable[[BufferPool, list[Any]], Any]
) -> None:
    # The garbage collector (at any bytecode from Python 3.12) and signal handlers can run a
    # finalizer, and so give a block back, in the middle of the pool's own code.
    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(repr(u.exc_value)))
    line = 0
    while (pool := _give_back_at_line(line, operation)) is not None:
        assert unraisable == []
        assert pool.idle_bytes <= pool.max_idle_bytes
        _blocks_ready(pool)
        line += 1
    assert line > 3


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_child_forked_while_another_thread_is_in_the_pool_can_use_it() -> None:
    pool = BufferPool(min_bytes=MiB)
    pool.empty((BLOCK_BYTES,), np.uint8)
    inside, leave = threading.Event(), threading.Event()

    def stay_inside() -> None:
        with pool._lock:  # as a thread that gives a block back does
            inside.set()
            leave.wait()

    thread = threading.Thread(target=stay_inside)
    thread.start()
    inside.wait()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # forking with threads: Python 3.12+ and jax warn
            child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                signal.alarm(10)  # a child stuck on the parent's lock dies of SIGALRM
                array = pool.empty((BLOCK_BYTES,), np.uint8)
                array[...] = 1
                del array
                code = 0 if pool.idle_bytes == BLOCK_BYTES else 2
            finally:
                os._exit(code)
    finally:
        leave.set()
        thread.join()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_object_arrays_are_never_pooled() -> None:
    array = BufferPool(min_bytes=8).empty((4 * MiB,), object)
    assert array.base is None
    assert array[0] is None
    assert array[-1] is None


def test_unicode_arrays_are_never_pooled_and_start_empty_as_numpy_gives_them() -> None:
    pool = BufferPool(min_bytes=8)
    dirty = pool.empty((MiB,), np.uint32)
    dirty[:] = ord("x")
    del dirty
    array = pool.empty((MiB // 4, 4), "U1")
    assert not _pooled(array)
    assert set(array.ravel().tolist()) == {""}


def test_a_mapping_the_system_refuses_is_a_memory_error_that_says_what_to_do() -> None:
    with pytest.raises(MemoryError, match=r"cannot map \d+ bytes .* out="):
        BufferPool().empty((1 << 60,), np.uint8)


def test_pooled_parts_pickle_as_plain_arrays(pool: BufferPool) -> None:
    x = _large(6)
    part = splitops.split(x, num_outputs=2, copy=True)[1]
    loaded = pickle.loads(pickle.dumps(part))
    assert type(loaded) is np.ndarray
    assert not _pooled(loaded)
    np.testing.assert_array_equal(loaded, x[512:], strict=True)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_writing_a_part_leaves_the_parents_part_alone(pool: BufferPool) -> None:
    x = _large(7)
    part = splitops.split(x, num_outputs=2, copy=True)[0]
    with warnings.catch_warnings():
        # Python 3.12+ and jax (once imported) warn that forking a process with threads may
        # deadlock; the child only writes to memory and exits.
        warnings.simplefilter("ignore")
        child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        part[...] = -1
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    np.testing.assert_array_equal(part, x[:512], strict=True)


def test_threads_copying_and_freeing_at_once_get_their_own_values(pool: BufferPool) -> None:
    failures: list[str] = []

    def work(seed: int) -> None:
        for round_ in range(20):
            x = _large(seed * 100 + round_, rows=512)
            parts = splitops.split(x, num_outputs=2, copy=True)
            if not np.array_equal(np.concatenate(parts), x):
                failures.append(f"thread {seed} round {round_}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert pool.hits + pool.misses == 80
    assert pool.hits > 0
