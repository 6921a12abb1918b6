"""Memory for ``copy=True`` parts of numpy arrays, kept and handed out again once freed.

A large new array costs more than the copy into it: the kernel maps and zero-fills each of its
pages on first touch, and glibc gives blocks of 32 MiB and more back to the system as soon as
they are freed, so the next call pays again (a 256 MiB ``copy=True`` took 38 ms where copying
into memory already mapped took 22). onnxruntime avoids this with an arena that it never gives
back. The pool does the same, within a bound: blocks of at least :attr:`BufferPool.min_bytes`
are anonymous private memory maps (page aligned, transparent huge pages asked for where Linux
has them), and a block whose parts are all gone waits in the pool for the next request of its
size class, up to :attr:`BufferPool.max_idle_bytes` of idle blocks in all (the size class
freed least recently goes first). Smaller requests are plain ``np.empty``: malloc reuses them
cheaply.

Arrays handed out are ordinary, writeable, C-contiguous ``numpy.ndarray`` objects whose chain
of ``base`` objects passes a :class:`PooledBuffer` and ends on a ctypes array made for the
request alone. numpy collapses a chain of views only through arrays, never past the last one,
so every view of such an array, however derived, keeps that ctypes array, and so does
whatever reads the memory through a base (a memoryview, ``np.frombuffer``): the block goes
back to the pool only when nothing refers to it any more.

>>> import numpy as np
>>> pool = BufferPool(min_bytes=1 << 20)
>>> a = pool.empty((1 << 18,), np.float32)          # 1 MiB: from a block of the pool
>>> type(a.base).__name__, a.flags.c_contiguous, a.flags.writeable
('PooledBuffer', True, True)
>>> tail = a[1:]
>>> del a                                            # tail still refers to the block
>>> pool.idle_bytes
0
>>> del tail
>>> pool.idle_bytes                                  # one 2 MiB block, idle
2097152
>>> b = pool.empty((1 << 18,), np.float32)          # the same block again
>>> pool
BufferPool(min_bytes=1048576, max_idle_bytes=1073741824, idle_bytes=0, hits=1, misses=1)
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import mmap
import os
import threading
import weakref
from collections import OrderedDict, deque
from typing import Any

import numpy as np

__all__ = ["BLOCK_BYTES", "BufferPool", "PooledBuffer", "buffer_pool"]

#: Blocks are whole multiples of this (2 MiB, the x86-64 and arm64 huge page): a request is
#: served by an idle block of its rounded size, and huge pages can back every block entirely.
BLOCK_BYTES = 2 << 20

# numpy's NPY_NEEDS_INIT: np.empty sets such arrays (objects, unicode strings) to a value.
_NEEDS_INIT = 0x08

# Private, so that a forked child writing to a part does not write into the parent's part.
_MAP_FLAGS = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)


class PooledBuffer(np.ndarray):
    """The bytes of one request, on a block of a :class:`BufferPool`: the ``base`` of its parts.

    Its own ``base`` is the request's span of the block, on which the block's return to the
    pool waits.
    """


class BufferPool:
    """Page-aligned memory blocks for new arrays, reused once every array on a block is gone.

    ``min_bytes``: smaller requests are plain ``np.empty``. ``max_idle_bytes``: the most memory
    kept for reuse while nothing refers to it; ``0`` keeps none (every block is unmapped when
    freed). Both can be changed at any time. Thread-safe.
    """

    def __init__(self, *, min_bytes: int = 1 << 20, max_idle_bytes: int = 1 << 30) -> None:
        self.min_bytes = min_bytes
        #: Requests served by an idle block, and requests that mapped a new one.
        self.hits = 0
        self.misses = 0
        self._max_idle_bytes = max_idle_bytes
        self._start_empty()
        _POOLS.add(self)

    def _start_empty(self) -> None:
        # Idle blocks by size, the size class freed least recently first.
        self._idle: OrderedDict[int, list[mmap.mmap]] = OrderedDict()
        self._idle_bytes = 0
        # Blocks given back while this thread is changing the pool (a finalizer that the garbage
        # collector or a signal handler runs in the middle of it): filed once the change is done.
        self._returned: deque[tuple[int, mmap.mmap]] = deque()
        self._changing = False
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return (
            f"BufferPool(min_bytes={self.min_bytes}, max_idle_bytes={self.max_idle_bytes}, "
            f"idle_bytes={self._idle_bytes}, hits={self.hits}, misses={self.misses})"
        )

    @property
    def idle_bytes(self) -> int:
        """Bytes of the blocks waiting in the pool."""
        return self._idle_bytes

    @property
    def max_idle_bytes(self) -> int:
        """The most bytes of idle blocks kept; lowering it unmaps the least recently freed."""
        return self._max_idle_bytes

    @max_idle_bytes.setter
    def max_idle_bytes(self, value: int) -> None:
        with self._lock:
            self._max_idle_bytes = value
            self._settle()

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray[Any, Any]:
        """A new C-contiguous array of ``shape`` and ``dtype``; its values are not set."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < max(self.min_bytes, 1) or dtype.flags & _NEEDS_INIT:
            return np.empty(shape, dtype)  # numpy fills these (objects: None, strings: zeros)
        size = -(-nbytes // BLOCK_BYTES) * BLOCK_BYTES
        block = self._take(size)
        # Every chain of bases ends on this object, made for this request alone: whatever keeps
        # any of its memory (an array, a memoryview of a base) keeps it, and the block, alive.
        span = (ctypes.c_ubyte * size).from_buffer(block)
        finalizer = weakref.finalize(span, self._give_back, size, block)
        finalizer.atexit = False
        lease = np.ndarray.__new__(PooledBuffer, (nbytes,), np.uint8, buffer=span)
        array: np.ndarray[Any, Any] = np.ndarray(shape, dtype, buffer=lease)
        return array

    def clear(self) -> int:
        """Unmap every idle block; return how many bytes that was."""
        with self._lock:
            released = self._idle_bytes
            self._settle(keep=0)
            return released - self._idle_bytes

    def _take(self, size: int) -> mmap.mmap:
        block = self._settle(take=size)
        if block is not None:
            return block
        with self._lock:
            self.misses += 1
        try:
            return _new_block(size)
        except OSError:
            self.clear()  # idle blocks may be what the system is short of
            try:
                return _new_block(size)
            except OSError as error:
                raise MemoryError(
                    f"cannot map {size} bytes for the parts of copy=True: {error.strerror}. "
                    "Free memory, or copy into arrays you allocate with out=."
                ) from error

    def _give_back(self, size: int, block: mmap.mmap) -> None:
        self._returned.append((size, block))
        self._settle()

    def _settle(self, *, take: int = 0, keep: int | None = None) -> mmap.mmap | None:
        """Take an idle block of ``take`` bytes, if any, and file the blocks given back; then
        unmap the least recently freed until at most ``keep`` bytes (max_idle_bytes) are idle."""
        with self._lock:
            if self._changing:
                return None  # called from a finalizer run inside this thread's own change
            self._changing = True
            try:
                block = self._reuse(take)
                while self._returned:
                    size, returned = self._returned.popleft()
                    if size <= self._max_idle_bytes:
                        self._evict(self._max_idle_bytes - size)
                        self._idle.setdefault(size, []).append(returned)
                        self._idle.move_to_end(size)
                        self._idle_bytes += size
                self._evict(self._max_idle_bytes if keep is None else keep)
            finally:
                self._changing = False
            if self._returned:  # given back after the last look, before the change ended
                self._settle(keep=keep)
            return block

    def _reuse(self, size: int) -> mmap.mmap | None:
        blocks = self._idle.get(size)
        if not blocks:
            return None
        block = blocks.pop()
        if not blocks:
            del self._idle[size]
        self._idle_bytes -= size
        self.hits += 1
        return block

    def _evict(self, keep: int) -> None:
        while self._idle and self._idle_bytes > keep:
            size, blocks = next(iter(self._idle.items()))
            blocks.pop(0)
            if not blocks:
                del self._idle[size]
            self._idle_bytes -= size


def _new_block(size: int) -> mmap.mmap:
    block = mmap.mmap(-1, size, flags=_MAP_FLAGS) if _MAP_FLAGS else mmap.mmap(-1, size)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages
            block.madvise(advice)
    return block


_POOLS: weakref.WeakSet[BufferPool] = weakref.WeakSet()


def _start_empty_in_child() -> None:
    # A thread of the parent may have been inside a pool at the fork: its lock stays held and
    # its blocks half filed in the child. The child starts with empty pools instead.
    for pool in _POOLS:
        pool._start_empty()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_start_empty_in_child)

#: The pool that ``copy=True`` takes the memory of numpy parts from.
buffer_pool = BufferPool()
