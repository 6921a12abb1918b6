"""Lowering per runtime: each target's forms, run live on the runtimes installed here
(onnxruntime and onnx.reference always; OpenVINO and tract, which CI installs; TVM, tinygrad
and onnx2torch where installed), and what every target shares: sizes computed once, no check
that cannot fire, static shape arithmetic folded, no sequence left where a target has none."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from harness.portability import Row, cases, cost_chain, regressions, run_matrix
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.rewrite._lower import FORMS, TARGETS, lower_model_with_report
from splitops.onnx.run._runtimes import RUNTIMES, installed_runtimes, runtime_named

F = TensorProto.FLOAT
F32 = np.float32


def _ops(model: ModelProto) -> list[str]:
    return [node.op_type for node in model.graph.node]


def _chain(count: int, parts: int) -> ModelProto:
    return cost_chain(count, parts, relus=0)


def test_every_target_has_its_forms() -> None:
    assert set(FORMS) == set(TARGETS)
    assert {runtime.target for runtime in RUNTIMES} <= set(TARGETS)
    assert not FORMS["no-sequences"].sequences
    assert FORMS["portable"].check == "part"


def _symbolic_split(outputs: int, num_outputs: int) -> ModelProto:
    names = [f"p{i}" for i in range(outputs)]
    node = helper.make_node("Split", ["x"], names, axis=1, num_outputs=num_outputs, name="cut")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [2, "N"])],
        [helper.make_tensor_value_info(n, F, None) for n in names],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    ("target", "outputs", "form"),
    [
        ("tract", 3, "kept-at-run-time"),
        ("tract", 2, "slices-per-part"),  # fewer outputs listed than num_outputs
        ("tvm", 3, "kept-at-run-time"),
        ("portable", 3, "slices-per-part"),
        ("openvino", 3, "slices-per-part"),
        ("onnxruntime", 3, "computed-sizes"),
    ],
)
def test_the_first_split_form_that_applies_lowers_the_node_and_writes_its_row(
    target: str, outputs: int, form: str
) -> None:
    """A target's Split forms are an ordered list: each form before the one that lowers the
    node says why it does not apply, and the report row is the applying form's."""
    from splitops.onnx.model import ModelEdits, ModelView, SplitSite
    from splitops.onnx.rewrite._lower import Plan

    model = _symbolic_split(outputs, 3)
    view = ModelView.read(model)
    site = SplitSite.read(next(view.split_nodes()))
    plan = Plan(view, target, ModelEdits(view))  # type: ignore[arg-type]
    checks = [(f.name, f.check(plan, site)) for f in FORMS[target].split]  # type: ignore[index]
    first = next(name for name, why_not in checks if why_not is None)
    assert first == form
    before = checks[: [name for name, _ in checks].index(first)]
    assert before
    assert all(why_not for _, why_not in before), before
    _, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    done = next(f for f in FORMS[target].split if f.name == form)  # type: ignore[index]
    assert str(report[0]).endswith(done.rewrite(Plan(view, target, ModelEdits(view)), site).detail)  # type: ignore[arg-type]


def test_sizes_are_computed_once_per_symbolic_length_in_a_scope() -> None:
    model = _chain(20, 3)
    lowered = splitops.lower_model(model, target="onnxruntime")
    assert _ops(lowered).count("Shape") == 1
    assert _ops(lowered).count("Split") == 20
    x = np.arange(2 * 7, dtype=np.float32).reshape(2, 7)
    expected = splitops.backend.run_model(model, [x])
    import onnxruntime

    session = onnxruntime.InferenceSession(lowered.SerializeToString())
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], expected[0])


def test_no_check_is_emitted_where_none_can_fire() -> None:
    """d - ceil(d / 2) is never negative: two parts need no run-time check."""
    lowered = splitops.lower_model(_chain(1, 2), target="onnxruntime")
    assert "Reshape" not in _ops(lowered)
    assert "Less" not in _ops(lowered)
    checked = splitops.lower_model(_chain(1, 3), target="onnxruntime")
    assert "Reshape" in _ops(checked)


def test_sizes_computed_from_static_shapes_are_folded_to_a_constant() -> None:
    """torch's tensor_split on a static axis: sizes computed by Shape arithmetic."""
    one = numpy_helper.from_array(np.array([1], np.int64), "one")
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["length"], axis=0),
        helper.make_node("Sub", ["length", "one"], ["rest"]),
        helper.make_node("Concat", ["one", "rest"], ["sizes"], axis=0),
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1, name="cut"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, 5])],
        [helper.make_tensor_value_info(n, F, [2, None]) for n in "ab"],
        [one],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    lowered, report = lower_model_with_report(model)
    assert report[0].detail == "split computed from static shapes -> [1, 4]"
    (split,) = [n for n in lowered.graph.node if n.op_type == "Split"]
    sizes = {t.name: numpy_helper.to_array(t).tolist() for t in lowered.graph.initializer}
    assert sizes[split.input[1]] == [1, 4]


def _loop_of_sequence_inserts() -> ModelProto:
    """What torch exports for tensor_split by indices: a Loop that inserts each part into a
    sequence, then ConcatFromSequence."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("SequenceInsert", ["seq_in", "x"], ["seq_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("seq_in", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("seq_out", F, None),
        ],
    )
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F, name="start"),
        helper.make_node("Loop", ["trips", "go", "empty"], ["parts"], body=body, name="loop"),
        helper.make_node("ConcatFromSequence", ["parts"], ["y"], axis=0, name="join"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [3])],
        [helper.make_tensor_value_info("y", F, [None])],
        [
            numpy_helper.from_array(np.array(2, np.int64), "trips"),
            numpy_helper.from_array(np.array(True), "go"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    "target", ["portable", "no-sequences", "openvino", "tract", "tvm", "tinygrad", "onnx2torch"]
)
def test_a_list_built_in_a_loop_leaves_no_sequence(target: str) -> None:
    """torch's list appended to in a loop, then joined: unrolled where the target's runtime
    runs no Loop (its trip count is a constant here), else a tensor carried through the
    Loop; the same answer on onnxruntime, and no sequence left."""
    model = _loop_of_sequence_inserts()
    onnx.checker.check_model(model)
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    assert not {op for op in _ops(lowered) if "Sequence" in op}, report
    unrolled = FORMS[target].unrolls  # type: ignore[index]
    assert ("Loop" in _ops(lowered)) is not unrolled
    x = np.arange(3, dtype=np.float32)
    (got,) = splitops.backend.run_model(lowered, [x], engine="onnxruntime")
    np.testing.assert_array_equal(got, np.concatenate([x, x]))


def test_tvm_keeps_the_sequence_a_model_returns() -> None:
    """TVM hands a returned sequence over as a tuple: its target keeps what builds one."""
    model = _loop_of_sequence_inserts()
    del model.graph.node[-1]
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_sequence_value_info("parts", F, None))
    lowered = splitops.lower_model(model, target="tvm")
    ops = [node.op_type for node in lowered.graph.node]
    assert "Loop" not in ops  # unrolled: TVM runs no Loop
    assert ops.count("SequenceInsert") == 2
    assert [o.name for o in lowered.graph.output] == ["parts"]


@pytest.mark.parametrize("target", ["no-sequences", "openvino", "tract", "tinygrad", "onnx2torch"])
def test_a_target_without_sequences_names_every_sequence_left(target: str) -> None:
    """A list built in a Loop that is a graph output stays a sequence: such a target
    refuses it, naming the output and each sequence operator left."""
    model = _loop_of_sequence_inserts()
    del model.graph.node[-1]
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_sequence_value_info("parts", F, None))
    onnx.checker.check_model(model)
    with pytest.raises(splitops.SplitError, match="returns a sequence") as raised:
        splitops.lower_model(model, target=target)  # type: ignore[arg-type]
    for part in ("('parts':", "SequenceEmpty 'start' in main", "SequenceInsert"):
        assert part in str(raised.value)


def test_a_chunk_read_from_the_back_ends_at_the_axis_not_past_it() -> None:
    """ONNX's Slice clamps an end past the axis, tract's does not: the lowered bound is the
    axis length itself."""
    case = next(c for c in cases() if c.name == "sts-chunk-read")
    _, model, _ = case.models()[1]
    lowered = splitops.lower_model(model)
    slices = [n for n in lowered.graph.node if n.op_type == "Slice"]
    ends = {n.output[0]: n for n in lowered.graph.node}
    assert slices
    assert all(ends[s.input[2]].op_type == "Where" for s in slices)


# --- live, on every runtime installed here ----------------------------------------------


#: The runtimes whose live tests run their own target only (below): TVM compiles each model
#: for seconds, tinygrad runs one kernel at a time.
_OWN_TARGET_ONLY = {"tvm", "tinygrad", "onnx2torch"}


@pytest.fixture(scope="module")
def matrix() -> list[Row]:
    runtimes = [r for r in installed_runtimes() if r.name not in _OWN_TARGET_ONLY]
    return run_matrix(runtimes, seconds=GUARD_SECONDS)


def test_lowering_for_a_runtime_never_breaks_what_it_ran_exactly(matrix: list[Row]) -> None:
    assert regressions(matrix) == []


@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino", "tract"])
def test_each_runtime_runs_its_own_targets_lowered_splits_exactly(
    matrix: list[Row],
    runtime: str,
) -> None:
    """Every Split case lowered for the runtime's target is exact, except where the runtime
    has no check form (tract: equal parts and fewer-listed parts on a runtime axis are cut
    at an invalid length; onnxruntime: Split-1, which it lacks, cut by Slice-1, which checks
    no sum) or the original already cut them (explicit sizes on a runtime axis, which no
    target checks against the axis length)."""
    if not runtime_named(runtime).is_installed():
        pytest.skip(f"{runtime} is not installed here (CI installs it)")
    target = runtime_named(runtime).target
    mine = [row for row in matrix if row.runtime == runtime and row.model.startswith("split")]
    assert len(mine) == 34
    departing = {row.model: row.lowered[target] for row in mine if row.lowered[target] != "exact"}
    allowed = {
        "tract": {"split11-equal dynamic", "split13-equal dynamic", "split18-fewer-listed dynamic"},
        "onnxruntime": {"split1-sizes dynamic"},
    }.get(runtime, set())
    assert set(departing) <= allowed
    assert set(departing.values()) <= {"accepts"}


def _omitting(outputs: list[str], opset: int) -> ModelProto:
    """A Split of x (6 by 2, axis 0) into three parts that leaves outputs out."""
    if opset >= 18:
        node = helper.make_node("Split", ["x"], outputs, axis=0, num_outputs=3, name="cut")
        initializers = []
    else:
        node = helper.make_node("Split", ["x", "k"], outputs, axis=0, name="cut")
        initializers = [numpy_helper.from_array(np.array([1, 2, 3], np.int64), "k")]
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [6, 2])],
        [helper.make_tensor_value_info(n, F, [None, 2]) for n in outputs if n],
        initializer=initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("outputs", [["a", "", "b"], ["", "b", ""], ["a", "b", ""]])
@pytest.mark.parametrize("runtime", ["onnxruntime", "tract", "openvino"])
def test_a_split_leaving_outputs_out_runs_on_the_runtimes_target(
    runtime: str, outputs: list[str], opset: int
) -> None:
    """onnxruntime (1.31, 1.32) dies by SIGSEGV on a Split that leaves an output out, and
    tract refuses it; every target names each omitted output, which nothing reads (the
    runtime's own target here, and portable on onnxruntime). Each runtime runs in a worker
    process of its own, so that a crash is that run's error."""
    from splitops.onnx.run import RuntimeWorkers

    found = runtime_named(runtime)
    if not found.is_installed():
        pytest.skip(f"{runtime} is not installed here")
    model = _omitting(outputs, opset)
    lowered, report = lower_model_with_report(model, target=found.target)
    splits = [n for n in lowered.graph.node if n.op_type == "Split"]
    assert all("" not in n.output for n in splits), [list(n.output) for n in splits]
    assert [v.name for v in lowered.graph.output] == [n for n in outputs if n]
    assert report[0].outcome == "rewritten"
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    expected = splitops.backend.run_model(model, {"x": x})
    portable = splitops.lower_model(model, target="portable")
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(found, lowered.SerializeToString(), {"x": x})
        on_onnxruntime = workers.run(
            runtime_named("onnxruntime"), portable.SerializeToString(), {"x": x}
        )
    for outputs in (got, on_onnxruntime):
        assert len(outputs) == len(expected)
        for value, want in zip(outputs, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(value), want, strict=True)


def _sizes_from_shape() -> ModelProto:
    """torch's tensor_split(2) of a run-time axis: the sizes computed from Shape."""

    def ints(name: str, values: list[int]) -> onnx.NodeProto:
        tensor = numpy_helper.from_array(np.array(values, np.int64))
        return helper.make_node("Constant", [], [name], value=tensor)

    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        ints("zero", [0]),
        ints("one", [1]),
        ints("two", [2]),
        helper.make_node("Slice", ["shape", "zero", "one"], ["n"]),
        helper.make_node("Div", ["n", "two"], ["half"]),
        helper.make_node("Sub", ["n", "half"], ["rest"]),
        helper.make_node("Concat", ["half", "rest"], ["s"], axis=0),
        helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["N", 2])],
        [helper.make_tensor_value_info(n, F, [None, 2]) for n in "ab"],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("length", [6, 7])
def test_sizes_computed_from_shape_become_slices_that_tract_runs(length: int) -> None:
    """tract fails a Split whose sizes it cannot work out while loading ("Undetermined
    symbol"); the tract target cuts each part with a Slice, which it runs, run live."""
    from splitops.onnx.run import RuntimeRunError, RuntimeWorkers

    tract = runtime_named("tract")
    if not tract.is_installed():
        pytest.skip("tract is not installed here")
    model = _sizes_from_shape()
    lowered, report = lower_model_with_report(model, target="tract")
    assert "Split" not in _ops(lowered)
    assert "a Slice per part" in report[0].detail
    x = np.arange(2 * length, dtype=np.float32).reshape(length, 2)
    expected = splitops.backend.run_model(model, {"x": x})
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        with pytest.raises(RuntimeRunError):
            workers.run(tract, model.SerializeToString(), {"x": x})
        got = workers.run(tract, lowered.SerializeToString(), {"x": x})
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(value), want, strict=True)


def _sequence_sizes_from_shape() -> ModelProto:
    """What torch's dynamo exporter writes, unoptimized, for DINOv3's split of the prefix
    tokens from the patches: SplitToSequence by sizes computed from Shape, each part read
    by a SequenceAt."""
    model = _sizes_from_shape()
    nodes = [n for n in model.graph.node if n.op_type != "Split"]
    zero, one = (numpy_helper.from_array(np.array(i, np.int64), f"at{i}") for i in (0, 1))
    nodes += [
        helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=0, name="cut"),
        helper.make_node("SequenceAt", ["seq", "at0"], ["a"]),
        helper.make_node("SequenceAt", ["seq", "at1"], ["b"]),
    ]
    graph = helper.make_graph(
        nodes, "g", list(model.graph.input), list(model.graph.output), [zero, one]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("length", [6, 7])
def test_a_sequence_cut_by_sizes_computed_from_shape_becomes_slices_that_tract_runs(
    length: int,
) -> None:
    """tract has no SplitToSequence, and fails a Split of sizes given at run time: the tract
    target reads each part of such a sequence with a Slice, which it runs, run live."""
    from splitops.onnx.run import RuntimeWorkers

    tract = runtime_named("tract")
    if not tract.is_installed():
        pytest.skip("tract is not installed here")
    model = _sequence_sizes_from_shape()
    lowered = splitops.lower_model(model, target="tract")
    assert not {"Split", "SplitToSequence", "SequenceAt"} & set(_ops(lowered)), _ops(lowered)
    x = np.arange(2 * length, dtype=np.float32).reshape(length, 2)
    expected = splitops.backend.run_model(model, {"x": x})
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(tract, lowered.SerializeToString(), {"x": x})
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(value), want, strict=True)


def test_the_tract_target_reports_constant_sizes_it_cannot_check_on_a_runtime_axis() -> None:
    """tract cuts constant sizes [4, 4] from a run-time axis of 9 without an error, where the
    spec rejects them (onnxruntime refuses): the tract target keeps the node, and its report
    row says it is unchecked there. Run live on both runtimes."""
    from splitops.onnx.run import RuntimeRunError, RuntimeWorkers

    tract = runtime_named("tract")
    if not tract.is_installed():
        pytest.skip("tract is not installed here")
    sizes = numpy_helper.from_array(np.array([4, 4], np.int64), "k")
    graph = helper.make_graph(
        [helper.make_node("Split", ["x", "k"], ["a", "b"], axis=0, name="cut")],
        "g",
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "ab"],
        initializer=[sizes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    _, report = lower_model_with_report(model, target="tract")
    assert report[0].outcome == "unchanged"
    assert "unchecked on tract" in report[0].detail
    _, elsewhere = lower_model_with_report(model, target="portable")
    assert elsewhere[0].detail == "explicit sizes"
    x = {"x": np.arange(9, dtype=np.float32)}
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        cut = workers.run(tract, model.SerializeToString(), x)
        with pytest.raises(RuntimeRunError):
            workers.run(runtime_named("onnxruntime"), model.SerializeToString(), x)
    assert [np.asarray(part).shape for part in cut] == [(4,), (4,)]


def test_a_split_taking_its_attributes_from_the_call_names_the_outputs_it_leaves_out() -> None:
    """A Split inside a function whose num_outputs comes from the call stays as it is, but
    for the outputs it leaves out, which get names (onnxruntime dies by SIGSEGV on them);
    onnxruntime runs the lowered model in a worker."""
    from splitops.onnx.run import RuntimeWorkers

    count = helper.make_attribute_ref("num_outputs", onnx.AttributeProto.INT)
    count.ref_attr_name = "n"
    split = helper.make_node("Split", ["v"], ["a", "", "b"], axis=0)
    split.attribute.append(count)
    function = helper.make_function(
        "local", "Cut", ["v"], ["a", "b"], [split], [helper.make_opsetid("", 18)], ["n"]
    )
    call = helper.make_node("Cut", ["x"], ["p", "q"], domain="local", n=3)
    graph = helper.make_graph(
        [call],
        "g",
        [helper.make_tensor_value_info("x", F, [6])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "pq"],
    )
    model = helper.make_model(
        graph,
        functions=[function],
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
    )
    lowered, report = lower_model_with_report(model, target="onnxruntime")
    assert "" not in lowered.functions[0].node[0].output
    assert report[0].detail.startswith("omitted outputs named")
    x = {"x": np.arange(6, dtype=np.float32)}
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(runtime_named("onnxruntime"), lowered.SerializeToString(), x)
    assert [np.asarray(v).tolist() for v in got] == [[0.0, 1.0], [4.0, 5.0]]


# --- tinygrad and onnx2torch, live, on their own target -----------------------------------


@pytest.fixture(scope="module", params=["tinygrad", "onnx2torch"])
def own_target(request: pytest.FixtureRequest) -> list[Row]:
    """Every case on tinygrad or onnx2torch, original and lowered for its own target."""
    runtime = runtime_named(request.param)
    # (Nothing imported here: each runtime runs in a worker process of its own.)
    if not runtime.is_installed():
        pytest.skip(f"{runtime.name} is not installed here ({runtime.install})")
    return run_matrix([runtime], seconds=GUARD_SECONDS, targets=(runtime.target,))


def _verdicts(rows: list[Row]) -> dict[str, tuple[str, str]]:
    runtime = runtime_named(rows[0].runtime)
    return {row.model: (row.original, row.lowered[runtime.target]) for row in rows}


def test_lowering_for_tinygrad_or_onnx2torch_never_breaks_what_it_ran_exactly(
    own_target: list[Row],
) -> None:
    assert len(own_target) == 2 * len(cases())
    assert regressions(own_target) == []


def test_their_own_target_gives_the_spec_answer_where_the_original_departs(
    own_target: list[Row],
) -> None:
    """tinygrad cuts ``num_outputs`` into balanced parts ([3, 2, 2] of 7, where the spec says
    [3, 3, 1]): wrong answers. onnx2torch has no Split-18 converter: every Split at opset 18
    is refused. Their own target is exact on every Split-18 case, both ways."""
    found = _verdicts(own_target)
    split18 = {name: pair for name, pair in found.items() if name.startswith("split18")}
    assert len(split18) == 2 * sum(case.name.startswith("split18") for case in cases())
    assert {lowered for _, lowered in split18.values()} == {"exact"}
    runtime = own_target[0].runtime
    departing = "wrong" if runtime == "tinygrad" else "error"
    for name in ("split18-uneven static", "split18-uneven dynamic", "split18-zero-last static"):
        assert found[name][0] == departing, (name, found[name])


@pytest.mark.parametrize("dims", [[2, 7], [2, "N"]])
def test_a_sequence_removed_at_opset_18_becomes_slices_that_onnx2torch_runs(
    dims: list[int | str],
) -> None:
    """onnx2torch converts no SplitToSequence, nor the Split-18 a removed sequence would
    become: its target cuts the parts with Slices (checked to add up to an axis known only
    at run time), run live against the spec."""
    from splitops.onnx.run import RuntimeRunError, RuntimeWorkers

    nodes = [
        helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], axis=1, name="cut"),
        helper.make_node("SequenceAt", ["seq", "one"], ["second"]),
        helper.make_node("SequenceAt", ["seq", "zero"], ["first"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, dims)],
        [helper.make_tensor_value_info(n, F, [2, None]) for n in ("second", "first")],
        [
            numpy_helper.from_array(np.array([2, 5], np.int64), "sizes"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
            numpy_helper.from_array(np.array(0, np.int64), "zero"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    lowered, report = lower_model_with_report(model, target="onnx2torch")
    assert "Split" not in _ops(lowered)
    assert _ops(lowered).count("Slice") == 2
    assert "Slice per part" in report[0].detail
    runtime = runtime_named("onnx2torch")
    if not runtime.is_installed():
        pytest.skip("onnx2torch (with torch) is not installed here")
    x = {"x": np.arange(14, dtype=np.float32).reshape(2, 7)}
    expected = splitops.backend.run_model(model, x)
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        with pytest.raises(RuntimeRunError, match="SplitToSequence"):
            workers.run(runtime, model.SerializeToString(), x)
        got = workers.run(runtime, lowered.SerializeToString(), x)
        if dims[1] == "N":  # [2, 5] of 6: the spec rejects it, so does the lowered model
            with pytest.raises(RuntimeRunError):
                workers.run(runtime, lowered.SerializeToString(), {"x": np.zeros((2, 6), F32)})
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(value), want, strict=True)


def _sequence_of_sizes_given(opset: int) -> ModelProto:
    """SplitToSequence of ``x: [2, N]`` by sizes given as an input, its parts read by
    SequenceAt."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "sizes"], ["seq"], axis=1, name="cut"),
        helper.make_node("SequenceAt", ["seq", "zero"], ["first"]),
        helper.make_node("SequenceAt", ["seq", "one"], ["second"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", F, [2, "N"]),
            helper.make_tensor_value_info("sizes", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info(n, F, [2, None]) for n in ("first", "second")],
        [numpy_helper.from_array(np.array(i, np.int64), n) for i, n in ((0, "zero"), (1, "one"))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("sizes", [[3, 4], [0, 7], [3, 3], [8, -1]])
def test_sizes_given_at_run_time_are_checked_on_onnx2torch_at_opset_18(sizes: list[int]) -> None:
    """onnx2torch converts no ReduceMin-18, which the check that no size falls below 0 used:
    the onnx2torch target counts the sizes below 0 with ReduceSum instead, and onnx2torch
    runs the parts exactly, and fails sizes that do not add up to the axis or fall below 0
    (``[8, -1]`` adds up to 7), as the spec says."""
    from splitops.onnx.run import RuntimeRunError, RuntimeWorkers

    model = _sequence_of_sizes_given(18)
    lowered = splitops.lower_model(model, target="onnx2torch")
    assert "ReduceMin" not in _ops(lowered)
    assert "ReduceSum" in _ops(lowered)
    assert "ReduceMin" in _ops(splitops.lower_model(model, target="tvm"))
    runtime = runtime_named("onnx2torch")
    if not runtime.is_installed():
        pytest.skip("onnx2torch (with torch) is not installed here")
    feeds = {"x": np.arange(14, dtype=F32).reshape(2, 7), "sizes": np.array(sizes, np.int64)}
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        (got,) = workers.run_each(runtime, lowered.SerializeToString(), [feeds])
    try:
        expected = splitops.backend.run_model(model, feeds)
    except splitops.SplitError:
        assert isinstance(got, RuntimeRunError), got
        return
    assert not isinstance(got, RuntimeRunError), got
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(value), want, strict=True)


def _one_node(node: NodeProto, opset: int, out: int = F) -> ModelProto:
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", out, None)],
    )
    opsets = [helper.make_opsetid("", opset)]
    ir_version = helper.find_min_ir_version_for(opsets) if opset >= 7 else 3
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


_CONSTANT = numpy_helper.from_array(np.ones(2, F32))


@pytest.mark.parametrize(
    ("model", "op", "version"),
    [
        (_one_node(helper.make_node("Shape", ["x"], ["y"]), 24, TensorProto.INT64), "Shape", 24),
        (_one_node(helper.make_node("Constant", [], ["y"], value=_CONSTANT), 24), "Constant", 24),
        (_one_node(helper.make_node("Slice", ["x"], ["y"], starts=[0], ends=[1]), 1), "Slice", 1),
        (_one_node(helper.make_node("ReduceMin", ["x"], ["y"]), 18), "ReduceMin", 18),
    ],
    ids=["Shape-24", "Constant-24", "Slice-1", "ReduceMin-18"],
)
def test_onnx2torch_refuses_these_operators_without_any_split(
    model: ModelProto, op: str, version: int
) -> None:
    """onnx2torch's own limits, in models of one node and no Split: it has no converter for
    Shape or Constant at opset 24, nor for Slice-1 (so a Split-1 has no form it converts, and
    a model of opset 24 that computes sizes from Shape fails whatever the lowering), nor for
    ReduceMin-18 (which the onnx2torch target's checks avoid). onnx.reference runs each."""
    from splitops.onnx.run import RuntimeRunError, RuntimeWorkers

    runtime = runtime_named("onnx2torch")
    if not runtime.is_installed():
        pytest.skip("onnx2torch (with torch) is not installed here")
    feeds = {"x": np.arange(6, dtype=F32).reshape(2, 3)}
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        refused, ran = (
            workers.run_each(peer, model.SerializeToString(), [feeds])[0]
            for peer in (runtime, runtime_named("onnx.reference"))
        )
    assert isinstance(refused, RuntimeRunError)
    assert f"operation_type='{op}', version={version})" in str(refused)
    assert not isinstance(ran, RuntimeRunError), ran


def _with_if() -> ModelProto:
    """A Split-18 of uneven num_outputs in the then-branch of an If."""
    branch = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3, name="cut")],
        "then",
        [],
        [helper.make_tensor_value_info(n, F, [None]) for n in "abc"],
    )
    other = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a2", "b2", "c2"], axis=0, num_outputs=3)],
        "else",
        [],
        [helper.make_tensor_value_info(n, F, [None]) for n in ("a2", "b2", "c2")],
    )
    graph = helper.make_graph(
        [
            helper.make_node(
                "If", ["go"], ["p", "q", "r"], then_branch=branch, else_branch=other, name="pick"
            )
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [7])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "pqr"],
        [numpy_helper.from_array(np.array(True), "go")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _with_function() -> ModelProto:
    function = helper.make_function(
        "local",
        "Thirds",
        ["v"],
        ["a", "b", "c"],
        [helper.make_node("Split", ["v"], ["a", "b", "c"], axis=0, num_outputs=3)],
        [helper.make_opsetid("", 18)],
    )
    graph = helper.make_graph(
        [helper.make_node("Thirds", ["x"], ["p", "q", "r"], domain="local", name="call")],
        "g",
        [helper.make_tensor_value_info("x", F, [7])],
        [helper.make_tensor_value_info(n, F, [None]) for n in "pqr"],
    )
    return helper.make_model(
        graph,
        functions=[function],
        opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
    )


@pytest.mark.parametrize(
    ("build", "named"),
    [(_with_if, "If 'pick' in main"), (_with_function, "Thirds 'call' in main")],
)
def test_the_onnx2torch_target_refuses_control_flow_and_functions(
    build: object, named: str
) -> None:
    """onnx2torch has no If, Loop, Scan or function converter and refuses the whole model:
    its target refuses such a model, naming the node, rather than write one that onnx2torch
    cannot load; other targets lower it. Where onnx2torch is installed, its refusal is run."""
    from splitops.onnx.run import RuntimeRunError, RuntimeWorkers

    model = build()  # type: ignore[operator]
    onnx.checker.check_model(model, full_check=True)
    with pytest.raises(splitops.SplitError, match="control flow or function calls") as raised:
        splitops.lower_model(model, target="onnx2torch")
    assert named in str(raised.value)
    assert raised.value.rule is splitops.Rule.CONVERSION
    lowered = splitops.lower_model(model, target="tinygrad")
    assert len(lowered.graph.node) == 1
    runtime = runtime_named("onnx2torch")
    if not runtime.is_installed():
        return
    refused = pytest.raises(RuntimeRunError, match="Converter is not implemented")
    with RuntimeWorkers(GUARD_SECONDS) as workers, refused:
        workers.run(runtime, model.SerializeToString(), {"x": np.zeros(7, np.float32)})


# --- TVM, OpenVINO: forms run live ---------------------------------------------------------


def _tensor_split_export(parts: int) -> ModelProto:
    """torch's ``tensor_split(x, parts, dim=1)`` of ``x: [2, N]``, exported by its TorchScript
    exporter: a SplitToSequence of sizes computed in the graph from ``Shape``."""
    import io
    import warnings

    torch = pytest.importorskip("torch")

    class Module(torch.nn.Module):
        def forward(self, x: object) -> object:
            return torch.tensor_split(x, parts, dim=1)

    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated
        torch.onnx.export(
            Module().eval(),
            (torch.zeros(2, 19),),
            buffer,
            dynamo=False,
            opset_version=18,
            input_names=["x"],
            dynamic_axes={"x": {1: "N"}},
        )
    return onnx.load_from_string(buffer.getvalue())


def _run_live(runtime: str, model: ModelProto, lengths: list[int]) -> list[object]:
    """``model`` on ``runtime`` (in its worker) at each length of axis 1 of ``x: [2, N]``."""
    from splitops.onnx.run import RuntimeWorkers

    feeds = [{"x": np.arange(2 * n, dtype=np.float32).reshape(2, n)} for n in lengths]
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        return list(workers.run_each(runtime_named(runtime), model.SerializeToString(), feeds))


def _assert_as_the_spec(model: ModelProto, lengths: list[int], got: list[object]) -> None:
    """Each outcome the spec's (splitops' engine on ``model``): its parts, or an error where
    it rejects the length."""
    from splitops.onnx.run import RuntimeRunError

    for length, outcome in zip(lengths, got, strict=True):
        x = {"x": np.arange(2 * length, dtype=np.float32).reshape(2, length)}
        try:
            expected = splitops.backend.run_model(model, x)
        except splitops.SplitError:
            assert isinstance(outcome, RuntimeRunError), (length, outcome)
            continue
        assert not isinstance(outcome, RuntimeRunError), (length, outcome)
        assert isinstance(outcome, list)
        assert len(outcome) == len(expected)
        for value, want in zip(outcome, expected, strict=True):
            np.testing.assert_array_equal(np.asarray(value), want, strict=True)


def test_tensor_split_of_a_run_time_axis_runs_on_tvm_as_checked_slices() -> None:
    """TVM refuses the Split whose sizes the export computes ("Dynamic Split not yet
    supported"); the tvm target cuts the parts with Slices, which TVM runs exactly."""
    pytest.importorskip("tvm")
    model = _tensor_split_export(8)
    lowered, report = lower_model_with_report(model, target="tvm")
    assert "Split" not in _ops(lowered)
    assert "Slice per part" in report[0].detail
    lengths = [19, 8, 5, 3, 0]
    _assert_as_the_spec(model, lengths, _run_live("tvm", lowered, lengths))


def test_sizes_given_at_run_time_are_checked_on_tvm() -> None:
    """Sizes that do not add up to the axis (or fall below 0) fail on TVM in the tvm
    target's form, as the spec says, and cut the parts exactly where they do."""
    pytest.importorskip("tvm")
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["n"], axis=0),
        helper.make_node("Sub", ["n", "three"], ["rest"]),
        helper.make_node("Concat", ["three", "rest"], ["sizes"], axis=0),
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
    ]
    constants = [
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([3], np.int64), "three"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, "N"])],
        [helper.make_tensor_value_info(n, F, [2, None]) for n in "ab"],
        initializer=constants,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    lowered = splitops.lower_model(model, target="tvm")
    assert "Split" not in _ops(lowered)
    lengths = [7, 3, 2]  # at 2 the second size is -1
    _assert_as_the_spec(model, lengths, _run_live("tvm", lowered, lengths))


def _computed_length(flatten: list[NodeProto]) -> ModelProto:
    """``x: [2, N]`` -> ``N`` (a 0-d value from ``Shape``) made 1-d by ``flatten``, plus 1:
    no Split, no sequence."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["n"], axis=0),
        *flatten,
        helper.make_node("Add", ["flat", "ones"], ["y"]),
    ]
    constants = [
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array([1], np.int64), "ones"),
        numpy_helper.from_array(np.array([0], np.int64), "zeros"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, "N"])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [1])],
        initializer=constants,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_tvm_refuses_a_reshape_of_a_scalar_computed_from_shape() -> None:
    """TVM's own limit, without Split or sequence: its importer reads a 0-d value computed
    from ``Shape`` as a symbolic scalar, and its Reshape refuses one; an Unsqueeze then a
    Cast (the tvm target's form for a chunk length given at run time) loads and computes
    it."""
    from splitops.onnx.run import RuntimeRunError

    pytest.importorskip("tvm")
    reshaped = _computed_length([helper.make_node("Reshape", ["n", "ones"], ["flat"])])
    unsqueezed = _computed_length(
        [
            helper.make_node("Unsqueeze", ["n", "zeros"], ["long"]),
            helper.make_node("Cast", ["long"], ["flat"], to=TensorProto.INT64),
        ]
    )
    x = np.zeros((2, 5), F32)
    assert splitops.backend.run_model(reshaped, {"x": x})[0].tolist() == [6]
    (refused,) = _run_live("tvm", reshaped, [5])
    assert isinstance(refused, RuntimeRunError)
    assert "Reshape requires the input data to be Tensor" in str(refused)
    (ran,) = _run_live("tvm", unsqueezed, [5])
    assert not isinstance(ran, RuntimeRunError), ran
    assert [np.asarray(v).tolist() for v in ran] == [[6]]


@pytest.mark.parametrize("name", ["sts-computed-chunk-read", "sts-computed-chunk-len"])
@pytest.mark.parametrize("length", [7, "N"])
def test_a_sequence_of_a_chunk_computed_from_shape_runs_on_tvm(
    name: str, length: int | str
) -> None:
    """SplitToSequence whose chunk length the graph computes from ``Shape`` (``ceil(N /
    2)``), read by SequenceAt (and SequenceLength): the tvm target reads each part with a
    Slice, its chunk made ``[1]`` by an Unsqueeze, which TVM runs as the spec says (an error
    at the length 0, whose chunk 0 the spec rejects)."""
    pytest.importorskip("tvm")
    model = next(c for c in cases() if c.name == name).build(length)
    lowered = splitops.lower_model(model, target="tvm")
    assert "SplitToSequence" not in _ops(lowered)
    assert "Unsqueeze" in _ops(lowered)
    lengths = [7] if length == 7 else [7, 4, 0]
    _assert_as_the_spec(model, lengths, _run_live("tvm", lowered, lengths))


def _split_then(kind: str) -> ModelProto:
    case = next(c for c in cases() if c.name == f"split18-{kind}")
    return case.build("N")


@pytest.mark.parametrize("kind", ["uneven-concat", "chained", "concat-add"])
@pytest.mark.parametrize("runtime", ["onnxruntime", "onnx.reference", "openvino", "tract", "tvm"])
def test_portable_runs_split_parts_read_by_other_nodes_on_every_runtime(
    runtime: str, kind: str
) -> None:
    """TVM ran these originals exactly and failed them lowered for ``portable`` when the
    Slices' bounds were ``[1]`` tensors (parts of unknown shape: a Shape of a part, a Concat
    of parts failed); bounds computed as 0-d values keep the parts' shapes, and every
    runtime runs the lowered model exactly. At the length 1, which the spec rejects for the
    uneven split, every runtime fails it lowered: tract and TVM as they failed the original,
    onnxruntime, onnx.reference and OpenVINO in ``portable``'s check, on the last part."""
    if not runtime_named(runtime).is_installed():
        pytest.skip(f"{runtime} is not installed here")
    model = _split_then(kind)
    lowered = splitops.lower_model(model, target="portable")
    assert "Split" not in _ops(lowered)
    lengths = [8, 7, 4, 1, 0]
    _assert_as_the_spec(model, lengths, _run_live(runtime, lowered, lengths))


_PORTABLE_CHECKED = (
    "split13-equal",
    "split18-uneven",
    "split18-zero-last",
    "split18-fewer-listed",
    "split18-zero-size",
)


@pytest.mark.parametrize("runtime", ["onnxruntime", "onnx.reference", "openvino", "tract", "tvm"])
def test_portable_fails_where_the_spec_rejects_a_run_time_length_on_every_runtime(
    runtime: str,
) -> None:
    """``portable``'s check (a ConstantOfShape of the sizes that must not be negative, on the
    last part's path through a Where) loads on all five runtimes, keeps the parts exact,
    and fails every length the spec rejects on an axis known only at run time: equal parts
    that do not divide it, a negative last part (listed or not), constant sizes that do not
    add up to it."""
    from splitops.onnx.run import RuntimeWorkers

    if not runtime_named(runtime).is_installed():
        pytest.skip(f"{runtime} is not installed here")
    found = {c.name: c for c in cases()}
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        for name in _PORTABLE_CHECKED:
            case = found[name]
            model = case.build("N")
            lowered = splitops.lower_model(model, target="portable")
            assert "ConstantOfShape" in _ops(lowered), name
            lengths = list(case.lengths)
            feeds = [{"x": np.arange(2 * n, dtype=F32).reshape(2, n)} for n in lengths]
            got = workers.run_each(runtime_named(runtime), lowered.SerializeToString(), feeds)
            _assert_as_the_spec(model, lengths, list(got))


@pytest.mark.parametrize("runtime", ["onnxruntime", "onnx.reference", "openvino", "tract", "tvm"])
def test_portable_checks_a_chunk_length_computed_at_run_time_where_the_original_did(
    runtime: str,
) -> None:
    """A SplitToSequence whose chunk length comes from Shape, read by SequenceAt or
    SequenceLength: where the runtime ran the original exactly (refusing a chunk of 0),
    ``portable`` does too (its check, a ConstantOfShape of chunk - 1, on the first reader's
    path), and nowhere is it worse than the original."""
    found = runtime_named(runtime)
    if not found.is_installed():
        pytest.skip(f"{runtime} is not installed here")
    rows = run_matrix(
        [found],
        seconds=GUARD_SECONDS,
        targets=("portable",),
        only=lambda name: name.startswith("sts-computed-chunk"),
    )
    assert len(rows) == 4
    order = ["error", "wrong", "accepts", "exact"]
    for row in rows:
        got = row.lowered["portable"]
        assert order.index(got) >= order.index(row.original), (row.model, row.original, got)
        if row.original == "exact":
            assert got == "exact", row.model


@pytest.mark.parametrize(("parts", "listed"), [(4, 4), (4, 2), (3, 3)])
def test_the_openvino_target_fails_where_the_spec_rejects_a_run_time_length(
    parts: int, listed: int
) -> None:
    """On an axis known only at run time, the openvino target's Expand check fails an
    invalid length (5 or 2 into 4 parts, 1 into 3) on OpenVINO, and cuts a valid one
    exactly."""
    if not runtime_named("openvino").is_installed():
        pytest.skip("openvino is not installed here")
    outputs = [f"y{i}" for i in range(listed)]
    graph = helper.make_graph(
        [helper.make_node("Split", ["x"], outputs, axis=1, num_outputs=parts)],
        "g",
        [helper.make_tensor_value_info("x", F, [2, "N"])],
        [helper.make_tensor_value_info(n, F, [2, None]) for n in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    lowered = splitops.lower_model(model, target="openvino")
    lengths = [9, 8, 6, 5, 4, 2, 1, 0]
    _assert_as_the_spec(model, lengths, _run_live("openvino", lowered, lengths))
