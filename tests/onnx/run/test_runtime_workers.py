"""The worker processes that run models on other runtimes (``check --portability``): a worker
that dies is named by how it died, and none leaves files behind."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from splitops.onnx.run import _runtimes
from splitops.onnx.run._runtimes import (
    RuntimeCrashError,
    RuntimeRunError,
    RuntimeWorkers,
    runtime_named,
)

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
    with RuntimeWorkers() as workers, pytest.raises(RuntimeCrashError) as died:
        workers.run(runtime_named("onnxruntime"), crashing_model(), FEEDS)
    assert str(died.value).startswith("the runtime crashed (signal 11")


def test_a_refusal_is_no_crash() -> None:
    with RuntimeWorkers() as workers, pytest.raises(RuntimeRunError) as refused:
        workers.run(runtime_named("onnxruntime"), halves_model(), {"x": np.arange(5)})
    assert not isinstance(refused.value, RuntimeCrashError)


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


def test_leaving_by_an_exception_kills_the_workers_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    processes = []

    def interrupted() -> None:
        with RuntimeWorkers() as workers:
            workers.start([runtime_named("onnxruntime"), runtime_named("onnx.reference")])
            processes.extend(worker.process for worker in workers._workers.values())
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    # Killed, not asked to end once their import is done: the signal says so.
    assert [process.returncode for process in processes] == [-9, -9]
    assert list(tmp_path.iterdir()) == []


def test_openvino_computes_a_float32_model_in_float32() -> None:
    """OpenVINO computes float32 models in bfloat16 on a CPU with bfloat16 units unless told
    otherwise; the worker asks for float32, the model's own type, as the spec computes."""
    openvino = runtime_named("openvino")
    if not openvino.is_installed():
        pytest.skip("openvino is not installed here")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])],
        "g",
        [helper.make_tensor_value_info(n, F, [1, 64]) for n in "a"]
        + [helper.make_tensor_value_info("b", F, [64, 1])],
        [helper.make_tensor_value_info("c", F, [1, 1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    # 1 + 2**-12 needs 13 bits of mantissa: bfloat16 keeps 8.
    a = np.full((1, 64), 1 + 2**-12, dtype=np.float32)
    b = np.ones((64, 1), dtype=np.float32)
    with RuntimeWorkers() as workers:
        (c,) = workers.run(openvino, model.SerializeToString(), {"a": a, "b": b})
    assert c.dtype == np.float32
    np.testing.assert_allclose(c, a @ b, rtol=1e-6)


def test_a_runtime_is_installed_only_with_the_modules_it_runs_on() -> None:
    """onnx2torch's module runs on torch, which can be uninstalled without it (CI's second
    pass does): a runtime counts as installed only with every module it needs."""
    import dataclasses

    assert runtime_named("onnx2torch").needs == ("torch",)
    present = dataclasses.replace(runtime_named("onnx2torch"), module="onnx", needs=("numpy",))
    assert present.is_installed()
    assert not dataclasses.replace(present, needs=("numpy", "no_such_module_here")).is_installed()


def _outputs_of_two_nodes() -> bytes:
    """A Split-13 of ``x: [N]`` into halves and a Neg of the first, their outputs listed out
    of the nodes' order: [the second half, the Neg, the first half]."""
    graph = helper.make_graph(
        [
            helper.make_node("Split", ["x"], ["a", "b"], axis=0),
            helper.make_node("Neg", ["a"], ["minus_a"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info(n, F, [None]) for n in ("b", "minus_a", "a")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    return model.SerializeToString()


@pytest.mark.parametrize("name", ["tinygrad", "onnx2torch"])
def test_outputs_come_in_the_graphs_order_and_each_run_sees_its_own_length(name: str) -> None:
    """onnx2torch's module returns one value per node that writes an output, and a tinygrad
    runner keeps the lengths of its first run: the workers give each output by its name, in
    the graph's order, at each length (4, then 6, then 4), as onnx.reference does."""
    runtime = runtime_named(name)
    if not runtime.is_installed():
        pytest.skip(f"{name} is not installed here ({runtime.install})")
    model = _outputs_of_two_nodes()
    runs = [{"x": np.arange(n, dtype=np.float32)} for n in (4, 6, 4)]
    with RuntimeWorkers() as workers:
        got = workers.run_each(runtime, model, runs)
        want = workers.run_each(runtime_named("onnx.reference"), model, runs)
    assert [np.asarray(v).tolist() for v in want[1]] == [[3, 4, 5], [-0.0, -1, -2], [0, 1, 2]]
    for outputs, expected in zip(got, want, strict=True):
        assert not isinstance(outputs, RuntimeRunError), outputs
        assert not isinstance(expected, RuntimeRunError)
        assert len(outputs) == 3
        for value, wanted in zip(outputs, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(value), wanted, strict=True)


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
