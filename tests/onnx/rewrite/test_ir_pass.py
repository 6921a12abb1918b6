"""LowerSplits, the lowering as an onnx-ir pass: the model lower_model gives, in onnx-ir's
pipelines (a PassManager, onnxscript's optimizer, torch.onnx's exporter), ``modified`` told
truly, the weights kept as the given model's own tensors, and a target checked when the pass
is built. (That onnx-ir stays optional is the face's test: tests/onnx/test_onnx_face.py.)"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

import splitops.onnx
from splitops import SplitError, backend, lower_model
from splitops.onnx.rewrite._lower import TARGETS

ir = pytest.importorskip("onnx_ir")
ort = pytest.importorskip("onnxruntime")
LowerSplits = splitops.onnx.LowerSplits

F = TensorProto.FLOAT

# torch.export's own use of a pytree API it deprecates.
DYNAMO_EXPORTER = pytest.mark.filterwarnings(
    "ignore:`isinstance\\(treespec, LeafSpec\\)`:FutureWarning"
)


def make(
    nodes: Sequence[NodeProto],
    x: Sequence[int],
    outputs: Sequence[str],
    initializers: dict[str, Any] | None = None,
) -> ModelProto:
    """A model at opset 18 of ``nodes`` reading a float ``x`` of those dims; its outputs
    have the rank of ``x``."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info("x", F, x)],
        [helper.make_tensor_value_info(name, F, [None] * len(x)) for name in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def uneven_split(*, dangling: bool = False) -> ModelProto:
    """Split-18 of a 2 x 7 input into ``num_outputs=3`` on its static axis: 3, 3 and 1; with
    a node whose output nothing reads where ``dangling``."""
    nodes = [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)]
    if dangling:
        nodes.append(helper.make_node("Neg", ["x"], ["unused"]))
    return make(nodes, [2, 7], ["a", "b", "c"])


def split_sizes_of(model: ModelProto) -> list[int]:
    """The sizes of the model's first Split, an initializer."""
    node = next(node for node in model.graph.node if node.op_type == "Split")
    (sizes,) = [t for t in model.graph.initializer if t.name == node.input[1]]
    return [int(size) for size in numpy_helper.to_array(sizes)]


def ops(model: ModelProto) -> list[str]:
    return [node.op_type for node in model.graph.node]


def run_on_onnxruntime(
    model: ModelProto | Path, feeds: np.ndarray | dict[str, np.ndarray]
) -> list[Any]:
    """The outputs of ``model`` (or the file) on onnxruntime, fed an array for its one input
    or arrays by input name."""
    source = model.SerializeToString() if isinstance(model, ModelProto) else str(model)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    if not isinstance(feeds, dict):
        feeds = {session.get_inputs()[0].name: feeds}
    return list(session.run(None, feeds))


def assert_same_arrays(actual: Sequence[Any], expected: Sequence[Any]) -> None:
    assert len(actual) == len(expected)
    for got, wanted in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(got, wanted, strict=True)


# --- The model lower_model gives ------------------------------------------------------------


def test_the_pass_gives_the_model_lower_model_gives() -> None:
    original = uneven_split()
    result = LowerSplits()(ir.from_proto(original))
    assert result.modified
    lowered = ir.to_proto(result.model)
    expected = lower_model(original)
    assert ops(lowered) == ops(expected) == ["Split"]
    assert split_sizes_of(lowered) == split_sizes_of(expected) == [3, 3, 1]
    x = np.arange(14, dtype=np.float32).reshape(2, 7)
    spec = backend.run_model(original, [x])
    assert [part.shape for part in spec] == [(2, 3), (2, 3), (2, 1)]
    assert_same_arrays(run_on_onnxruntime(lowered, x), spec)
    assert_same_arrays(run_on_onnxruntime(expected, x), spec)


def test_the_pass_leaves_the_given_model_as_it_was() -> None:
    model = ir.from_proto(uneven_split())
    result = LowerSplits()(model)
    assert result.model is not model
    (node,) = model.graph
    assert len(node.inputs) == 1
    assert node.attributes["num_outputs"].value == 3


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_lowers_as_lower_model_does_for_it(target: str) -> None:
    lower = LowerSplits(target)
    assert repr(lower) == f"LowerSplits(target={target!r})"
    original = uneven_split()
    lowered = ir.to_proto(lower(ir.from_proto(original)).model)
    assert ops(lowered) == ops(lower_model(original, target=target))


def test_a_target_outside_the_targets_is_a_split_error_when_the_pass_is_built() -> None:
    with pytest.raises(SplitError, match="must be one of") as raised:
        LowerSplits("no-such-runtime")
    assert str(raised.value).endswith("'no-such-runtime' was given.")


def test_an_invalid_node_is_the_split_error_of_lower_model() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=4, name="quarters")
    model = ir.from_proto(make([node], [5], ["a", "b"]))
    with pytest.raises(SplitError, match="quarters"):
        LowerSplits()(model)


# --- modified, told truly -----------------------------------------------------------------

_EXPLICIT_SIZES = make(
    [helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0)], [7], ["a", "b"], {"s": [3, 4]}
)
_NO_SPLIT = make([helper.make_node("Neg", ["x"], ["y"])], [7], ["y"])


def _kept_sequence() -> ModelProto:
    """A SplitToSequence whose sequence is the model's output: kept, in a form it has."""
    node = helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=0)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [7])],
        [helper.make_tensor_sequence_value_info("seq", F, None)],
        [numpy_helper.from_array(np.array([3, 4]), "s")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize(
    "model",
    [_NO_SPLIT, _EXPLICIT_SIZES, _kept_sequence()],
    ids=["no split", "explicit sizes", "a sequence kept as it is"],
)
def test_a_model_the_lowering_does_not_change_is_not_modified(model: ModelProto) -> None:
    given = ir.from_proto(model)
    result = LowerSplits()(given)
    assert not result.modified
    assert result.model is not given
    assert ir.to_proto(result.model) == ir.to_proto(given)


def test_a_lowered_model_is_not_modified_again() -> None:
    once = LowerSplits()(ir.from_proto(uneven_split())).model
    assert not LowerSplits()(once).modified


# --- In onnx-ir's pipelines -------------------------------------------------------------------


def test_the_pass_composes_in_a_pass_manager() -> None:
    """With onnx-ir's own passes, as onnxscript's optimizer chains them: the manager runs a
    second step, in which nothing is modified, and stops; the given model is left as it was,
    the first pass being functional."""
    from onnx_ir.passes.common import RemoveUnusedNodesPass, TopologicalSortPass

    manager = ir.passes.PassManager(
        [LowerSplits(), RemoveUnusedNodesPass(), TopologicalSortPass()], steps=3
    )
    assert not manager.in_place
    assert not manager.changes_input
    given = ir.from_proto(uneven_split(dangling=True))
    result = manager(given)
    assert result.modified
    lowered = ir.to_proto(result.model)
    assert ops(lowered) == ["Split"]
    assert split_sizes_of(lowered) == [3, 3, 1]
    assert [node.op_type for node in given.graph] == ["Split", "Neg"]


def test_an_invalid_node_in_a_pass_manager_is_a_pass_error_from_the_split_error() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=4, name="quarters")
    manager = ir.passes.PassManager([LowerSplits()])
    with pytest.raises(ir.passes.PassError) as raised:
        manager(ir.from_proto(make([node], [5], ["a", "b"])))
    cause = raised.value
    while cause.__cause__ is not None:
        cause = cause.__cause__
    assert isinstance(cause, SplitError)


# --- The weights stay the given model's -----------------------------------------------------


def _weighted_split(explicit_sizes: Sequence[int] = ()) -> tuple[ModelProto, np.ndarray]:
    """Split-18 of ``x + w``, 2048 items into 3 parts (683, 683, 682), ``w`` a weight; with
    ``explicit_sizes``, a second Split of ``x + w`` by those sizes, held in ``s``."""
    weights = np.linspace(-1, 1, 2048, dtype=np.float32)
    nodes = [
        helper.make_node("Add", ["x", "w"], ["y"]),
        helper.make_node("Split", ["y"], ["a", "b", "c"], axis=0, num_outputs=3),
    ]
    outputs, initializers = ["a", "b", "c"], {"w": weights}
    if explicit_sizes:
        nodes.append(helper.make_node("Split", ["y", "s"], ["d", "e"], axis=0))
        outputs += ["d", "e"]
        initializers["s"] = np.array(explicit_sizes, dtype=np.int64)
    return make(nodes, [2048], outputs, initializers), weights


def test_the_lowered_model_holds_the_given_models_weights() -> None:
    original, _ = _weighted_split()
    given = ir.from_proto(original)
    result = LowerSplits()(given)
    weight = result.model.graph.initializers["w"].const_value
    assert weight is given.graph.initializers["w"].const_value
    lowered = ir.to_proto(result.model)
    assert split_sizes_of(lowered) == [683, 683, 682]
    x = np.arange(2048, dtype=np.float32)
    assert_same_arrays(run_on_onnxruntime(lowered, x), backend.run_model(original, [x]))


def test_the_weights_of_if_branches_are_the_given_models() -> None:
    """Each branch holds its own weight and an uneven Split of 2048 items."""

    def branch(name: str, weights: np.ndarray) -> Any:
        nodes = [
            helper.make_node("Mul", ["x", f"w_{name}"], [f"m_{name}"]),
            helper.make_node(
                "Split", [f"m_{name}"], [f"{name}{i}" for i in range(3)], axis=0, num_outputs=3
            ),
            helper.make_node("Concat", [f"{name}2", f"{name}0"], [f"y_{name}"], axis=0),
        ]
        outputs = [helper.make_tensor_value_info(f"y_{name}", F, [None])]
        return helper.make_graph(
            nodes, name, [], outputs, [numpy_helper.from_array(weights, f"w_{name}")]
        )

    weights = np.linspace(-1, 1, 2048, dtype=np.float32)
    node = helper.make_node(
        "If",
        ["cond"],
        ["y"],
        then_branch=branch("then", weights),
        else_branch=branch("else", -weights),
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", F, [2048]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        [helper.make_tensor_value_info("y", F, [None])],
    )
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    given = ir.from_proto(original)
    result = LowerSplits()(given)
    (lowered_if,), (given_if,) = list(result.model.graph), list(given.graph)
    for name in ("then", "else"):
        body, given_body = (
            node.attributes[f"{name}_branch"].value for node in (lowered_if, given_if)
        )
        weight = f"w_{name}"
        assert body.initializers[weight].const_value is given_body.initializers[weight].const_value
        assert len(body.node(1).inputs) == 2  # the Split, given its sizes
    x = np.arange(2048, dtype=np.float32)
    for cond in (np.array(True), np.array(False)):
        outputs = run_on_onnxruntime(ir.to_proto(result.model), {"x": x, "cond": cond})
        assert_same_arrays(outputs, backend.run_model(original, [x, cond]))


def test_a_model_read_with_its_external_data_keeps_it_where_it_lies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnx_ir.load leaves every tensor in its file here (a threshold of 0 bytes), named
    relative to the model's folder: the lowered model reads the weight from there, wherever
    the process runs, and the lowering saw the small ones, a Split's sizes among them, as
    lower_model sees them in memory."""
    original, weights = _weighted_split(explicit_sizes=[1000, 1048])
    path = tmp_path / "given" / "model.onnx"
    path.parent.mkdir()
    ir.save(ir.from_proto(original), path, external_data="model.data", size_threshold_bytes=0)
    monkeypatch.chdir(tmp_path)
    given = ir.load(path)
    assert isinstance(given.graph.initializers["s"].const_value, ir.ExternalTensor)
    result = LowerSplits()(given)
    weight = result.model.graph.initializers["w"].const_value
    assert weight is given.graph.initializers["w"].const_value
    np.testing.assert_array_equal(weight.numpy(), weights)
    assert ops(ir.to_proto(result.model)) == ops(lower_model(original))
    saved = tmp_path / "lowered" / "model.onnx"
    saved.parent.mkdir()
    ir.save(result.model, saved, external_data="model.data")
    x = np.arange(2048, dtype=np.float32)
    assert_same_arrays(run_on_onnxruntime(saved, x), backend.run_model(original, [x]))


def test_the_pass_reads_no_weight(tmp_path: Path) -> None:
    """The weight's file is gone while the pass runs: the pass reads only the small
    tensors (here inline), and the lowered model reads the weight from its file once it is
    back."""
    original, _ = _weighted_split(explicit_sizes=[1000, 1048])
    path = tmp_path / "given" / "model.onnx"
    path.parent.mkdir()
    ir.save(ir.from_proto(original), path, external_data="model.data", size_threshold_bytes=4096)
    given = ir.load(path)
    assert isinstance(given.graph.initializers["w"].const_value, ir.ExternalTensor)
    assert not isinstance(given.graph.initializers["s"].const_value, ir.ExternalTensor)
    (tmp_path / "given" / "model.data").rename(tmp_path / "away.data")
    result = LowerSplits()(given)
    (tmp_path / "away.data").rename(tmp_path / "given" / "model.data")
    assert result.modified
    saved = tmp_path / "lowered" / "model.onnx"
    saved.parent.mkdir()
    ir.save(result.model, saved, external_data="model.data")
    x = np.arange(2048, dtype=np.float32)
    assert_same_arrays(run_on_onnxruntime(saved, x), backend.run_model(original, [x]))


# --- torch.onnx: export, lower, optimize ------------------------------------------------------


def _export(module: Any, x: Any, batch: Any) -> Any:
    """The ONNXProgram of the dynamo exporter, unoptimized: torch.chunk becomes a
    SplitToSequence read by SequenceAt."""
    pytest.importorskip("onnxscript")
    torch = pytest.importorskip("torch")
    return torch.onnx.export(
        module.eval(),
        (x,),
        dynamo=True,
        input_names=["x"],
        dynamic_shapes={"x": {0: batch}},
        optimize=False,
        verbose=False,
    )


def _lower_and_optimize(program: Any) -> ModelProto:
    """What a torch.onnx user writes: the pass on the program's model, then torch's own
    optimizer (onnxscript's)."""
    assert "SplitToSequence" in [node.op_type for node in program.model.graph]
    result = LowerSplits()(program.model)
    assert result.modified
    program.model = result.model
    program.optimize()
    model: ModelProto = program.model_proto
    assert {"SplitToSequence", "SequenceAt"}.isdisjoint(ops(model))
    return model


@DYNAMO_EXPORTER
def test_torch_chunk_uneven_on_a_static_axis_exported_lowered_and_optimized() -> None:
    """torch.chunk of 40 columns into 3 (14, 14, 12) after a Linear of 1600 weights, with a
    dynamic batch: one Split of explicit sizes, and onnxruntime gives torch's outputs."""
    torch = pytest.importorskip("torch")

    class ChunkedProjection(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.project = torch.nn.Linear(40, 40)

        def forward(self, x: Any) -> Any:
            a, b, c = torch.chunk(self.project(x), 3, dim=1)
            return a * 2, b, c

    torch.manual_seed(0)
    module = ChunkedProjection()
    model = _lower_and_optimize(_export(module, torch.randn(2, 40), torch.export.Dim("batch")))
    assert ops(model).count("Split") == 1
    assert split_sizes_of(model) == [14, 14, 12]
    for batch in (2, 5, 1):
        x = torch.randn(batch, 40)
        with torch.no_grad():
            expected = [t.numpy() for t in module(x)]
        actual = run_on_onnxruntime(model, x.numpy())
        assert [a.shape for a in actual] == [(batch, 14), (batch, 14), (batch, 12)]
        for got, wanted in zip(actual, expected, strict=True):
            np.testing.assert_allclose(got, wanted, rtol=1e-5, atol=1e-6)


@DYNAMO_EXPORTER
def test_torch_chunk_along_the_dynamic_batch_lowered_then_optimized() -> None:
    """torch.chunk of the dynamic batch into 2: a chunk length computed at run time, each
    part a Slice. onnxscript 0.7.2's constant folding fails on the SplitToSequence itself
    (the reason tests/onnx/run/test_torch_export.py exports it unoptimized); lowered first, the
    model optimizes, and onnxruntime gives torch's outputs at even and uneven batches."""
    torch = pytest.importorskip("torch")

    class ChunkRows(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            a, b = torch.chunk(x, 2, dim=0)
            return a * 2, b

    module = ChunkRows()
    model = _lower_and_optimize(_export(module, torch.randn(6, 3), torch.export.Dim.DYNAMIC))
    for batch in (6, 5, 2):
        x = torch.randn(batch, 3)
        expected = [t.numpy() for t in module(x)]
        assert_same_arrays(run_on_onnxruntime(model, x.numpy()), expected)
