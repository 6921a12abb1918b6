"""The upstream node-test files in ``docs/upstream`` are what the generator writes from the
cases now, onnx's own ``expect`` turns them into exactly the pack's valid cases, and they pass
on onnx.reference through onnx's own runner once the two fixes proposed with them (a Split-1
for onnx.reference, the runner's comparison of string sequences) are in, as onnx's CI would
run them; without each fix, exactly the tests it is for fail."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from splitops.conformance import CASES, UPSTREAM_FILES, upstream_sources

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "docs" / "upstream"
SPLIT_1 = "reference_op_split.py"
RUNNER = "backend_test_runner.py"

#: Run in a child process: onnx's ``Base`` runs each ``export_*`` function as its class is
#: defined, and ``expect`` adds the test to onnx's list, which this process keeps untouched.
COLLECT = """
import pickle, sys
from onnx.backend.test.case import node
for path in sys.argv[1:]:
    exec(compile(open(path).read(), path, "exec"), {"__name__": "upstream"})
found = [(c.name, c.model.SerializeToString(), c.data_sets) for c in node._NodeTestCases
         if c.name.startswith("test_split")]
sys.stdout.buffer.write(pickle.dumps(found))
"""


@pytest.mark.parametrize("file", [file for file, _ in UPSTREAM_FILES.values()])
def test_the_committed_upstream_file_is_what_the_generator_writes(file: str) -> None:
    assert (UPSTREAM / file).read_text() == upstream_sources()[file], (
        "regenerate it: python -m splitops.conformance docs/upstream"
    )


#: The tests' data written by onnx's own writer (``backend-test-tools generate-data``), for the
#: tests the upstream files add, into ``OUT/upstream/<test>/``.
WRITE = """
import argparse, os, sys
from onnx.backend.test.case import node
import onnx.backend.test.cmd_tools as tools
*files, out = sys.argv[1:]
for path in files:
    exec(compile(open(path).read(), path, "exec"), {"__name__": "upstream"})
ours = [c for c in node._NodeTestCases if c.name.startswith("test_split")]
tools.model_test.collect_testcases = lambda: ours
tools.generate_data(argparse.Namespace(output=out))
os.rename(os.path.join(out, "node"), os.path.join(out, "upstream"))
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("upstream")
    files = [str(UPSTREAM / file) for file, _ in UPSTREAM_FILES.values()]
    subprocess.run([sys.executable, "-c", WRITE, *files, str(folder)], check=True)
    return folder


def _onnx_runner(data: Path, *fixes: str) -> dict[str, Any]:
    """What onnx's runner says of the tests in ``data`` on onnx.reference with ``fixes``."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "conformance" / "onnx_runner.py"), str(data),
         "upstream", *(str(UPSTREAM / fix) for fix in fixes)],
        capture_output=True, text=True, check=True, env=environment,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


VALID = [case.name for case in CASES if case.valid]
SPLIT_1_TESTS = {
    f"{case.name}_cpu" for case in CASES if case.valid and case.op == "Split" and case.opset == 1
}
STRING_SEQUENCES = {"test_split_to_sequence_string_opset11_cpu"}


def test_the_upstream_tests_pass_on_onnx_reference_through_onnx_runner(written: Path) -> None:
    assert sorted(p.name for p in (written / "upstream").iterdir()) == sorted(VALID)
    assert _onnx_runner(written, SPLIT_1, RUNNER) == {"run": len(VALID), "failed": {}}


@pytest.mark.parametrize(
    ("fixes", "failing"),
    [
        ((), SPLIT_1_TESTS | STRING_SEQUENCES),
        ((RUNNER,), SPLIT_1_TESTS),
        ((SPLIT_1,), STRING_SEQUENCES),
    ],
)
def test_without_a_fix_exactly_the_tests_it_is_for_fail(
    written: Path, fixes: tuple[str, ...], failing: set[str]
) -> None:
    result = _onnx_runner(written, *fixes)
    assert result["run"] == len(VALID)
    assert set(result["failed"]) == failing
    for name in failing & SPLIT_1_TESTS:
        assert (
            "No implementation for operator 'Split' domain '' and version 1"
            in (result["failed"][name])
        )
    for name in failing & STRING_SEQUENCES:
        assert result["failed"][name] == "AttributeError: 'str' object has no attribute 'shape'"


@pytest.fixture(scope="module")
def collected() -> dict[str, tuple[Any, Any]]:
    import onnx

    files = [str(UPSTREAM / file) for file, _ in UPSTREAM_FILES.values()]
    done = subprocess.run([sys.executable, "-c", COLLECT, *files], capture_output=True, check=True)
    found = pickle.loads(done.stdout)  # our own child's output
    return {name: (onnx.load_from_string(model), data) for name, model, data in found}


def test_onnx_expect_collects_every_valid_case_and_no_other(collected: dict[str, Any]) -> None:
    assert sorted(collected) == sorted(case.name for case in CASES if case.valid)


@pytest.mark.parametrize("case", [c for c in CASES if c.valid], ids=lambda case: case.name)
def test_each_upstream_test_is_the_case_node_opset_inputs_and_outputs(
    collected: dict[str, Any], case: Any
) -> None:
    model, data_sets = collected[case.name]
    assert list(model.graph.node) == [case.node]
    assert [(o.domain, o.version) for o in model.opset_import] == [("", case.opset)]
    ((inputs, outputs),) = data_sets
    _assert_same(list(case.inputs), inputs)
    _assert_same([list(o) if isinstance(o, tuple) else o for o in case.outputs], outputs)


def _assert_same(expected: list[Any], got: list[Any]) -> None:
    assert len(got) == len(expected)
    for want, value in zip(expected, got, strict=True):
        if isinstance(want, list):
            _assert_same(want, list(value))
            continue
        value = np.asarray(value)
        assert (value.dtype, value.shape) == (want.dtype, want.shape)
        assert value.tolist() == want.tolist()
