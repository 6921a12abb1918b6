"""Commands that need an optional extra say which one, in one line, when it is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from onnx import TensorProto, helper
from tests.processes import GUARD_SECONDS

EXAMPLE = Path(__file__).parents[2] / "src" / "splitops" / "examples" / "split_tour.onnx"

# Block sympy the way a machine without the `inference` extra lacks it.
WITHOUT_SYMPY = (
    "import sys; sys.modules['sympy'] = None\n"
    "from splitops.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def _without_sympy(*args: str) -> subprocess.CompletedProcess[str]:
    """``splitops ARGS`` in a fresh process that cannot import sympy."""
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_SYMPY, *args],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=GUARD_SECONDS,
        check=False,
    )


def _symbolic_model(folder: Path) -> Path:
    """Split-18 into two halves of an axis of symbolic length N: its sizes need sympy."""
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "ab"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    (folder / "halves.onnx").write_bytes(model.SerializeToString())
    return folder / "halves.onnx"


@pytest.mark.parametrize("command", ["check", "infer"])
def test_inference_commands_without_sympy_name_the_extra_in_one_line(
    command: str, tmp_path: Path
) -> None:
    done = _without_sympy(command, str(_symbolic_model(tmp_path)))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("splitops: error:")
    assert "pip install 'splitops[inference]'" in lines[0]


@pytest.mark.parametrize("command", ["check", "infer"])
def test_a_model_of_static_split_axes_needs_no_sympy(command: str) -> None:
    done = _without_sympy(command, str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_run_works_without_sympy() -> None:
    done = _without_sympy("run")
    assert done.returncode == 0, done.stderr
    assert "output quarter_3: float32 (1, 1)" in done.stdout
