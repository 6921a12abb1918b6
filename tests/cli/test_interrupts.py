"""A command interrupted (SIGTERM, SIGINT) stops with one line, the exit status a shell gives
for that signal, its runtimes' workers ended and nothing left in ``TMPDIR``: real processes,
real signals, sent once the command is seen at work (its workers' folder and processes
exist), never after a guessed delay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from onnx import TensorProto, helper, save
from tests.processes import GUARD_SECONDS

SRC = Path(__file__).resolve().parents[2] / "src"


def _many_splits(path: Path) -> Path:
    """40 Split-18 nodes on an axis known at run time only: each is probed at every length
    from 0 up, on each runtime, seconds of work in all."""
    nodes, outputs = [], []
    for index in range(40):
        names = [f"{part}{index}" for part in "abc"]
        nodes.append(helper.make_node("Split", ["x"], names, num_outputs=3, axis=1))
        outputs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in names]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "N"])
    graph = helper.make_graph(nodes, "g", [x], outputs)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _big_pack(folder: Path) -> Path:
    """The pack's cases twenty times over, under names of their own: seconds of work."""
    from splitops.conformance import CASES, write_pack

    write_pack(
        folder,
        [
            replace(
                case,
                name=f"{case.name}_{copy}",
                control=case.control and f"{case.control}_{copy}",
            )
            for case in CASES
            for copy in range(20)
        ],
    )
    return folder


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("sent", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.parametrize("command", ["check --portability", "conformance run"])
def test_an_interrupted_command_leaves_nothing_behind(
    tmp_path: Path, sent: signal.Signals, status: int, command: str
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    environment = {
        **os.environ,
        "TMPDIR": str(temporary),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    }
    line = [sys.executable, "-m", "splitops"]
    if command == "check --portability":
        line += ["check", str(_many_splits(tmp_path / "many.onnx")), "--portability"]
        line += ["--runtime", "onnxruntime", "--runtime", "onnx.reference"]
        count = 2
    else:
        line += ["conformance", "run", str(_big_pack(tmp_path / "pack"))]
        line += ["--runtime", "onnx.reference"]
        count = 1
    process = subprocess.Popen(
        line, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # At work: its workers' folder is there, and so are the workers.
    workers: list[int] = []
    while process.poll() is None and not (
        any(temporary.glob("splitops-runtime-*"))
        and len(workers := _children(process.pid)) >= count
    ):
        time.sleep(0.01)
    assert process.poll() is None, "the command ended before it could be interrupted"
    process.send_signal(sent)
    out, err = process.communicate(timeout=GUARD_SECONDS)
    assert process.returncode == status
    assert err == f"splitops: error: interrupted by {sent.name}; stopped.\n"
    assert "Traceback" not in out
    assert list(temporary.iterdir()) == []
    assert not [pid for pid in workers if _running(pid)]
