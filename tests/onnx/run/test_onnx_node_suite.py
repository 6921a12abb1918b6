"""ONNX's whole backend node suite (every CPU node test of the installed onnx, 1,884 with onnx
1.23.2) through four backends, in this process, with the same ``onnx.backend.test.BackendTest``
runner: ``onnx.reference`` (the 20-line backend below), ``splitops.backend`` with each of its
engines, and ``onnxruntime.backend``. The expected outputs are the suite's own.

splitops runs Split on splitops and every other operator on onnx.reference (or lowered, on
onnxruntime): its default engine must pass every node test that onnx.reference passes, and
its onnxruntime engine every node test that onnxruntime's own backend passes. A test one of
them loses fails here, naming the test and its error. Each backend runs the suite once (a
few seconds each); the pass counts are printed at the end.
"""

from __future__ import annotations

import functools
import re
import unittest
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.backend.test
import pytest
from onnx.backend.base import Backend, BackendRep
from onnx.reference import ReferenceEvaluator

from splitops import backend


class ReferenceRep(BackendRep):
    """A model prepared for onnx.reference."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.evaluator = ReferenceEvaluator(model)

    def run(self, inputs: Any, **kwargs: Any) -> Any:
        if isinstance(inputs, dict):
            return self.evaluator.run(None, inputs)
        names = self.evaluator.input_names
        return self.evaluator.run(None, dict(zip(names, inputs, strict=False)))


class ReferenceBackend(Backend):
    """``onnx.reference`` as an ``onnx.backend``: the baseline of the default engine."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> ReferenceRep:
        return ReferenceRep(model)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


class OnnxruntimeEngine(Backend):
    """``splitops.backend`` with ``engine="onnxruntime"``."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> Any:
        return backend.prepare(model, device, engine="onnxruntime", **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return backend.supports_device(device)


@dataclass(frozen=True)
class SuiteRun:
    """What one backend did with the node suite: the tests it passed, and the first line of
    each other test's failure (or why it skipped)."""

    passed: frozenset[str]
    failed: dict[str, str]

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed)


class _Outcomes(unittest.TestResult):
    """The outcome of each CPU test (the suite's CUDA variants are skipped, and left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.passed: set[str] = set()
        self.failed: dict[str, str] = {}

    def addSuccess(self, test: unittest.TestCase) -> None:  # noqa: N802 (unittest's name)
        self.passed.add(test._testMethodName)

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        self.failed[test._testMethodName] = _first_line(err[1])

    addError = addFailure  # noqa: N815

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:  # noqa: N802
        if test._testMethodName.endswith("_cpu"):
            self.failed[test._testMethodName] = f"skipped: {reason}"

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:  # noqa: N802
        self.addFailure(test, err)


def _first_line(error: BaseException) -> str:
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return f"{type(error).__name__}: {text[:300]}"


#: The node tests whose expected outputs are one draw of numpy's global generator, which
#: nobody seeds (``test_bernoulli_seed`` too: its seed is the node's, not the draw's): a
#: backend passes one only by chance (Bernoulli of 10 values: about 1 run in 60, which made
#: the table's counts move), so each counts as failed, whatever the draw.
BY_CHANCE = frozenset(
    f"test_bernoulli{kind}{expanded}_cpu"
    for kind in ("", "_double", "_seed")
    for expanded in ("", "_expanded")
)


def run_node_suite(runner: Any) -> SuiteRun:
    """Every CPU node test of the installed onnx's suite, run on ``runner`` (an
    ``onnx.backend``) by ``BackendTest``, in this process; a test of :data:`BY_CHANCE`
    counts as failed."""
    outcomes = _Outcomes()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # Importing the suite's cases computes their expected outputs, which warns (infinities,
        # NaNs); a backend's own notes (the checker's, an engine falling back) are no outcome.
        warnings.simplefilter("ignore")
        suite = onnx.backend.test.BackendTest(runner, __name__)
        suite.include(r"_cpu$")
        node_tests = suite.test_cases["OnnxBackendNodeModelTest"]
        unittest.defaultTestLoader.loadTestsFromTestCase(node_tests).run(outcomes)
    lucky = set(outcomes.passed) & BY_CHANCE
    failed = outcomes.failed | dict.fromkeys(lucky, "passed by chance: an unseeded draw")
    return SuiteRun(frozenset(outcomes.passed) - lucky, failed)


def _onnxruntime_backend() -> Any:
    pytest.importorskip("onnxruntime")
    with warnings.catch_warnings():
        # onnxruntime.backend reads onnx.version, which onnx 1.23 deprecates.
        warnings.filterwarnings("ignore", "onnx.version is deprecated", DeprecationWarning)
        import onnxruntime.backend

    return onnxruntime.backend


#: The backends compared, by name: how to get each (a skip where it is not installed).
BACKENDS: dict[str, Callable[[], Any]] = {
    "onnx.reference": lambda: ReferenceBackend,
    "splitops.backend": lambda: backend,
    'splitops.backend, engine="onnxruntime"': lambda: _onnxruntime_backend() and OnnxruntimeEngine,
    "onnxruntime.backend": _onnxruntime_backend,
}


@functools.cache
def suite_run(name: str) -> SuiteRun:
    """The node suite on one backend of :data:`BACKENDS`, run once per session."""
    return run_node_suite(BACKENDS[name]())


def _lost(baseline: SuiteRun, candidate: SuiteRun) -> str:
    lost = sorted(baseline.passed - candidate.passed)
    return "\n".join(f"{name}: {candidate.failed.get(name, 'not run')}" for name in lost)


def test_the_default_engine_passes_every_node_test_onnx_reference_passes() -> None:
    reference, splitops_run = suite_run("onnx.reference"), suite_run("splitops.backend")
    assert splitops_run.total == reference.total >= 1800
    lost = _lost(reference, splitops_run)
    assert not lost, f"splitops.backend fails node tests onnx.reference passes:\n{lost}"


def test_the_onnxruntime_engine_passes_every_node_test_onnxruntime_backend_passes() -> None:
    theirs = suite_run("onnxruntime.backend")
    ours = suite_run('splitops.backend, engine="onnxruntime"')
    assert ours.total == theirs.total >= 1800
    lost = _lost(theirs, ours)
    assert not lost, f"the onnxruntime engine fails node tests onnxruntime.backend passes:\n{lost}"


def test_the_onnxruntime_engine_loses_to_onnx_reference_only_where_onnxruntime_computes() -> None:
    """Where the onnxruntime engine fails a test that onnx.reference passes, onnxruntime's own
    backend fails it too: onnxruntime computes that operator otherwise (docs/onnx.md lists
    them), not splitops."""
    reference = suite_run("onnx.reference")
    theirs = suite_run("onnxruntime.backend")
    ours = suite_run('splitops.backend, engine="onnxruntime"')
    ours_only = (reference.passed - ours.passed) & theirs.passed
    assert not ours_only, _lost(SuiteRun(frozenset(ours_only), {}), ours)


def test_the_run_counts_a_test_that_fails_and_one_that_passes() -> None:
    """The harness itself: a backend that refuses every model passes nothing, and each test
    counts once."""

    class Refusing(ReferenceBackend):
        @classmethod
        def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> Any:
            raise RuntimeError("no model today")

    refused = run_node_suite(Refusing)
    assert refused.failed["test_abs_cpu"] == "RuntimeError: no model today"
    assert not refused.passed
    assert refused.total == suite_run("onnx.reference").total
    assert "test_abs_cpu" in suite_run("onnx.reference").passed
    assert set(suite_run("onnx.reference").failed) >= BY_CHANCE, "the suite renamed them"


#: The rows of docs/onnx.md's node-suite table, by backend of :data:`BACKENDS`.
DOC_ROWS = {
    "onnx.reference": "onnx.reference",
    "splitops.backend": "`splitops.backend` (default engine)",
    'splitops.backend, engine="onnxruntime"': '`splitops.backend`, `engine="onnxruntime"`',
    "onnxruntime.backend": "`onnxruntime.backend`",
}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "onnx.md"


def test_the_node_suite_table_of_the_docs_is_what_the_suite_gives() -> None:
    """docs/onnx.md's table (pass, fail or error) is what each backend gives now, for the
    onnx and onnxruntime releases it names; with other releases it is printed instead."""
    text = DOCS.read_text()
    found = re.search(r"With onnx ([\d.]+) and onnxruntime ([\d.]+), on this machine:", text)
    assert found, "docs/onnx.md no longer names the releases of its node-suite table"
    measured = {}
    for name in BACKENDS:
        try:
            run = suite_run(name)
        except pytest.skip.Exception:
            continue
        measured[DOC_ROWS[name]] = (len(run.passed), len(run.failed))
    table = f"{onnx_versions()}\n" + "\n".join(
        f"| {row} | {passed:,} | {failed:,} |" for row, (passed, failed) in measured.items()
    )
    print(table)
    if onnx_versions() != f"onnx {found[1]}, onnxruntime {found[2]}":
        pytest.skip(f"the docs' table is for other releases; this one's:\n{table}")
    documented = {
        row: (int(cells[0].replace(",", "")), int(cells[1].replace(",", "")))
        for row in DOC_ROWS.values()
        for cells in [_doc_cells(text, row)]
    }
    assert documented == measured, f"docs/onnx.md's node-suite table should read:\n{table}"


def _doc_cells(text: str, row: str) -> list[str]:
    line = next((line for line in text.splitlines() if line.startswith(f"| {row} |")), None)
    assert line is not None, f"docs/onnx.md's node-suite table has no row {row!r}"
    return [cell.strip() for cell in line.strip("|").split("|")[1:]]


def onnx_versions() -> str:
    versions = f"onnx {onnx.__version__}"
    try:
        import onnxruntime
    except ImportError:
        return versions
    return f"{versions}, onnxruntime {onnxruntime.__version__}"
