"""What new users met: the command never loses or corrupts a file, never writes a model
onnx.checker rejects, and follows the conventions of command-line tools.

Every command here runs as a real process, as a user runs it.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops.cli import main
from splitops.examples import EXAMPLE_MODEL
from splitops.onnx.model._io import save_model

Cli = Callable[..., subprocess.CompletedProcess[str]]
ErrorLine = Callable[[subprocess.CompletedProcess[str]], str]
F = TensorProto.FLOAT
SRC = Path(__file__).resolve().parents[2] / "src"


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` through bash with ``pipefail`` (the status is the command's, not the
    reader's), ``splitops`` meaning this checkout's command."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    line = command.replace("splitops ", f"{sys.executable} -m splitops ")
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {line}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
    )


def _reduce_mean_18(tmp_path: Path) -> Path:
    """ReduceMean-18 with ``noop_with_empty_axes``, as the dynamo exporter writes it."""
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [
        helper.make_node(
            "ReduceMean", ["x", "axes"], ["m"], keepdims=1, noop_with_empty_axes=0, name="rm"
        ),
        helper.make_node("Split", ["m"], ["a", "b"], axis=0, num_outputs=2, name="halves"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info(n, F, [1, 1]) for n in "ab"],
        initializer=[axes],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    save_model(model, tmp_path / "rm18.onnx")
    return tmp_path / "rm18.onnx"


def test_convert_never_writes_a_model_the_full_checker_rejects(
    cli: Cli, error_line: ErrorLine, tmp_path: Path
) -> None:
    source = _reduce_mean_18(tmp_path)
    onnx.checker.check_model(onnx.load(source), full_check=True)  # the input is valid
    done = cli("convert", source, "--opset", "17", "-o", "rm17.onnx")
    assert done.returncode == 3
    line = error_line(done)
    assert "onnx.version_converter left a ReduceMean node" in line
    assert "noop_with_empty_axes" in line
    assert "Name: rm" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rm18.onnx"]


def test_every_model_convert_writes_passes_the_full_checker(cli: Cli, tmp_path: Path) -> None:
    for opset in (11, 13, 17, 21):
        done = cli("convert", EXAMPLE_MODEL, "--opset", str(opset), "-o", f"tour{opset}.onnx")
        assert done.returncode == 0, done.stderr
        onnx.checker.check_model(onnx.load(tmp_path / f"tour{opset}.onnx"), full_check=True)


@pytest.mark.parametrize(
    "command",
    [
        f"splitops run {EXAMPLE_MODEL} --dim batch=3 --out r | head -1",
        "splitops split x.npy --parts 4 --axis 1 --out r | head -1",
    ],
    ids=["run", "split"],
)
def test_out_files_are_written_when_stdout_closes_early(command: str, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.arange(14).reshape(2, 7))
    for _ in range(3):
        done = _shell(command, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        written = sorted(p.name for p in (tmp_path / "r").iterdir())
        assert len(written) in (4, 8), written
        assert not [name for name in written if not name.endswith(".npy")]
        for name in written:
            np.load(tmp_path / "r" / name)  # every file is whole


@pytest.mark.parametrize(
    "command",
    [
        f"splitops check {EXAMPLE_MODEL} --portability --json | head -1",
        f"splitops lower {EXAMPLE_MODEL} -o low.onnx --json | head -1",
    ],
    ids=["check --portability", "lower"],
)
def test_a_reader_closing_stdout_early_is_no_error(command: str, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    done = _shell(command, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr
    assert done.stdout == "[\n" if "lower" in command else done.stdout == "{\n"


def test_a_file_that_cannot_be_written_leaves_no_partial_file(
    cli: Cli, error_line: ErrorLine, tmp_path: Path
) -> None:
    np.save(tmp_path / "x.npy", np.arange(14).reshape(2, 7))
    (tmp_path / "r" / "x_1.npy").mkdir(parents=True)  # a folder where a part should go
    done = cli("split", "x.npy", "--parts", "2", "--axis", "1", "--out", "r")
    assert done.returncode == 2
    assert "cannot write" in error_line(done)
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["x_0.npy", "x_1.npy"]
    assert (tmp_path / "r" / "x_1.npy").is_dir()


#: Each option naming a file (``-o``) or a folder (``--out``) a command writes, as TARGET.
WRITERS = {
    "convert -o": ["convert", str(EXAMPLE_MODEL), "--opset", "13", "-o", "TARGET"],
    "infer -o": ["infer", str(EXAMPLE_MODEL), "-o", "TARGET"],
    "lower -o": ["lower", str(EXAMPLE_MODEL), "-o", "TARGET"],
    "run --out": ["run", "--out", "TARGET"],
    "split --out": ["split", "x.npy", "--parts", "2", "--out", "TARGET"],
}


def _write(writer: str, target: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main([str(target) if arg == "TARGET" else arg for arg in WRITERS[writer]])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("writer", WRITERS)
def test_o_and_out_alike_create_missing_folders(
    writer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", np.arange(6))
    target = tmp_path / "new" / "deeper" / "out"
    code, err = _write(writer, target, capsys)
    assert code == 0, err
    assert target.is_dir() if writer.endswith("--out") else target.is_file()


@pytest.mark.parametrize("writer", WRITERS)
def test_o_and_out_alike_name_the_file_in_the_way_and_no_temporary_file(
    writer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", np.arange(6))
    (tmp_path / "blocker").write_bytes(b"a file")
    code, err = _write(writer, Path("blocker") / "sub" / "out", capsys)
    assert code == 2
    assert err == "splitops: error: cannot write blocker/sub/out: blocker is a file, not a folder\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "x.npy"]


@pytest.mark.parametrize("writer", [w for w in WRITERS if w.endswith("-o")])
def test_o_naming_a_folder_is_refused_naming_it(
    writer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    code, err = _write(writer, Path("adir"), capsys)
    assert code == 2
    assert err == "splitops: error: cannot write adir: it is a folder; name a file in it\n"
    assert list((tmp_path / "adir").iterdir()) == []


@pytest.mark.parametrize("writer", [w for w in WRITERS if w.endswith("--out")])
def test_out_naming_a_file_is_refused_naming_it(
    writer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", np.arange(6))
    code, err = _write(writer, Path("x.npy"), capsys)
    assert code == 2
    assert err == "splitops: error: cannot write x.npy: it is a file; name a folder\n"


def test_an_error_of_writing_names_the_target_and_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failure while the file is written (a full disk, say) or renamed into place names
    the file asked for: the temporary file is splitops' own, and is gone."""

    def full_disk(source: str, target: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(source))

    monkeypatch.setattr(os, "replace", full_disk)
    monkeypatch.chdir(tmp_path)
    assert main(["convert", str(EXAMPLE_MODEL), "--opset", "13", "-o", "m.onnx"]) == 2
    err = capsys.readouterr().err
    assert err == "splitops: error: cannot write m.onnx: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_written_files_get_the_permissions_a_plain_open_gives(cli: Cli, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        done = cli("convert", str(EXAMPLE_MODEL), "--opset", "13", "-o", "new.onnx")
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "new.onnx").stat().st_mode & 0o777 == 0o644  # not a temp file's 600
        (tmp_path / "kept.onnx").write_bytes(b"an older file")
        (tmp_path / "kept.onnx").chmod(0o640)
        done = cli("convert", str(EXAMPLE_MODEL), "--opset", "13", "-o", "kept.onnx")
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "kept.onnx").stat().st_mode & 0o777 == 0o640  # the replaced file's
    finally:
        os.umask(old)


def _negative_dim_model(tmp_path: Path) -> Path:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, [-(2**28), 4])],
        [helper.make_tensor_value_info(n, F, [None, 2]) for n in "ab"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    (tmp_path / "negative.onnx").write_bytes(model.SerializeToString())
    return tmp_path / "negative.onnx"


def test_run_refuses_a_negative_declared_dim_in_one_line(
    cli: Cli, error_line: ErrorLine, tmp_path: Path
) -> None:
    done = cli("run", _negative_dim_model(tmp_path))
    assert done.returncode == 2
    assert "declares the dim -268435456, and no tensor has a negative length" in error_line(done)


def _constant_sizes_model(tmp_path: Path) -> Path:
    """A TorchScript-style Split-13: sizes from a Constant node, a path-like node name."""
    nodes = [
        helper.make_node("Constant", [], ["sizes"], value_ints=[3, 4]),
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1, name="/m/block/Split"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["batch", 7])],
        [helper.make_tensor_value_info(n, F, ["batch", k]) for n, k in (("a", 3), ("b", 4))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    save_model(model, tmp_path / "torchscript.onnx")
    return tmp_path / "torchscript.onnx"


def test_run_shows_sizes_read_from_a_constant_node_under_a_single_slash(
    cli: Cli, tmp_path: Path
) -> None:
    done = cli("run", _constant_sizes_model(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "node main/m/block/Split: Split-13 axis=1 split=[3, 4] (input 'sizes')" in done.stdout
    assert "//" not in done.stdout


def test_infer_json_lists_every_split_output(cli: Cli, tmp_path: Path) -> None:
    done = cli("infer", _constant_sizes_model(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(row["location"], row["output"], row["type"]) for row in rows] == [
        ("main/m/block/Split", "a", "tensor(float) [batch, 3]"),
        ("main/m/block/Split", "b", "tensor(float) [batch, 4]"),
    ]
    assert {row["version"] for row in rows} == {"Split-13"}


def test_version_prints_the_package_version(cli: Cli) -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"splitops {splitops.__version__}"


@pytest.mark.parametrize("opset", ["0", "99", "-3", "x"])
def test_a_target_opset_out_of_range_is_a_usage_error(cli: Cli, opset: str) -> None:
    done = cli("convert", EXAMPLE_MODEL, "--opset", opset, "-o", "out.onnx")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--opset: " in done.stderr
    assert "the target opset must be" in done.stderr


def test_each_command_help_lists_only_its_own_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["split", "--help"]) == 0
    split_help = capsys.readouterr().out.split("exit codes:")[1]
    assert [line.split()[0] for line in split_help.splitlines() if line[:4].strip()] == [
        "0",
        "1",
        "2",
    ]
    assert main(["convert", "--help"]) == 0
    convert_help = capsys.readouterr().out.split("exit codes:")[1]
    assert "version_converter" in convert_help
    assert "check found problems" not in convert_help


def test_split_of_a_model_file_asks_for_a_npy_file(
    cli: Cli, error_line: ErrorLine, tmp_path: Path
) -> None:
    done = cli("split", EXAMPLE_MODEL, "--parts", "2")
    assert done.returncode == 2
    line = error_line(done)
    assert "takes a NumPy .npy file" in line
    assert "`splitops run` runs models" in line
    assert "allow_pickle" not in line


def _loaded_after(args: list[str]) -> set[str]:
    """The top-level modules a process has imported after running ``args``."""
    code = (
        "import sys; from splitops.cli import main; main(sys.argv[1:]); "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True
    )
    return set(done.stdout.split()[-1000:])


def test_help_imports_no_array_library_and_no_onnx() -> None:
    loaded = _loaded_after(["--help"])
    assert {"numpy", "onnx", "sympy", "torch", "onnxruntime"}.isdisjoint(loaded)


def test_check_of_a_small_model_imports_no_runtime_and_no_torch() -> None:
    loaded = _loaded_after(["check", str(EXAMPLE_MODEL)])
    assert "onnx" in loaded
    # Its split axes are static: no symbolic dim needs sympy.
    assert {"torch", "onnxruntime", "jax", "dask", "transformers", "sympy"}.isdisjoint(loaded)


def test_the_readme_stays_short_enough_to_read_in_five_minutes() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert len(readme.split()) <= 1500
