"""How the real exports' run judges a file (:mod:`harness.exports`), on a file written here:
a lowering that fails (a bug, not a refusal) is every runtime's error for that target, and
the run goes on.

The file is a Split in halves, judged against its halves as a scripted module's exports are
judged against torch's outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from harness.exports import FAILED, read_corpus, read_exports, reproductions, run_exports
from onnx import TensorProto, helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.run import runtime_named

pytest.importorskip("onnxruntime")


@pytest.fixture
def halves(tmp_path: Path) -> Path:
    """A scripted-family export in the cache's layout: Split-18 of ``x`` [2, N] in halves,
    with its inputs at N = 4 and 6 and the halves as the oracle."""
    folder = tmp_path / "torch-0.0.0"
    folder.mkdir()
    graph = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)],
        "halves",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "N"])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, None]) for n in "ab"],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
              folder / "halves-opset18.onnx")  # fmt: skip
    arrays: dict[str, Any] = {}
    for k, length in enumerate((4, 6)):
        x = np.arange(2 * length, dtype=np.float32).reshape(2, length)
        half = length // 2
        arrays |= {f"in{k}_x": x, f"out{k}_0": x[:, :half], f"out{k}_1": x[:, half:]}
    np.savez(folder / "halves-opset18.npz", **arrays)
    line = {"model": "halves", "exporter": "torchscript", "torch": "0.0.0", "transformers": "",
            "file": "halves-opset18.onnx", "opset": 18, "family": "scripted", "kind": "script",
            "control": False}  # fmt: skip
    (folder / "manifest.jsonl").write_text(json.dumps(line) + "\n")
    return tmp_path


def test_a_lowering_that_fails_is_each_runtimes_error_and_the_run_goes_on(
    halves: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lower = splitops.lower_model

    def failing_for_onnxruntime(
        model: onnx.ModelProto, target: str = "portable", **more: Any
    ) -> Any:
        if target == "onnxruntime":
            raise RuntimeError("a lowering bug")
        return lower(model, target=target, **more)  # type: ignore[arg-type]

    monkeypatch.setattr(splitops, "lower_model", failing_for_onnxruntime)
    corpus = read_corpus(read_exports(halves))
    runtimes = [runtime_named("onnxruntime")]
    [row] = run_exports(corpus, runtimes, seconds=GUARD_SECONDS)
    assert row.original == "exact"
    assert row.lowered["onnxruntime"] == "error"
    assert row.errors["onnxruntime"] == f"{FAILED}RuntimeError: a lowering bug"
    assert row.lowered["portable"] == "exact"
    # The runtime's own target failed to lower: there is no model to cut down.
    assert reproductions(corpus, [row], runtimes) == []
