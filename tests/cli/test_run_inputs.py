"""``splitops run`` in process: generated inputs, given inputs, written outputs, and the
example model shipped in the package."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper

from splitops.cli import main
from splitops.core import current_limits
from splitops.examples import EXAMPLE_MODEL
from splitops.examples.build import build_example
from splitops.onnx.model._io import save_model

Build = Callable[..., ModelProto]


def test_the_committed_example_is_what_the_build_script_writes() -> None:
    assert EXAMPLE_MODEL.read_bytes() == build_example().SerializeToString()


@pytest.fixture
def many_types(tmp_path: Path, build_model: Build) -> Path:
    """One Split per input: strings, bools and uint8, with symbolic dims."""
    nodes = [
        helper.make_node("Split", [name], [f"{name}_a", f"{name}_b"], axis=1, num_outputs=2)
        for name in ("words", "flags", "bytes")
    ]
    inputs = {
        "words": (TensorProto.STRING, ["rows", 4]),
        "flags": (TensorProto.BOOL, [2, 2]),
        "bytes": (TensorProto.UINT8, ["rows", 6]),
    }
    outputs = [f"{n}_{p}" for n in inputs for p in "ab"]
    save_model(build_model(nodes, inputs, outputs, opset=18), tmp_path / "types.onnx")
    return tmp_path / "types.onnx"


def test_inputs_are_generated_from_declared_types_and_dims(
    many_types: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(many_types), "--dim", "rows=3", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "input words: object (3, 4)" in out
    assert "input flags: bool (2, 2)" in out
    assert "input bytes: uint8 (3, 6)" in out
    words = np.load(tmp_path / "o" / "words_a.npy")
    assert words.dtype.kind == "U"
    assert words.shape == (3, 2)
    assert np.load(tmp_path / "o" / "bytes_b.npy").dtype == np.uint8


def test_the_seed_decides_the_generated_values(
    many_types: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for seed in ("1", "1", "2"):
        assert main(["run", str(many_types), "--seed", seed]) == 0
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_symbolic_dims_default_to_one(many_types: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(many_types)]) == 0
    assert "input bytes: uint8 (1, 6)" in capsys.readouterr().out


def test_a_generated_input_over_the_size_limit_is_refused(
    many_types: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limit = current_limits().max_input_elements
    rows = limit // 6 + 1
    assert main(["run", str(many_types), "--dim", f"rows={rows}"]) == 2
    assert f"over the max_input_elements limit of {limit}:" in capsys.readouterr().err


def test_a_given_input_must_have_the_declared_type_and_static_dims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "wide.npy", np.zeros((2, 8), dtype=np.float32))
    np.save(tmp_path / "ints.npy", np.zeros((2, 7), dtype=np.int64))
    assert main(["run", "--input", f"x={tmp_path / 'wide.npy'}"]) == 2
    error = capsys.readouterr().err
    assert "--input x (" in error
    assert "declares tensor(float) [batch, 7], but an array of float (2, 8) was given" in error
    assert "dim 1 must be 7" in error
    assert main(["run", "--input", f"x={tmp_path / 'ints.npy'}"]) == 2
    assert "its element type must be float" in capsys.readouterr().err


def test_a_given_input_fills_symbolic_dims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "x.npy", np.arange(35, dtype=np.float32).reshape(5, 7))
    assert main(["run", "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "output quarter_3: float32 (5, 1) [6., 13., 20., 27., 34.]" in capsys.readouterr().out


def test_bfloat16_outputs_are_written_as_float32(
    tmp_path: Path, build_model: Build, capsys: pytest.CaptureFixture[str]
) -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    model = build_model([node], {"x": (TensorProto.BFLOAT16, [4])}, ["a", "b"], opset=18)
    save_model(model, tmp_path / "bf16.onnx")
    x = np.array([1.5, 2.5, -3.0, 4.0], dtype=ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", x)
    args = ["run", str(tmp_path / "bf16.onnx"), "--out", str(tmp_path / "o")]
    # .npy cannot hold bfloat16, so the input comes generated; the outputs must be float32.
    assert main(args) == 0
    capsys.readouterr()
    part = np.load(tmp_path / "o" / "b.npy")
    assert part.dtype == np.float32
    assert part.shape == (2,)


@pytest.mark.parametrize("engine", ["reference", "onnxruntime"])
def test_types_numpy_lacks_are_generated_shown_and_written_widened(
    tmp_path: Path, build_model: Build, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """float8, int4 and float4e2m1 inputs are generated within what each type holds, shown
    and written as float32, int8 and float32 (``.npy`` holds none of them)."""
    pytest.importorskip("onnxruntime")
    types = {
        "f8": TensorProto.FLOAT8E4M3FN,
        "i4": TensorProto.INT4,
        "f4": TensorProto.FLOAT4E2M1,
    }
    nodes = [helper.make_node("Identity", [name], [f"{name}_out"]) for name in types]
    inputs = {name: (code, [2, 3]) for name, code in types.items()}
    model = build_model(nodes, inputs, [f"{name}_out" for name in types], opset=25)
    for output, code in zip(model.graph.output, types.values(), strict=True):
        output.type.tensor_type.elem_type = code
    save_model(model, tmp_path / "narrow.onnx")
    out = tmp_path / "o"
    args = ["run", str(tmp_path / "narrow.onnx"), "--engine", engine, "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "input f8: float8_e4m3fn (2, 3)" in printed
    assert "input i4: int4 (2, 3)" in printed
    assert "output f4_out: float4_e2m1fn (2, 3)" in printed
    written = {name: np.load(out / f"{name}_out.npy") for name in types}
    assert {name: array.dtype.name for name, array in written.items()} == {
        "f8": "float32",
        "i4": "int8",
        "f4": "float32",
    }
    assert -8 <= written["i4"].min() <= written["i4"].max() <= 7
    assert np.abs(written["f4"]).max() <= 6


def test_output_names_become_distinct_safe_files_inside_the_out_folder(
    tmp_path: Path, build_model: Build, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["../escape", "x/y", "x_y"]
    node = helper.make_node("Split", ["x"], names, num_outputs=3)
    save_model(
        build_model([node], {"x": (TensorProto.FLOAT, [3])}, names, opset=18), tmp_path / "m.onnx"
    )
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    args = ["--input", f"x={tmp_path / 'x.npy'}", "--out", str(tmp_path / "o")]
    assert main(["run", str(tmp_path / "m.onnx"), *args]) == 0
    capsys.readouterr()
    written = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert len(written) == 3
    assert not (tmp_path / "escape.npy").exists()
    values = sorted(float(np.load(tmp_path / "o" / name)[0]) for name in written)
    assert values == [0.0, 1.0, 2.0]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="FIFOs are POSIX's")
@pytest.mark.parametrize("command", ["split", "run"])
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_an_array_file_that_is_no_regular_file_is_refused_unread(
    cli: Any, error_line: Any, tmp_path: Path, command: str, kind: str
) -> None:
    """Opening a FIFO for reading waits for a writer, for ever; /dev/zero never ends: each is
    refused by its type, before a byte is read (in a process of its own: a hang is the bug)."""
    import os

    if kind == "fifo":
        os.mkfifo(tmp_path / "x.npy")
    elif kind == "device":
        os.symlink("/dev/zero", tmp_path / "x.npy")
    else:
        (tmp_path / "x.npy").mkdir()
    if command == "split":
        done = cli("split", "x.npy", "--parts", "2")
    else:
        done = cli("run", str(EXAMPLE_MODEL), "--input", "x=x.npy")
    assert done.returncode == 2
    assert error_line(done).endswith(
        "x.npy: it is not a regular file (a folder, a device or a pipe)."
    )
