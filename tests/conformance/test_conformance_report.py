"""``python -m benchmarks.conformance`` writes the runtimes x cases table, the rules each runtime
breaks, and the evidence on onnx/onnx#5766, from what the runtimes did."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from benchmarks.conformance import main

from splitops.conformance import CASES


def test_the_report_holds_a_row_per_case_and_the_5766_evidence(tmp_path: Path) -> None:
    assert main(["--runtimes", "onnx.reference", "--out", str(tmp_path)]) == 0
    out = tmp_path / "conformance.md"
    text = out.read_text()
    valid = sum(case.valid for case in CASES)
    rejected = sum(case.rejected for case in CASES)
    assert f"holds {len(CASES)} cases: {valid} valid, {rejected} that the spec rejects" in text
    # onnx.reference computes 15 of the rejected cases, lacks Split-1 (3 valid cases), and
    # follows a reading of each case read two ways
    version = importlib.metadata.version("onnx")
    assert f"| onnx.reference | {version} | 57 | 0 | 3 | 15 | 0 | 2 |" in text
    scalar_1 = "`test_split_to_sequence_scalar_1_keepdims_0_opset11` | SplitToSequence-11"
    assert f"| {scalar_1} | reads: keeps-axis |" in text
    assert "| onnx.reference | reads it as empty-part |" in text
    assert "## Readings that differ" in text
    assert "- **drops-axis** (computes): " in text
    assert "**splitops reads it so** (the project's decision)" in text
    assert text.count("| Split-1 | **refused** |") == 3
    assert "| `test_split_num_outputs_5_into_4_rejected_opset18` | Split-18 | **accepts** |" in text
    assert "| onnx shape inference | 3, 3, 3, 1 | 3, 3, 3, 0 | 2, 2, 2, -1 | 3, 3 |" in text
    assert "| onnx.reference | 3, 3, 3, 1 | 3, 3, 3, 0 | 2, 2, 1, 0 | 3, 3 |" in text
    assert "| numpy array_split | 3, 3, 2, 2 | 3, 2, 2, 2 | 2, 1, 1, 1 | 3, 2 |" in text
