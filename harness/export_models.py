"""Real model exports: tiny random-initialized ``transformers`` models written to ONNX by
torch's two exporters, in whatever Python environment runs this module.

It imports only torch, transformers, numpy and onnx, where it exports (no splitops), so that it
runs in a venv of an earlier torch release too: :func:`harness.exports.build` runs it there,
as ``PYTHON -m harness.export_models --out DIR``. Each architecture is built from a small
config (a layer or two, hidden sizes of 8 to 32: files of tens of kilobytes), weights from
``torch.manual_seed(0)``; nothing is downloaded. Each is exported by the dynamo exporter
(``torch.onnx.export(..., dynamo=True)``, or ``torch.onnx.dynamo_export`` before torch 2.5),
by the dynamo exporter unoptimized (``optimize=False``, the default of torch 2.5 and 2.6) and
by the TorchScript exporter (``dynamo=False``), each at its own default opset, with the
batch axis (and the sequence axis of text and audio) dynamic where the exporter allows it.

For each file ``DIR/<model>-<exporter>.onnx`` it writes ``<model>-<exporter>.npz``: the
inputs at two sizes (``in<k>_<name>``) and torch's outputs for them (``out<k>_<i>``), and
one line of ``DIR/manifest.jsonl`` with the versions, the opset, the seconds, or the error.

>>> [spec.name for spec in ARCHITECTURES][:3]
['convnext', 'swin', 'vit']
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import inspect
import json
import logging
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: ``dynamo-unoptimized`` is the dynamo exporter with ``optimize=False``, as torch 2.5 and 2.6
#: ran it by default: torchlib's own forms, SplitToSequence read by SequenceAt for every split.
EXPORTERS = ("dynamo", "dynamo-unoptimized", "torchscript")
#: ``transformers``: :data:`ARCHITECTURES` by each of :data:`EXPORTERS`; ``scripted``: the
#: modules of :mod:`harness.scripted_models` and their controls, by the TorchScript exporter
#: at each opset asked.
FAMILIES = ("transformers", "scripted")
#: The tokens of the text models.
VOCAB = 64


@dataclass(frozen=True)
class Architecture:
    """One tiny model: ``build()`` gives the module (returning its last hidden state);
    ``inputs(k)`` its inputs at size ``k`` (0 or 1); ``dynamic`` each input's dynamic axes."""

    name: str
    build: Callable[[], Any]
    inputs: Callable[[int], dict[str, Any]]
    dynamic: dict[str, dict[int, str]]


def _hidden_state(model: Any, names: Sequence[str]) -> Any:
    """``model`` wrapped so that it takes its inputs ``names`` by position and returns its
    first output only (the last hidden state). The signature names each input: torch.export
    of torch 2.9 fails on a ``*args`` one."""
    import torch

    class FirstOutput(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: Any) -> Any:
            named = dict(zip(names, args, strict=True))
            return self.model(**named, return_dict=False)[0]

    class OneInput(FirstOutput):
        def forward(self, a: Any) -> Any:
            return super().forward(a)

    class TwoInputs(FirstOutput):
        def forward(self, a: Any, b: Any) -> Any:
            return super().forward(a, b)

    return (OneInput if len(names) == 1 else TwoInputs)().eval()


def _transformers(
    config_class: str, model_class: str, names: Sequence[str], **config: Any
) -> Callable[[], Any]:
    def build() -> Any:
        import torch
        import transformers

        settings = {**config, "attn_implementation": "eager"}
        made = getattr(transformers, config_class)(**settings)
        torch.manual_seed(0)
        model = getattr(transformers, model_class)(made).eval()
        if model_class == "WhisperModel":
            model = model.get_encoder()
        return _hidden_state(model, names)

    return build


def _images(*, grow: bool = True) -> Callable[[int], dict[str, Any]]:
    """Images of 32 by 32 pixels, then of 48 by 48 where ``grow`` (the model takes any size)."""

    def inputs(k: int) -> dict[str, Any]:
        import torch

        generator = torch.Generator().manual_seed(k)
        side = 32 + 16 * k if grow else 32
        return {"pixel_values": torch.randn(2 + k, 3, side, side, generator=generator)}

    return inputs


def _tokens(k: int) -> dict[str, Any]:
    import torch

    generator = torch.Generator().manual_seed(k)
    ids = torch.randint(0, VOCAB, (2 + k, 5 + 2 * k), generator=generator)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def _audio(k: int) -> dict[str, Any]:
    import torch

    generator = torch.Generator().manual_seed(k)
    return {"input_values": torch.randn(2 + k, 400 + 80 * k, generator=generator)}


def _mel(k: int) -> dict[str, Any]:
    import torch

    generator = torch.Generator().manual_seed(k)
    return {"input_features": torch.randn(2 + k, 8, 32, generator=generator)}


_PIXELS = ["pixel_values"]
_TEXT = ["input_ids", "attention_mask"]
_BATCH = {0: "batch"}
#: Images of any size, as exports for variable resolution declare them.
_IMAGE = {0: "batch", 2: "height", 3: "width"}
_BATCH_SEQ = {0: "batch", 1: "seq"}
_LM: dict[str, Any] = {
    "vocab_size": VOCAB,
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "max_position_embeddings": 32,
    "use_cache": False,
    "bos_token_id": 0,
    "eos_token_id": 0,
    "pad_token_id": 0,
}
_VIT: dict[str, Any] = {
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "image_size": 32,
    "patch_size": 8,
}

ARCHITECTURES: tuple[Architecture, ...] = (
    Architecture(
        "convnext",
        _transformers("ConvNextConfig", "ConvNextModel", _PIXELS,
                      hidden_sizes=[8, 16], depths=[1, 1],
                      num_stages=2, image_size=32),
        _images(), {"pixel_values": _IMAGE},
    ),
    Architecture(
        "swin",
        _transformers("SwinConfig", "SwinModel", _PIXELS, image_size=32, patch_size=4, embed_dim=8,
                      depths=[1, 1], num_heads=[1, 2], window_size=4),
        _images(), {"pixel_values": _IMAGE},
    ),
    Architecture(
        "vit",
        _transformers("ViTConfig", "ViTModel", _PIXELS,
                      intermediate_size=32, add_pooling_layer=False,
                      **_VIT),
        _images(grow=False), {"pixel_values": _BATCH},
    ),
    Architecture(
        "dinov2",
        _transformers("Dinov2Config", "Dinov2Model", _PIXELS, mlp_ratio=2, **_VIT),
        _images(), {"pixel_values": _IMAGE},
    ),
    Architecture(
        "dinov3_vit",
        _transformers("DINOv3ViTConfig", "DINOv3ViTModel", _PIXELS, intermediate_size=32,
                      num_register_tokens=2, **_VIT),
        _images(), {"pixel_values": _IMAGE},
    ),
    Architecture(
        "dinov3_convnext",
        _transformers("DINOv3ConvNextConfig", "DINOv3ConvNextModel", _PIXELS, hidden_sizes=[8, 16],
                      depths=[1, 1], image_size=32),
        _images(), {"pixel_values": _IMAGE},
    ),
    Architecture(
        "wav2vec2",
        _transformers("Wav2Vec2Config", "Wav2Vec2Model", ["input_values"],
                      hidden_size=16, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=32, conv_dim=(8, 8),
                      conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                      num_conv_pos_embedding_groups=2, apply_spec_augment=False),
        _audio, {"input_values": _BATCH_SEQ},
    ),
    Architecture(
        "whisper_encoder",
        _transformers("WhisperConfig", "WhisperModel", ["input_features"],
                      d_model=16, encoder_layers=2,
                      encoder_attention_heads=2, decoder_layers=1, decoder_attention_heads=2,
                      encoder_ffn_dim=32, decoder_ffn_dim=32, num_mel_bins=8,
                      max_source_positions=16, max_target_positions=16, vocab_size=VOCAB,
                      pad_token_id=0, bos_token_id=0, eos_token_id=0, decoder_start_token_id=0),
        _mel, {"input_features": _BATCH},
    ),
    Architecture(
        "gpt2",
        _transformers("GPT2Config", "GPT2Model", _TEXT,
                      n_layer=2, n_embd=16, n_head=2, n_positions=32,
                      vocab_size=VOCAB, use_cache=False, bos_token_id=0, eos_token_id=0),
        _tokens, {"input_ids": _BATCH_SEQ, "attention_mask": _BATCH_SEQ},
    ),
    Architecture(
        "llama",
        _transformers("LlamaConfig", "LlamaModel", _TEXT, num_key_value_heads=1, **_LM),
        _tokens, {"input_ids": _BATCH_SEQ, "attention_mask": _BATCH_SEQ},
    ),
    Architecture(
        "phi3",
        _transformers("Phi3Config", "Phi3Model", _TEXT, num_key_value_heads=1, **_LM),
        _tokens, {"input_ids": _BATCH_SEQ, "attention_mask": _BATCH_SEQ},
    ),
)  # fmt: skip


_NAMES = {spec.name for spec in ARCHITECTURES}


def by_name(name: str) -> Architecture:
    """The architecture called ``name`` (a ``KeyError`` for another)."""
    for spec in ARCHITECTURES:
        if spec.name == name:
            return spec
    raise KeyError(name)


def graphs(graph: Any) -> Iterator[Any]:
    """``graph`` (an onnx ``GraphProto``) and every subgraph in it, depth first."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from graphs(attribute.g)
            for subgraph in attribute.graphs:
                yield from graphs(subgraph)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """The exporters' warnings and log lines (deprecation, tracer, registration) silenced."""
    loggers = [logging.getLogger(n) for n in ("torch.onnx", "transformers", "onnxscript")]
    levels = [logger.level for logger in loggers]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            yield
        finally:
            for logger, level in zip(loggers, levels, strict=True):
                logger.setLevel(level)


#: The programs torch.export made, by architecture.
_PROGRAMS: dict[str, Any] = {}


def _export(spec: Architecture, exporter: str, module: Any, path: Path) -> None:
    import torch

    example = spec.inputs(0)
    names = list(example)
    args = tuple(example.values())
    if exporter == "torchscript":
        torch.onnx.export(
            module, args, str(path), dynamo=False, input_names=names, output_names=["y"],
            dynamic_axes={name: dict(axes) for name, axes in spec.dynamic.items()},
        )  # fmt: skip
        return
    # Dim.AUTO (torch 2.6 and later) lets torch.export keep what it can dynamic: a named Dim
    # fails the export where the model constrains it (Swin wants a multiple of its window).
    dims: dict[str, Any] = {}
    auto = getattr(torch.export.Dim, "AUTO", None)
    shapes = tuple(
        {axis: auto or dims.setdefault(dim, torch.export.Dim(dim)) for axis, dim in axes.items()}
        for axes in (spec.dynamic.get(name, {}) for name in names)
    )
    parameters = inspect.signature(torch.onnx.export).parameters
    if exporter == "dynamo-unoptimized" and "optimize" not in parameters:
        raise TypeError(f"torch {torch.__version__}'s exporter has no optimize option")
    if "dynamic_shapes" in parameters:
        options: dict[str, Any] = {"external_data": False}
        if "optimize" in parameters:
            options["optimize"] = exporter == "dynamo"
        # torch.export runs once for both dynamo variants: it takes most of the time.
        if spec.name not in _PROGRAMS:
            _PROGRAMS[spec.name] = torch.export.export(
                module, args, dynamic_shapes=shapes, strict=False
            )
        torch.onnx.export(
            _PROGRAMS[spec.name], args, str(path), dynamo=True, input_names=names,
            output_names=["y"], **options,
        )  # fmt: skip
        return
    # Before torch 2.5: the dynamo exporter's own entry, every axis dynamic.
    # (Names torch 2.9 removed: typed against a later torch, they are not there.)
    export_options = torch.onnx.ExportOptions(dynamic_shapes=True)  # type: ignore[attr-defined]
    exported = torch.onnx.dynamo_export(module, *args, export_options=export_options)  # type: ignore[attr-defined]
    exported.save(str(path))


def _opset(path: Path) -> int | None:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def _exported(
    line: dict[str, Any],
    path: Path,
    make: Callable[[], Any],
    export: Callable[[Any, Path], None],
    inputs: Callable[[int], dict[str, Any]],
    sizes: tuple[int, int],
    *,
    one_output: bool = False,
) -> dict[str, Any]:
    """``line``, a manifest line, completed: the module ``make()`` gives, exported to ``path``
    by ``export``, with the ``.npz`` of its inputs at ``sizes`` (``in<k>_<name>``) and its
    outputs for them (``out<k>_<i>``; where ``one_output``, a returned list is one output,
    stacked), and the file's opset; or the error. The seconds it took either way."""
    import numpy as np
    import torch

    began = time.perf_counter()
    try:
        with quiet(), torch.no_grad():
            module = make()
            export(module, path)
            arrays: dict[str, Any] = {}
            for k, size in enumerate(sizes):
                fed = inputs(size)
                arrays.update({f"in{k}_{name}": value.numpy() for name, value in fed.items()})
                got = module(*fed.values())
                listed = [got] if torch.is_tensor(got) or one_output else list(got)
                arrays.update({f"out{k}_{i}": _numpy(value) for i, value in enumerate(listed)})
            np.savez(path.with_suffix(".npz"), **arrays)
        line["opset"] = _opset(path)
    except Exception as error:  # recorded in the manifest; the next model goes on
        # torch.onnx's errors begin with advice; the cause follows "## Exception summary".
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).split("## Exception summary")[-1]
        said = " ".join(text.split())[:300]
        line["error"] = f"{type(error).__name__}: {said}"
        path.unlink(missing_ok=True)
        if "--traceback" in sys.argv:
            traceback.print_exc()
    line["seconds"] = round(time.perf_counter() - began, 2)
    return line


def export_one(spec: Architecture, exporter: str, out: Path) -> dict[str, Any]:
    """Export ``spec`` by ``exporter`` into ``out``; the manifest line (the error, if any)."""
    import torch
    import transformers

    stem = f"{spec.name}-{exporter}"
    line: dict[str, Any] = {
        "model": spec.name,
        "exporter": exporter,
        "torch": torch.__version__.split("+")[0],
        "transformers": transformers.__version__,
        "file": f"{stem}.onnx",
    }

    def export(module: Any, path: Path) -> None:
        _export(spec, exporter, module, path)

    return _exported(line, out / f"{stem}.onnx", spec.build, export, spec.inputs, (0, 1))


def torch_split(name: str, length: int | str) -> bytes:
    """A function of torch's along axis 1 of ``x`` of ``[2, length]`` (``length`` a name:
    the axis is dynamic, traced at 7), exported by the TorchScript exporter at opset 18:
    ``chunk`` (into 3), ``tensor_split`` (into 3), ``tensor_split_indices`` (at 1 and 4: a
    Loop of SequenceInsert), ``split_sizes`` (of 3) or ``unbind`` (of the first 3)."""
    import torch

    class Module(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            if name == "chunk":
                return torch.chunk(x, 3, dim=1)
            if name == "tensor_split":
                return torch.tensor_split(x, 3, dim=1)
            if name == "tensor_split_indices":
                return torch.tensor_split(x, [1, 4], dim=1)
            if name == "split_sizes":
                return torch.split(x, 3, dim=1)
            return torch.unbind(x[:, :3], dim=1)

    example = torch.zeros(2, length if isinstance(length, int) else 7)
    dynamic = {"x": {1: "N"}} if isinstance(length, str) else None
    with tempfile.TemporaryDirectory() as folder, quiet():  # the exporter is deprecated
        path = Path(folder) / f"{name}.onnx"
        torch.onnx.export(
            Module().eval(), (example,), path, dynamo=False, opset_version=18,
            input_names=["x"], dynamic_axes=dynamic,
        )  # fmt: skip
        return path.read_bytes()


def _numpy(value: Any) -> Any:
    """A torch output as numpy: a list of tensors (a sequence output) stacked."""
    import numpy as np
    import torch

    if torch.is_tensor(value):
        return value.detach().numpy()
    return np.stack([part.detach().numpy() for part in value])


def export_scripted(name: str, opset: int, out: Path, *, control: bool = False) -> dict[str, Any]:
    """Export the module ``name`` of :mod:`harness.scripted_models` (or its control) by the
    TorchScript exporter at ``opset`` into ``out``, with its inputs at the two sizes it was
    not traced at and torch's outputs for them; the manifest line (the error, if any)."""
    import torch

    from .scripted_models import by_name as scripted
    from .scripted_models import prepared

    entry = scripted(name)
    stem = f"{name}{'-control' if control else ''}-opset{opset}"
    example = entry.inputs(0)
    outputs = entry.control_outputs if control else entry.outputs
    line: dict[str, Any] = {
        "model": name,
        "exporter": "torchscript",
        "torch": torch.__version__.split("+")[0],
        "transformers": "",
        "file": f"{stem}.onnx",
        "family": "scripted",
        "kind": entry.kind,
        "control": control,
        "asked_opset": opset,
        "traced": {key: list(value.shape) for key, value in example.items()},
    }

    def export(module: Any, path: Path) -> None:
        torch.onnx.export(
            module, tuple(example.values()), str(path), dynamo=False, opset_version=opset,
            input_names=list(example), output_names=list(outputs),
            dynamic_axes={name: dict(axes) for name, axes in entry.dynamic.items()},
        )  # fmt: skip

    def make() -> Any:
        return prepared(entry, control=control)

    return _exported(
        line, out / f"{stem}.onnx", make, export, entry.inputs, (1, 2),
        one_output=len(outputs) == 1,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.export_models")
    parser.add_argument("--out", required=True, type=Path, help="the folder the files go in")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these models only")
    parser.add_argument("--exporters", nargs="+", default=list(EXPORTERS), choices=EXPORTERS)
    parser.add_argument("--traceback", action="store_true", help="print each failure's stack")
    parser.add_argument(
        "--families",
        nargs="+",
        default=list(FAMILIES),
        choices=FAMILIES,
        help="transformers models, or the scripted modules of harness.scripted_models",
    )
    parser.add_argument(
        "--opsets",
        nargs="+",
        type=int,
        default=[11, 13, 18],
        help="the scripted modules' opsets (default: 11 13 18)",
    )
    options = parser.parse_args(argv)
    options.out.mkdir(parents=True, exist_ok=True)
    lines: list[Callable[[], dict[str, Any]]] = []
    if "transformers" in options.families:
        specs = [by_name(n) for n in options.only or () if n in _NAMES] if options.only else list(
            ARCHITECTURES)  # fmt: skip
        lines += [
            functools.partial(export_one, spec, exporter, options.out)
            for spec in specs
            for exporter in options.exporters
        ]
    if "scripted" in options.families:
        from .scripted_models import SCRIPTED

        chosen = [e.name for e in SCRIPTED if not options.only or e.name in options.only]
        lines += [
            functools.partial(export_scripted, name, opset, options.out, control=control)
            for name in chosen
            for opset in options.opsets
            for control in (False, True)
        ]
    with (options.out / "manifest.jsonl").open("a") as manifest:
        for make in lines:
            line = make()
            manifest.write(json.dumps(line) + "\n")
            manifest.flush()
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
