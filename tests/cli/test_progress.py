"""A long command shows on a terminal what it is doing (one line of stderr, written again in
place and erased at the end); on a pipe or a file it shows nothing. Real processes: a
pseudo-terminal for stderr, as a shell gives one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from onnx import save
from tests.malformed_models import _if_tree
from tests.processes import GUARD_SECONDS

SRC = Path(__file__).resolve().parents[2] / "src"
ERASE = "\r\x1b[K"


def _environment() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Exit status, stdout (a file) and stderr (a pseudo-terminal) of ``splitops ARGS``."""
    import pty
    import tempfile

    leader, follower = pty.openpty()
    stdout = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [sys.executable, "-m", "splitops", *args],
        cwd=cwd,
        env={**_environment(), "COLUMNS": "200"},  # a line cut to the width drops no step
        stdout=stdout,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=GUARD_SECONDS)
    with stdout:
        stdout.seek(0)
        out = stdout.read()
    return process.returncode, out, b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX's")
def test_lower_shows_each_step_on_a_terminal_and_erases_it(tmp_path: Path) -> None:
    save(_if_tree(8), tmp_path / "tree.onnx")
    code, out, err = _on_a_terminal(["lower", "tree.onnx", "-o", "low.onnx"], tmp_path)
    assert code == 0, err
    assert (tmp_path / "low.onnx").is_file()
    steps = [
        "reading the model",
        "lowering: checking the model against the limits",
        "lowering: inferring the types",
        "lowering: planning the edits",
        "lowering: applying the edits",
        "lowering: checking the result (onnx's full check and inference)",
        "writing low.onnx",
    ]
    # Each shown, in order, on a line written again in place (with the seconds spent, once
    # there are some: "splitops lower (3 s): lowering: planning the edits").
    shown = [re.sub(r" \(\d+ s\)", "", line) for line in err.split("\r")]
    at = -1
    for step in steps:
        at = shown.index(f"splitops lower: {step}\x1b[K", at + 1)
    # The last line is the command's own, after the progress is erased.
    _, _, last = err.rpartition(ERASE)
    assert last.startswith("lowered 256 Split/SplitToSequence node(s) for target portable")
    assert "\r" not in last
    assert out.count("rewritten") == 256


def test_no_progress_where_stderr_is_no_terminal(tmp_path: Path) -> None:
    save(_if_tree(3), tmp_path / "tree.onnx")
    done = subprocess.run(
        [sys.executable, "-m", "splitops", "lower", "tree.onnx", "-o", "low.onnx"],
        cwd=tmp_path,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr.startswith("lowered 8 Split/SplitToSequence node(s)")
    assert "\r" not in done.stderr
