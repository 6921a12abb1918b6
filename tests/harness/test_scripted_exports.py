"""The TorchScript-era exports (:mod:`harness.scripted_models`): each module beside its
Split-free control, exported as users export them and judged against torch's outputs at sizes
other than the traced one (``python -m benchmarks.exports --families scripted``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from harness.exports import (
    keep,
    read_corpus,
    read_exports,
    run_exports,
    scripted_report,
    sequence_patterns,
)
from tests.processes import GUARD_SECONDS

from splitops.onnx.run import RuntimeWorkers, runtime_named

torch = pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

from harness.export_models import export_scripted, quiet  # noqa: E402
from harness.scripted_models import SCRIPTED, Scripted, prepared  # noqa: E402

SEQUENCE_OPS = {"SplitToSequence", "SequenceAt", "SequenceInsert", "SequenceEmpty"}


def _outputs(got: Any) -> list[Any]:
    """A module's outputs as a list of tensors, a returned list stacked."""
    if torch.is_tensor(got):
        return [got]
    if isinstance(got, list):
        return [torch.stack(got)]
    return list(got)


@pytest.mark.parametrize("entry", SCRIPTED, ids=lambda entry: entry.name)
def test_a_control_computes_its_modules_answer_at_every_size(entry: Scripted) -> None:
    with quiet(), torch.no_grad():
        module, control = prepared(entry), prepared(entry, control=True)
        for k in (0, 1, 2):
            inputs = list(entry.inputs(k).values())
            want, got = _outputs(module(*inputs)), _outputs(control(*inputs))
            if len(got) > len(want):  # a list returned, its control returning its parts
                got = [torch.stack(got)]
            assert [t.shape for t in got] == [t.shape for t in want]
            for a, b in zip(got, want, strict=True):
                torch.testing.assert_close(a, b)


@pytest.mark.parametrize("entry", SCRIPTED, ids=lambda entry: entry.name)
def test_a_module_is_evaluated_at_sizes_it_was_not_traced_at(entry: Scripted) -> None:
    traced = {name: tuple(value.shape) for name, value in entry.inputs(0).items()}
    for k in (1, 2):
        shapes = {name: tuple(value.shape) for name, value in entry.inputs(k).items()}
        dynamic = [
            (traced[name][axis], shapes[name][axis])
            for name, axes in entry.dynamic.items()
            for axis in axes
        ]
        assert any(before != after for before, after in dynamic), (entry.name, k)


@pytest.fixture(scope="module")
def workers() -> Iterator[RuntimeWorkers]:
    with RuntimeWorkers(GUARD_SECONDS) as started:
        yield started


def test_an_export_and_its_control_run_on_onnxruntime_as_torch_does(
    tmp_path: Path, workers: RuntimeWorkers
) -> None:
    """Exported at opset 18 into the cache's layout (and kept as fixtures, read back alike),
    read with torch's outputs as the oracle (a returned list stacked), run as exported and
    lowered: the report pairs each module with its control, and the sequences torch wrote
    are there."""
    folder = tmp_path / f"torch-{torch.__version__.split('+')[0]}"
    folder.mkdir()
    lines = [
        export_scripted(name, 18, folder, control=control)
        for name in ("split_loop_chunks", "returns_list")
        for control in (False, True)
    ]
    assert not [line for line in lines if "error" in line]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    exports = read_exports(tmp_path)
    assert [(e.model, e.control, e.opset) for e in exports] == [
        ("returns_list", False, 18),
        ("returns_list", True, 18),
        ("split_loop_chunks", False, 18),
        ("split_loop_chunks", True, 18),
    ]
    kept = [keep(export, tmp_path / "kept") for export in exports]
    again = read_exports(tmp_path / "kept")
    assert [e.path for e in again] == kept
    assert [(e.label, e.family, e.kind) for e in again] == [
        (e.label, e.family, e.kind) for e in exports
    ]
    for export in exports:
        patterns = sequence_patterns(onnx.load(str(export.path)))
        held = {op for op in SEQUENCE_OPS if patterns[op]}
        assert bool(held) != export.control, (export.label, held)
    corpus = read_corpus(exports)
    assert all(entry.sizes == (0, 1) for entry in corpus)
    onnxruntime = runtime_named("onnxruntime")
    rows = run_exports(corpus, [onnxruntime], seconds=GUARD_SECONDS)
    assert {row.export.label: row.original for row in rows} == {
        export.label: "exact" for export in exports
    }
    section = "\n".join(scripted_report(corpus, rows, [onnxruntime]))
    for export in exports:
        if not export.control:
            assert f"| {export.label} | exact |" in section
    assert section.count(" | ✓ |") == 2  # the controls, each beside its module
    with np.load(exports[0].path.with_suffix(".npz")) as arrays:
        assert arrays["out0_0"].shape == (3, 3, 4, 4)  # the list of 3 parts, stacked
