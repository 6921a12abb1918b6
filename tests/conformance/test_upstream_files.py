"""The upstream node-test files in ``docs/upstream`` are what the generator writes from the
cases now, and onnx's own ``expect`` turns them into exactly the pack's valid cases."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from splitops.conformance import CASES, UPSTREAM_FILES, upstream_sources

UPSTREAM = Path(__file__).resolve().parents[2] / "docs" / "upstream"

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
