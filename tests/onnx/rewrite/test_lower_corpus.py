"""lower_model on what real producers write: the exported-model corpus (both torch exporters,
dynamic batch and sequence axes, small random-init transformers) and a few more exports
whose sequences only SequenceAt reads. Each lowered model passes onnx's full check, holds no
sequence operator where only SequenceAt, SequenceLength and ConcatFromSequence read the
sequence, runs on onnxruntime, and equals torch's outputs at two input sizes."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto

from splitops.onnx.rewrite._lower import lower_model_with_report

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")
corpus = pytest.importorskip("harness.corpus")

SIZES = ((2, 5), (3, 7))
ATOL = 1e-4

LEGACY_EXPORTER = pytest.mark.filterwarnings(
    "ignore:You are using the legacy TorchScript:DeprecationWarning",
    "ignore:The feature will be removed:DeprecationWarning",
)
DYNAMO_EXPORTER = pytest.mark.filterwarnings(
    "ignore:`isinstance\\(treespec, LeafSpec\\)`:FutureWarning"
)


def sequence_ops(model: ModelProto) -> list[str]:
    return sorted({n.op_type for n in model.graph.node if "Sequence" in n.op_type})


def assert_lowered_runs_as_torch(
    model: ModelProto,
    module: Callable[..., Any],
    inputs: Callable[[int, int], tuple[Any, ...]],
    names: list[str],
    sizes: tuple[tuple[int, int], ...] = SIZES,
) -> ModelProto:
    lowered, report = lower_model_with_report(model)
    onnx.checker.check_model(lowered, full_check=True)
    kept = [row for row in report if row.outcome == "kept"]
    assert not kept, kept
    assert sequence_ops(lowered) == []
    session = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in sizes:
        args = inputs(batch, seq)
        with torch.no_grad():
            expected = module(*args)
        if isinstance(expected, torch.Tensor):
            expected = (expected,)
        got = session.run(None, {n: a.numpy() for n, a in zip(names, args, strict=True)})
        assert len(got) == len(expected)
        for have, want in zip(got, expected, strict=True):
            np.testing.assert_allclose(have, want.numpy(), atol=ATOL, rtol=0)
    return lowered


@pytest.mark.parametrize("entry", corpus.CORPUS, ids=lambda e: e.file_name)
def test_a_corpus_model_lowered_runs_on_onnxruntime_as_torch_does(
    entry: Any, exported_corpus: dict[str, Path]
) -> None:
    model = onnx.load(exported_corpus[entry.file_name])
    assert corpus.split_nodes(model), "the corpus holds models with split nodes only"
    assert_lowered_runs_as_torch(model, entry.build(), entry.inputs, list(entry.input_names))


def test_the_torchscript_tensor_split_sequence_is_gone(exported_corpus: dict[str, Path]) -> None:
    """tensor_split on the dynamic sequence axis: SplitToSequence, sizes computed at run
    time (Tile and Concat of a quotient and a remainder, three in all, as inference finds by
    following the values), read by three SequenceAt; lowered, one Split of three parts."""
    model = onnx.load(exported_corpus["tensor_split_seq-torchscript.onnx"])
    assert sequence_ops(model) == ["SequenceAt", "SplitToSequence"]
    lowered, report = lower_model_with_report(model)
    assert [row.outcome for row in report] == ["removed"]
    assert sequence_ops(lowered) == []
    (split,) = [n for n in lowered.graph.node if n.op_type == "Split"]
    assert len(split.output) == 3


def test_the_onnxruntime_engine_gives_torchs_outputs_for_a_computed_sequence(
    exported_corpus: dict[str, Path],
) -> None:
    """The onnxruntime engine's target removes the sequence whose part count inference knows
    (one Split, no Slice per part); the engine's outputs are torch's at two sizes."""
    entry = corpus.by_name("tensor_split_seq", "torchscript")
    model = onnx.load(exported_corpus[entry.file_name])
    lowered, report = lower_model_with_report(model, target="onnxruntime")
    assert [row.outcome for row in report] == ["removed"]
    assert sequence_ops(lowered) == []
    from splitops import backend

    rep = backend.prepare(model, engine="onnxruntime")
    for batch, seq in SIZES:
        (x,) = entry.inputs(batch, seq)
        with torch.no_grad():
            expected = entry.build()(x)
        for have, want in zip(rep.run([x.numpy()]), expected, strict=True):
            np.testing.assert_array_equal(have, want.numpy(), strict=True)


class ChunkRows(torch.nn.Module):
    """torch.chunk(x, 4) along the dynamic sequence axis: 3 chunks at lengths 6 and 9."""

    def forward(self, x: Any) -> Any:
        return tuple(t * 2 for t in torch.chunk(x, 4, dim=1))


class ChunkFeatures(torch.nn.Module):
    """chunk(3, -1) on the static feature axis."""

    def forward(self, x: Any) -> Any:
        a, b, c = x.chunk(3, dim=-1)
        return a * b + c


class SplitByTwo(torch.nn.Module):
    """split(4, -1) on the static feature axis: chunks of a scalar length."""

    def forward(self, x: Any) -> Any:
        a, b, c = x.split(4, dim=-1)
        return a - c, b


def _features(batch: int, seq: int) -> tuple[Any, ...]:
    generator = torch.Generator().manual_seed(100 * batch + seq)
    return (torch.randn(batch, seq, 12, generator=generator),)


@LEGACY_EXPORTER
def test_torchscript_chunk_on_a_dynamic_axis_loses_its_sequence() -> None:
    """The torchscript exporter writes chunk on a dynamic axis as SplitToSequence with sizes
    computed from Shape, read by SequenceAt."""
    buffer = io.BytesIO()
    module = ChunkRows().eval()
    torch.onnx.export(
        module,
        _features(2, 6),
        buffer,
        dynamo=False,
        opset_version=18,
        input_names=["x"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}},
    )
    model = onnx.load_from_string(buffer.getvalue())
    assert sequence_ops(model) == ["SequenceAt", "SplitToSequence"]
    assert_lowered_runs_as_torch(model, module, _features, ["x"], ((2, 6), (3, 9)))


@DYNAMO_EXPORTER
@pytest.mark.parametrize("module", [ChunkFeatures(), SplitByTwo()], ids=type)
def test_dynamo_chunk_and_split_without_the_optimizer_lose_their_sequence(module: Any) -> None:
    """Without onnxscript's optimizer, the dynamo exporter writes chunk and split by a length
    as SplitToSequence read by SequenceAt."""
    pytest.importorskip("onnxscript")
    program = torch.onnx.export(
        module.eval(),
        _features(2, 5),
        dynamo=True,
        input_names=["x"],
        dynamic_shapes=({0: torch.export.Dim("batch"), 1: torch.export.Dim("seq")},),
        optimize=False,
        verbose=False,
    )
    model = program.model_proto
    assert "SplitToSequence" in sequence_ops(model)
    assert_lowered_runs_as_torch(model, module, _features, ["x"])
