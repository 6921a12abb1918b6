"""A corpus of real exported ONNX models holding Split and SplitToSequence nodes.

One-node models (:mod:`benchmarks.onnx_models`) test an operator alone; this corpus tests
the nodes as exporters really write them: Split-18 with ``num_outputs`` or with a constant
``split`` input, split sizes computed at run time from a dynamic axis (``Shape ->
Gather/Squeeze -> Div -> ... -> Concat`` into Split or SplitToSequence), fused projections
cut into q, k and v, rotary halves, GLU, and small random-init ``transformers`` language
models (GPT-2, Phi-3, GPTBigCode, CodeGen, GPT-NeoX). Tests and benchmarks of shape
inference and of model lowering read it.

Every :class:`CorpusModel` is one module and one exporter: ``"dynamo"``
(``torch.onnx.export(..., dynamo=True, dynamic_shapes=...)``) or ``"torchscript"`` (the
legacy exporter, ``dynamo=False, dynamic_axes=...``), opset 18, batch and sequence axes
dynamic, one ``.onnx`` file without external data. :data:`CORPUS` holds the combinations
whose file has a Split or SplitToSequence node and runs as torch does; :data:`LEFT_OUT`
holds the others, each with its reason (an exporter writes Slice instead, or silently
specializes a dynamic axis). Weights come from ``torch.manual_seed(0)``; nothing is
downloaded. ``transformers`` is imported only to build its models.

A folder is reused: a model file newer than the folder's version stamp, which names the
torch, transformers, onnx and onnxscript versions, is kept. ``python -m benchmarks.corpus``
exports it; the dynamo exporter takes 0.6 to 7 s a model, the torchscript one under 0.3 s.
This module does not import ``splitops``.

>>> [entry.file_name for entry in CORPUS if entry.name == "gpt2"]
['gpt2-dynamo.onnx', 'gpt2-torchscript.onnx']
>>> by_name("chunk_static", "dynamo").inputs(2, 5)[0].shape
torch.Size([2, 5, 12])
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from .export_models import graphs, quiet

__all__ = [
    "CORPUS",
    "LEFT_OUT",
    "OPSET",
    "CorpusModel",
    "Exporter",
    "SplitNode",
    "Verification",
    "by_name",
    "export",
    "export_all",
    "is_cached",
    "names",
    "one_line",
    "op_counts",
    "selected",
    "split_nodes",
    "verify",
    "version_stamp",
]

#: Split-18 (``num_outputs``) and SplitToSequence-11.
OPSET = 18

#: Bump when a module, a config or an export option changes: every cached file goes stale.
CORPUS_VERSION = 1

#: The stamp file in a corpus folder; model files older than it are exported again.
STAMP_FILE = "corpus-stamp.txt"

Exporter = Literal["dynamo", "torchscript"]

#: Vocabulary of the transformers models: small, so that logits stay small.
VOCAB = 128

#: Layers of the transformers models: two show a repeated block; one would export in 40%
#: less time.
LAYERS = 2

#: Last axis of the hand-written modules' input.
FEATURES = 12


# --- Hand-written modules ------------------------------------------------------------------


class ChunkStatic(nn.Module):
    """``chunk(3, -1)`` on a static axis of 12: three equal parts."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b, c = x.chunk(3, dim=-1)
        return a * b + c


class ChunkUnused(nn.Module):
    """``q, k, _ = x.chunk(3, -1)``: the last part is never read."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, _ = x.chunk(3, dim=-1)
        return q - k


class ChunkBatch(nn.Module):
    """``chunk(2, 0)`` on the dynamic batch axis: the part sizes depend on the batch."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = x.chunk(2, dim=0)
        return a * 2.0, b + 1.0


class SplitBatch(nn.Module):
    """``chunk(2, 0)`` spelled ``split([ceil(b / 2), b - ceil(b / 2)], 0)``: sizes computed
    from the dynamic batch."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch = x.shape[0]
        first = (batch + 1) // 2
        a, b = torch.split(x, [first, batch - first], dim=0)
        return a * 2.0, b + 1.0


class SplitSeqThirds(nn.Module):
    """``split([s // 3, s // 3, s - 2 * (s // 3)], 1)`` on the dynamic sequence axis."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        seq = x.shape[1]
        third = seq // 3
        a, b, c = torch.split(x, [third, third, seq - 2 * third], dim=1)
        return a * 2.0, b + 1.0, c - 1.0


class SplitSizes(nn.Module):
    """``torch.split(x, [2, 3, 7], -1)``: explicit, unequal sizes on a static axis."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b, c = torch.split(x, [2, 3, 7], dim=-1)
        return torch.cat([c, b * 2.0, a], dim=-1)


class TensorSplitDynamic(nn.Module):
    """``torch.tensor_split(x, 3, 1)``: a count of parts on the dynamic sequence axis."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        a, b, c = torch.tensor_split(x, 3, dim=1)
        return a * 2.0, b + 1.0, c - 1.0


class Unbind(nn.Module):
    """``unbind(2)`` of a stacked ``(batch, seq, 3, 4)`` q, k, v."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = x.unbind(dim=2)
        return q * k + v


class Glu(nn.Module):
    """``torch.nn.functional.glu`` on the last axis after a projection."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(FEATURES, 2 * FEATURES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.glu(self.proj(x), dim=-1)


class QkvAttention(nn.Module):
    """One ``Linear(d, 3d)``, cut into q, k, v by ``chunk(3, -1)`` or ``split(d, -1)``."""

    def __init__(self, how: Literal["chunk", "split"], heads: int = 2) -> None:
        super().__init__()
        self.how = how
        self.heads = heads
        self.qkv = nn.Linear(FEATURES, 3 * FEATURES)
        self.out = nn.Linear(FEATURES, FEATURES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        qkv = self.qkv(x)
        if self.how == "chunk":
            q, k, v = qkv.chunk(3, dim=-1)
        else:
            q, k, v = qkv.split(FEATURES, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        y = scores.softmax(dim=-1) @ v
        out: torch.Tensor = self.out(y.transpose(1, 2).reshape(batch, seq, FEATURES))
        return out


class RotaryHalves(nn.Module):
    """Rotary embedding with ``rotate_half``: the last axis cut in two halves."""

    inv_freq: torch.Tensor

    def __init__(self, how: Literal["chunk", "slice"]) -> None:
        super().__init__()
        self.how = how
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, FEATURES, 2).float() / FEATURES))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[1], dtype=torch.float32)
        angles = positions[:, None] * self.inv_freq[None, :]  # (seq, d/2)
        emb = torch.cat([angles, angles], dim=-1)
        if self.how == "chunk":
            x1, x2 = x.chunk(2, dim=-1)
        else:
            half = x.shape[-1] // 2
            x1, x2 = x[..., :half], x[..., half:]
        rotated = torch.cat([-x2, x1], dim=-1)
        return x * emb.cos() + rotated * emb.sin()


# --- transformers models --------------------------------------------------------------------


class LogitsOnly(nn.Module):
    """A ``transformers`` causal LM called without cache, returning only its logits."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, use_cache=False, return_dict=False
        )
        logits: torch.Tensor = out[0]
        return logits


#: Sizes shared by the llama-like configs.
_SMALL: dict[str, Any] = {
    "vocab_size": VOCAB,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": 4,
    "max_position_embeddings": 64,
    "bos_token_id": 0,
    "eos_token_id": 0,
    "pad_token_id": 0,
}


def _transformers_model(architecture: str) -> nn.Module:
    """A small random-init causal LM of ``architecture``, its logits only, in eval mode."""
    import transformers

    common: dict[str, Any] = {"use_cache": False, "attn_implementation": "eager"}
    config: Any
    model_class: Any
    if architecture == "gpt2":
        config = transformers.GPT2Config(
            n_layer=LAYERS, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=64,
            bos_token_id=0, eos_token_id=0, **common,
        )  # fmt: skip
        model_class = transformers.GPT2LMHeadModel
    elif architecture == "phi3":
        config = transformers.Phi3Config(num_key_value_heads=2, **_SMALL, **common)
        model_class = transformers.Phi3ForCausalLM
    elif architecture == "gpt_bigcode":
        config = transformers.GPTBigCodeConfig(
            n_layer=LAYERS, n_embd=64, n_head=4, vocab_size=VOCAB, n_positions=64,
            multi_query=True, bos_token_id=0, eos_token_id=0, **common,
        )  # fmt: skip
        model_class = transformers.GPTBigCodeForCausalLM
    elif architecture == "codegen":
        config = transformers.CodeGenConfig(
            n_layer=LAYERS, n_embd=64, n_head=4, rotary_dim=8, vocab_size=VOCAB, n_positions=64,
            bos_token_id=0, eos_token_id=0, **common,
        )  # fmt: skip
        model_class = transformers.CodeGenForCausalLM
    elif architecture == "gpt_neox":
        config = transformers.GPTNeoXConfig(**_SMALL, **common)
        model_class = transformers.GPTNeoXForCausalLM
    else:
        raise ValueError(f"no transformers architecture {architecture!r} in the corpus")
    torch.manual_seed(0)
    model: nn.Module = model_class(config)
    return LogitsOnly(model.eval()).eval()


# --- The corpus -----------------------------------------------------------------------------


def _features(batch: int, seq: int) -> tuple[torch.Tensor, ...]:
    """One float input ``(batch, seq, 12)``, the same for the same sizes."""
    generator = torch.Generator().manual_seed(1000 * batch + seq)
    return (torch.randn(batch, seq, FEATURES, generator=generator),)


def _stacked(batch: int, seq: int) -> tuple[torch.Tensor, ...]:
    """One float input ``(batch, seq, 3, 4)``: q, k, v stacked on axis 2."""
    generator = torch.Generator().manual_seed(1000 * batch + seq)
    return (torch.randn(batch, seq, 3, FEATURES // 3, generator=generator),)


def _tokens(batch: int, seq: int) -> tuple[torch.Tensor, ...]:
    """``input_ids`` and an all-ones ``attention_mask``, both int64 ``(batch, seq)``."""
    generator = torch.Generator().manual_seed(1000 * batch + seq)
    ids = torch.randint(0, VOCAB, (batch, seq), generator=generator)
    return ids, torch.ones(batch, seq, dtype=torch.int64)


_BATCH_SEQ: Mapping[int, str] = {0: "batch", 1: "seq"}


@dataclass(frozen=True)
class CorpusModel:
    """One module exported by one exporter.

    ``build`` returns the module in eval mode, ``inputs(batch, seq)`` its example inputs;
    ``dynamic_axes`` maps an input name to its dynamic axes and their names. ``ort_issue``
    says why onnxruntime is expected to reject or miscompute the exported file (the model
    stays in the corpus, flagged, for later work to fix). ``left_out`` says why the
    combination is in :data:`LEFT_OUT` rather than :data:`CORPUS`.
    """

    name: str
    exporter: Exporter
    build: Callable[[], nn.Module]
    inputs: Callable[[int, int], tuple[torch.Tensor, ...]]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    dynamic_axes: Mapping[str, Mapping[int, str]] = field(hash=False)
    description: str
    source: Literal["hand-written", "transformers"] = "hand-written"
    opset: int = OPSET
    ort_issue: str | None = None
    left_out: str | None = None

    @property
    def file_name(self) -> str:
        """``<name>-<exporter>.onnx``."""
        return f"{self.name}-{self.exporter}.onnx"


def _seeded(make: Callable[[], nn.Module]) -> nn.Module:
    """``make()`` after ``torch.manual_seed(0)``, in eval mode."""
    torch.manual_seed(0)
    return make().eval()


_BOTH: tuple[Exporter, ...] = ("dynamo", "torchscript")


def _hand(
    name: str,
    make: Callable[[], nn.Module],
    description: str,
    *,
    inputs: Callable[[int, int], tuple[torch.Tensor, ...]] = _features,
    outputs: int = 1,
    ort_issue: Mapping[Exporter, str] | None = None,
    left_out: Mapping[Exporter, str] | None = None,
) -> list[CorpusModel]:
    output_names = ("y",) if outputs == 1 else tuple(f"y{i}" for i in range(outputs))
    return [
        CorpusModel(
            name=name,
            exporter=exporter,
            build=functools.partial(_seeded, make),
            inputs=inputs,
            input_names=("x",),
            output_names=output_names,
            dynamic_axes={"x": _BATCH_SEQ},
            description=description,
            ort_issue=(ort_issue or {}).get(exporter),
            left_out=(left_out or {}).get(exporter),
        )
        for exporter in _BOTH
    ]


def _lm(
    architecture: str,
    description: str,
    *,
    ort_issue: Mapping[Exporter, str] | None = None,
    left_out: Mapping[Exporter, str] | None = None,
) -> list[CorpusModel]:
    return [
        CorpusModel(
            name=architecture,
            exporter=exporter,
            build=functools.partial(_transformers_model, architecture),
            inputs=_tokens,
            input_names=("input_ids", "attention_mask"),
            output_names=("logits",),
            dynamic_axes={"input_ids": _BATCH_SEQ, "attention_mask": _BATCH_SEQ},
            description=description,
            source="transformers",
            ort_issue=(ort_issue or {}).get(exporter),
            left_out=(left_out or {}).get(exporter),
        )
        for exporter in _BOTH
    ]


# Why combinations are left out (torch 2.13, onnxscript 0.7.2, transformers 5.23).
_TS_CHUNK = "the torchscript exporter writes chunk as Shape -> Gather -> Div -> Slice, no Split"
_TS_SLICE = "the torchscript exporter writes computed split sizes as Slice nodes, no Split"
_NO_SPLIT = "basic slicing: both exporters write Slice nodes, no Split"

_ALL: tuple[CorpusModel, ...] = (
    *_hand(
        "chunk_static",
        ChunkStatic,
        "chunk(3, -1) on a static axis",
        left_out={"torchscript": _TS_CHUNK},
    ),
    *_hand(
        "chunk_unused",
        ChunkUnused,
        "q, k, _ = chunk(3, -1): the last part unused (the Split still lists 3 outputs)",
        left_out={"torchscript": _TS_CHUNK},
    ),
    *_hand(
        "chunk_batch",
        ChunkBatch,
        "chunk(2, 0) on the dynamic batch axis",
        outputs=2,
        left_out={
            "dynamo": "torch.export specializes the batch to the example's 2 (chunk's part count"
            " depends on it); the dynamo exporter drops the constraint violation silently and"
            " writes a static batch: onnxruntime rejects batch 3",
            "torchscript": _TS_CHUNK,
        },
    ),
    *_hand(
        "split_batch",
        SplitBatch,
        "split([ceil(b/2), b - ceil(b/2)], 0): sizes computed from the dynamic batch",
        outputs=2,
        left_out={"torchscript": _TS_SLICE},
    ),
    *_hand(
        "split_seq_thirds",
        SplitSeqThirds,
        "split([s//3, s//3, s - 2*(s//3)], 1): sizes computed from the dynamic sequence",
        outputs=3,
        left_out={"torchscript": _TS_SLICE},
    ),
    *_hand("split_sizes", SplitSizes, "split([2, 3, 7], -1): explicit unequal sizes"),
    *_hand(
        "tensor_split_seq",
        TensorSplitDynamic,
        "tensor_split(x, 3, 1): a count of parts on the dynamic sequence axis",
        outputs=3,
        left_out={
            "dynamo": "Slice nodes, no Split; and torch.export's guards (seq % 3 == 2) are"
            " dropped silently: the file is wrong for other sequence lengths (shape (3, 3, 12)"
            " where torch gives (3, 2, 12) at seq 7)",
        },
    ),
    *_hand(
        "unbind",
        Unbind,
        "unbind(2) of q, k, v stacked on a static axis",
        inputs=_stacked,
        left_out={"dynamo": "the dynamo exporter writes unbind as Slice and Squeeze, no Split"},
    ),
    *_hand("glu", Glu, "F.glu(Linear(x), -1)"),
    *_hand(
        "qkv_chunk",
        functools.partial(QkvAttention, "chunk"),
        "Linear(d, 3d).chunk(3, -1), attention",
        left_out={"torchscript": _TS_CHUNK},
    ),
    *_hand(
        "qkv_split",
        functools.partial(QkvAttention, "split"),
        "Linear(d, 3d).split(d, -1), attention",
    ),
    *_hand(
        "rotary_chunk",
        functools.partial(RotaryHalves, "chunk"),
        "rotate_half by chunk(2, -1)",
        left_out={"torchscript": _TS_CHUNK},
    ),
    *_hand(
        "rotary_slice",
        functools.partial(RotaryHalves, "slice"),
        "rotate_half by x[..., :h], x[..., h:]",
        left_out={"dynamo": _NO_SPLIT, "torchscript": _NO_SPLIT},
    ),
    *_lm("gpt2", "GPT-2: c_attn(x).split(d, 2) into q, k, v"),
    *_lm(
        "phi3",
        "Phi-3: fused gate_up_proj(x).chunk(2, -1) (qkv is cut by slicing)",
        left_out={"torchscript": _TS_CHUNK},
    ),
    *_lm("gpt_bigcode", "GPTBigCode, multi-query: c_attn(x).split((d, kv, kv), 3)"),
    *_lm("codegen", "CodeGen: qkv split(local_dim, -1), sincos split in two"),
    *_lm(
        "gpt_neox",
        "GPT-NeoX: qkv.view(...).chunk(3, -1)",
        left_out={"torchscript": _TS_CHUNK},
    ),
)

#: The corpus: every combination whose file holds a Split or SplitToSequence node and
#: matches torch (or is flagged with ``ort_issue``); hand-written modules first.
CORPUS: tuple[CorpusModel, ...] = tuple(entry for entry in _ALL if entry.left_out is None)

#: The combinations left out, each with the reason in ``left_out``; export them by name
#: (``--left-out`` on the command line) to see whether a newer exporter changed its mind.
LEFT_OUT: tuple[CorpusModel, ...] = tuple(entry for entry in _ALL if entry.left_out)


def names(*, left_out: bool = False) -> list[str]:
    """The model names, in corpus order, each once; with ``left_out``, those of
    :data:`LEFT_OUT` too."""
    return list(dict.fromkeys(entry.name for entry in (_ALL if left_out else CORPUS)))


def by_name(name: str, exporter: Exporter) -> CorpusModel:
    """The entry of ``name`` exported by ``exporter``, in :data:`CORPUS` or :data:`LEFT_OUT`."""
    for entry in _ALL:
        if entry.name == name and entry.exporter == exporter:
            return entry
    raise KeyError(f"no corpus model {name!r} for the {exporter} exporter")


# --- Export ---------------------------------------------------------------------------------


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def version_stamp() -> str:
    """The versions a cached corpus depends on, one line."""
    parts = [f"corpus={CORPUS_VERSION}", f"torch={torch.__version__}"]
    parts += [f"{name}={_version(name)}" for name in ("transformers", "onnx", "onnxscript")]
    return " ".join(parts)


def _stamp(folder: Path) -> Path:
    """The folder's stamp file, rewritten (so newer than every model) if the versions changed."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = folder / STAMP_FILE
    current = version_stamp() + "\n"
    if not stamp.exists() or stamp.read_text() != current:
        _write_atomically(stamp, current.encode())
    return stamp


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` by a rename, so a reader never sees half a file."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _export_to(entry: CorpusModel, path: Path) -> None:
    """Export ``entry`` to ``path`` (a single file, no external data)."""
    module = entry.build()
    args = entry.inputs(2, 5)
    if entry.exporter == "dynamo":
        dims: dict[str, Any] = {}
        dynamic_shapes = tuple(
            {
                axis: dims.setdefault(dim, torch.export.Dim(dim))
                for axis, dim in entry.dynamic_axes.get(name, {}).items()
            }
            for name in entry.input_names
        )
        torch.onnx.export(
            module,
            args,
            path,
            dynamo=True,
            external_data=False,
            opset_version=entry.opset,
            input_names=list(entry.input_names),
            output_names=list(entry.output_names),
            dynamic_shapes=dynamic_shapes,
            verbose=False,
        )
    else:
        torch.onnx.export(
            module,
            args,
            path,
            dynamo=False,
            opset_version=entry.opset,
            input_names=list(entry.input_names),
            output_names=list(entry.output_names),
            dynamic_axes={name: dict(axes) for name, axes in entry.dynamic_axes.items()},
        )


def is_cached(entry: CorpusModel, folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds ``entry``'s file, newer than the folder's version stamp."""
    path = Path(folder) / entry.file_name
    stamp = _stamp(Path(folder))
    return path.exists() and path.stat().st_mtime_ns >= stamp.stat().st_mtime_ns


def export(entry: CorpusModel, folder: str | os.PathLike[str], *, force: bool = False) -> Path:
    """Export ``entry`` to ``<folder>/<name>-<exporter>.onnx`` and return that path.

    A file newer than the folder's version stamp is kept as it is unless ``force``.
    """
    folder = Path(folder)
    path = folder / entry.file_name
    if not force and is_cached(entry, folder):
        return path
    with tempfile.TemporaryDirectory(dir=folder, prefix=".export-") as scratch:
        temporary = Path(scratch) / entry.file_name
        with quiet(), torch.no_grad():
            _export_to(entry, temporary)
        os.replace(temporary, path)
    return path


def selected(names_: Sequence[str] | None, *, left_out: bool = False) -> list[CorpusModel]:
    """The entries called ``names_`` (every one where ``None``), of :data:`CORPUS`, or of
    :data:`LEFT_OUT` too where ``left_out``; a ``ValueError`` naming an unknown name."""
    pool = _ALL if left_out else CORPUS
    if names_ is None:
        return list(pool)
    unknown = sorted(set(names_) - set(names(left_out=left_out)))
    if unknown:
        known = ", ".join(names(left_out=left_out))
        raise ValueError(f"no corpus model named {', '.join(unknown)}; known: {known}")
    return [entry for entry in pool if entry.name in names_]


def export_all(
    folder: str | os.PathLike[str], names: Sequence[str] | None = None, *, force: bool = False
) -> list[Path]:
    """Export every corpus model, or those named, with every exporter that writes it."""
    return [export(entry, folder, force=force) for entry in selected(names)]


# --- Inspection and verification ------------------------------------------------------------


def op_counts(model: Any) -> Counter[str]:
    """Node counts by op type in ``model`` (an ``onnx.ModelProto``), subgraphs included."""
    return Counter(node.op_type for graph in graphs(model.graph) for node in graph.node)


@dataclass(frozen=True)
class SplitNode:
    """One Split or SplitToSequence node as an exporter wrote it.

    ``sizes`` says where the part sizes come from: ``"num_outputs=N"``, ``"constant [..]"``
    (an initializer or a Constant node), ``"computed: Concat<-Div<-Gather<-Shape"`` (the op
    types above the sizes input, nearest first), or ``"absent"``; ``data_from`` is the op
    that makes the split input (``"graph input"`` if none).
    """

    op: str
    name: str
    axis: int
    outputs: int
    sizes: str
    data_from: str


def split_nodes(model: Any) -> list[SplitNode]:
    """The Split and SplitToSequence nodes of ``model``'s main graph, in graph order."""
    from onnx import helper, numpy_helper

    graph = model.graph
    producers = {output: node for node in graph.node for output in node.output}
    constants = {tensor.name: tensor for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            constants[node.output[0]] = node.attribute[0].t

    def origin(value: str) -> str:
        if value in constants:
            return f"constant {numpy_helper.to_array(constants[value]).tolist()}"
        ops: list[str] = []
        frontier, seen = [value], set()
        while frontier and len(ops) < 8:
            current = frontier.pop(0)
            node = producers.get(current)
            if node is None or current in seen:
                continue
            seen.add(current)
            if node.op_type not in ops:
                ops.append(node.op_type)
            frontier += list(node.input)
        return "computed: " + "<-".join(ops)

    found = []
    for node in graph.node:
        if node.op_type not in ("Split", "SplitToSequence"):
            continue
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if len(node.input) > 1 and node.input[1]:
            sizes = origin(node.input[1])
        elif "num_outputs" in attributes:
            sizes = f"num_outputs={attributes['num_outputs']}"
        elif "split" in attributes:
            sizes = f"attribute {list(attributes['split'])}"
        else:
            sizes = "absent"
        producer = producers.get(node.input[0])
        found.append(
            SplitNode(
                op=node.op_type,
                name=node.name,
                axis=int(attributes.get("axis", 0)),
                outputs=len(node.output),
                sizes=sizes,
                data_from="graph input" if producer is None else producer.op_type,
            )
        )
    return found


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found: ``None`` where a check passed, else the error, one line."""

    checker: str | None
    onnxruntime: str | None
    max_abs_error: float | None

    @property
    def ok(self) -> bool:
        """Both checks passed."""
        return self.checker is None and self.onnxruntime is None


def one_line(error: BaseException) -> str:
    """``error`` in one line: its type and message, cut short."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:300]}"


def verify(
    entry: CorpusModel,
    path: str | os.PathLike[str],
    sizes: Sequence[tuple[int, int]] = ((2, 5), (3, 7)),
    atol: float = 1e-4,
) -> Verification:
    """Check ``path`` with ``onnx.checker`` (full check), run it on onnxruntime at each
    ``(batch, seq)`` and compare every output with torch's to ``atol``."""
    import numpy as np
    import onnx
    import onnxruntime

    checker: str | None = None
    try:
        onnx.checker.check_model(onnx.load(os.fspath(path)), full_check=True)
    except Exception as error:  # reported, not raised
        checker = one_line(error)
    runtime: str | None = None
    worst = 0.0
    try:
        with quiet():
            session = onnxruntime.InferenceSession(
                os.fspath(path), providers=["CPUExecutionProvider"]
            )
            module = entry.build()
        for batch, seq in sizes:
            args = entry.inputs(batch, seq)
            with torch.no_grad():
                expected = module(*args)
            if isinstance(expected, torch.Tensor):
                expected = (expected,)
            feeds = {name: arg.numpy() for name, arg in zip(entry.input_names, args, strict=True)}
            got = session.run(None, feeds)
            for want, have in zip(expected, got, strict=True):
                if tuple(want.shape) != tuple(have.shape):
                    raise AssertionError(
                        f"({batch}, {seq}): shape {tuple(have.shape)}, torch {tuple(want.shape)}"
                    )
                gap = float(np.max(np.abs(want.numpy() - have), initial=0.0))
                worst = max(worst, gap)
                if not gap <= atol:
                    raise AssertionError(f"({batch}, {seq}): max abs error {gap:.3g} > {atol}")
    except Exception as error:  # reported, not raised
        runtime = one_line(error)
    return Verification(checker, runtime, worst if runtime is None else None)
