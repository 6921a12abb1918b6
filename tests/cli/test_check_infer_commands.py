"""``splitops check`` and ``splitops infer`` as real subprocesses.

The commands print what ``splitops.check_model`` (``splitops.model_check``) and
``splitops.infer_shapes`` (``splitops.shape_inference``) find.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import onnx

from splitops.examples import EXAMPLE_MODEL

ErrorLine = Callable[[subprocess.CompletedProcess[str]], str]
CliMany = Callable[[list[list[str | Path]]], list[subprocess.CompletedProcess[str]]]


def test_check_exit_codes_and_output(
    cli_many: CliMany, error_line: ErrorLine, tmp_path: Path, broken_model: Path
) -> None:
    (tmp_path / "empty.onnx").write_bytes(b"")
    clean, broken, as_json, unreadable = cli_many(
        [
            ["check", EXAMPLE_MODEL],
            ["check", broken_model],
            ["check", broken_model, "--json"],
            ["check", "empty.onnx"],
        ]
    )
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout == ""
    assert "3 Split/SplitToSequence node(s), no problems" in clean.stderr

    assert broken.returncode == 1, broken.stderr
    lines = broken.stdout.splitlines()
    assert lines
    assert all(line.startswith("main/bad_sizes (Split-13) [") for line in lines)

    assert as_json.returncode == 1
    problems = json.loads(as_json.stdout)
    assert len(problems) == len(lines)
    assert {key for p in problems for key in p} == {
        "graph", "node", "op", "opset", "rule", "message", "hint", "severity"
    }  # fmt: skip
    assert {p["severity"] for p in problems} == {"error"}
    assert (problems[0]["graph"], problems[0]["node"], problems[0]["opset"]) == (
        "main",
        "bad_sizes",
        13,
    )

    assert unreadable.returncode == 2
    assert "the file is empty" in error_line(unreadable)


def test_infer_prints_every_split_output_and_writes_the_model(
    cli_many: CliMany, error_line: ErrorLine, tmp_path: Path, broken_model: Path
) -> None:
    inferred, broken = cli_many(
        [["infer", EXAMPLE_MODEL, "-o", "inferred.onnx"], ["infer", broken_model]]
    )
    assert inferred.returncode == 0, inferred.stderr
    lines = inferred.stdout.splitlines()
    # Split-18 cuts 7 into parts of ceil(7/4)=2 and the rest, 1; the batch stays symbolic.
    assert "main/quarters (Split-18) quarter_0: tensor(float) [batch, 2]" in lines
    assert "main/quarters (Split-18) quarter_3: tensor(float) [batch, 1]" in lines
    assert "main/head_tail (Split-18) tail: tensor(float) [batch, 4]" in lines
    assert any(
        line.startswith("main/tail_chunks (SplitToSequence-11) tail_chunks: seq(tensor(float))")
        for line in lines
    )
    assert len(lines) == 7
    written = onnx.load(tmp_path / "inferred.onnx")
    assert "quarter_3" in {v.name for v in [*written.graph.value_info, *written.graph.output]}

    assert broken.returncode == 1
    assert "bad_sizes" in error_line(broken)
