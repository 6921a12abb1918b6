"""Real model exports, small enough to keep in the repository (``exports/``, built by
``python -m benchmarks.exports`` with the torch release each folder names): each lowered for
every target runs live on onnxruntime and gives torch's outputs, as the original does, at two
input sizes. They hold what users' files hold: Split, SplitToSequence read by SequenceAt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from harness.exports import (
    Export,
    bisect,
    close,
    read_exports,
    same_failure,
    sequence_patterns,
    without_splits,
)
from onnx import TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.rewrite import TARGETS
from splitops.onnx.run import RuntimeWorkers, runtime_named

pytest.importorskip("onnxruntime")

#: The transformers models' exports (the scripted modules' run in test_torchscript_exports).
EXPORTS = [e for e in read_exports(Path(__file__).parent / "exports") if e.family != "scripted"]
SEQUENCE_OPS = {"SplitToSequence", "SequenceAt", "SequenceInsert", "SequenceEmpty"}


@pytest.fixture(scope="module")
def workers() -> Iterator[RuntimeWorkers]:
    with RuntimeWorkers(GUARD_SECONDS) as started:
        yield started


def test_the_kept_exports_hold_the_patterns_users_report() -> None:
    found = [sequence_patterns(onnx.load(str(export.path))) for export in EXPORTS]
    assert any(counts["SplitToSequence"] and counts["SequenceAt"] for counts in found)
    assert any(counts["Split"] for counts in found)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("export", EXPORTS, ids=lambda e: f"{e.model}-{e.exporter}-{e.torch}")
def test_a_lowered_export_gives_torchs_outputs_on_onnxruntime(
    export: Export, target: str, workers: RuntimeWorkers
) -> None:
    model = onnx.load(str(export.path))
    lowered = splitops.lower_model(model, target=target)  # type: ignore[arg-type]
    onnxruntime = runtime_named("onnxruntime")
    wanted = export.torch_outputs()
    feeds = export.feeds()
    for variant in (model, lowered):
        got = workers.run_each(onnxruntime, variant.SerializeToString(), feeds)
        for outputs, want in zip(got, wanted, strict=True):
            assert not isinstance(outputs, Exception), outputs
            assert close(outputs, want)
    left = {node.op_type for node in lowered.graph.node} & SEQUENCE_OPS
    if target == "no-sequences":
        assert not left, left


# --- the failures cut down, without Split ----------------------------------------------------


def _splits(length: int | str) -> onnx.ModelProto:
    """Three Splits of ``x`` [2, length] at opset 18: ``num_outputs`` (uneven on 7), sizes
    given as a constant, and sizes given as a constant with a part of zero."""
    graph = helper.make_graph(
        [
            helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
            helper.make_node("Split", ["x", "sizes"], ["d", "e"], axis=-1),
            helper.make_node("Split", ["x", "zero_last"], ["f", "g"], axis=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, length])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcdefg"],
        [
            numpy_helper.from_array(np.array([2, 5], np.int64), "sizes"),
            numpy_helper.from_array(np.array([7, 0], np.int64), "zero_last"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_cuts_splits_become_slices_of_the_same_values(workers: RuntimeWorkers) -> None:
    """The benchmark writes each Split of a cut as Slices itself (not by splitops' lowering),
    where the part lengths are known statically: onnxruntime gives the same parts."""
    model = _splits(7)
    sliced = without_splits(model)
    assert sliced is not None
    assert {node.op_type for node in sliced.graph.node} == {"Slice"}
    feeds = {"x": np.arange(14, dtype=np.float32).reshape(2, 7)}
    onnxruntime = runtime_named("onnxruntime")
    want = workers.run(onnxruntime, model.SerializeToString(), feeds)
    got = workers.run(onnxruntime, sliced.SerializeToString(), feeds)
    assert [np.asarray(part).shape[1] for part in want] == [3, 3, 1, 2, 5, 7, 0]
    for value, wanted in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(value), np.asarray(wanted), strict=True)
    assert without_splits(_splits("N")) is None  # num_outputs of a run-time length


def test_a_failure_is_the_same_up_to_tracts_node_numbers() -> None:
    assert same_failure('Evaluating #48 "node_add" Add', 'Evaluating  #54 "node_add" Add')
    assert not same_failure('Evaluating #48 "node_add" Add', 'Evaluating #48 "node_mul" Mul')


def test_a_failure_that_names_no_node_is_found_by_cutting_prefixes(
    workers: RuntimeWorkers,
) -> None:
    """TVM fails a Reshape of a length computed from Shape without naming it: the shortest
    failing prefix of the graph ends at that node (the nodes after it are left out)."""
    pytest.importorskip("tvm")
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Shape", ["r"], ["shape"], start=1, end=2, name="shape"),
            helper.make_node("Squeeze", ["shape"], ["n"], name="squeeze"),
            helper.make_node("Reshape", ["n", "flat"], ["m"], name="reshape"),
            helper.make_node("Cast", ["m"], ["c"], to=TensorProto.FLOAT, name="cast"),
            helper.make_node("Add", ["r", "c"], ["y"], name="add"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "N"])],
        [numpy_helper.from_array(np.array([-1], np.int64), "flat")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    feeds = {"x": np.ones((2, 7), np.float32)}
    tvm = runtime_named("tvm")
    (said,) = workers.run_each(tvm, model.SerializeToString(), [feeds])
    assert isinstance(said, Exception)
    assert "Reshape expects the input data to be a Tensor" in str(said)
    assert bisect(model, tvm, feeds, str(said), workers) == "reshape"
