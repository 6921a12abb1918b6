"""Commands that need an optional extra say which one, in one line, when it is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "src" / "splitops" / "examples" / "split_tour.onnx"

# Block sympy the way a machine without the `inference` extra lacks it.
WITHOUT_SYMPY = (
    "import sys; sys.modules['sympy'] = None\n"
    "from splitops.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


@pytest.mark.parametrize("command", ["check", "infer"])
def test_inference_commands_without_sympy_name_the_extra_in_one_line(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_SYMPY, command, str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("splitops: error:")
    assert "pip install 'splitops[inference]'" in lines[0]


def test_run_works_without_sympy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_SYMPY, "run"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "output quarter_3: float32 (1, 1)" in done.stdout
