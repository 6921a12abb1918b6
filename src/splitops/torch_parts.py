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

import torch

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
    return [part.clone(memory_format=torch.contiguous_format) for part in parts]
