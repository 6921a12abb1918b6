"""The whole-model benchmark's smoke run: it finishes, every engine's outputs agree with
torch's, and it writes its results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_quick_whole_model_benchmark_checks_the_engines_and_writes_its_results(
    tmp_path: Path, exported_corpus: dict[str, Path]
) -> None:
    pytest.importorskip("onnxruntime")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    corpus = next(iter(exported_corpus.values())).parent
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.models", "--quick", "--only", "chunk_static",
         "tensor_split_seq", "gpt2", "--corpus", str(corpus), "--out", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
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
