"""SplitToSequence lowering per target, its forms as rules, run live on the runtimes
installed here (onnxruntime and onnx.reference always; OpenVINO and tract, which CI installs;
TVM where installed), each against splitops' engine on the original (the spec's answer)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from harness.portability import (
    computed_chunk_model,
    erased_sequence_model,
    sequence_model,
    torch_model,
)
from onnx import AttributeProto, ModelProto, TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.onnx.model import ModelEdits, ModelView, SplitSite
from splitops.onnx.rewrite._lower import FORMS, Lower, Plan, lower_model_with_report
from splitops.onnx.rewrite._sequence_loops import INSERTED_INTO_EMPTY
from splitops.onnx.run import RuntimeRunError, RuntimeWorkers
from splitops.onnx.run._runtimes import runtime_named

F = TensorProto.FLOAT


def _ops(model: ModelProto) -> set[str]:
    return {node.op_type for node in model.graph.node}


def _feeds(length: int) -> dict[str, Any]:
    return {"x": np.arange(2 * length, dtype=np.float32).reshape(2, length)}


def _runtime(name: str) -> Any:
    found = runtime_named(name)
    if not found.is_installed():
        pytest.skip(f"{name} is not installed here")
    return found


def _assert_exact(got: list[Any], model: ModelProto, length: int) -> None:
    expected = splitops.backend.run_model(model, _feeds(length))
    assert len(got) == len(expected)
    for value, want in zip(got, expected, strict=True):
        if isinstance(want, list):
            assert [np.asarray(p).tolist() for p in value] == [p.tolist() for p in want]
        else:
            np.testing.assert_array_equal(np.asarray(value), want, strict=True)


@pytest.mark.parametrize(
    ("target", "readers", "form"),
    [
        ("portable", ["at0", "len"], "by-position"),
        ("onnxruntime", ["at0", "len"], "kept-for-onnxruntime"),
        ("openvino", ["at0"], "by-position"),
        ("tract", ["at0", "len"], "refused"),
        ("tvm", ["out"], "refused"),
        ("portable", [], "unread-checked"),
    ],
)
def test_the_first_sequence_form_that_applies_lowers_the_node_and_writes_its_row(
    target: str, readers: list[str], form: str
) -> None:
    """A target's SplitToSequence forms are an ordered list: each form before the one that
    lowers the node says why it does not apply; the row is the applying form's."""
    model = computed_chunk_model(readers)("N")
    view = ModelView.read(model, types=Lower(target).types(model))  # type: ignore[arg-type]
    site = SplitSite.read(next(view.split_nodes()))
    plan = Plan(view, target, ModelEdits(view))  # type: ignore[arg-type]
    forms = FORMS[target].sequence  # type: ignore[index]
    checks = [(f.name, f.check(plan, site)) for f in forms]
    first = next(name for name, why_not in checks if why_not is None)
    assert first == form
    before = checks[: [name for name, _ in checks].index(first)]
    assert before
    assert all(why_not for _, why_not in before), before
    if form == "refused":
        with pytest.raises(splitops.SplitError) as refused:
            lower_model_with_report(model, target=target)  # type: ignore[arg-type]
        assert any(str(why) in str(refused.value) for _, why in before)
        return
    _, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    done = next(f for f in forms if f.name == form)
    row = done.rewrite(Plan(view, target, ModelEdits(view)), site)  # type: ignore[arg-type]
    assert (report[0].outcome, report[0].detail) == (row.outcome, row.detail)


def test_every_target_ends_its_sequence_forms_in_kept_or_refused() -> None:
    for target, forms in FORMS.items():
        last = forms.sequence[-1].name
        assert last == ("kept" if forms.sequences else "refused"), target


# --- OpenVINO -----------------------------------------------------------------------------


@pytest.mark.parametrize("length", [7, 4, 0])
def test_openvino_runs_its_targets_chunks_of_a_length_computed_from_shape(length: int) -> None:
    """OpenVINO's compiler fails the Expand check on the parts' bounds (BroadcastTransition);
    the openvino target checks them by an Expand then a Gather, which it runs: the spec's
    parts where ceil(N / 2) >= 1, a failure at N = 0 (a chunk of 0), as the spec."""
    openvino = _runtime("openvino")
    model = computed_chunk_model(["at0", "at1"])("N")
    lowered, report = lower_model_with_report(model, target="openvino")
    assert "SplitToSequence" not in _ops(lowered)
    assert report[0].outcome == "removed"
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        if length == 0:
            with pytest.raises(splitops.SplitError):
                splitops.backend.run_model(model, _feeds(length))
            with pytest.raises(RuntimeRunError):
                workers.run(openvino, lowered.SerializeToString(), _feeds(length))
            return
        got = workers.run(openvino, lowered.SerializeToString(), _feeds(length))
    _assert_exact(got, model, length)


@pytest.mark.parametrize("target", ["openvino", "tract", "tvm", "no-sequences"])
def test_a_sequence_erase_read_by_concat_is_lowered_with_its_sequence(target: str) -> None:
    """SplitToSequence of chunks of 3 of 7, part 1 erased, the rest concatenated: one Split
    and a Concat of the parts left, for targets without sequences (OpenVINO runs the original
    exactly; its target must not refuse it), run live on onnxruntime."""
    model = erased_sequence_model(7)
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    assert not _ops(lowered) & {"SplitToSequence", "SequenceErase", "ConcatFromSequence"}
    assert report[0].detail == "sequence of 3 part(s) -> Split (constant sizes)"
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(runtime_named("onnxruntime"), lowered.SerializeToString(), _feeds(7))
    _assert_exact(got, model, 7)
    assert np.asarray(got[0]).tolist() == [[0, 1, 2, 6], [7, 8, 9, 13]]


def test_openvino_runs_the_erased_sequence_lowered_as_it_runs_the_original() -> None:
    openvino = _runtime("openvino")
    model = erased_sequence_model(7)
    lowered = splitops.lower_model(model, target="openvino")
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        original = workers.run(openvino, model.SerializeToString(), _feeds(7))
        got = workers.run(openvino, lowered.SerializeToString(), _feeds(7))
    _assert_exact(original, model, 7)
    _assert_exact(got, model, 7)


def test_an_erase_past_the_parts_keeps_the_sequence_with_its_reason() -> None:
    model = erased_sequence_model(7)
    for tensor in model.graph.initializer:
        if tensor.name == "one":
            tensor.CopyFrom(numpy_helper.from_array(np.array(5, np.int64), "one"))
    with pytest.raises(splitops.SplitError, match="reads part 5 of 3"):
        splitops.lower_model(model, target="openvino")
    _, report = lower_model_with_report(model)
    assert report[0].outcome == "kept"


# --- TVM ----------------------------------------------------------------------------------


@pytest.mark.parametrize("split", [3, [2, 5], None])
def test_tvm_keeps_a_sequence_output_it_computes_as_the_spec_says(split: Any) -> None:
    """A sequence that is a graph output, on a static axis: TVM runs it exactly, so its
    target keeps it (it refused it before); a scalar split on a run-time axis, which TVM
    refuses ("dynamic dim size and scalar split"), is still refused."""
    model = sequence_model(["out"], split=split)(7)
    lowered, report = lower_model_with_report(model, target="tvm")
    assert report[0].outcome == "kept"
    assert "TVM computes" in report[0].detail
    if split is not None and not isinstance(split, list):
        with pytest.raises(splitops.SplitError, match="it is an output of main"):
            splitops.lower_model(sequence_model(["out"], split=split)("N"), target="tvm")
    pytest.importorskip("tvm")
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(runtime_named("tvm"), lowered.SerializeToString(), _feeds(7))
    _assert_exact(got, model, 7)


def _on_x(nodes: list[Any], output: Any, constants: dict[str, Any]) -> ModelProto:
    """``nodes`` on ``x`` of shape [2, N], at opset 20 (the dynamo exporter's): no Split, no
    sequence."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, "N"])],
        [output],
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _tvm_limits() -> list[tuple[ModelProto, str]]:
    """What TVM fails in the real exports (``python -m benchmarks.exports``), each in the
    node or two that the export's shortest failing prefix ends with."""
    constant_ints = _on_x(  # the dynamo exporter unoptimized: a Constant of value_ints
        [helper.make_node("Constant", [], ["y"], value_ints=[-1])],
        helper.make_tensor_value_info("y", TensorProto.INT64, [1]),
        {},
    )
    no_dims = numpy_helper.from_array(np.zeros(0, np.int64))
    true = numpy_helper.from_array(np.array([True]))
    scalar_fill = _on_x(  # the TorchScript exporter of torch 2.13: a mask of shape []
        [
            helper.make_node("Constant", [], ["dims"], value=no_dims),
            helper.make_node("ConstantOfShape", ["dims"], ["y"], value=true),
        ],
        helper.make_tensor_value_info("y", TensorProto.BOOL, []),
        {},
    )
    length_reshaped = _on_x(  # the dynamo exporter: a length from Shape reshaped to [1]
        [
            helper.make_node("Shape", ["x"], ["shape"], start=1, end=2),
            helper.make_node("Squeeze", ["shape"], ["n"]),
            helper.make_node("Reshape", ["n", "flat"], ["y"]),
        ],
        helper.make_tensor_value_info("y", TensorProto.INT64, [1]),
        {"flat": [-1]},
    )
    return [
        (constant_ints, "no value in Constant"),
        (scalar_fill, "broadcast_to expects the input shape to have the number of ndim at least"),
        (length_reshaped, "Reshape expects the input data to be a Tensor"),
    ]


def test_tvm_limits_without_split_or_sequences() -> None:
    """TVM's failures on the real exports whose messages name no node, without Split or
    sequences: a Constant given by ``value_ints``, a ConstantOfShape of shape [], a Reshape of
    a length computed from Shape. onnxruntime runs each as the spec says."""
    tvm = _runtime("tvm")
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        onnxruntime = runtime_named("onnxruntime")
        for model, error in _tvm_limits():
            (got,) = workers.run(onnxruntime, model.SerializeToString(), _feeds(7))
            np.testing.assert_array_equal(
                np.asarray(got), splitops.backend.run_model(model, _feeds(7))[0], strict=True
            )
            with pytest.raises(RuntimeRunError, match=re.escape(error)):
                workers.run(tvm, model.SerializeToString(), _feeds(7))


# --- tract --------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [7, 4, 1])
def test_tract_runs_its_targets_chunks_of_a_length_computed_at_run_time(length: int) -> None:
    """Parts read from the front: each a Slice ending at Min(start + chunk, length), which
    tract runs (it fails the same Slice ending at a Where's pick: 'DynSlice')."""
    tract = _runtime("tract")
    model = computed_chunk_model(["at0", "at1"] if length > 1 else ["at0"])("N")
    lowered = splitops.lower_model(model, target="tract")
    assert "Min" in _ops(lowered)
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(tract, lowered.SerializeToString(), _feeds(length))
    _assert_exact(got, model, length)


def test_tract_refuses_the_last_part_of_a_run_time_count_which_it_cannot_compute() -> None:
    """Position -1 of chunks of ceil(N / 2) starts at ``chunk * (count - 1)``, the count a Div
    of two lengths known only at run time, or at ``N - (N mod chunk or chunk)``: tract fails
    both (a Div or a Mod of two symbolic lengths), so the tract target refuses, saying why,
    and the form that other runtimes run fails on tract."""
    tract = _runtime("tract")
    model = computed_chunk_model(["at-1"])("N")
    with pytest.raises(splitops.SplitError, match="which tract cannot compute"):
        splitops.lower_model(model, target="tract")
    portable = splitops.lower_model(model, target="no-sequences")
    with RuntimeWorkers(GUARD_SECONDS) as workers, pytest.raises(RuntimeRunError, match="Div"):
        workers.run(tract, portable.SerializeToString(), _feeds(7))


def test_tract_refuses_a_number_of_parts_known_only_at_run_time_with_its_reason() -> None:
    model = computed_chunk_model(["at0", "len"])("N")
    with pytest.raises(splitops.SplitError, match="tract cannot compute") as refused:
        splitops.lower_model(model, target="tract")
    assert "SequenceLength" in str(refused.value)
    opset11 = sequence_model(["at0"], split=3)("N")
    with pytest.raises(splitops.SplitError, match="Min, which takes int64 from opset 12"):
        splitops.lower_model(opset11, target="tract")


def _lengths_model(nodes: list[Any], output: Any) -> ModelProto:
    """``x`` of shape [2, N], ``chunk = (N + 1) / 2`` (scalars from Shape), then ``nodes``:
    no Split, no sequence."""
    ints = {"c1": 1, "c2": 2, "one": [1], "zero": [0], "axis": [1]}
    prefix = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "c1"], ["n"], axis=0),
        helper.make_node("Add", ["n", "c1"], ["raised"]),
        helper.make_node("Div", ["raised", "c2"], ["chunk"]),
        helper.make_node("Reshape", ["chunk", "one"], ["chunk1"]),
        helper.make_node("Reshape", ["n", "one"], ["length"]),
    ]
    graph = helper.make_graph(
        [*prefix, *nodes],
        "g",
        [helper.make_tensor_value_info("x", F, [2, "N"])],
        [output],
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_tract_limits_without_split_or_sequences() -> None:
    """What tract cannot run, shown without Split or SplitToSequence: a Slice whose end a
    Where picks from run-time scalars ('DynSlice'), and a Div of two lengths known only at
    run time ('Failed analyse'). onnxruntime runs both."""
    tract = _runtime("tract")
    where_end = _lengths_model(
        [
            helper.make_node("Less", ["chunk1", "length"], ["inside"]),
            helper.make_node("Where", ["inside", "chunk1", "length"], ["end"]),
            helper.make_node("Slice", ["x", "zero", "end", "axis"], ["y"]),
        ],
        helper.make_tensor_value_info("y", F, [2, None]),
    )
    count = _lengths_model(
        [
            helper.make_node("Sub", ["chunk1", "one"], ["less"]),
            helper.make_node("Add", ["length", "less"], ["up"]),
            helper.make_node("Div", ["up", "chunk1"], ["y"]),
        ],
        helper.make_tensor_value_info("y", TensorProto.INT64, [1]),
    )
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        for model, error in ((where_end, "DynSlice"), (count, "Div")):
            on_onnxruntime = workers.run(
                runtime_named("onnxruntime"), model.SerializeToString(), _feeds(7)
            )
            assert np.asarray(on_onnxruntime[0]).size > 0
            with pytest.raises(RuntimeRunError, match=error):
                workers.run(tract, model.SerializeToString(), _feeds(7))


def _causal_mask(last: str) -> ModelProto:
    """The causal mask of torch's dynamo exports of GPT-2, Llama and Phi-3, on ``scores`` of
    shape [S, S]: ``key <= query`` over ``Range(S)``, And-ed with a constant True (the
    padding mask of a model given none), then ``last``: ``"mask"`` (the And) or ``"y"``
    (the mask as a bias added to the scores). No Split, no sequence."""
    ints = {"zero": 0, "one": 1, "rows": [1], "columns": [0]}
    constants = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    constants += [
        numpy_helper.from_array(np.array(True), "true"),
        numpy_helper.from_array(np.array(0, np.float32), "keep"),
        numpy_helper.from_array(np.array(-1e9, np.float32), "drop"),
    ]
    nodes = [
        helper.make_node("Shape", ["scores"], ["shape"], start=0, end=1),
        helper.make_node("Squeeze", ["shape"], ["length"]),
        helper.make_node("Range", ["zero", "length", "one"], ["positions"]),
        helper.make_node("Unsqueeze", ["positions", "columns"], ["key"]),
        helper.make_node("Unsqueeze", ["positions", "rows"], ["query"]),
        helper.make_node("LessOrEqual", ["key", "query"], ["causal"]),
        helper.make_node("And", ["true", "causal"], ["mask"], name="and"),
        helper.make_node("Where", ["mask", "keep", "drop"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["y"], name="add"),
    ]
    kind = TensorProto.BOOL if last == "mask" else F
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("scores", F, ["S", "S"])],
        [helper.make_tensor_value_info(last, kind, ["S", "S"])],
        constants,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_tract_shapes_a_mask_anded_with_true_wrongly_without_split() -> None:
    """tract's failure on the dynamo exports of GPT-2, Llama and Phi-3 ('Evaluating … Add'),
    without Split: And(True, key <= query) over a run-time length S gives tract a [2, 1]
    mask (the comparison alone is [S, S]), which the scores of [S, S] then cannot be added
    to. onnxruntime gives the spec's [S, S]."""
    tract = _runtime("tract")
    feeds = {"scores": np.zeros((7, 7), np.float32)}
    causal = np.tril(np.ones((7, 7), bool))
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        onnxruntime = runtime_named("onnxruntime")
        (mask,) = workers.run(onnxruntime, _causal_mask("mask").SerializeToString(), feeds)
        np.testing.assert_array_equal(np.asarray(mask), causal, strict=True)
        workers.run(onnxruntime, _causal_mask("y").SerializeToString(), feeds)
        (on_tract,) = workers.run(tract, _causal_mask("mask").SerializeToString(), feeds)
        assert np.asarray(on_tract).shape != (7, 7)
        with pytest.raises(RuntimeRunError, match=r'Evaluating #\d+ "add" Add'):
            workers.run(tract, _causal_mask("y").SerializeToString(), feeds)


# --- onnx2torch ---------------------------------------------------------------------------


def _onnx2torch_limits() -> list[tuple[str, ModelProto, dict[str, Any], str]]:
    """What onnx2torch fails in the real exports (``python -m benchmarks.exports``), each as
    one node (two for the Conv): the op at the exporter's opset that onnx2torch has no
    converter for, and a Conv whose bias an Identity computes (the TorchScript exporter of
    torch 2.4 writes it so; onnx2torch looks the bias up among the initializers)."""

    def one(op: str, opset: int, kind: int) -> ModelProto:
        shape = {"Shape": [2], "Size": []}.get(op, [2, "N"])
        graph = helper.make_graph(
            [helper.make_node(op, ["x"] * (2 if op == "LessOrEqual" else 1), ["y"])],
            "g",
            [helper.make_tensor_value_info("x", F, [2, "N"])],
            [helper.make_tensor_value_info("y", kind, shape)],
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    x = _feeds(7)
    converters = [
        ("Shape", 19, TensorProto.INT64),  # the dynamo exporters of torch 2.9 and 2.13
        ("Identity", 19, F),
        ("Gelu", 20, F),
        ("LessOrEqual", 16, TensorProto.BOOL),  # the TorchScript exporter of torch 2.4
        ("Size", 13, TensorProto.INT64),
    ]
    found = [
        (op, one(op, opset, kind), x, f"operation_type='{op}', version={opset}")
        for op, opset, kind in converters
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Identity", ["stored"], ["bias"]),
            helper.make_node("Conv", ["x", "w", "bias"], ["y"], kernel_shape=[1]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, [1, 2, "N"])],
        [helper.make_tensor_value_info("y", F, [1, 2, "N"])],
        [
            numpy_helper.from_array(np.ones((2, 2, 1), np.float32), "w"),
            numpy_helper.from_array(np.ones(2, np.float32), "stored"),
        ],
    )
    conv = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    found.append(("Conv", conv, {"x": np.ones((1, 2, 7), np.float32)}, "'bias'"))
    return found


@pytest.mark.parametrize("op", ["Shape", "Identity", "Gelu", "LessOrEqual", "Size", "Conv"])
def test_onnx2torch_limits_without_split_or_sequences(op: str) -> None:
    """onnx2torch's failures on the real exports, without Split or sequences; onnxruntime
    runs each as the spec says."""
    onnx2torch = _runtime("onnx2torch")
    (model, feeds, error) = next(case[1:] for case in _onnx2torch_limits() if case[0] == op)
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        got = workers.run(runtime_named("onnxruntime"), model.SerializeToString(), feeds)
        want = splitops.backend.run_model(model, feeds)
        np.testing.assert_array_equal(np.asarray(got[0]), want[0], strict=True)
        with pytest.raises(RuntimeRunError, match=re.escape(error)):
            workers.run(onnx2torch, model.SerializeToString(), feeds)


# --- torch's Loop of SequenceInsert -------------------------------------------------------


def _tensor_split_by_indices() -> ModelProto:
    """torch.tensor_split(x, [1, 4], dim=1) by the TorchScript exporter, on [2, N]: a Loop
    of SequenceInsert of Slices."""
    pytest.importorskip("torch")
    return torch_model("tensor_split_indices")("N")


@pytest.mark.parametrize("runtime", ["onnxruntime", "onnx.reference", "openvino", "tract"])
def test_torchs_loop_of_sequence_inserts_becomes_slices_that_run_exactly(runtime: str) -> None:
    """Targets without sequences refused torch's tensor_split by indices; with constant
    indices the Loop unrolls into Slices of constant bounds, which each runtime runs as the
    spec says (the spec's answer: splitops' engine on the original)."""
    found = _runtime(runtime)
    model = _tensor_split_by_indices()
    assert {"Loop", "SequenceInsert"} <= _ops(model)
    target = "no-sequences" if found.target == "onnxruntime" else found.target
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    assert not _ops(lowered) & {"Loop", "SequenceEmpty", "SequenceInsert", "SequenceAt"}
    (row,) = report
    assert (row.op, row.outcome) == ("Loop", "rewritten")
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        for length in (7, 5, 4):
            got = workers.run(found, lowered.SerializeToString(), _feeds(length))
            _assert_exact(got, model, length)


@pytest.mark.parametrize("target", ["portable", "no-sequences", "tract"])
def test_a_loop_inserting_what_is_not_a_slice_is_unrolled_all_the_same(target: str) -> None:
    """torch's rule for tensor_split takes a Loop of Slices of constant bounds only; a Loop of
    a constant trip count appending anything else is unrolled first, and what it leaves
    (SequenceInserts into a SequenceEmpty) gives each reader its part."""
    model = _tensor_split_by_indices()
    (loop,) = [n for n in model.graph.node if n.op_type == "Loop"]
    (insert,) = [n for n in loop.attribute[0].g.node if n.op_type == "SequenceInsert"]
    insert.input[1] = "x"
    lowered, report = lower_model_with_report(model, target=target)  # type: ignore[arg-type]
    assert not {op for op in _ops(lowered) if "Sequence" in op or op == "Loop"}
    assert report[0].outcome == "unrolled"
    want = splitops.backend.run_model(model, _feeds(7))
    got = splitops.backend.run_model(lowered, _feeds(7), engine="onnxruntime")
    for value, wanted in zip(got, want, strict=True):
        np.testing.assert_array_equal(value, wanted)


def test_an_unread_sequence_of_chunks_of_one_of_unknown_rank_keeps_its_checks() -> None:
    """No split, a rank known only at run time: the axis is checked against the rank at run
    time (onnxruntime and onnx.reference fail a node nobody reads), with no sequence left."""
    graph = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x"], ["seq"], axis=1, name="cut"),
            helper.make_node("Identity", ["x"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", F, None)],
        [helper.make_tensor_value_info("y", F, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    lowered, report = lower_model_with_report(model, target="no-sequences")
    assert report[0].detail == "nothing reads its sequence -> run-time checks of its split"
    assert "SplitToSequence" not in _ops(lowered)
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        onnxruntime = runtime_named("onnxruntime")
        with pytest.raises(RuntimeRunError):
            workers.run(onnxruntime, lowered.SerializeToString(), {"x": np.zeros(3, np.float32)})
        got = workers.run(onnxruntime, lowered.SerializeToString(), _feeds(2))
    np.testing.assert_array_equal(np.asarray(got[0]), _feeds(2)["x"])


def _join_in_a_branch_model(sizes: list[int], axis: int, new_axis: int) -> ModelProto:
    """An If whose then-branch joins the parts of ``x`` [2, 6] cut by ``sizes`` on axis 1 by
    ConcatFromSequence(``axis``, ``new_axis``); its else-branch passes ``x`` on."""
    then = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=1),
            helper.make_node(
                "ConcatFromSequence", ["s"], ["t"], "join", axis=axis, new_axis=new_axis
            ),
        ],
        "then", [], [helper.make_tensor_value_info("t", F, None)],
    )  # fmt: skip
    passed = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"])],
        "else", [], [helper.make_tensor_value_info("e", F, None)],
    )  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=passed)],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 6]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array(sizes, np.int64), "sizes")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(("axis", "new_axis"), [(1, 1), (0, 0)])
def test_parts_of_unequal_lengths_joined_on_another_axis_are_kept_where_the_model_fails(
    axis: int, new_axis: int
) -> None:
    """Joining parts of 1, 2 and 3 along another axis fails at run time, in a branch the
    model may never take: the sequence is kept, so the lowered model loads and runs on
    onnxruntime as the original does (a Concat of those parts fails to load there: "Can't
    merge shape info"), and a target without sequences refuses it, saying why."""
    ort = pytest.importorskip("onnxruntime")
    model = _join_in_a_branch_model([1, 2, 3], axis, new_axis)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    for target in ("portable", "onnxruntime"):
        lowered = splitops.lower_model(model, target=target)
        session = ort.InferenceSession(lowered.SerializeToString())
        (got,) = session.run(None, {"x": x, "c": np.array(False)})
        np.testing.assert_array_equal(got, x, strict=True)
    with pytest.raises(
        splitops.SplitError, match=r"joins parts of unequal lengths \(\[1, 2, 3\]\)"
    ):
        splitops.lower_model(model, target="openvino")
    equal = _join_in_a_branch_model([3, 3], axis, new_axis)
    assert "SplitToSequence" not in str(splitops.lower_model(equal, target="openvino").graph)


def _loop_stacking_model(
    *, centered: bool, sizes: list[int] | None = None, opset: int = 13
) -> ModelProto:
    """``x`` [2, N] cut on axis 1 by SplitToSequence (chunks of the input ``k``, or the
    constant ``sizes``), a Loop of its length whose body reads the part at its iteration
    number and stacks, as its scan output, the part less its mean (``centered``: as long as
    the part, as torch's opset-11 exporter writes ``[p - p.mean(1, True) for p in ...]``) or
    the mean alone (one shape whatever the part)."""
    mean = helper.make_node("ReduceMean", ["p"], ["m"], axes=[1], keepdims=1)
    body_nodes = [helper.make_node("SequenceAt", ["seq", "i"], ["p"]), mean]
    body_nodes += [helper.make_node("Sub", ["p", "m"], ["v"])] if centered else []
    body_nodes += [helper.make_node("Identity", ["cond"], ["go"])]
    body = helper.make_graph(
        body_nodes,
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("go", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v" if centered else "m", F, None)],
    )  # fmt: skip
    split_input = "k" if sizes is None else "sizes"
    nodes = [
        helper.make_node("SplitToSequence", ["x", split_input], ["seq"], axis=1),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
        helper.make_node("Loop", ["n", "true"], ["stacked"], body=body),
    ]
    inputs = [helper.make_tensor_value_info("x", F, [2, "N"])]
    constants = [numpy_helper.from_array(np.array(True), "true")]
    if sizes is None:
        inputs.append(helper.make_tensor_value_info("k", TensorProto.INT64, []))
    else:
        constants.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_tensor_value_info("stacked", F, None)], constants
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _stacked(x: np.ndarray, chunk: int, *, centered: bool) -> np.ndarray:
    parts = np.split(x, range(chunk, x.shape[1], chunk), axis=1)
    means = [p.mean(axis=1, keepdims=True) for p in parts]
    return np.stack([p - m for p, m in zip(parts, means, strict=True)] if centered else means)


@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino"])
def test_a_loop_stacking_parts_of_a_run_time_chunk_fails_where_they_are_unequal(
    runtime: str,
) -> None:
    """A scan output stacks values of one shape: where the parts it stacks differ in length
    (7 by 3: 3, 3, 1), onnxruntime fails the original ("Inconsistent shape in loop output"),
    and the lowered model fails in its check, on onnxruntime and on OpenVINO alike (OpenVINO
    stacked them wrong, without a word); where they are equal it gives the stacked parts."""
    found = _runtime(runtime)
    model = _loop_stacking_model(centered=True)
    target = "portable" if runtime == "onnxruntime" else runtime
    lowered = splitops.lower_model(model, target=target)
    assert "SplitToSequence" not in _ops(lowered)
    k = np.array(3, np.int64)
    equal = np.arange(12, dtype=np.float32).reshape(2, 6)
    unequal = np.arange(14, dtype=np.float32).reshape(2, 7)
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        (got,) = workers.run(found, lowered.SerializeToString(), {"x": equal, "k": k})
        np.testing.assert_allclose(got, _stacked(equal, 3, centered=True), atol=1e-6)
        # onnxruntime names the failing check's node; OpenVINO its Broadcast (the Expand).
        failed = "parts_must_be_of_one_length" if runtime == "onnxruntime" else "Broadcast"
        with pytest.raises(RuntimeRunError, match=failed):
            workers.run(found, lowered.SerializeToString(), {"x": unequal, "k": k})
        if runtime == "onnxruntime":
            with pytest.raises(RuntimeRunError, match="Inconsistent shape in loop output"):
                workers.run(found, model.SerializeToString(), {"x": unequal, "k": k})


def test_a_loop_stacking_what_keeps_one_shape_needs_no_equal_parts() -> None:
    """The means of parts of 3, 3 and 1 have one shape: nothing is checked, and OpenVINO
    gives them."""
    openvino = _runtime("openvino")
    model = _loop_stacking_model(centered=False)
    lowered = splitops.lower_model(model, target="openvino")
    assert not any("parts_must_be_of_one_length" in node.name for node in lowered.graph.node)
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    with RuntimeWorkers(GUARD_SECONDS) as workers:
        (got,) = workers.run(openvino, lowered.SerializeToString(), {"x": x, "k": np.array(3)})
    np.testing.assert_allclose(got, _stacked(x, 3, centered=False), rtol=1e-6)


def test_a_loop_stacking_parts_of_unequal_constant_sizes_is_refused_saying_why() -> None:
    """Sizes 2, 4, 6 known when lowering: no form can stack them, so the targets without
    sequences refuse, saying why (tract's too, which unrolls no such Loop), and ``portable``
    keeps the sequence, which fails on onnxruntime as the original does."""
    ort = pytest.importorskip("onnxruntime")
    model = _loop_stacking_model(centered=True, sizes=[2, 4, 6])
    for target in ("openvino", "no-sequences"):
        with pytest.raises(splitops.SplitError, match=r"of unequal lengths \[2, 4, 6\]"):
            splitops.lower_model(model, target=target)
    with pytest.raises(splitops.SplitError, match="stacks parts of unequal lengths"):
        splitops.lower_model(model, target="tract")
    lowered = splitops.lower_model(model, target="portable")
    assert "SplitToSequence" in _ops(lowered)
    session = ort.InferenceSession(lowered.SerializeToString())
    x = np.arange(24, dtype=np.float32).reshape(2, 12)
    with pytest.raises(Exception, match="Inconsistent shape in loop output"):
        session.run(None, {"x": x})


def _inserts_joined_in_a_function() -> ModelProto:
    """A model-local function that inserts ``x`` twice into a SequenceEmpty and joins the
    sequence by ConcatFromSequence, whose axis is the call's attribute ``join``; the main
    graph calls it with ``join=1``."""
    body = [
        helper.make_node("SequenceEmpty", [], ["empty"]),
        helper.make_node("SequenceInsert", ["empty", "x"], ["one"]),
        helper.make_node("SequenceInsert", ["one", "x"], ["two"]),
        helper.make_node("ConcatFromSequence", ["two"], ["y"]),
    ]
    body[-1].attribute.append(
        helper.make_attribute_ref("axis", AttributeProto.INT, ref_attr_name="join")
    )
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    function = helper.make_function("local", "Join", ["x"], ["y"], body, opsets[:1], ["join"])
    graph = helper.make_graph(
        [helper.make_node("Join", ["x"], ["y"], domain="local", join=1)],
        "g",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 6])],
    )
    return helper.make_model(graph, opset_imports=opsets, functions=[function])


def test_inserts_joined_on_an_axis_the_function_call_gives_keep_their_sequence() -> None:
    """ConcatFromSequence's axis in a function body may come from the call: known only at
    each call, so the join is not written as a Concat of the parts (of axis 0, the value a
    linked attribute stores), and the lowered model joins on the call's axis."""
    model = _inserts_joined_in_a_function()
    view = ModelView.read(model)
    (empty,) = [node for node in view.scopes[1].nodes if node.op_type == "SequenceEmpty"]
    why = INSERTED_INTO_EMPTY.check(Plan(view, "portable", ModelEdits(view)), empty)
    reason = "takes its axis from its function's call, known only at each call"
    assert why is not None
    assert why.text == f"ConcatFromSequence 'y' {reason}"
    lowered = splitops.lower_model(model, target="portable")
    assert "ConcatFromSequence" in {node.op_type for node in lowered.functions[0].node}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (want,) = splitops.backend.run_model(model, {"x": x})
    (got,) = splitops.backend.run_model(lowered, {"x": x}, engine="onnxruntime")
    assert want.shape == (2, 6)
    np.testing.assert_array_equal(got, want, strict=True)
