"""torch's native path: views from ``split_with_sizes`` / ``unbind``, copies cut from one tensor.

The eager path and the traced one (:mod:`splitops.arrays._torch_compile`) both cut views
here, so that ``torch.compile`` records the ops that eager mode runs. Copies and ``out=`` are
:class:`~splitops.arrays._strided.Strided`'s, made of torch's primitives (:data:`TORCH`):
one new tensor, filled by one copy (the split axis first), one gather (a run of equal parts),
or ``torch.split_with_sizes_copy`` where torch fuses it. This module imports torch: it is
loaded only once a tensor arrives.

>>> import torch
>>> from splitops.core import SplitPlan
>>> [part.tolist() for part in views(torch.arange(5), SplitPlan.make(0, (2, 0, 3)))]
[[0, 1], [], [2, 3, 4]]
>>> rows = SplitPlan.make(1, (1, 1), drop_axis=True)
>>> [p.tolist() for p in TORCH.copies(torch.arange(4).reshape(2, 2), rows)]
[[0, 2], [1, 3]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ..core import ElementType, Rule, SplitError, SplitPlan, SplitTypeError, opset_rule
from ._dtypes import element_of
from ._strided import Strided

__all__ = ["TORCH", "cut_sizes", "describe", "views"]

_TENSOR = torch.Tensor
_STRIDED = torch.strided

#: The element type of every dtype torch has (the text of one ONNX lacks): one lookup a call.
_ELEMENTS: dict[torch.dtype, ElementType | str] = {
    dtype: element_of(dtype) for dtype in vars(torch).values() if isinstance(dtype, torch.dtype)
}

#: torch's fused split_with_sizes_copy on CUDA launches a grid whose second dimension counts
#: the rows before the split axis (at most 65,535 of them; more is "invalid argument").
_FUSED_MOST_ROWS = 65_535


def describe(x: torch.Tensor, op: str, opset: int) -> tuple[ElementType | str, tuple[int, ...]]:
    """The element type and shape of ``x``, or SplitTypeError for a sparse or nested tensor
    (they have no basic slicing to cut them with)."""
    if x.layout is not _STRIDED or x.is_nested:
        kind = "nested" if x.is_nested else str(x.layout).removeprefix("torch.")
        raise SplitTypeError(
            f"{opset_rule(op, opset).name} cuts strided tensors; a {kind} tensor was given.",
            rule=Rule.ARRAY,
            hint="Convert it first (.to_dense(), or .unbind() for a nested tensor).",
        )
    return _ELEMENTS.get(x.dtype) or element_of(x.dtype), x.shape


def views(x: torch.Tensor, plan: SplitPlan) -> Sequence[torch.Tensor]:
    """The parts of ``x`` by ``plan``: views sharing its storage, by torch's own split."""
    if plan.drop_axis:
        return x.unbind(plan.axis)
    return x.split_with_sizes(plan.sizes, plan.axis) if plan.sizes else ()


def cut_sizes(
    x: torch.Tensor, axis: int, sizes: tuple[int, ...], drop_axis: bool, *, copy: bool
) -> list[torch.Tensor]:
    """The parts as a traced graph records them: views, or a contiguous clone of each."""
    parts = list(x.unbind(axis) if drop_axis else x.split_with_sizes(sizes, axis) if sizes else ())
    if copy:
        return [part.clone(memory_format=torch.contiguous_format) for part in parts]
    return parts


def _tracked(x: torch.Tensor) -> bool:
    """Whether autograd records what is done with ``x`` (then no ``out=`` op may touch it)."""
    return x.requires_grad and torch.is_grad_enabled()


class Torch(Strided):
    """torch's primitives, on any device."""

    def describe(self, x: Any, op: str, opset: int) -> tuple[ElementType | str, tuple[int, ...]]:
        return describe(x, op, opset)

    def empty(self, x: Any, count: int) -> Any:
        return x.new_empty((count,))

    def contiguous(self, x: Any) -> Any:
        return x.clone(memory_format=torch.contiguous_format)

    def copy(self, destination: Any, source: Any) -> None:
        destination.copy_(source)

    def transpose(self, a: Any, order: tuple[int, ...]) -> Any:
        return a.permute(order)

    def rows(self, a: Any) -> Sequence[Any]:
        return a.unbind(0)  # type: ignore[no-any-return]

    def views(self, x: Any, plan: SplitPlan) -> Sequence[Any]:
        return views(x, plan)

    def span(self, a: Any) -> tuple[int, int] | None:
        if not a.numel() or a.device.type == "meta":
            return None
        start = a.data_ptr()
        reach = sum((n - 1) * stride for n, stride in zip(a.shape, a.stride(), strict=True))
        return start, start + (reach + 1) * a.element_size()

    def owner(self, first: Any, x: Any) -> Any:
        base: Any = first._base if type(first) is _TENSOR else None
        if (
            base is None
            or base.dtype is not x.dtype
            or base.requires_grad
            or not base.is_contiguous()
            or base.device != x.device
            or base.device.type == "meta"
            or _tracked(x)
            or (base.is_inference() and not torch.is_inference_mode_enabled())
        ):
            return None
        return base

    def piece(self, array: Any, owner: Any, shape: tuple[int, ...]) -> int | None:
        dtype = owner.dtype
        if type(array) is not _TENSOR or array._base is not owner or array.shape != shape:
            return None
        if array.dtype is not dtype or array.requires_grad or not array.is_contiguous():
            return None
        return int(array.data_ptr()) if array.numel() else -1

    def flat(self, owner: Any, start: int, stop: int) -> Any:
        itemsize = owner.element_size()
        offset, rest = divmod(start - owner.data_ptr(), itemsize)
        return None if rest else owner.view(-1)[offset : offset + (stop - start) // itemsize]

    def check_array(self, x: Any, array: Any, i: int, name: str) -> None:
        problem = None
        if array.device != x.device:
            problem = f"is on {array.device}, and the input on {x.device}"
        elif array.requires_grad and array.is_leaf and torch.is_grad_enabled():
            problem = "is a leaf tensor that requires grad: autograd forbids writing into it"
        elif array.is_inference() and not torch.is_inference_mode_enabled():
            problem = "is an inference tensor, written outside inference mode"
        elif any(st == 0 and n > 1 for n, st in zip(array.shape, array.stride(), strict=True)):
            problem = "is expanded (a stride of 0): its elements share memory"
        if problem:
            raise SplitError(
                f"{name} out[{i}] {problem}.",
                rule=Rule.OUT,
                hint="Pass writeable tensors of their own on the input's device.",
            )

    def copy_each(self, x: Any, plan: SplitPlan, parts: Sequence[Any]) -> None:
        torch.split_with_sizes_copy(x, list(plan.sizes), plan.axis, out=list(parts))

    def write_each(self, x: Any, plan: SplitPlan, arrays: Sequence[Any], name: str) -> None:
        if self.fuses(x, plan, each=True) and not any(array.requires_grad for array in arrays):
            try:
                self.copy_each(x, plan, arrays)
                return
            except RuntimeError:
                pass  # copied part by part below, which names the part torch refuses
        super().write_each(x, plan, arrays, name)

    def fuses(self, x: Any, plan: SplitPlan, *, each: bool) -> bool:
        """Whether ``torch.split_with_sizes_copy`` copies the parts: on CUDA, one fused
        kernel (on a contiguous input, not along the innermost axis, whose rows are too many
        and too short for it); elsewhere a loop in C++, which beats Python's when the parts
        are copied ``each`` on their own anyway."""
        if plan.drop_axis or _tracked(x) or not plan.sizes:
            return False
        if x.device.type == "cuda":
            axis, shape = plan.axis, x.shape
            return bool(
                x.is_contiguous()
                and math.prod(shape[axis + 1 :]) > 1
                and math.prod(shape[:axis]) <= _FUSED_MOST_ROWS
            )
        return each


#: torch's primitives.
TORCH = Torch()
