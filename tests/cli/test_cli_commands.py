"""The ``splitops`` command as users meet it: real subprocesses, exit codes, one-line errors.

Exit codes: 0 success, 1 a Split rule broken, 2 unreadable or wrong input, 3 another
operator stopped the command. Commands that can run side by side run two at a time.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

from splitops.cli import main
from splitops.examples import EXAMPLE_MODEL
from splitops.model_io import save_model

ErrorLine = Callable[[subprocess.CompletedProcess[str]], str]
Cli = Callable[..., subprocess.CompletedProcess[str]]
CliMany = Callable[[list[list[str | Path]]], list[subprocess.CompletedProcess[str]]]
Build = Callable[..., ModelProto]

F = TensorProto.FLOAT


@pytest.fixture
def symbolic_model(tmp_path: Path, build_model: Build) -> Path:
    """Split-18 by num_outputs on an axis of symbolic length N."""
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="by_count")
    save_model(build_model([node], {"x": (F, ["N"])}, ["a", "b"], opset=18), tmp_path / "sym.onnx")
    return tmp_path / "sym.onnx"


@pytest.fixture
def mish_model(tmp_path: Path, build_model: Build) -> Path:
    """Mish (opset 18 and later) before a Split: no opset below 18 has it."""
    nodes = [
        helper.make_node("Mish", ["x"], ["y"]),
        helper.make_node("Split", ["y"], ["a", "b"], num_outputs=2),
    ]
    save_model(build_model(nodes, {"x": (F, [4])}, ["a", "b"], opset=18), tmp_path / "mish.onnx")
    return tmp_path / "mish.onnx"


def test_run_without_a_model_runs_the_shipped_example(cli: Cli) -> None:
    result = cli("run")
    assert result.returncode == 0, result.stderr
    assert str(EXAMPLE_MODEL) in result.stdout
    # Split-18 cuts 7 into ceil(7/4)=2, 2, 2 and the rest 1; the batch symbol defaults to 1.
    for name, shape in [("quarter_0", "(1, 2)"), ("quarter_3", "(1, 1)"), ("head", "(1, 3)")]:
        assert f"output {name}: float32 {shape}" in result.stdout
    assert "output tail_chunks: sequence of 2" in result.stdout


def test_run_writes_outputs_equal_to_onnxruntime(cli: Cli, tmp_path: Path) -> None:
    x = np.random.default_rng(3).standard_normal((3, 7)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = cli("run", EXAMPLE_MODEL, "--input", "x=x.npy", "--out", "results")
    assert result.returncode == 0, result.stderr
    session = ort.InferenceSession(str(EXAMPLE_MODEL))
    names = [o.name for o in session.get_outputs()]
    for name, expected in zip(names, session.run(None, {"x": x}), strict=True):
        if isinstance(expected, list):
            for index, item in enumerate(expected):
                np.testing.assert_array_equal(
                    np.load(tmp_path / "results" / f"{name}_{index}.npy"), item
                )
        else:
            np.testing.assert_array_equal(np.load(tmp_path / "results" / f"{name}.npy"), expected)


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        (b"", "the file is empty"),
        (np.random.default_rng(5).bytes(256), "not an ONNX model"),
        (EXAMPLE_MODEL.read_bytes()[:300], "truncated"),
    ],
    ids=["empty", "random", "truncated"],
)
def test_an_unreadable_model_exits_2_with_one_line(
    cli: Cli, error_line: ErrorLine, tmp_path: Path, content: bytes, phrase: str
) -> None:
    (tmp_path / "m.onnx").write_bytes(content)
    result = cli("run", "m.onnx")
    assert result.returncode == 2
    assert phrase in error_line(result)


def test_a_npy_file_passed_as_a_model_exits_2(
    cli_many: CliMany, error_line: ErrorLine, tmp_path: Path
) -> None:
    np.save(tmp_path / "x.npy", np.zeros(3))
    for result in cli_many([["run", "x.npy"], ["convert", "x.npy", "--opset", "13", "-o", "y"]]):
        assert result.returncode == 2
        assert "it is a NumPy .npy array, not an ONNX model" in error_line(result)


def external_weights_model(location: str) -> ModelProto:
    tensor = numpy_helper.from_array(np.zeros(6, dtype=np.float32), "w")
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    graph = helper.make_graph(
        [helper.make_node("Split", ["w"], ["a", "b"], num_outputs=2)],
        "g",
        [],
        [helper.make_tensor_value_info(n, F, [3]) for n in "ab"],
        initializer=[tensor],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_external_data_outside_the_model_folder_exits_2_unless_trusted(
    cli_many: CliMany, error_line: ErrorLine, tmp_path: Path
) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "secret").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    for name, location in [("up.onnx", "../secret"), ("abs.onnx", "/etc/passwd")]:
        (tmp_path / "models" / name).write_bytes(
            external_weights_model(location).SerializeToString()
        )
    up, absolute, trusted = cli_many(
        [
            ["run", "models/up.onnx"],
            ["run", "models/abs.onnx"],
            ["run", "models/up.onnx", "--trust-external-data"],
        ]
    )
    assert up.returncode == 2
    assert "climbs out with '..'" in error_line(up)
    assert absolute.returncode == 2
    assert "an absolute path" in error_line(absolute)
    assert trusted.returncode == 0, trusted.stderr
    assert "output b: float32 (3,) [3., 4., 5.]" in trusted.stdout


def test_a_split_asking_for_a_billion_outputs_exits_2(
    cli: Cli, error_line: ErrorLine, tmp_path: Path, build_model: Build
) -> None:
    node = helper.make_node("Split", ["x"], ["a"], num_outputs=10**9, name="greedy")
    save_model(build_model([node], {"x": (F, [0])}, ["a"], opset=18), tmp_path / "m.onnx")
    result = cli("run", "m.onnx")
    assert result.returncode == 2
    assert "'greedy' (Split) in main asks for 1000000000 parts" in error_line(result)


def test_run_exit_codes_for_a_broken_node_another_operator_and_bad_options(
    cli_many: CliMany,
    error_line: ErrorLine,
    tmp_path: Path,
    broken_model: Path,
    build_model: Build,
) -> None:
    unknown = helper.make_node("Frobnicate", ["x"], ["y"], domain="example.custom")
    model = build_model(
        [unknown], {"x": (F, [2])}, ["y"], opset=18, extra_opsets=[("example.custom", 1)]
    )
    save_model(model, tmp_path / "custom.onnx")
    broken, other, name, dim = cli_many(
        [
            ["run", broken_model],
            ["run", "custom.onnx"],
            ["run", "--input", "nope=x.npy"],
            ["run", "--dim", "batch=many"],
        ]
    )
    assert broken.returncode == 1
    assert "sum to 3, but the axis length is 4" in error_line(broken)
    assert other.returncode == 3
    assert "the model failed to run" in error_line(other)
    assert name.returncode == 2
    assert "no input of that name; its inputs are ['x']" in error_line(name)
    assert dim.returncode == 2
    assert "whole number" in error_line(dim)


def test_convert_exit_codes_and_nothing_written_on_failure(
    cli_many: CliMany,
    error_line: ErrorLine,
    tmp_path: Path,
    symbolic_model: Path,
    mish_model: Path,
) -> None:
    done, symbolic, other, unreadable = cli_many(
        [
            ["convert", EXAMPLE_MODEL, "--opset", "13", "-o", "ok.onnx"],
            ["convert", symbolic_model, "--opset", "13", "-o", "sym13.onnx"],
            ["convert", mish_model, "--opset", "17", "-o", "mish17.onnx"],
            ["convert", "absent.onnx", "--opset", "13", "-o", "absent13.onnx"],
        ]
    )
    assert done.returncode == 0, done.stderr
    converted = onnx.load(tmp_path / "ok.onnx")
    assert [(o.domain, o.version) for o in converted.opset_import] == [("", 13)]
    onnx.checker.check_model(converted)
    assert symbolic.returncode == 1
    assert "node 'by_count'" in error_line(symbolic)
    assert other.returncode == 3
    assert "onnx.version_converter could not convert" in error_line(other)
    assert unreadable.returncode == 2
    for name in ("sym13.onnx", "mish17.onnx", "absent13.onnx"):
        assert not (tmp_path / name).exists()


def test_split_writes_the_parts_numpy_would_cut(cli: Cli, tmp_path: Path) -> None:
    x = np.arange(21).reshape(3, 7)
    np.save(tmp_path / "x.npy", x)
    result = cli("split", "x.npy", "--sizes", "2,5", "--axis", "1", "--out", "parts")
    assert result.returncode == 0, result.stderr
    for index, expected in enumerate(np.split(x, [2], axis=1)):
        np.testing.assert_array_equal(np.load(tmp_path / "parts" / f"x_{index}.npy"), expected)


def test_split_exit_codes(cli_many: CliMany, error_line: ErrorLine, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.arange(7))
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    uneven, unreadable, wrong_option, usage, no_command = cli_many(
        [
            ["split", "x.npy", "--parts", "4", "--opset", "13"],
            ["split", "bad.npy", "--parts", "2"],
            ["split", "x.npy", "--chunk", "2", "--op", "Split"],
            ["split", "x.npy"],
            [],
        ]
    )
    assert uneven.returncode == 1
    assert "does not divide into 4" in error_line(uneven)
    assert unreadable.returncode == 2
    assert "cannot read bad.npy" in error_line(unreadable)
    assert wrong_option.returncode == 2
    assert "--chunk is SplitToSequence's chunk length" in error_line(wrong_option)
    for result in (usage, no_command):
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
        assert "usage: splitops" in result.stderr
        assert "required" in result.stderr


@pytest.mark.parametrize("command", ["check", "infer", "convert", "run", "split"])
def test_every_command_has_help_with_an_example_and_the_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert f"$ splitops {command}" in text
    assert "exit codes:" in text


def test_the_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for command in ("check", "infer", "convert", "run", "split"):
        assert command in text
