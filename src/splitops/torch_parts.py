"""The parts of a torch tensor: views from ``Tensor.split`` and ``Tensor.unbind``, or copies.

The eager path (:mod:`splitops.kernels`) and the traced one (:mod:`splitops.torch_compile`)
both cut here, so that ``torch.compile`` records the ops that eager mode runs.

>>> import torch
>>> [part.tolist() for part in cut(torch.arange(5), 0, (2, 0, 3), copy=False)]
[[0, 1], [], [2, 3, 4]]
>>> [part.tolist() for part in unbind(torch.arange(4).reshape(2, 2), 1, copy=True)]
[[0, 2], [1, 3]]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import buffers

__all__ = ["cut", "unbind"]


def cut(x: torch.Tensor, axis: int, sizes: tuple[int, ...], *, copy: bool) -> list[torch.Tensor]:
    """``x`` cut along ``axis`` into parts of ``sizes``: views, or contiguous copies."""
    tensor: Any = x  # torch's own stubs leave Tensor.split untyped
    parts = list(tensor.split(list(sizes), dim=axis)) if sizes else []
    return _copied(parts) if copy else parts


def unbind(x: torch.Tensor, axis: int, *, copy: bool) -> list[torch.Tensor]:
    """The parts of length 1 along ``axis`` with that axis removed: views, or copies."""
    parts = list(x.unbind(axis))
    return _copied(parts) if copy else parts


def _copied(parts: list[torch.Tensor]) -> list[torch.Tensor]:
    if parts and _poolable(parts):
        return _pooled_copies(parts)
    return [part.clone(memory_format=torch.contiguous_format) for part in parts]


def _poolable(parts: list[torch.Tensor]) -> bool:
    """Whether the copies of ``parts`` go on the buffer pool rather than through ``clone``.

    Large parts (``buffer_pool.min_bytes`` on average) of plain, strided CPU tensors, in
    eager mode outside autograd only: a traced or compiled graph must record torch ops
    (``torch.jit.trace``, ``make_fx`` or any other ``TorchDispatchMode`` would keep the pool's
    memory as a constant), a copy that needs gradients keeps clone's history, and under a
    ``torch.func`` transform tensors are wrapped: they have no memory of their own to copy
    (``vmap``, ``grad``), or new tensors are wrapped too (``functionalize``).
    """
    part = parts[0]
    jit: Any = torch.jit  # its is_tracing is neither exported nor typed in torch's stubs
    if (
        type(part) is not torch.Tensor
        or part.device.type != "cpu"
        or part.layout != torch.strided
        or part.is_quantized
        or (part.requires_grad and torch.is_grad_enabled())
        or torch.compiler.is_compiling()
        or jit.is_tracing()
        or torch._C._len_torch_dispatch_stack() > 0
        or torch._C._functorch.peek_interpreter_stack() is not None
    ):
        return False
    # The pool saves the page faults of large parts; a small part costs clone less than the
    # pool's work per part (100000 parts of 64 bytes took twice as long on the pool). Sizes
    # are read after the checks above: under jit.trace they are traced values.
    total = sum(p.numel() for p in parts) * part.element_size()
    if total < buffers.buffer_pool.min_bytes * len(parts):
        return False
    try:
        part.data_ptr()
    except RuntimeError:  # a functorch wrapper (vmap, grad): no storage of its own
        return False
    return True


def _pooled_copies(parts: list[torch.Tensor]) -> list[torch.Tensor]:
    """Contiguous copies of ``parts`` cut one after the other from one buffer of the pool.

    torch maps and faults in every page of a new large tensor (cutting 256 MiB in two took
    123 ms with ``clone``, 22 ms on memory the pool had mapped before). The tensors hold the
    numpy array under them, which holds the pool's block (see :mod:`splitops.buffers`).

    Each copy has a storage of its own, spanning its bytes alone, as a clone has: growing one
    (``resize_``, an ``out=`` argument) raises instead of writing into the next, pickling one
    writes its bytes alone, and changing one in place leaves the others' version counters,
    which autograd checks, alone. An empty part is a clone: torch resizes an empty ``out=``.
    No copy is a view (``set_``, as ``torch.load`` rebuilds tensors, rather than ``view``):
    autograd forbids in-place changes of views made under ``no_grad`` or returned by a
    custom ``autograd.Function``, and a clone allows them.
    """
    itemsize = parts[0].element_size()
    sizes = [part.numel() * itemsize for part in parts]
    memory = buffers.buffer_pool.empty((sum(sizes),), np.uint8)
    copies = []
    start = 0
    for part, size in zip(parts, sizes, strict=True):
        if size:
            storage = torch.from_numpy(memory[start : start + size]).untyped_storage()
            # No strides given (()): torch sets contiguous ones for the shape.
            copy = torch.empty(0, dtype=part.dtype, device="cpu").set_(storage, 0, part.shape, ())
            copy.copy_(part)
        else:
            copy = part.clone(memory_format=torch.contiguous_format)
        copies.append(copy)
        start += size
    return copies
