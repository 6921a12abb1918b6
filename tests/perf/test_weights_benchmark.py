"""The weights benchmark's smoke run: its sparse model passes onnx's full check with its
data file (real Splits, their sizes from small initializers), and a quick run measures
every command, each exiting 0, lowering and converting 1.2 GB of weights within the peak
memory the benchmark bounds, and writes its table and JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import onnx
import pytest
from benchmarks.scale import run
from benchmarks.weights import COMMANDS, PEAK_BOUND, main, sparse_model
from onnx import TensorProto

EXTERNAL = TensorProto.EXTERNAL


def test_the_sparse_model_holds_real_splits_fed_by_small_initializers(tmp_path: Path) -> None:
    path = sparse_model(tmp_path, 2, side=1000)
    model = onnx.load(path, load_external_data=False)
    splits = [node for node in model.graph.node if node.op_type == "Split"]
    assert len(splits) == 4
    small = {
        t.name for t in model.graph.initializer if t.data_location != onnx.TensorProto.EXTERNAL
    }
    assert (
        {node.input[1] for node in splits if len(node.input) > 1} == small == {"sizes0", "sizes1"}
    )
    assert (tmp_path / "weights.bin").stat().st_size == 2 * 1000 * 1000 * 4


def test_a_quick_run_lowers_and_converts_gigabytes_of_weights_in_bounded_memory(
    tmp_path: Path,
) -> None:
    assert main(["--quick", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "weights.json").read_text())["rows"]
    (found,) = rows.values()
    assert set(found) == {f"after {name}" for name in COMMANDS}
    for name, row in found.items():
        assert row["seconds"] > 0, name
        assert 0 < row["peak_bytes"] < PEAK_BOUND, name
    table = (tmp_path / "weights.md").read_text()
    assert all(f"| after | {name} |" in table for name in COMMANDS)


def _own_peak_bytes() -> int:
    status = Path("/proc/self/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_a_command_s_peak_is_its_own_not_that_of_the_process_measuring_it() -> None:
    # Linux passes a parent's resident high-water mark to a child it starts: measured
    # directly, `python -c pass` started by pytest late in the suite read 1 GB.
    seconds, peak, status = run([sys.executable, "-c", "pass"])
    assert status == 0
    assert seconds > 0
    assert peak < _own_peak_bytes() / 2
