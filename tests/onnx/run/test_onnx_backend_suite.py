"""ONNX's own backend test suite on :mod:`splitops.backend`: every test whose model holds Split
or SplitToSequence.

The tests are picked by scanning every model the installed onnx's suite holds (node tests from
``onnx.backend.test.case``, the model directories under ``onnx/backend/test/data``), subgraphs
and model-local functions included; ``onnx.backend.test.BackendTest`` then runs them with an
include pattern per test. The onnx wheel ships no ``data/node`` directory: ``BackendTest``
builds the node tests in memory from the suite's own sources (``collect_testcases``), with the
suite's own expected outputs. Each test also checks that splitops ran at least one node.
"""

from __future__ import annotations

import functools
import re
import unittest
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import onnx
import onnx.backend.test
import pytest
from onnx import ModelProto
from onnx.backend.test.loader import load_model_tests

from splitops import backend
from splitops.onnx.model._node import DEFAULT_DOMAINS
from splitops.onnx.model.protobuf import model_graphs
from splitops.onnx.run import _reference as onnx_reference

SPLIT_OPS = frozenset({"Split", "SplitToSequence"})
#: The kinds of test ``onnx.backend.test.runner.Runner`` loads, in its order.
SUITE_KINDS = ("node", "real", "simple", "pytorch-converted", "pytorch-operator")

#: Families of suite tests and the least number of tests each must have (onnx 1.23.2's count).
FAMILIES = {
    "test_split_to_sequence": 3,
    "test_split": 16,
    "test_rotary_embedding": 8,
    "test_affine_grid": 4,
    "test_sequence_model": 3,
    "test_operator_chunk": 1,
    "test_GLU": 2,
}


def family(test_name: str) -> str:
    """The family a suite test belongs to: the longest known prefix, else the name itself."""
    known = [prefix for prefix in FAMILIES if test_name.startswith(prefix)]
    return max(known, key=len) if known else test_name


def model_ops(model: ModelProto) -> set[str]:
    """The default-domain op types of a model, its subgraphs and its local functions."""
    return {
        node.op_type
        for proto in model_graphs(model)
        for node in proto.node
        if node.domain in DEFAULT_DOMAINS
    }


def suite_model(case: Any) -> ModelProto:
    """The model of one suite test case, wherever the suite keeps it."""
    if case.model is not None:
        return case.model
    if case.model_dir is not None:
        return onnx.load(Path(case.model_dir) / "model.onnx")
    # "real" tests whose url names a model bundled with onnx (Runner resolves it the same way).
    bundled = Path(onnx.__file__).parent.parent / case.url
    if not bundled.is_file():
        raise FileNotFoundError(f"suite test {case.name} has no local model ({case.url})")
    return onnx.load(bundled)


def scan_suite() -> dict[str, set[str]]:
    """Every suite test whose model holds Split or SplitToSequence, with those op types."""
    found = {}
    for kind in SUITE_KINDS:
        for case in load_model_tests(kind=kind):
            ops = model_ops(suite_model(case)) & SPLIT_OPS
            if ops:
                found[case.name] = ops
    return found


def _counting_splitops_calls(test: Callable[..., Any]) -> Callable[..., Any]:
    """``test``, failing unless splitops' op classes ran at least one node during it."""

    @functools.wraps(test)
    def run(self: unittest.TestCase) -> None:
        original = onnx_reference._SplitopsOp._run_node
        with mock.patch.object(
            onnx_reference._SplitopsOp, "_run_node", autospec=True, side_effect=original
        ) as calls:
            test(self)
        assert calls.call_count > 0, "no Split node ran on splitops"

    return run


with warnings.catch_warnings():
    # Importing the suite's case modules computes expected outputs with numpy and warns.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"onnx\.backend\.test\.")
    SELECTED = scan_suite()
    BACKEND_TEST = onnx.backend.test.BackendTest(backend, __name__)
for _name in SELECTED:
    BACKEND_TEST.include(f"^{re.escape(_name)}_cpu$")

# BackendTest marks every test it does not run as skipped (the whole suite, and the CUDA
# variants splitops' CPU backend does not support); only the selected tests are exposed here.
SUITE_TESTS: dict[str, str] = {}
for _class_name, _case in BACKEND_TEST.test_cases.items():
    _selected = {
        name: _counting_splitops_calls(getattr(_case, name))
        for name in dir(_case)
        if name.startswith("test_") and not getattr(getattr(_case, name), "__unittest_skip__", 0)
    }
    if _selected:
        globals()[_class_name] = type(_class_name, (unittest.TestCase,), _selected)
        SUITE_TESTS.update(dict.fromkeys(_selected, _class_name))
del _name, _class_name, _case, _selected  # pytest would collect a TestCase class left here


def test_scan_finds_every_family_of_split_models() -> None:
    counts = Counter(family(name) for name in SELECTED)
    for name, least in FAMILIES.items():
        assert counts[name] >= least, f"{name}: {counts[name]} tests found, {least} expected"
    expanded = [n for n in SELECTED if family(n) in ("test_rotary_embedding", "test_affine_grid")]
    assert all(name.endswith("_expanded") for name in expanded)
    assert SELECTED["test_split_to_sequence_1"] == {"SplitToSequence"}
    print(f"\n{len(SELECTED)} ONNX suite tests hold Split or SplitToSequence: {dict(counts)}")


def test_backend_test_runs_every_scanned_test_on_the_cpu() -> None:
    """One runnable test per scanned model, named as BackendTest names them."""
    assert sorted(SUITE_TESTS) == sorted(f"{name}_cpu" for name in SELECTED)
    assert len(SUITE_TESTS) >= sum(FAMILIES.values())


@pytest.mark.parametrize("op", sorted(SPLIT_OPS))
def test_scan_reads_subgraphs_and_functions(op: str) -> None:
    """The scanner finds the op inside an If branch and inside a model-local function."""
    inner = onnx.helper.make_graph([onnx.helper.make_node(op, ["x"], ["y"])], "inner", [], [])
    branch = onnx.helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner)
    in_if = onnx.helper.make_model(onnx.helper.make_graph([branch], "g", [], []))
    function = onnx.helper.make_function(
        "local", "f", ["x"], ["y"], [onnx.helper.make_node(op, ["x"], ["y"])], []
    )
    call = onnx.helper.make_node("f", ["x"], ["y"], domain="local")
    in_function = onnx.helper.make_model(
        onnx.helper.make_graph([call], "g", [], []), functions=[function]
    )
    assert op in model_ops(in_if)
    assert op in model_ops(in_function)
