"""``splitops check`` and ``splitops infer`` as real subprocesses.

They call ``splitops.check_model`` (model_check.py) and ``splitops.infer_shapes``
(shape_inference.py), which the model checker's branch provides.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper

from splitops.examples import EXAMPLE_MODEL
from splitops.model_io import save_model

ErrorLine = Callable[[subprocess.CompletedProcess[str]], str]
CliMany = Callable[[list[list[str | Path]]], list[subprocess.CompletedProcess[str]]]
Build = Callable[..., ModelProto]


@pytest.fixture
def broken_model(tmp_path: Path, build_model: Build) -> Path:
    """Split-13 whose sizes [1, 2] do not add up to the axis length 4."""
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="bad_sizes")
    model = build_model(
        [node],
        {"x": (TensorProto.FLOAT, [4])},
        ["a", "b"],
        opset=13,
        initializers={"sizes": np.array([1, 2])},
    )
    save_model(model, tmp_path / "broken.onnx")
    return tmp_path / "broken.onnx"


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
        "graph", "node", "op", "opset", "rule", "message", "hint"
    }  # fmt: skip
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
