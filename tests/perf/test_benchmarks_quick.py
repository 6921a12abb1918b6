"""The benchmark suite's smoke run: it finishes, and every peer's parts equal splitops'."""

from __future__ import annotations

import doctest
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CPU_PEERS = {
    "splitops",
    "splitops out=",
    "onnxruntime",
    "onnx.reference",
    "np.split",
    "slicing",
    "np.copyto",
    "np.copyto per part",
    "torch.split",
}


def test_quick_benchmark_run_checks_every_peer_and_writes_its_results(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--no-plots", "--out", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    ran = {peer for peers in results["peers"].values() for peer in peers}
    assert ran == CPU_PEERS
    checks = [status for row in results["checks"].values() for status in row.values()]
    assert checks
    assert set(checks) == {"ok"}
    assert {t["id"] for t in results["targets"]} == {
        "1a",
        "1b",
        "2a",
        "2b",
        "3",
        "4a",
        "4a'",
        "4b",
        "4c",
        "4d",
        "5",
    }
    assert all(
        peer in results["medians_s"][case]
        for case, peers in results["peers"].items()
        for peer in peers
    )
    assert "skipped: no CUDA" in done.stdout or results["settings"]["gpu_peers"]


@pytest.mark.parametrize(
    "module",
    ["cases", "onnx_models", "peers", "machine", "units"],
)
def test_benchmark_module_examples_run(module: str) -> None:
    environment = dict(os.environ)  # importing benchmarks pins threads through the environment
    sys.path.insert(0, str(ROOT))
    try:
        found = importlib.import_module(f"benchmarks.{module}")
    finally:
        sys.path.remove(str(ROOT))
        os.environ.clear()
        os.environ.update(environment)
    result = doctest.testmod(found, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
