"""The whole-model benchmark's smoke run: it finishes, every engine's outputs agree with
torch's, and it writes its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks import models


def test_quick_whole_model_benchmark_checks_the_engines_and_writes_its_results(
    tmp_path: Path, exported_corpus: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime")
    torch = pytest.importorskip("torch")
    corpus = next(iter(exported_corpus.values())).parent
    only = ["chunk_static", "tensor_split_seq", "gpt2"]
    arguments = ["--quick", "--only", *only, "--corpus", str(corpus), "--out", str(tmp_path)]
    threads = torch.get_num_threads()
    try:  # the benchmark pins torch to one thread: give this process its own back
        assert models.main(arguments) == 0, capsys.readouterr().out[-3000:]
    finally:
        torch.set_num_threads(threads)
    results = json.loads((tmp_path / "models.json").read_text())["results"]
    assert [r["model"] for r in results] == [
        "chunk_static-dynamo.onnx",
        "tensor_split_seq-torchscript.onnx",
        "gpt2-dynamo.onnx",
        "gpt2-torchscript.onnx",
    ]
    for result in results:
        assert result["checks"] == [], result
        assert set(result["times"]) == {
            "torch",
            "onnxruntime (original)",
            "splitops --engine onnxruntime",
            "splitops reference engine",
        }
        assert result["ratio"] > 0
    assert "| gpt2-dynamo.onnx |" in (tmp_path / "models.md").read_text()
