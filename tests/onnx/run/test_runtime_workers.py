"""The worker processes that run models on other runtimes (``check --portability``): a worker
that dies is named by how it died, and none leaves files behind."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from splitops.onnx.run import _runtimes
from splitops.onnx.run._runtimes import RuntimeRunError, RuntimeWorkers, runtime_named

pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT


def split_model(outputs: list[str]) -> bytes:
    """A Split-18 of ``x: [6]`` into ``outputs`` of equal parts, serialized."""
    node = helper.make_node("Split", ["x"], outputs, axis=0, num_outputs=len(outputs))
    size = 6 // len(outputs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [6])],
        [helper.make_tensor_value_info(n, F, [size]) for n in outputs if n],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    return model.SerializeToString()


def crashing_model() -> bytes:
    """A valid Split leaving an output out: onnxruntime 1.32 dies by SIGSEGV running it."""
    return split_model(["a", "", "b"])


def halves_model() -> bytes:
    return split_model(["a", "b"])


FEEDS = {"x": np.arange(6, dtype=np.float32)}


def test_a_worker_that_dies_is_named_by_its_signal_even_before_it_is_reaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's pipe closes a moment before the process can be waited for: a worker that
    still looks alive then has died all the same, and is not "no answer within 60 s"."""
    monkeypatch.setattr(_runtimes._Worker, "alive", lambda self: True)
    with RuntimeWorkers() as workers, pytest.raises(RuntimeRunError) as died:
        workers.run(runtime_named("onnxruntime"), crashing_model(), FEEDS)
    assert str(died.value).startswith("the runtime crashed (signal 11")


def test_the_runs_after_a_crash_go_to_a_new_worker() -> None:
    with RuntimeWorkers() as workers:
        runtime = runtime_named("onnxruntime")
        crashed, *_ = workers.run_each(runtime, crashing_model(), [FEEDS])
        assert isinstance(crashed, RuntimeRunError)
        a, b = workers.run(runtime, halves_model(), FEEDS)
    np.testing.assert_array_equal(np.concatenate([a, b]), FEEDS["x"])


def test_workers_leave_no_folder_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with RuntimeWorkers() as workers:
        runtime = runtime_named("onnxruntime")
        workers.run_each(runtime, crashing_model(), [FEEDS])  # one worker dies
        workers.run(runtime, halves_model(), FEEDS)  # another ends at the block's end
        assert list(tmp_path.glob("splitops-runtime-*"))
    assert list(tmp_path.glob("splitops-runtime-*")) == []


def test_check_portability_starts_one_worker_per_runtime_for_all_its_probes() -> None:
    """Every probe of one check (two unlike nodes, each run at many lengths, original and
    lowered) goes to the same worker of each runtime: one start per runtime."""
    from splitops.onnx.run import check_portability

    nodes = [
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3),
        helper.make_node("Split", ["a"], ["d", "e"], axis=0, num_outputs=2),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "bcde"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with RuntimeWorkers() as workers:
        found = check_portability(
            model, runtimes=["onnxruntime", "onnx.reference"], workers=workers
        )
        assert workers.started == {"onnxruntime": 1, "onnx.reference": 1}
    assert found.probed == 2
    assert any(d.runtime.startswith("onnx.reference") for d in found.departures)
