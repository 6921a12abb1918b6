"""onnx's own backend test machinery, run on a folder of node tests: its loader reads the
folder, its ``Runner`` runs each test on a backend and compares the outputs as onnx's CI
does, and what failed comes back by test.

``python tests/conformance/onnx_runner.py DATA KIND [FIX.py ...]`` runs the tests of
``DATA/KIND`` on onnx.reference (its ``ReferenceEvaluator`` as a backend, the way onnx's
``onnx/test/test_backend_reference.py`` runs it), with the fixes proposed upstream loaded
first: a ``Split_1`` class joins onnx.reference's operators, an ``assert_similar_outputs``
replaces the runner's. It prints ``{"run": N, "failed": {test: last line of its error}}``.
A process of its own: onnx.reference's table of operators and the runner's class are left
as they were in the caller's.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import unittest
from pathlib import Path
from typing import Any

import numpy as np
from onnx import ModelProto
from onnx.backend.base import Backend, BackendRep
from onnx.backend.test import runner as runner_module
from onnx.backend.test.loader import load_model_tests
from onnx.backend.test.runner import Runner


def run_tests(backend: type[Backend], data: Path, kind: str) -> tuple[int, dict[str, str]]:
    """How many tests of ``data/kind`` onnx's runner ran on ``backend``, and the last line
    of each failure's error, by test. The runner is built without onnx's own suites (it
    would run every node test's export first, minutes), then given these."""
    everything = runner_module.load_model_tests
    runner_module.load_model_tests = lambda **kwargs: []
    try:
        runner = Runner(backend, __name__)
    finally:
        runner_module.load_model_tests = everything
    for test in load_model_tests(data_dir=str(data), kind=kind):
        runner._add_model_test(test, "Tried")  # as Runner.__init__ adds its own kinds
    tests = unittest.defaultTestLoader.loadTestsFromTestCase(
        runner.test_cases["OnnxBackendTriedModelTest"]
    )
    with np.errstate(all="ignore"):
        outcome = unittest.TextTestRunner(stream=_Discard(), verbosity=0).run(tests)
    failed = {
        str(test).split(" ")[0]: why.strip().splitlines()[-1]
        for test, why in outcome.errors + outcome.failures
    }
    return outcome.testsRun - len(outcome.skipped), failed


class _Discard:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class ReferenceRep(BackendRep):
    """A model on onnx.reference's evaluator."""

    def __init__(self, model: ModelProto) -> None:
        from onnx.reference import ReferenceEvaluator

        self.session = ReferenceEvaluator(model)

    def run(self, inputs: Any, **kwargs: Any) -> Any:
        return self.session.run(None, dict(zip(self.session.input_names, inputs, strict=False)))


class ReferenceBackend(Backend):
    """onnx.reference as an onnx backend; ``prepare`` runs onnx.checker first, as onnx's
    ``Backend.prepare`` does for every backend."""

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> ReferenceRep:
        super().prepare(model, device, **kwargs)
        return ReferenceRep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


def load_fix(path: Path) -> None:
    """Load a fix proposed upstream into onnx, as if it were onnx's own code."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if hasattr(module, "Split_1"):
        from onnx.reference.ops import _op_list

        _op_list.Split_1 = module.Split_1  # as op_split.py's import in _op_list.py adds it
        _op_list._registered_operators = None  # the table is built again at the next load
    if hasattr(module, "assert_similar_outputs"):
        Runner.assert_similar_outputs = module.assert_similar_outputs


if __name__ == "__main__":
    for fix in sys.argv[3:]:
        load_fix(Path(fix))
    count, failures = run_tests(ReferenceBackend, Path(sys.argv[1]), sys.argv[2])
    print(json.dumps({"run": count, "failed": failures}))
