"""TorchScript-era exports of scripted and traced modules (``exports/torch-2.4.1``, written by
``python -m benchmarks.exports --families scripted`` with torch 2.4.1, whose graphs torch
2.9.1 writes byte for byte): loops over a split, lists built in loops, ``unbind``, counts and
indices given as tensors, sizes from ``x.shape``, a ViT block. Each is lowered for the own
target of every runtime installed here and for ``portable``, run live there at two sizes
other than the traced one, and compared with torch's outputs.

Every pair gives torch's answer but those in the tables below, each with its reason, and
the test checks that reason: a refusal says it, a runtime limit shows on the runtime, a
runtime's own defect shows on the original model as exported.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from harness.exports import Export, close, read_exports
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.run import RuntimeRunError, RuntimeWorkers, runtime_named

EXPORTS = [e for e in read_exports(Path(__file__).parent / "exports") if e.family == "scripted"]
#: Each runtime CI installs, and its own lowering target.
OWN = {
    "onnxruntime": "onnxruntime",
    "onnx.reference": "onnxruntime",
    "openvino": "openvino",
    "tract": "tract",
}

#: The Loops whose trip count is known only at run time (a dynamic axis's number of parts,
#: a count given as a tensor): a runtime without Loop runs none of them, nor their controls.
RUN_TIME_LOOPS = {
    "enumerate_split", "loop_append_cat", "loop_append_stack", "split_comprehension",
    "split_loop_chunks", "unbind_loop", "chunk_tensor_k", "tensor_split_idx",
}  # fmt: skip
#: What a target refuses, by module, and the reason its message gives.
REFUSED: dict[tuple[str, str], str] = {
    **{(module, "tract"): "runs no Loop" for module in RUN_TIME_LOOPS},
    ("returns_list", "openvino"): "the model returns a sequence ('y'",
    ("returns_list", "tract"): "the model returns a sequence ('y'",
}
#: Where a runtime fails a lowered model for a limit of its own, by module, runtime and
#: target: what it says. tract has no Loop, and fails a Reshape to dims computed at run time
#: (cat_other_axis's Split-free control too); what ``portable`` keeps for the runtimes that
#: run sequences, OpenVINO and tract do not run (its own target lowers shape_sizes for tract).
RUNTIME_FAILS: dict[tuple[str, str, str], str] = {
    **{(module, "tract", "portable"): "Loop" for module in RUN_TIME_LOOPS},
    ("cat_other_axis", "tract", "tract"): "Reshape",
    ("cat_other_axis", "tract", "portable"): "Reshape",
    ("returns_list", "tract", "portable"): "",
    ("returns_list", "openvino", "portable"): "",
    ("shape_sizes", "tract", "portable"): "SplitToSequence",
}
#: Where a runtime computes the model wrong as exported, by module, opset and runtime, and
#: so its lowered form too (wrong, or failed): onnx.reference stacks the scan outputs of the
#: opset-11 exporter's Loops wrong (onnxruntime and OpenVINO run them exactly).
RUNTIME_WRONG = {
    ("loop_append_cat", 11, "onnx.reference"),
    ("split_loop_chunks", 11, "onnx.reference"),
}


@pytest.fixture(scope="module")
def workers() -> Iterator[RuntimeWorkers]:
    with RuntimeWorkers(GUARD_SECONDS) as started:
        yield started


@cache
def _lowered(export: Export, target: str) -> onnx.ModelProto | splitops.SplitError:
    try:
        return splitops.lower_model(onnx.load(str(export.path)), target=target)  # type: ignore[arg-type]
    except splitops.SplitError as error:
        return error


def _run(
    workers: RuntimeWorkers, runtime: str, model: onnx.ModelProto, export: Export
) -> list[list[Any] | RuntimeRunError]:
    found = runtime_named(runtime)
    if not found.is_installed():
        pytest.skip(f"{runtime} is not installed here")
    return workers.run_each(found, model.SerializeToString(), export.feeds())


def _pairs() -> Iterator[tuple[Export, str, str]]:
    for export in EXPORTS:
        for runtime, own in OWN.items():
            for target in dict.fromkeys((own, "portable")):
                yield export, runtime, target


def _id(pair: tuple[Export, str, str]) -> str:
    export, runtime, target = pair
    return f"{export.model}-{export.opset}-{runtime}-{target}"


def test_the_exports_hold_every_pattern_users_bring() -> None:
    modules = {e.model for e in EXPORTS}
    assert RUN_TIME_LOOPS | {"returns_list", "cat_other_axis", "unbind_stack"} <= modules
    assert {e.opset for e in EXPORTS} == {11, 13, 18}
    assert {e.kind for e in EXPORTS} == {"script", "trace"}


@pytest.mark.parametrize("pair", list(_pairs()), ids=_id)
def test_a_lowered_export_gives_torchs_answer(
    pair: tuple[Export, str, str], workers: RuntimeWorkers
) -> None:
    export, runtime, target = pair
    lowered = _lowered(export, target)
    refused = REFUSED.get((export.model, target))
    if refused is not None:
        assert isinstance(lowered, splitops.SplitError)
        assert refused in str(lowered)
        return
    assert not isinstance(lowered, splitops.SplitError), lowered
    got = _run(workers, runtime, lowered, export)
    limit = RUNTIME_FAILS.get((export.model, runtime, target))
    if limit is not None:
        assert all(isinstance(outcome, RuntimeRunError) for outcome in got)
        assert all(limit in str(outcome) for outcome in got)
        return
    wanted = export.torch_outputs()
    if (export.model, export.opset, runtime) in RUNTIME_WRONG:
        original = _run(workers, runtime, onnx.load(str(export.path)), export)
        for outcomes in (original, got):
            assert not all(
                not isinstance(o, RuntimeRunError) and close(o, w)
                for o, w in zip(outcomes, wanted, strict=True)
            )
        return
    ran = [outcome for outcome in got if not isinstance(outcome, RuntimeRunError)]
    assert len(ran) == len(got), next(o for o in got if isinstance(o, RuntimeRunError))
    for outputs, want in zip(ran, wanted, strict=True):
        assert close(outputs, want), [np.shape(o) for o in outputs]


def test_lowering_for_a_runtime_without_loop_names_the_loop_it_cannot_unroll() -> None:
    (export,) = [e for e in EXPORTS if (e.model, e.opset) == ("enumerate_split", 13)]
    refused = _lowered(export, "tract")
    assert isinstance(refused, splitops.SplitError)
    assert "'/Loop' in main" in str(refused)
    assert "trip count known only at run time" in str(refused)


#: Exports whose graph contradicts unbind's squeeze, by module and opset, and what the
#: default engine says: torch's exporter took the rank of unbind's parts from onnx's
#: inference, which keeps the axis, and wrote ``k.transpose(-2, -1)`` as a Transpose of rank
#: 4 of a part of rank 3. onnx.reference's Transpose refuses it; onnxruntime fuses the
#: Transpose into its MatMul and computes torch's answer; lowered, every runtime does.
INCONSISTENT = {
    ("vit_block", 13): "Inconsistent permutation",
    ("vit_block", 18): "Inconsistent permutation",
}


@pytest.mark.parametrize("export", EXPORTS, ids=lambda e: f"{e.model}-{e.opset}")
def test_check_infer_and_run_model_take_every_export_as_exported(export: Export) -> None:
    """The exports are valid (check finds at most the two patterns it warns of), inference
    types them, and splitops' default engine gives torch's answer on each, but where
    onnx.reference, which runs their other operators, computes the model wrong, or refuses
    a graph that contradicts itself (then in one line naming the operator's complaint)."""
    model = onnx.load(str(export.path))
    diagnostics = splitops.check_model(model)
    assert {d.rule for d in diagnostics} <= {"default-split", "position-shape"}, diagnostics
    assert all(d.severity == "warning" for d in diagnostics)
    typed = splitops.infer_shapes(model)
    assert len(typed.graph.output) == len(model.graph.output)
    for feeds, want in zip(export.feeds(), export.torch_outputs(), strict=True):
        if (export.model, export.opset, "onnx.reference") in RUNTIME_WRONG:
            continue
        refused = INCONSISTENT.get((export.model, export.opset))
        if refused is not None:
            with pytest.raises(splitops.OtherOperatorError, match=refused):
                splitops.backend.run_model(model, list(feeds.values()))
            continue
        got = splitops.backend.run_model(model, list(feeds.values()))
        assert close(got, want), export.model
