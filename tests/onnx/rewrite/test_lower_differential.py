"""lower_model against the spec, live: the lowered model, run by onnxruntime and by
onnx.reference, gives :func:`splitops.run_node`'s outputs bit for bit.

The nodes are those of ``test_ort_differential.py`` (its seeded generator: every opset from
11 to 18 and SplitToSequence at 11 and 24, ranks 1 to 5, negative axes, zero-size parts,
uneven ``num_outputs``, omitted trailing outputs, scalar and 1-d sequence splits, every
element type onnxruntime has a kernel for), and the same nodes read at Split-2 (opsets 7 to
10). Each node is lowered three ways:

- *static*: the input's shape declared, so sizes become constants;
- *dynamic*: every dim of the input declared symbolic, so sizes are computed in the graph;
- *readers* (SplitToSequence only): the sequence read by a SequenceAt at every position (and
  at -1), a SequenceLength and a ConcatFromSequence, so that lowering removes it; declared
  static and symbolic in turn.

``SPLITOPS_FULL=1`` runs 5000 nodes instead of 1000. onnxruntime 1.31.1 and the newest
release must both pass: CI installs the newest; :func:`test_the_other_onnxruntime_release`
runs this file under another interpreter (see its docstring).
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper
from onnx.reference import ReferenceEvaluator
from tests.onnx.run.test_ort_differential import (
    CASES,
    Case,
    assert_identical,
    feeds,
    input_values,
    make_model,
    make_node,
    random_case,
    split_value,
)
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.rewrite._lower import lower_model
from splitops.onnx.run._ort import make_session, needs_raw_values, run_session

ort = pytest.importorskip("onnxruntime")

#: The Split-11 nodes of the generator, read again at opsets 7 to 10 (Split-2).
SPLIT2_EVERY = 4


def lowering_cases() -> list[Case]:
    cases = [random_case(seed) for seed in range(CASES)]
    split11 = [c for c in cases[::SPLIT2_EVERY] if c.op == "Split" and c.version == 11]
    split2 = [
        replace(c, opset=7 + i % 4, split_as_attribute=c.split is not None)
        for i, c in enumerate(split11)
    ]
    return cases + split2


ALL = lowering_cases()


def spec_outputs(case: Case, x: np.ndarray[Any, Any]) -> list[Any]:
    """What the spec computes: splitops.run_node on the node itself."""
    inputs = [x] if split_value(case) is None else [x, split_value(case)]
    return [
        np.asarray(v) if not isinstance(v, list) else v
        for v in _host(splitops.run_node(make_node(case), inputs, opset=case.opset))
    ]


def _host(values: list[Any]) -> list[Any]:
    return [[np.asarray(p) for p in v] if isinstance(v, list) else np.asarray(v) for v in values]


def symbolic(model: ModelProto) -> ModelProto:
    """``model`` with every dim of its graph inputs and outputs declared symbolic."""
    dynamic = ModelProto()
    dynamic.CopyFrom(model)
    for value in [*dynamic.graph.input, *dynamic.graph.output]:
        kind = value.type.WhichOneof("value")
        tensor = (
            value.type.sequence_type.elem_type.tensor_type
            if kind == "sequence_type"
            else (value.type.tensor_type)
        )
        for index, dim in enumerate(tensor.shape.dim):
            if value.name != "split":
                dim.Clear()
                dim.dim_param = f"{value.name}_d{index}"
    return dynamic


def squeezed(case: Case) -> bool:
    """Whether the sequence's parts lose the split axis: ``keepdims=0`` and the default
    split, none or the scalar 1 (given as a constant or at run time)."""
    return case.keepdims == 0 and case.split in (None, 1)


def kept_inexact(case: Case) -> bool:
    """Whether the lowering keeps a sequence it cannot keep exact: the scalar 1 given at run
    time with keepdims=0 before opset 13 (the exact form, an If of sequences, takes 13;
    ``portable`` drops keepdims there, and its parts keep the axis)."""
    runtime = case.split == 1 and not case.split_as_initializer
    return runtime and case.keepdims == 0 and case.opset < 13


def with_readers(case: Case, count: int, concat: bool) -> tuple[ModelProto, list[str]]:
    """The case's SplitToSequence read at every position, at -1, by SequenceLength and by
    ConcatFromSequence along its axis (with ``new_axis=1`` where the parts lost it) when
    ``concat``; the outputs, in order."""
    model = make_model(case)
    graph = model.graph
    element = graph.input[0].type.tensor_type.elem_type
    rank = len(case.shape)
    del graph.output[:]
    outputs = []
    for position in [*range(count), -1] if count else []:
        index = f"at{position}".replace("-", "m")
        graph.initializer.append(onnx.numpy_helper.from_array(np.array(position), index))
        graph.node.append(helper.make_node("SequenceAt", ["seq", index], [f"part_{index}"]))
        outputs.append((f"part_{index}", element, rank - squeezed(case)))
    graph.node.append(helper.make_node("SequenceLength", ["seq"], ["count"]))
    outputs.append(("count", TensorProto.INT64, 0))
    if count and concat:
        stack = {"new_axis": 1} if squeezed(case) else {}
        graph.node.append(
            helper.make_node("ConcatFromSequence", ["seq"], ["joined"], axis=case.axis, **stack)
        )
        outputs.append(("joined", element, rank))
    for name, kind, dims in outputs:
        graph.output.append(helper.make_tensor_value_info(name, kind, [None] * dims))
    return model, [name for name, _, _ in outputs]


def reader_outputs(case: Case, parts: list[np.ndarray[Any, Any]], concat: bool) -> list[Any]:
    """What the readers compute from the spec's parts."""
    values: list[Any] = [*parts, *([parts[-1]] if parts else [])]
    values.append(np.array(len(parts), dtype=np.int64))
    if parts and concat:
        axis = case.axis % len(case.shape)
        join = np.stack if squeezed(case) else np.concatenate
        values.append(join(parts, axis=axis))
    return values


def run_onnxruntime(model: ModelProto, values: dict[str, Any]) -> list[Any]:
    """The model's outputs on onnxruntime, one thread (bfloat16 handed over as raw bits)."""
    session = make_session(model, threads=1)
    return run_session(session, values, raw=needs_raw_values(session))


def run_reference(model: ModelProto, values: dict[str, Any]) -> list[Any]:
    """The model's outputs on onnx.reference alone (no splitops op classes)."""
    return _host(list(ReferenceEvaluator(model).run(None, values)))


def variants(case: Case, x: np.ndarray[Any, Any]) -> list[tuple[str, ModelProto, list[Any]]]:
    """The models to lower for ``case``, with what each must output."""
    expected = spec_outputs(case, x)
    model = make_model(case)
    if squeezed(case):  # the parts lose the split axis: the sequence's elements are a rank less
        elem = model.graph.output[0].type.sequence_type.elem_type.tensor_type
        del elem.shape.dim[-1]
        if case.split is not None and not case.split_as_initializer:
            elem.ClearField("shape")  # a split given at run time: the rank is known only then
    found = [("static", model, expected), ("dynamic", symbolic(model), expected)]
    if case.op == "SplitToSequence":
        # ConcatFromSequence needs the number of parts when the model is lowered: a constant
        # split, or a static axis without one, or 1-d sizes of a declared length.
        parts = expected[0]
        runtime_chunk = isinstance(case.split, int) and not case.split_as_initializer
        static = not runtime_chunk
        dynamic = isinstance(case.split, tuple)
        for name, concat, make in (
            ("readers", static, _same),
            ("dynamic readers", dynamic, symbolic),
        ):
            readers, _ = with_readers(case, len(parts), concat)
            found.append((name, make(readers), reader_outputs(case, parts, concat)))
    return found


def _same(model: ModelProto) -> ModelProto:
    return model


@pytest.mark.parametrize("case", ALL, ids=str)
def test_the_lowered_node_computes_the_spec_on_onnxruntime_and_onnx_reference(
    case: Case,
) -> None:
    x = input_values(case)
    values = feeds(case, x)
    for name, model, expected in variants(case, x):
        if kept_inexact(case) and not name.endswith("readers"):
            continue  # see kept_inexact: the row of the report says so
        lowered = lower_model(model)
        onnx.checker.check_model(lowered, full_check=True)
        if name.endswith("readers"):
            ops = {node.op_type for node in lowered.graph.node}
            assert not {op for op in ops if "Sequence" in op}, (name, ops)
        assert_identical(run_onnxruntime(lowered, values), expected, f"{name}, onnxruntime")
        if case.dtype != "bfloat16":  # onnx.reference computes bfloat16 through float32
            assert_identical(run_reference(lowered, values), expected, f"{name}, onnx.reference")


def departure(run: Any, model: ModelProto, values: dict[str, Any], expected: list[Any]) -> str:
    """``refuses``, ``wrong`` or ``""``: what a runtime does with a model the spec runs."""
    try:
        actual = run(model, values)
    except Exception:
        return "refuses"
    try:
        assert_identical(actual, expected, "")
    except AssertionError:
        return "wrong"
    return ""


def test_the_nodes_include_ones_onnxruntime_refuses_or_computes_wrong() -> None:
    """The cases above prove something only if unlowered nodes depart: count, on each
    runtime, the nodes it refuses or computes otherwise than the spec. onnxruntime departs
    on some (which ones depends on its release); onnx.reference on none of these valid
    nodes (its departures are on invalid ones, which lowering refuses)."""
    found: Counter[str] = Counter()
    for case in ALL:
        x = input_values(case)
        values = feeds(case, x)
        model = make_model(case)
        expected = spec_outputs(case, x)
        runtimes = [("onnxruntime", run_onnxruntime)]
        if case.dtype != "bfloat16":
            runtimes.append(("onnx.reference", run_reference))
        for runtime, run in runtimes:
            outcome = departure(run, model, values, expected)
            if outcome:
                found[f"{runtime} {outcome}"] += 1
    print(f"\n{len(ALL)} nodes; unlowered departures: {dict(sorted(found.items()))}")
    assert found["onnxruntime refuses"] + found["onnxruntime wrong"] > 0


def test_the_generator_reaches_split2_and_every_variant() -> None:
    assert {c.opset for c in ALL if c.op == "Split" and c.opset < 11} == {7, 8, 9, 10}
    assert any(c.op == "SplitToSequence" and isinstance(c.split, int) for c in ALL)
    assert any(c.num_outputs and c.outputs < c.num_outputs for c in ALL)


_OTHER = os.environ.get("SPLITOPS_OTHER_ORT_PYTHON")


@pytest.mark.skipif(
    not _OTHER,
    reason="set SPLITOPS_OTHER_ORT_PYTHON to a Python with another onnxruntime release, e.g. "
    "python -m venv /tmp/ort131 && /tmp/ort131/bin/pip install onnxruntime==1.31.1 && echo "
    "\"import site; site.addsitedir('$PWD/.venv/lib/python3.11/site-packages')\" > "
    "/tmp/ort131/lib/python3.11/site-packages/zz.pth, then SPLITOPS_OTHER_ORT_PYTHON="
    "/tmp/ort131/bin/python pytest tests/onnx/rewrite/test_lower_differential.py",
)
def test_the_other_onnxruntime_release() -> None:
    """This file again, under the interpreter ``SPLITOPS_OTHER_ORT_PYTHON`` names: one with
    another onnxruntime release (1.31.1 beside the newest), which must pass too."""
    assert _OTHER is not None
    version = subprocess.run(
        [_OTHER, "-c", "import onnxruntime; print(onnxruntime.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version != ort.__version__, f"{_OTHER} has onnxruntime {version} as well"
    done = subprocess.run(
        [_OTHER, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", "not other"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
        env={k: v for k, v in os.environ.items() if k != "SPLITOPS_OTHER_ORT_PYTHON"},
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 0, f"onnxruntime {version}:\n{done.stdout[-4000:]}"
