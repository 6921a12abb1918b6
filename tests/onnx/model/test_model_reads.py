"""How often each tool reads a whole model: once for what one reading can tell, never once
per check. Counted, not timed: a model of 65,536 Split nodes in nested Ifs took seconds per
reading, so a reading more is a regression whatever the machine."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper
from tests.malformed_models import _if_tree

import splitops
from splitops import backend
from splitops.onnx.model import _io, _view
from splitops.onnx.model._view import ModelView
from splitops.onnx.rewrite import _contract, _rewrite
from splitops.onnx.run import _portability

#: Ifs nested 3 deep, both branches of each holding the If below: 8 Splits, 15 graphs.
DEPTH = 3


def _tree() -> ModelProto:
    """:func:`_if_tree` whose output has a shape, as onnx's full check wants."""
    model = _if_tree(DEPTH)
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 2
    return model


class _Calls:
    """``calls(owner, name)`` counts the calls of ``owner.name`` from then on, by name, in
    ``calls.seen``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: Counter[str] = Counter()
        self._monkeypatch = monkeypatch

    def __call__(self, owner: Any, name: str) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.seen[name] += 1
            return original(*args, **kwargs)

        self._monkeypatch.setattr(owner, name, counted)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> _Calls:
    return _Calls(monkeypatch)


def _saved(tmp_path: Path, model: ModelProto) -> Path:
    path = tmp_path / "tree.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_load_model_reads_no_field_one_by_one_where_protobuf_tells_the_text_is_sound(
    tmp_path: Path, calls: _Calls
) -> None:
    calls(_io, "_field_problem")
    calls(_io, "iter_tensors")
    model = splitops.onnx.load_model(_saved(tmp_path, _tree()))
    assert len(model.graph.node) == 1
    assert calls.seen == Counter()


def test_load_model_reads_the_fields_one_by_one_where_a_field_is_unknown(
    tmp_path: Path, calls: _Calls
) -> None:
    # An unknown field on the node (number 99, the varint 1): no group, so the model loads.
    node = helper.make_node("Neg", ["x"], ["y"])
    odd = onnx.NodeProto.FromString(node.SerializeToString() + bytes([0x98, 0x06, 0x01]))
    x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "xy")
    model = helper.make_model(helper.make_graph([odd], "g", [x], [y]))
    calls(_io, "_field_problem")
    splitops.onnx.load_model(_saved(tmp_path, model))
    assert calls.seen["_field_problem"] > 0


def test_load_model_tells_text_that_is_not_utf8_as_the_field_by_field_check_does(
    tmp_path: Path,
) -> None:
    model = _tree()
    data = model.SerializeToString().replace(b"halves", b"halv\xffs")
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    refused = r"\.name is not UTF-8 text \(b'halv\\xffs'\)"
    with pytest.raises(splitops.ModelLoadError, match=refused):
        splitops.onnx.load_model(path)


def test_lowering_reads_one_view_and_runs_onnx_full_check_once(calls: _Calls) -> None:
    # Two views: inference's, over onnx's pass (whose overlays add to its scopes), and the
    # lowering's, over the copy it edits; neither a second view of either.
    calls(_view.ModelView, "read")
    calls(_contract, "check_fully")
    calls(_rewrite, "check_rewrite")
    splitops.lower_model(_tree())
    assert calls.seen == Counter({"read": 2, "check_fully": 1, "check_rewrite": 1})


def test_the_rewrite_contract_reads_no_view_of_the_rewritten_model(calls: _Calls) -> None:
    model = _tree()
    before = ModelView.read(model)
    calls(_view.ModelView, "read")
    _contract.check_rewrite(model, model, "lowering", before=before)
    assert calls.seen == Counter()


def test_running_a_model_reads_no_view(calls: _Calls) -> None:
    calls(_view.ModelView, "read")
    rep = backend.prepare(_tree())
    outputs = rep.run({"c": np.array(True), "x": np.arange(4, dtype=np.float32)})
    assert outputs[0].tolist() == [0.0, 1.0]
    assert calls.seen == Counter()


def test_a_view_reads_no_types_values_or_names_until_asked(calls: _Calls) -> None:
    calls(_view, "declared_types")
    calls(_view, "_add_names")
    view = ModelView.read(_tree())
    assert len(list(view.split_nodes())) == 2**DEPTH
    assert calls.seen == Counter()
    assert all(scope._values is None for scope in view.scopes)
    leaf = next(view.split_nodes()).scope
    assert leaf.dims("x") == [4]
    # The leaf's types and those of each scope around it, each read once.
    assert calls.seen == Counter({"declared_types": DEPTH + 1})
    assert view.fresh_name("a") == "a_1"
    assert calls.seen["_add_names"] == len(view.scopes)


def test_portability_probes_alike_split_nodes_from_one_probe(calls: _Calls) -> None:
    calls(_portability._Probe, "of")
    found = splitops.onnx.check_portability(_tree(), runtimes=["onnx.reference"])
    assert found.probed == 2**DEPTH
    assert calls.seen == Counter({"of": 1})


def test_a_node_over_the_parts_limit_is_named_in_its_own_branch() -> None:
    """The part counts walk the protobufs alone; the node refused is named where it lies,
    in the branch of the same position in the view's walk, not its sibling."""
    from splitops.onnx.model._io import check_part_counts

    f = TensorProto.FLOAT
    split = helper.make_node("Split", ["x"], ["o0"], num_outputs=5000, name="many")
    out = [helper.make_tensor_value_info("o0", f, None)]
    holding = helper.make_graph([split], "holding", [], out)
    plain = helper.make_graph([helper.make_node("Identity", ["x"], ["o0"])], "plain", [], out)
    for then_branch, else_branch, where in (
        (holding, plain, "main/choose.then_branch"),
        (plain, holding, "main/choose.else_branch"),
    ):
        node = helper.make_node(
            "If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch, name="choose"
        )
        inputs = [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", f, [5]),
        ]
        result = [helper.make_tensor_value_info("y", f, None)]
        graph = helper.make_graph([node], "g", inputs, result)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        with splitops.limits(max_parts=1024), pytest.raises(splitops.SplitError) as refused:
            check_part_counts(model)
        assert f"node 'many' (Split) in {where} asks for 5000 parts" in str(refused.value)
