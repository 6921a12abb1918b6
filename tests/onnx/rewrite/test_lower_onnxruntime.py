"""The onnxruntime target, live on the onnxruntime installed here, at every length of an axis
known only at run time: onnxruntime 1.32 computes a Split-18 by ``num_outputs`` as the spec
says (refusing the lengths the spec rejects), so the target, lowering for that release, keeps
the node and adds nothing; for any release (1.31 refuses 9 into 4 and an empty axis;
onnx.reference, which takes the target's forms too, cuts 5 into 4) the sizes are computed in
the graph, checked. Both are exact on the release installed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.rewrite._lower import (
    FORMS,
    ONNXRUNTIME_FROM_1_32,
    lower_model_with_report,
    target_forms,
)
from splitops.onnx.run import RuntimeRunError, RuntimeWorkers
from splitops.onnx.run._runtimes import runtime_named

ort = pytest.importorskip("onnxruntime")

#: Whether the onnxruntime installed here is 1.32 or later.
ORT_1_32 = tuple(int(part) for part in ort.__version__.split(".")[:2]) >= (1, 32)


def _split(parts: int, listed: int, axis: int, opset: int, element: int) -> ModelProto:
    """A Split-18 of ``x`` (``[2, N]``) by ``num_outputs=parts`` listing ``listed`` outputs."""
    names = [f"y{i}" for i in range(listed)]
    node = helper.make_node("Split", ["x"], names, axis=axis, num_outputs=parts, name="cut")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", element, [2, "N"])],
        [helper.make_tensor_value_info(name, element, [2, None]) for name in names],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def _feeds(length: int, element: int) -> dict[str, Any]:
    dtype = helper.tensor_dtype_to_np_dtype(element)
    return {"x": (np.arange(2 * length) % 5).reshape(2, length).astype(dtype)}


#: num_outputs, outputs listed, axis, opset, element type.
SPLITS = [
    (parts, listed, axis, opset, element)
    for parts in (2, 3, 4, 5)
    for listed in sorted({parts, parts - 1, 1})
    for axis in (1, -1)
    for opset in (18, 21)
    for element in (TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL)
    if (axis, opset, element) == (1, 18, TensorProto.FLOAT) or listed == parts
]


@pytest.fixture(scope="module")
def workers() -> Iterator[RuntimeWorkers]:
    with RuntimeWorkers(GUARD_SECONDS) as started:
        yield started


def _compare(
    workers: RuntimeWorkers, model: ModelProto, lowered: ModelProto, lengths: range, element: int
) -> list[str]:
    """Where the lowered model, on onnxruntime, departs from the spec (the reference engine
    on the original): wrong outputs, a refused valid length, an accepted invalid one."""
    feeds = [_feeds(length, element) for length in lengths]
    got = workers.run_each(runtime_named("onnxruntime"), lowered.SerializeToString(), feeds)
    departures = []
    for length, feed, outcome in zip(lengths, feeds, got, strict=True):
        try:
            want = splitops.backend.run_model(model, feed)
        except splitops.SplitError:
            if not isinstance(outcome, RuntimeRunError):
                departures.append(f"{length}: accepted")
            continue
        if isinstance(outcome, RuntimeRunError):
            departures.append(f"{length}: refused ({outcome})")
        elif len(outcome) != len(want) or not all(
            np.array_equal(np.asarray(g), w) and np.asarray(g).dtype == w.dtype
            for g, w in zip(outcome, want, strict=True)
        ):
            departures.append(f"{length}: wrong")
    return departures


@pytest.mark.parametrize(("parts", "listed", "axis", "opset", "element"), SPLITS)
def test_the_onnxruntime_target_is_exact_at_every_length_on_the_release_installed(
    workers: RuntimeWorkers, parts: int, listed: int, axis: int, opset: int, element: int
) -> None:
    """From 1.32 the node stays as it is (no node added); one listing fewer outputs than
    parts gets an unused output for each part it leaves out (1.32 refuses it as it is)."""
    model = _split(parts, listed, axis, opset, element)
    lowered, report = lower_model_with_report(model, target="onnxruntime", release=ort.__version__)
    if ORT_1_32:
        assert [node.op_type for node in lowered.graph.node] == ["Split"]
        assert list(lowered.graph.node[0].output[:listed]) == [f"y{i}" for i in range(listed)]
        assert len(lowered.graph.node[0].output) == parts
        assert report[0].outcome == ("unchanged" if listed == parts else "rewritten")
    assert _compare(workers, model, lowered, range(3 * parts + 2), element) == []


@pytest.mark.parametrize("release", [None, "1.31.1"])
@pytest.mark.parametrize(("parts", "listed"), [(2, 2), (3, 3), (4, 4), (4, 2)])
def test_for_any_release_the_sizes_are_computed_and_exact_on_the_release_installed(
    workers: RuntimeWorkers, parts: int, listed: int, release: str | None
) -> None:
    model = _split(parts, listed, 1, 18, TensorProto.FLOAT)
    lowered, report = lower_model_with_report(model, target="onnxruntime", release=release)
    ops = [node.op_type for node in lowered.graph.node]
    assert "Shape" in ops
    assert ("Reshape" in ops) == (parts > 2)  # two parts cannot be invalid: no check
    assert "split computed in the graph" in report[0].detail
    assert _compare(workers, model, lowered, range(3 * parts + 2), TensorProto.FLOAT) == []


@pytest.mark.parametrize(
    ("release", "from_1_32"),
    [
        ("1.31.1", False),
        ("1.20.0", False),
        ("1.32.0", True),
        ("1.32.0.dev20260101", True),
        ("1.33.1", True),
        ("2.0.0", True),
        (None, False),
    ],
)
def test_only_onnxruntime_from_1_32_takes_the_forms_of_its_release(
    release: str | None, from_1_32: bool
) -> None:
    """No release takes the target's own forms, exact on every release."""
    expected = ONNXRUNTIME_FROM_1_32 if from_1_32 else FORMS["onnxruntime"]
    assert target_forms("onnxruntime", release) is expected
    assert target_forms("portable", release) is FORMS["portable"]


def test_a_release_that_names_no_version_is_refused() -> None:
    with pytest.raises(splitops.SplitError, match="'nightly' was given"):
        target_forms("onnxruntime", "nightly")


def test_the_engine_lowers_for_the_release_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from splitops.onnx import rewrite
    from splitops.onnx.run.backend import OnnxruntimeRep

    asked: list[str | None] = []
    lower = rewrite.lower_model

    def recording(model: ModelProto, **options: Any) -> ModelProto:
        asked.append(options.get("release"))
        return lower(model, **options)

    monkeypatch.setattr(rewrite, "lower_model", recording)
    OnnxruntimeRep(_split(3, 3, 1, 18, TensorProto.FLOAT))
    assert asked == [ort.__version__]


@pytest.mark.parametrize(("parts", "kept"), [(5, True), (6, False)])
def test_the_parts_a_node_leaves_out_are_listed_within_the_max_model_parts_limit(
    parts: int, kept: bool
) -> None:
    """A node listing 2 of ``num_outputs`` parts gets an output for each of the others only
    while the model's parts stay within the limit; past it, its sizes are computed in the
    graph, with one unused output for the rest (a small file cannot make a huge one)."""
    model = _split(parts, 2, 1, 18, TensorProto.FLOAT)
    with splitops.limits(max_model_parts=3):
        lowered, report = lower_model_with_report(model, target="onnxruntime", release="1.32.0")
    (split,) = [node for node in lowered.graph.node if node.op_type == "Split"]
    assert len(split.output) == (parts if kept else 3)
    assert ("split computed in the graph" in report[0].detail) == (not kept)
