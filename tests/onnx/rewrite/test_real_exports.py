"""Real model exports, small enough to keep in the repository (``exports/``, built by
``python -m benchmarks.exports`` with the torch release each folder names): each lowered for
every target runs live on onnxruntime and gives torch's outputs, as the original does, at two
input sizes. They hold what users' files hold: Split, SplitToSequence read by SequenceAt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from benchmarks.exports import Export, close, read_exports, sequence_patterns
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.rewrite import TARGETS
from splitops.onnx.run import RuntimeWorkers, runtime_named

pytest.importorskip("onnxruntime")

EXPORTS = read_exports(Path(__file__).parent / "exports")
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
