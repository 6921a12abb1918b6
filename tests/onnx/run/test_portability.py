"""check_portability: the departures it reports are those the runtimes show when run live,
and lowering fixes them."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import ModelProto, NodeProto, TensorProto, helper
from onnx.reference import ReferenceEvaluator

import splitops
from splitops import SplitError
from splitops.onnx.run._portability import check_portability

pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT


def _model(nodes: list[NodeProto], outputs: list[str]) -> ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["N"])],
        [helper.make_tensor_value_info(o, F, [None]) for o in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def test_onnx_reference_cutting_what_the_spec_rejects_is_found_at_those_lengths() -> None:
    node = helper.make_node("Split", ["x"], list("abcd"), num_outputs=4, name="q")
    model = _model([node], list("abcd"))
    found = check_portability(model)
    (row,) = [d for d in found.departures if d.runtime.startswith("onnx.reference")]
    assert row.behaviour == "accepts"
    assert row.fixed_by_lower
    for length in range(10):
        x = np.arange(length, dtype=np.float32)
        try:
            splitops.run_node(node, [x], opset=18)
        except SplitError:
            ReferenceEvaluator(model).run(None, {"x": x})  # a silent answer
            assert length in row.lengths
        else:
            assert length not in row.lengths


def test_a_node_with_sizes_known_only_at_run_time_is_not_probed() -> None:
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], name="cut")
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", F, ["N"]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info(o, F, [None]) for o in "ab"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    found = check_portability(model)
    assert found.probed == 0
    assert found.not_probed == [("main/cut", "its sizes are known only at run time")]


def test_an_invalid_node_is_left_to_check_model() -> None:
    node = helper.make_node("Split", ["x"], list("abcd"), num_outputs=4, name="q")
    model = _model([node], list("abcd"))
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 5
    assert splitops.check_model(model)
    found = check_portability(model)
    assert (found.probed, found.departures) == (0, [])


def _halves(dims: list[int | str]) -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, dims)],
        [helper.make_tensor_value_info(o, F, [None]) for o in "ab"],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.mark.parametrize("length", [2**28, 2**63 - 1])
def test_a_probe_input_over_the_max_input_elements_limit_is_not_made(length: int) -> None:
    # A 74-byte model declaring x: [2**28] took 3.2 GB; 2**63-1 ended in a defect.
    found = check_portability(_halves([length]))
    assert found.probed == 0
    [(node, why)] = found.not_probed
    assert node == "main/halves"
    assert f"would hold {length} elements, over the max_input_elements limit" in why
    # The limit is a bound, not a guess: at the limit the probe is made, one past it it is not
    # (a small limit, so that the probe made costs nothing on any runtime).
    with splitops.limits(max_input_elements=64):
        assert check_portability(_halves([64])).probed == 1
        assert check_portability(_halves([65])).probed == 0


def test_the_parts_the_probes_make_are_bounded_for_the_whole_model() -> None:
    nodes = [
        helper.make_node("SplitToSequence", ["x"], [f"s{k}"], name=f"rows{k}") for k in range(3)
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [3000])],
        [helper.make_tensor_sequence_value_info(f"s{k}", F, None) for k in range(3)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with splitops.limits(max_model_parts=7000):
        found = check_portability(model)
    assert found.probed == 2
    # (Probes of more than 1,024 parts are not compiled on OpenVINO, tract or TVM: said too.)
    [(node, why)] = [(n, w) for n, w in found.not_probed if "max_model_parts" in w]
    assert node == "main/rows2"
    assert "would make 3000 parts, and 1000 of the max_model_parts limit of 7000" in why


def test_a_node_at_an_opset_past_what_onnx_knows_is_not_probed() -> None:
    model = _halves([4])
    model.opset_import[0].version = 10**12
    found = check_portability(model)
    assert found.probed == 0
    assert "past the newest this onnx knows" in found.not_probed[0][1]
