"""The benchmark suite's smoke run: it finishes, and every peer's parts equal splitops'."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    "splitops on torch",
    "clone, then views",
    "copy, then views",
    "splitops on jax",
    "jnp.split",
}


def test_quick_benchmark_run_checks_every_peer_and_writes_its_results(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), *filter(None, [env.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path)],
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
    missing = {
        name
        for library, names in {
            "torch": {"torch.split", "splitops on torch", "clone, then views"},
            "jax": {"splitops on jax", "jnp.split"},
        }.items()
        for name in names
        if importlib.util.find_spec(library) is None
    }
    assert ran == CPU_PEERS - missing
    checks = [status for row in results["checks"].values() for status in row.values()]
    assert checks
    assert set(checks) == {"ok"}
    targets = {t["id"]: t["status"] for t in results["targets"]}
    assert set(targets) == {
        *("1a", "1b", "2a", "2b", "3", "4a", "4b", "5", "6", "7", "8"),
        *("9a", "9b", "9c", "9d", "9e", "9f", "10a", "10b", "10c", "10d"),
        *("11", "12a", "12b", "13a", "13b", "13c"),
    }
    # Timings of a quick run measure nothing: no verdict; the counted targets keep theirs.
    assert {targets[t] for t in targets if t not in {"5", "6", "7"}} == {"n/a"}
    assert targets["5"] == targets["7"] == "PASS"
    assert targets["6"] in {"PASS", "n/a"}
    assert "FAIL" not in done.stdout
    assert all(
        peer in results["medians_s"][case]
        for case, peers in results["peers"].items()
        for peer in peers
    )
    assert "skipped: no CUDA" in done.stdout or results["settings"]["gpu_peers"]
    # Plots need matplotlib, the bench extra: without it, one line says so, and none is drawn.
    plots = sorted(path.name for path in tmp_path.glob("*.png"))
    if importlib.util.find_spec("matplotlib") is None:
        assert done.stdout.splitlines()[0] == (
            "plots need pip install -e '.[bench]' (matplotlib); this run draws none"
        )
        assert plots == []
    else:
        assert plots == ["parts.png", "size.png"]


def _benchmarks_module(name: str) -> Any:
    environment = dict(os.environ)  # importing benchmarks pins threads through the environment
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module(f"benchmarks.{name}")
    finally:
        sys.path.remove(str(ROOT))
        os.environ.clear()
        os.environ.update(environment)


@pytest.mark.parametrize("module", ["cases", "checks", "onnx_models", "peers", "machine", "units"])
def test_benchmark_module_examples_run(module: str) -> None:
    result = doctest.testmod(_benchmarks_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("library", ["torch", "onnxruntime"])
def test_gpu_section_statements_give_splitops_parts_on_the_host_device(library: str) -> None:
    # The GPU peers take their device from the case; on "cpu" their statements, preparations
    # and part readers run here, and their parts must equal splitops' like any peer's.
    pytest.importorskip(library)
    cases, gpu, suite = (_benchmarks_module(m) for m in ("cases", "gpu", "suite"))
    host_cases = [dataclasses.replace(case, device="cpu") for case in cases.gpu_cases(quick=True)]
    peers = [peer for peer in gpu.GPU_PEERS if peer.library == library]
    measured = suite.Measured(host_cases, {case.id: peers for case in host_cases})
    assert suite.check_peers(measured)
    assert {status for row in measured.checks.values() for status in row.values()} == {"ok"}
    assert len(measured.checks) == len(host_cases)


def test_the_portability_matrix_takes_an_out_folder_as_the_suite_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    portability = _benchmarks_module("portability")
    with pytest.raises(SystemExit) as stop:
        portability.main(["--out", str(tmp_path / "p.md")])
    assert stop.value.code == 2
    # The matrix itself takes minutes: its rows and text stand in here.
    monkeypatch.setattr(portability, "run_matrix", lambda runtimes, progress: [])
    monkeypatch.setattr(portability, "report", lambda rows, runtimes, seconds: "# matrix\n")
    monkeypatch.setattr(portability, "check_speed_report", lambda runtimes: "")
    assert portability.main(["--runtimes", "tract", "--out", str(tmp_path / "results")]) == 0
    assert (tmp_path / "results" / "portability.md").read_text() == "# matrix\n"


def test_the_gpu_sweep_measures_every_layout_count_and_mode_and_writes_its_table(
    tmp_path: Path,
) -> None:
    # On the host device the sweep runs its small inputs: the same calls, checks and table.
    pytest.importorskip("torch")
    gpu = _benchmarks_module("gpu")
    assert gpu.main(["--device", "cpu", "--out", str(tmp_path / "gpu.md")]) == 0
    table = (tmp_path / "gpu.md").read_text()
    rows = [
        line.split(" | ")
        for line in table.splitlines()
        if line.startswith("| ") and "--" not in line
    ]
    header, body = rows[0], rows[1:]
    assert header[:4] == ["| layout", "parts", "mode", "library"]
    expected = {
        (layout, f"{parts:,}", mode)
        for layout, _, _ in gpu.SMOKE_LAYOUTS
        for parts in gpu.SMOKE_PARTS
        for mode in ("views", "copy=True", "out=")
    }
    assert {(row[0].removeprefix("| "), row[1], row[2]) for row in body} == expected
    for row in body:
        assert row[4] != "-", row  # splitops measured
        assert row[6] != "-", row  # and its peer
        assert (row[8] != "-") == (row[2] != "views"), row  # copies have a bound's ratio
    assert "CPU (cpu)" in table
    assert " UTC" in table


def test_the_gpu_sweep_says_so_and_stops_where_there_is_no_cuda(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    gpu = _benchmarks_module("gpu")
    assert gpu.main(["--out", str(tmp_path / "gpu.md")]) == 2
    assert not (tmp_path / "gpu.md").exists()
