"""Fixtures for the command line and model tools: the ``splitops`` command as a real
subprocess, and small models built in a few lines."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import FunctionProto, ModelProto, NodeProto, TensorProto, helper, numpy_helper
from tests.model_building import with_inferred_outputs
from tests.processes import GUARD_SECONDS

SRC = Path(__file__).resolve().parents[2] / "src"

Cli = Callable[..., subprocess.CompletedProcess[str]]
CliMany = Callable[[Sequence[Sequence[str]]], list[subprocess.CompletedProcess[str]]]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


def _run(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "splitops", *args],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """Run ``python -m splitops ARGS...`` in ``tmp_path``; returns the completed process."""

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return _run([str(a) for a in args], tmp_path)

    return run


@pytest.fixture
def cli_many(tmp_path: Path) -> CliMany:
    """Run several command lines at once (two at a time), results in order."""

    def run(commands: Sequence[Sequence[str | Path]]) -> list[subprocess.CompletedProcess[str]]:
        with ThreadPoolExecutor(max_workers=2) as pool:
            jobs = [pool.submit(_run, [str(a) for a in args], tmp_path) for args in commands]
            return [job.result() for job in jobs]

    return run


@pytest.fixture
def error_line() -> Callable[[subprocess.CompletedProcess[str]], str]:
    """Check a failed command wrote one ``splitops: error:`` line and no traceback; return it."""
    return one_error_line


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``splitops: error:`` line of a failed command, checking there is no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("splitops: error: "), lines[0]
    return lines[0]


def make_model(
    nodes: Sequence[NodeProto],
    inputs: dict[str, tuple[int, Sequence[int | str | None] | None]],
    outputs: Sequence[str],
    *,
    opset: int,
    initializers: dict[str, Any] | None = None,
    functions: Sequence[FunctionProto] = (),
    extra_opsets: Sequence[tuple[str, int]] = (),
) -> ModelProto:
    """A model of ``nodes``: inputs as ``{name: (TensorProto type, shape)}``; outputs typed
    like the first input, of the same rank (a name starting with ``seq`` is a sequence)."""
    element, shape = next(iter(inputs.values()))
    unknown = None if shape is None else [None] * len(shape)

    def output(name: str) -> onnx.ValueInfoProto:
        if name.startswith("seq"):
            return helper.make_tensor_sequence_value_info(name, element, unknown)
        return helper.make_tensor_value_info(name, element, unknown)

    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [output(name) for name in outputs],
        initializer=[
            numpy_helper.from_array(np.asarray(v), n) for n, v in (initializers or {}).items()
        ],
    )
    imports = [helper.make_opsetid("", opset), *(helper.make_opsetid(*e) for e in extra_opsets)]
    model = helper.make_model(graph, opset_imports=imports, functions=list(functions))
    model.ir_version = 8 if opset >= 13 else 7
    return with_inferred_outputs(model)


@pytest.fixture
def build_model() -> Callable[..., ModelProto]:
    """:func:`make_model`."""
    return make_model


@pytest.fixture
def broken_model(tmp_path: Path) -> Path:
    """A saved Split-13 node ``bad_sizes`` whose sizes [1, 2] do not add up to its axis, 4."""
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], name="bad_sizes")
    model = make_model(
        [node],
        {"x": (TensorProto.FLOAT, [4])},
        ["a", "b"],
        opset=13,
        initializers={"sizes": np.array([1, 2])},
    )
    onnx.save(model, tmp_path / "broken.onnx")
    return tmp_path / "broken.onnx"
