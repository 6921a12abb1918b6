"""The inference benchmark's smoke run: it finishes, times every peer on every model, writes
its results, and finds no corpus split dim that splitops infers wrong or knows less of."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_quick_inference_benchmark_writes_every_row_and_target(
    tmp_path: Path, exported_corpus: dict[str, Path]
) -> None:
    pytest.importorskip("onnxruntime")
    folder = next(iter(exported_corpus.values())).parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.inference", "--quick", "--out", str(tmp_path),
         "--corpus", str(folder)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "inference.json").read_text())
    kinds = {row["kind"] for row in results["rows"]}
    assert kinds == {"chain", "chain-static", "wide", "corpus"}
    peers = {"splitops", "onnx", "onnx data_prop", "onnxruntime tool"}
    for row in results["rows"]:
        assert set(row["seconds"]) == peers
        assert row["median"]["splitops"] > 0
    targets = {t["id"]: t["status"] for t in results["targets"]}
    assert set(targets) == {"I1", "I2", "I3", "I4", "I5", "I6"}
    assert targets["I5"] == targets["I6"] == "PASS"
    assert {targets[t] for t in ("I1", "I2", "I3", "I4")} == {"n/a"}  # a quick run times nothing
    assert results["knowledge"]["known"]["splitops"] > 0
    assert (tmp_path / "inference.md").read_text().startswith("# Shape inference benchmark")


def test_inference_benchmark_module_examples_run() -> None:
    sys.path.insert(0, str(ROOT))
    environment = dict(os.environ)
    try:
        module = importlib.import_module("benchmarks.inference")
    finally:
        sys.path.remove(str(ROOT))
        os.environ.clear()
        os.environ.update(environment)
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0
