"""The ``splitops`` command as users meet it: real subprocesses, exit codes, one-line errors.

Exit codes: 0 success, 1 a Split rule broken, 2 unreadable or wrong input, 3 another
operator stopped the command. Commands that can run side by side run two at a time.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper

from splitops.cli import main
from splitops.examples import EXAMPLE_MODEL
from splitops.onnx.model._io import save_model

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


NOT_A_MODEL = "it is a NumPy .npy array, not an ONNX model"


@dataclass(frozen=True)
class Failure:
    """A command line that must fail: its exit code and what its one error line says."""

    what: str
    args: list[str]
    code: int
    says: str


#: Exit codes: 1 a Split rule broken, 2 unreadable or wrong input, 3 another operator.
#: The files are made by the ``failing_inputs`` fixture.
FAILURES = [
    Failure("empty model", ["run", "empty.onnx"], 2, "the file is empty"),
    Failure("random bytes", ["run", "random.onnx"], 2, "not an ONNX model"),
    Failure("truncated model", ["run", "truncated.onnx"], 2, "truncated"),
    Failure("npy as model (run)", ["run", "x.npy"], 2, NOT_A_MODEL),
    Failure(
        "npy as model (convert)",
        ["convert", "x.npy", "--opset", "13", "-o", "y"],
        2,
        NOT_A_MODEL,
    ),
    Failure("external data up", ["run", "models/up.onnx"], 2, "climbs out with '..'"),
    Failure("external data absolute", ["run", "models/abs.onnx"], 2, "an absolute path"),
    Failure(
        "a billion outputs",
        ["run", "greedy.onnx"],
        2,
        "'greedy' (Split) in main asks for 1000000000 parts",
    ),
    Failure("run: broken node", ["run", "broken.onnx"], 1, "sum to 3, but the axis length is 4"),
    Failure(
        "run: other operator", ["run", "custom.onnx"], 3, "onnx.reference cannot prepare the model"
    ),
    Failure(
        "run: unknown input",
        ["run", "--input", "nope=x.npy"],
        2,
        "no input of that name; its inputs are ['x']",
    ),
    Failure("run: bad --dim", ["run", "--dim", "batch=many"], 2, "whole number"),
    Failure(
        "convert: symbolic num_outputs",
        ["convert", "sym.onnx", "--opset", "13", "-o", "sym13.onnx"],
        1,
        "node 'by_count'",
    ),
    Failure(
        "convert: other operator",
        ["convert", "mish.onnx", "--opset", "17", "-o", "mish17.onnx"],
        3,
        "onnx.version_converter could not convert",
    ),
    Failure(
        "convert: absent model",
        ["convert", "absent.onnx", "--opset", "13", "-o", "absent13.onnx"],
        2,
        "no such file",
    ),
    Failure(
        "split: uneven parts",
        ["split", "x.npy", "--parts", "4", "--opset", "13"],
        1,
        "does not divide into 4",
    ),
    Failure("split: bad .npy", ["split", "bad.npy", "--parts", "2"], 2, "cannot read bad.npy"),
    Failure(
        "split: --chunk for Split",
        ["split", "x.npy", "--chunk", "2", "--op", "Split"],
        2,
        "--chunk is SplitToSequence's chunk length",
    ),
]


@pytest.fixture
def failing_inputs(
    tmp_path: Path,
    build_model: Build,
    broken_model: Path,
    symbolic_model: Path,
    mish_model: Path,
) -> None:
    """The files :data:`FAILURES` reads, in ``tmp_path``."""
    (tmp_path / "empty.onnx").write_bytes(b"")
    (tmp_path / "random.onnx").write_bytes(np.random.default_rng(5).bytes(256))
    (tmp_path / "truncated.onnx").write_bytes(EXAMPLE_MODEL.read_bytes()[:300])
    np.save(tmp_path / "x.npy", np.arange(7))
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    (tmp_path / "models").mkdir()
    for name, location in [("up.onnx", "../secret"), ("abs.onnx", "/etc/passwd")]:
        model = external_weights_model(location)
        (tmp_path / "models" / name).write_bytes(model.SerializeToString())
    greedy = helper.make_node("Split", ["x"], ["a"], num_outputs=10**9, name="greedy")
    save_model(build_model([greedy], {"x": (F, [0])}, ["a"], opset=18), tmp_path / "greedy.onnx")
    unknown = helper.make_node("Frobnicate", ["x"], ["y"], domain="example.custom")
    custom = build_model(
        [unknown], {"x": (F, [2])}, ["y"], opset=18, extra_opsets=[("example.custom", 1)]
    )
    save_model(custom, tmp_path / "custom.onnx")


@pytest.mark.usefixtures("failing_inputs")
def test_each_failure_exits_with_its_code_one_error_line_and_no_output_file(
    cli_many: CliMany, error_line: ErrorLine, tmp_path: Path
) -> None:
    results = cli_many([[*failure.args] for failure in FAILURES])
    for failure, result in zip(FAILURES, results, strict=True):
        assert result.returncode == failure.code, (failure.what, result.stderr)
        assert failure.says in error_line(result), failure.what
    for name in ("y", "sym13.onnx", "mish17.onnx", "absent13.onnx"):
        assert not (tmp_path / name).exists()


def test_external_data_outside_the_model_folder_runs_when_trusted(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "secret").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    model = external_weights_model("../secret")
    (tmp_path / "models" / "up.onnx").write_bytes(model.SerializeToString())
    trusted = cli("run", "models/up.onnx", "--trust-external-data")
    assert trusted.returncode == 0, trusted.stderr
    assert "output b: float32 (3,) [3., 4., 5.]" in trusted.stdout


def test_convert_writes_a_model_onnx_accepts(cli: Cli, tmp_path: Path) -> None:
    done = cli("convert", EXAMPLE_MODEL, "--opset", "13", "-o", "ok.onnx")
    assert done.returncode == 0, done.stderr
    converted = onnx.load(tmp_path / "ok.onnx")
    assert [(o.domain, o.version) for o in converted.opset_import] == [("", 13)]
    onnx.checker.check_model(converted)


def test_split_writes_the_parts_numpy_would_cut(cli: Cli, tmp_path: Path) -> None:
    x = np.arange(21).reshape(3, 7)
    np.save(tmp_path / "x.npy", x)
    result = cli("split", "x.npy", "--sizes", "2,5", "--axis", "1", "--out", "parts")
    assert result.returncode == 0, result.stderr
    for index, expected in enumerate(np.split(x, [2], axis=1)):
        np.testing.assert_array_equal(np.load(tmp_path / "parts" / f"x_{index}.npy"), expected)


def test_a_usage_error_exits_2_with_the_usage_and_no_traceback(cli_many: CliMany) -> None:
    for result in cli_many([["split", "x.npy"], []]):
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


def test_every_limit_has_an_option_and_a_row_of_the_limits_table() -> None:
    from dataclasses import fields

    from splitops import Limits
    from splitops.cli import build_parser

    table = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    helps = " ".join(command.format_help() for command in commands.values())
    for field in fields(Limits):
        assert f"| `{field.name}` |" in table, field.name
        assert "--" + field.name.replace("_", "-") in helps, field.name


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["check", str(EXAMPLE_MODEL), "--bogus"], "unrecognized arguments: --bogus"),
        (["run", str(EXAMPLE_MODEL), "--json"], "unrecognized arguments: --json"),
        (
            ["check", str(EXAMPLE_MODEL), "--portability", "--runtime", "nosuch"],
            "no runtime is called 'nosuch'; the runtimes are onnxruntime, onnx.reference",
        ),
        (["check", str(EXAMPLE_MODEL), "--runtime", "onnxruntime"], "add --portability"),
    ],
)
def test_a_bad_option_exits_2_with_the_usage_of_its_command(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"usage: splitops {args[0]} "), captured.err
    assert says in captured.err
    assert captured.out == ""


@pytest.mark.parametrize("option", [["--dim", "batch=x"], ["--dim", "batch"], ["--input", "x"]])
def test_run_rejects_a_malformed_option_before_printing_anything(
    option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *option]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("splitops: error: ")


def _defect(*args: object, **kwargs: object) -> object:
    raise KeyError("a defect of splitops")


@pytest.mark.parametrize(
    ("args", "owner", "name"),
    [
        (["infer", str(EXAMPLE_MODEL)], "splitops.onnx", "infer_shapes"),
        (["check", str(EXAMPLE_MODEL)], "splitops.onnx", "check_model_counted"),
        (["run", str(EXAMPLE_MODEL)], "splitops.backend.SplitopsRep", "run"),
        (
            ["run", str(EXAMPLE_MODEL), "--engine", "onnxruntime"],
            "splitops.backend.OnnxruntimeRep",
            "run",
        ),
    ],
)
def test_a_defect_of_splitops_exits_4_in_every_command(
    args: list[str],
    owner: str,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Exit 3 is another operator's failure; a defect is 4 and says so, whichever command."""
    monkeypatch.delenv("SPLITOPS_DEBUG", raising=False)
    monkeypatch.setattr(f"{owner}.{name}", _defect)
    assert main(args) == 4
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.startswith("splitops: error: internal error, a defect of splitops: KeyError")


def test_run_on_onnxruntime_of_a_split_leaving_an_output_out_ends_by_no_signal(
    cli: Cli, tmp_path: Path, build_model: Build
) -> None:
    """onnxruntime dies by SIGSEGV running such a node as it is: the engine names the output."""
    node = helper.make_node("Split", ["x"], ["a", "", "b"], num_outputs=3, name="thirds")
    save_model(build_model([node], {"x": (F, [6])}, ["a", "b"], opset=18), tmp_path / "gap.onnx")
    done = cli("run", "gap.onnx", "--engine", "onnxruntime")
    assert done.returncode == 0, done.stderr
    assert "engine: onnxruntime" in done.stderr
    assert "output a: float32 (2,)" in done.stdout
    assert "output b: float32 (2,)" in done.stdout
