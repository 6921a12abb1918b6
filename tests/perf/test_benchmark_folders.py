"""A benchmark run leaves the committed results and documents as they are unless its
``--out`` names them: by default it writes into ``benchmarks/results/latest``, which git
ignores; and asking for help runs nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.folders import LATEST, QUICK, default_out
from benchmarks.portability import runtimes_and_out
from tests.processes import GUARD_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False,
        timeout=GUARD_SECONDS,
    )  # fmt: skip


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(
        filter(None, [str(ROOT), str(ROOT / "src"), os.environ.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env={**os.environ, "PYTHONPATH": path},
        capture_output=True, text=True, check=False, timeout=GUARD_SECONDS,
    )  # fmt: skip


@pytest.mark.parametrize("folder", [LATEST, QUICK], ids=lambda folder: folder.name)
def test_the_default_folders_are_ignored_and_hold_no_committed_file(folder: Path) -> None:
    if _git("rev-parse", "--git-dir").returncode:
        pytest.skip("not a git checkout: nothing is committed here")
    assert _git("check-ignore", "-q", str(folder / "results.md")).returncode == 0
    assert _git("ls-files", str(folder)).stdout == ""
    # The committed results lie beside them, and are not the default.
    assert _git("ls-files", str(folder.parent / "results.md")).stdout.strip()


def test_a_run_writes_the_default_folder_unless_out_names_another(tmp_path: Path) -> None:
    assert (default_out(quick=False), default_out(quick=True)) == (LATEST, QUICK)
    _, out = runtimes_and_out(["--runtimes", "onnx.reference"], "conformance", "conformance.md")
    assert out == LATEST / "conformance.md"
    _, out = runtimes_and_out(["--out", str(tmp_path)], "conformance", "conformance.md")
    assert out == tmp_path / "conformance.md"


@pytest.mark.parametrize(
    "module",
    ["benchmarks", "benchmarks.inference", "benchmarks.models", "benchmarks.scale",
     "benchmarks.conformance", "benchmarks.portability", "benchmarks.exports",
     "benchmarks.weights"],
)  # fmt: skip
def test_help_names_the_default_folder_and_runs_nothing(module: str, tmp_path: Path) -> None:
    done = _python("-m", module, "--help")
    assert done.returncode == 0, done.stderr
    assert "benchmarks/results/latest" in " ".join(done.stdout.split())
    assert done.stderr == ""


def test_exports_help_lists_every_option_and_exports_nothing(tmp_path: Path) -> None:
    done = _python("-m", "benchmarks.exports", "--cache", str(tmp_path / "cache"), "--help")
    assert done.returncode == 0, done.stderr
    for option in ("--torch-env", "--build-only", "--keep", "--runtimes", "--out"):
        assert option in done.stdout
    assert "exporting" not in done.stderr
    assert not (tmp_path / "cache").exists()
