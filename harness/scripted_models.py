"""TorchScript-era exports: small scripted and traced modules that split tensors the ways users
write it, each beside a Split-free control, for :mod:`harness.export_models`.

The files users bring to tract, OpenVINO, TVM and onnx2torch were most often written by the
TorchScript exporter of torch 2.4 to 2.9 (``torch.onnx.export(..., dynamo=False)``) from
code like these: ``for t in x.split(...)``, list comprehensions over ``x.split(1, dim=1)``,
``torch.stack(list(x.unbind(1)))``, ``x.chunk(k)`` with a tensor ``k``,
``torch.tensor_split(x, idx)`` with a tensor ``idx``, a loop appending to a list, a module
returning a list, sizes taken from ``x.shape``, a ViT block whose qkv is chunked and whose
heads are unbound in a loop. A scripted module (``torch.jit.script``) keeps its loops and
lists: the exporter writes them as Loops and sequences (SplitToSequence, SequenceAt,
SequenceInsert, ConcatFromSequence). A traced one is unrolled at the traced sizes.

Each :class:`Scripted` has a **control**: the same computation written without split,
chunk, unbind or lists (slices, indexing, a tensor carried through the loop), exported the
same way. A runtime that fails a control fails for a limit of its own (a Loop, a carried
tensor whose shape grows), not for the Split.

Every module is traced (or given example inputs) at one size and evaluated at two others
(``inputs(1)`` and ``inputs(2)``; ``inputs(0)`` is the traced one): the dynamic axes are
what the export must keep. This module imports only torch; it runs in a venv of an earlier
torch release.

>>> [model.name for model in SCRIPTED][:3]
['split_loop_chunks', 'split_loop_sizes', 'split_comprehension']
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

#: The opsets the TorchScript exporter is asked for: SplitToSequence's first, Split with a
#: sizes input, and Split-18 with ``num_outputs``.
OPSETS = (11, 13, 18)

#: The last axis of most inputs.
FEATURES = 12


@dataclass(frozen=True)
class Scripted:
    """One module and its control: ``kind`` is ``"script"`` (``torch.jit.script``) or
    ``"trace"`` (the exporter traces it); ``inputs(k)`` the inputs at size ``k`` (0 is the
    traced size, 1 and 2 the sizes it is evaluated at), by name; ``dynamic`` each input's
    dynamic axes; ``outputs`` the output names (one a sequence where the module returns a
    list) and ``control_outputs`` the control's."""

    name: str
    kind: str
    module: Callable[[], nn.Module]
    control: Callable[[], nn.Module]
    inputs: Callable[[int], dict[str, Tensor]]
    dynamic: dict[str, dict[int, str]]
    outputs: tuple[str, ...] = ("y",)
    control_outputs: tuple[str, ...] = ("y",)


def _features(*, batch: tuple[int, int, int] = (2, 3, 1), seq: tuple[int, int, int] = (6, 4, 10),
              features: int = FEATURES) -> Callable[[int], dict[str, Tensor]]:  # fmt: skip
    """``x`` of ``[batch, seq, features]``, the batch and sequence at size ``k``."""

    def inputs(k: int) -> dict[str, Tensor]:
        generator = torch.Generator().manual_seed(k)
        return {"x": torch.randn(batch[k], seq[k], features, generator=generator)}

    return inputs


_BATCH_SEQ = {"x": {0: "batch", 1: "seq"}}


# --- split in a loop ----------------------------------------------------------------------


class SplitLoopChunks(nn.Module):
    """``for t in x.split(2, dim=1)``: chunks of 2 along a dynamic axis, each scaled by its
    own sum, then concatenated."""

    def forward(self, x: Tensor) -> Tensor:
        out: list[Tensor] = []
        for t in x.split(2, dim=1):
            out.append(t.relu() * 2.0 + t.sum(1, keepdim=True))
        return torch.cat(out, dim=1)


class SplitLoopChunksControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        first = x[:, 0:2]
        y = first.relu() * 2.0 + first.sum(1, keepdim=True)
        for start in range(2, x.size(1), 2):
            t = x[:, start : start + 2]
            y = torch.cat([y, t.relu() * 2.0 + t.sum(1, keepdim=True)], dim=1)
        return y


class SplitLoopSizes(nn.Module):
    """``for t in x.split([2, 4, 6], dim=2)``: sizes along the static last axis, each part
    normalized by its own mean."""

    def forward(self, x: Tensor) -> Tensor:
        out: list[Tensor] = []
        for t in x.split([2, 4, 6], dim=2):
            out.append(t - t.mean(2, keepdim=True))
        return torch.cat(out, dim=2)


class SplitLoopSizesControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        bounds = [0, 2, 6, 12]
        y = x[:, :, 0:2] - x[:, :, 0:2].mean(2, keepdim=True)
        for i in range(1, 3):
            t = x[:, :, bounds[i] : bounds[i + 1]]
            y = torch.cat([y, t - t.mean(2, keepdim=True)], dim=2)
        return y


class SplitComprehension(nn.Module):
    """A list comprehension over ``x.split(1, dim=1)`` (one part per step), stacked."""

    def forward(self, x: Tensor) -> Tensor:
        return torch.stack([t.squeeze(1).softmax(-1) for t in x.split(1, dim=1)], dim=1)


class SplitComprehensionControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x[:, 0:1].softmax(-1)
        for i in range(1, x.size(1)):
            y = torch.cat([y, x[:, i : i + 1].softmax(-1)], dim=1)
        return y


class EnumerateSplit(nn.Module):
    """``for i, t in enumerate(x.split(2, dim=1))``: each chunk weighted by its position."""

    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros_like(x[:, 0:2])
        for i, t in enumerate(x.split(2, dim=1)):
            acc = acc + t * float(i + 1)
        return acc


class EnumerateSplitControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros_like(x[:, 0:2])
        for i in range(x.size(1) // 2):
            acc = acc + x[:, 2 * i : 2 * i + 2] * float(i + 1)
        return acc


class SplitLinear(nn.Module):
    """Split into three, a Linear of its own for each part, concatenated."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 5) for _ in range(3)])

    def forward(self, x: Tensor) -> Tensor:
        parts = x.split(4, dim=-1)
        out: list[Tensor] = []
        for i, layer in enumerate(self.layers):
            out.append(layer(parts[i]))
        return torch.cat(out, dim=-1)


class SplitLinearControl(SplitLinear):
    def forward(self, x: Tensor) -> Tensor:
        y = self.layers[0](x[..., 0:4])
        y = torch.cat([y, self.layers[1](x[..., 4:8])], dim=-1)
        return torch.cat([y, self.layers[2](x[..., 8:12])], dim=-1)


class CatOtherAxis(nn.Module):
    """Chunks of 2 along the sequence, concatenated along the features."""

    def forward(self, x: Tensor) -> Tensor:
        return torch.cat(x.split(2, dim=1), dim=2)


class CatOtherAxisControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        b, n, f = x.size(0), x.size(1), x.size(2)
        return x.reshape(b, n // 2, 2, f).permute(0, 2, 1, 3).reshape(b, 2, n // 2 * f)


# --- unbind -------------------------------------------------------------------------------


class UnbindStack(nn.Module):
    """``torch.stack(list(x.unbind(1)), dim=2)``: unbind's parts (the axis squeezed) stacked
    on another axis."""

    def forward(self, x: Tensor) -> Tensor:
        return torch.stack(list(x.unbind(1)), dim=2)


class UnbindStackControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.transpose(1, 2)


class UnbindLoop(nn.Module):
    """``for t in x.unbind(1)``: a running average over the sequence."""

    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros_like(x[:, 0])
        for t in x.unbind(1):
            acc = acc * 0.5 + t
        return acc


class UnbindLoopControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        acc = torch.zeros_like(x[:, 0])
        for i in range(x.size(1)):
            acc = acc * 0.5 + x[:, i]
        return acc


class UnbindChannels(nn.Module):
    """Traced: ``r, g, b = x.unbind(1)`` on a static axis of 3, mixed and stacked back."""

    def forward(self, x: Tensor) -> Tensor:
        r, g, b = x.unbind(1)
        return torch.stack([r - g, g - b, b - r, r + g + b], dim=1)


class UnbindChannelsControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        r, g, b = x[:, 0], x[:, 1], x[:, 2]
        return torch.cat(
            [(r - g)[:, None], (g - b)[:, None], (b - r)[:, None], (r + g + b)[:, None]], dim=1
        )


def _channels(k: int) -> dict[str, Tensor]:
    generator = torch.Generator().manual_seed(k)
    batch, side = (2, 3, 1)[k], (8, 5, 12)[k]
    return {"x": torch.randn(batch, 3, side, side, generator=generator)}


# --- counts and positions given as tensors --------------------------------------------------


class ChunkTensorK(nn.Module):
    """``x.chunk(int(k), dim=1)`` with ``k`` an input tensor: each chunk centered."""

    def forward(self, x: Tensor, k: Tensor) -> Tensor:
        return torch.cat([p - p.mean(1, keepdim=True) for p in x.chunk(int(k), dim=1)], dim=1)


class ChunkTensorKControl(nn.Module):
    def forward(self, x: Tensor, k: Tensor) -> Tensor:
        n = x.size(1)
        size = (n + int(k) - 1) // int(k)
        y = x[:, 0:size] - x[:, 0:size].mean(1, keepdim=True)
        for start in range(size, n, size):
            p = x[:, start : start + size]
            y = torch.cat([y, p - p.mean(1, keepdim=True)], dim=1)
        return y


def _chunks(k: int) -> dict[str, Tensor]:
    return {**_features()(k), "k": torch.tensor((3, 2, 4)[k])}


class TensorSplitIdx(nn.Module):
    """``torch.tensor_split(x, idx, dim=1)`` with ``idx`` an input tensor: a cumulative sum
    restarting at each index."""

    def forward(self, x: Tensor, idx: Tensor) -> Tensor:
        return torch.cat([p.cumsum(1) for p in torch.tensor_split(x, idx, dim=1)], dim=1)


class TensorSplitIdxControl(nn.Module):
    def forward(self, x: Tensor, idx: Tensor) -> Tensor:
        n, cuts = x.size(1), idx.size(0)
        y = x[:, 0 : int(idx[0])].cumsum(1)
        for i in range(1, cuts + 1):
            end = n if i == cuts else int(idx[i])
            y = torch.cat([y, x[:, int(idx[i - 1]) : end].cumsum(1)], dim=1)
        return y


class TensorSplitTraced(nn.Module):
    """Traced: ``torch.tensor_split`` at a constant tensor of indices (the exporter writes a
    Loop of SequenceInsert, the tracer three SequenceAt)."""

    idx: Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("idx", torch.tensor([2, 3]))

    def forward(self, x: Tensor) -> Tensor:
        return torch.cat([p.cumsum(1) for p in torch.tensor_split(x, self.idx, dim=1)], dim=1)


class TensorSplitTracedControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return torch.cat([x[:, :2].cumsum(1), x[:, 2:3].cumsum(1), x[:, 3:].cumsum(1)], dim=1)


def _indices(k: int) -> dict[str, Tensor]:
    return {**_features()(k), "idx": torch.tensor(([2, 3], [1], [3, 4, 8])[k])}


# --- lists built in a loop, lists returned ----------------------------------------------------


class LoopAppendStack(nn.Module):
    """A loop appending each step's output to a list, then ``torch.stack``."""

    def forward(self, x: Tensor) -> Tensor:
        out: list[Tensor] = []
        for i in range(x.size(1)):
            out.append(x[:, i].relu() + float(i))
        return torch.stack(out, dim=1)


class LoopAppendStackControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x[:, 0:1].relu()
        for i in range(1, x.size(1)):
            y = torch.cat([y, x[:, i : i + 1].relu() + float(i)], dim=1)
        return y


class LoopAppendCat(nn.Module):
    """A loop appending a running mean to a list, then ``torch.cat``."""

    def forward(self, x: Tensor) -> Tensor:
        out: list[Tensor] = []
        for i in range(x.size(1)):
            out.append(x[:, i : i + 1] * x[:, : i + 1].mean(1, keepdim=True))
        return torch.cat(out, dim=1)


class LoopAppendCatControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        y = x[:, 0:1] * x[:, 0:1]
        for i in range(1, x.size(1)):
            y = torch.cat([y, x[:, i : i + 1] * x[:, : i + 1].mean(1, keepdim=True)], dim=1)
        return y


class ReturnsList(nn.Module):
    """A module that returns a list: three parts of the last axis, each scaled."""

    def forward(self, x: Tensor) -> list[Tensor]:
        return [t * 2.0 for t in x.split(4, dim=-1)]


class ReturnsListControl(nn.Module):
    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return x[..., 0:4] * 2.0, x[..., 4:8] * 2.0, x[..., 8:12] * 2.0


def halves(x: Tensor) -> list[Tensor]:
    """A function returning a list: the two halves of the sequence, its length from
    ``x.shape`` (scripted with the module that calls it)."""
    n = x.shape[1]
    return list(x.split([n // 2, n - n // 2], dim=1))


class ShapeSizes(nn.Module):
    """Sizes taken from ``x.shape``: the sequence's halves swapped, through a function that
    returns a list."""

    def forward(self, x: Tensor) -> Tensor:
        parts = halves(x)
        return torch.cat([parts[1], parts[0] * 2.0], dim=1)


class ShapeSizesControl(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        n = x.shape[1]
        return torch.cat([x[:, n // 2 :], x[:, : n // 2] * 2.0], dim=1)


# --- a ViT block ----------------------------------------------------------------------------


class VitBlock(nn.Module):
    """A ViT-like attention block: qkv chunked in three, the heads unbound and attended to in
    a loop, concatenated back."""

    def __init__(self, dim: int = 16, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(dim // heads)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: Tensor) -> Tensor:
        b, n, c = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        k = k.reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        v = v.reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        ks, vs = k.unbind(1), v.unbind(1)
        out: list[Tensor] = []
        for h, qh in enumerate(q.unbind(1)):
            attention = (qh @ ks[h].transpose(-2, -1) * self.scale).softmax(-1)
            out.append(attention @ vs[h])
        # Heads side by side: torch.stack(out, 1).transpose(1, 2) is exported with a
        # Transpose of rank 5 (the exporter takes the stacked heads for rank 4).
        y: Tensor = x + self.proj(torch.cat(out, dim=-1))
        return y


class VitBlockControl(VitBlock):
    def forward(self, x: Tensor) -> Tensor:
        b, n, c = x.size(0), x.size(1), x.size(2)
        qkv = self.qkv(x)
        q = qkv[..., 0:c].reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        k = qkv[..., c : 2 * c].reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        v = qkv[..., 2 * c :].reshape(b, n, self.heads, c // self.heads).transpose(1, 2)
        o = ((q[:, 0] @ k[:, 0].transpose(-2, -1) * self.scale).softmax(-1) @ v[:, 0])[:, None]
        for h in range(1, self.heads):
            attention = (q[:, h] @ k[:, h].transpose(-2, -1) * self.scale).softmax(-1)
            o = torch.cat([o, (attention @ v[:, h])[:, None]], dim=1)
        y: Tensor = x + self.proj(o.transpose(1, 2).reshape(b, n, c))
        return y


def _tokens(k: int) -> dict[str, Tensor]:
    return _features(features=16)(k)


# --- the list ---------------------------------------------------------------------------------


def _seeded(make: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    """``make``, its weights from ``torch.manual_seed(0)``: a control and its module alike."""

    def build() -> nn.Module:
        torch.manual_seed(0)
        return make().eval()

    return build


def _entry(name: str, kind: str, module: type[nn.Module], control: type[nn.Module],
           inputs: Callable[[int], dict[str, Tensor]] | None = None,
           dynamic: dict[str, dict[int, str]] | None = None, **more: Any) -> Scripted:  # fmt: skip
    return Scripted(
        name, kind, _seeded(module), _seeded(control), inputs or _features(),
        dynamic or _BATCH_SEQ, **more,
    )  # fmt: skip


SCRIPTED: tuple[Scripted, ...] = (
    _entry("split_loop_chunks", "script", SplitLoopChunks, SplitLoopChunksControl),
    _entry("split_loop_sizes", "script", SplitLoopSizes, SplitLoopSizesControl),
    _entry("split_comprehension", "script", SplitComprehension, SplitComprehensionControl),
    _entry("enumerate_split", "script", EnumerateSplit, EnumerateSplitControl),
    _entry("split_linear", "script", SplitLinear, SplitLinearControl),
    _entry("cat_other_axis", "script", CatOtherAxis, CatOtherAxisControl),
    _entry("unbind_stack", "script", UnbindStack, UnbindStackControl),
    _entry("unbind_loop", "script", UnbindLoop, UnbindLoopControl),
    _entry("unbind_channels", "trace", UnbindChannels, UnbindChannelsControl, _channels,
           {"x": {0: "batch", 2: "height", 3: "width"}}),
    _entry("chunk_tensor_k", "script", ChunkTensorK, ChunkTensorKControl, _chunks),
    _entry("tensor_split_idx", "script", TensorSplitIdx, TensorSplitIdxControl, _indices,
           {**_BATCH_SEQ, "idx": {0: "cuts"}}),
    _entry("tensor_split_traced", "trace", TensorSplitTraced, TensorSplitTracedControl),
    _entry("loop_append_stack", "script", LoopAppendStack, LoopAppendStackControl),
    _entry("loop_append_cat", "script", LoopAppendCat, LoopAppendCatControl),
    _entry("returns_list", "script", ReturnsList, ReturnsListControl,
           control_outputs=("y0", "y1", "y2")),
    _entry("shape_sizes", "script", ShapeSizes, ShapeSizesControl),
    _entry("vit_block", "script", VitBlock, VitBlockControl, _tokens),
    _entry("vit_block_traced", "trace", VitBlock, VitBlockControl, _tokens),
)  # fmt: skip


def by_name(name: str) -> Scripted:
    """The module called ``name`` (a ``KeyError`` for another)."""
    for entry in SCRIPTED:
        if entry.name == name:
            return entry
    raise KeyError(name)


def prepared(entry: Scripted, *, control: bool = False) -> nn.Module:
    """The module (or its control) as the exporter is given it: scripted where ``kind`` is
    ``"script"``, as it is where the exporter traces it."""
    module = (entry.control if control else entry.module)()
    return torch.jit.script(module) if entry.kind == "script" else module
