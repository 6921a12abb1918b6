"""The exported corpus (:mod:`harness.corpus`): every dim of every Split and
SplitToSequence output, as splitops, onnx (``data_prop=True``) and onnxruntime's symbolic
tool infer it, judged against the shapes onnxruntime executes at two input sizes.

splitops must never contradict execution, and must know every dim that either peer knows;
on the models whose split sizes are computed from a dynamic axis, those dims are symbolic
expressions. Each model is judged as exported and without the shapes the exporter declared
(``value_info`` and graph outputs), which leaves inference to itself.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import onnx
import pytest
from harness.shapes import (
    KNOWN,
    WRONG,
    executed_shapes,
    split_dim_verdicts,
    split_outputs,
    without_shapes,
)
from onnx import ModelProto

from splitops import check_model, infer_shapes

onnxruntime = pytest.importorskip("onnxruntime")
# The corpus is exported with torch.onnx.export, so the module needs torch to exist.
pytest.importorskip("torch")
from harness import corpus  # noqa: E402

ENTRIES = [entry for entry in corpus.CORPUS if entry.ort_issue is None]
#: Models whose split sizes an exporter computes from a dynamic axis (Shape -> ... -> Split).
COMPUTED = {"split_batch", "split_seq_thirds"}


def _peers(model: ModelProto) -> dict[str, ModelProto | None]:
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    inferred: dict[str, ModelProto | None] = {
        "onnx": onnx.shape_inference.infer_shapes(model, data_prop=True)
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inferred["onnxruntime"] = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    except Exception:  # the tool fails on some exported models: it then knows nothing
        inferred["onnxruntime"] = None
    return inferred


@pytest.fixture(scope="module")
def executed(exported_corpus: dict[str, Path]) -> dict[str, Any]:
    """Each model, and the shapes its split outputs execute to at (2, 5) and (3, 7)."""
    found = {}
    for entry in ENTRIES:
        model = onnx.load(str(exported_corpus[entry.file_name]))
        feeds = [
            {n: t.numpy() for n, t in zip(entry.input_names, entry.inputs(b, s), strict=True)}
            for b, s in ((2, 5), (3, 7))
        ]
        found[entry.file_name] = (model, executed_shapes(model, feeds))
    return found


@pytest.mark.parametrize("declared", [True, False], ids=["as-exported", "no-declared-shapes"])
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.file_name)
def test_split_dims_match_execution_and_know_what_onnx_and_onnxruntime_know(
    entry: corpus.CorpusModel, declared: bool, executed: dict[str, Any]
) -> None:
    model, shapes = executed[entry.file_name]
    model = model if declared else without_shapes(model)
    ours = split_dim_verdicts(infer_shapes(model), shapes)
    assert ours.keys() == set(split_outputs(model))
    for name, row in ours.items():
        assert WRONG not in row, (name, row)
    for peer, inferred in _peers(model).items():
        for name, row in split_dim_verdicts(inferred, shapes).items():
            behind = [
                k
                for k, verdict in enumerate(row)
                if verdict == KNOWN and (len(ours[name]) != len(row) or ours[name][k] != KNOWN)
            ]
            assert not behind, (peer, name, row, ours[name])


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.name in COMPUTED], ids=lambda e: e.file_name
)
def test_computed_split_sizes_become_symbolic_dims(
    entry: corpus.CorpusModel, executed: dict[str, Any]
) -> None:
    model, shapes = executed[entry.file_name]
    inferred = infer_shapes(without_shapes(model))
    types = {v.name: v.type for v in inferred.graph.value_info}
    for name in split_outputs(model):
        dims = types[name].tensor_type.shape.dim
        node = next(n for n in model.graph.node if name in n.output)
        axis = next(a.i for a in node.attribute if a.name == "axis")
        assert dims[axis].dim_param, (name, dims)  # an expression of the input's dims
        assert split_dim_verdicts(inferred, {name: shapes[name]})[name][axis] == KNOWN


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.file_name)
def test_every_exported_model_checks_clean(
    entry: corpus.CorpusModel, executed: dict[str, Any]
) -> None:
    model, _ = executed[entry.file_name]
    assert check_model(model) == []
