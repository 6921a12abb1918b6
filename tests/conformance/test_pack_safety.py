"""``splitops conformance write`` touches nothing that is not a pack's, and ``run`` reads
nothing outside the pack: no link followed, no FIFO or device opened, no value read from
elsewhere, every read bounded; a pack whose data do not fit its model is the pack's fault
(exit 2), never the runtime's. Each attack is a real file, in a real process where a hang
would be the bug."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from tests.cli.conftest import one_error_line
from tests.processes import GUARD_SECONDS

from splitops.cli import ExitCode, main
from splitops.conformance import CASES, case_named, write_pack

SRC = Path(__file__).resolve().parents[2] / "src"
#: A case with two inputs and two outputs, and a SplitToSequence case.
SPLIT = "test_split_sizes_uint32_opset18"
SEQUENCE = "test_split_to_sequence_scalar_uneven_7_by_3_opset11"


def _command(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m splitops ARGS`` in ``cwd``: a process of its own, where a hang is the
    bug (bounded by the suite's last-resort guard)."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(SRC), os.environ.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, "-m", "splitops", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    folder = tmp_path / "pack"
    write_pack(folder, [case_named(SPLIT), case_named(SEQUENCE)])
    return folder


def _run(capsys: Any, pack: Path) -> tuple[int, str]:
    code = main(["conformance", "run", str(pack), "--runtime", "onnx.reference"])
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return code, lines[0]


def _tree(folder: Path) -> dict[str, str]:
    """Every file below ``folder`` by path, with a digest of its bytes (links by target)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(folder))] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[str(path.relative_to(folder))] = "folder"
    return found


# --- write: only an empty folder or a pack's is written, and the one given is named -----------


@pytest.mark.parametrize(
    "extra",
    ["notes.txt", "test_split_sizes_uint32_opset18/notes.txt",
     "test_split_sizes_uint32_opset18/test_data_set_0/input_9.npy", "unlisted_case/model.onnx",
     ".hidden"],
)  # fmt: skip
def test_a_pack_folder_that_also_holds_other_files_is_not_replaced(
    pack: Path, capsys: Any, extra: str
) -> None:
    (pack / extra).parent.mkdir(parents=True, exist_ok=True)
    (pack / extra).write_text("mine")
    before = _tree(pack.parent)
    code = main(["conformance", "write", str(pack)])
    error = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT
    assert error.startswith(f"splitops: error: cannot write {pack}: ")
    assert "no pack's" in error
    assert _tree(pack.parent) == before


def test_a_pack_holding_a_link_is_not_replaced(pack: Path, tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "mine.txt").write_text("keep")
    data = pack / SPLIT / "test_data_set_0"
    (data / "output_0.pb").unlink()
    os.symlink(tmp_path / "elsewhere" / "mine.txt", data / "output_0.pb")
    before = _tree(tmp_path)
    assert main(["conformance", "write", str(pack)]) == ExitCode.BAD_INPUT
    assert f"it holds {data / 'output_0.pb'}, which is no pack's" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_a_cases_json_beside_other_files_is_no_pack(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "cases.json").write_text('{"cases": []}')
    (tmp_path / "thesis.tex").write_text("mine")
    before = _tree(tmp_path)
    assert main(["conformance", "write", str(tmp_path)]) == ExitCode.BAD_INPUT
    assert capsys.readouterr().err == (
        f"splitops: error: cannot write {tmp_path}: it holds {tmp_path / 'thesis.tex'}, which "
        "is no pack's; name a new or empty folder, or a pack's\n"
    )
    assert _tree(tmp_path) == before


def test_writing_the_current_empty_folder_writes_the_pack_there(tmp_path: Path) -> None:
    done = _command(tmp_path, "conformance", "write", ".")
    assert done.returncode == ExitCode.OK, done.stderr
    assert done.stdout.startswith(f"wrote {len(CASES)} case(s) to .: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["cases.json", *(case.name for case in CASES)]
    )
    # And again over the pack it wrote, from inside it: replaced, nothing left beside it.
    again = _command(tmp_path, "conformance", "write", ".")
    assert again.returncode == ExitCode.OK, again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["cases.json", *(case.name for case in CASES)]
    )  # no temporary folder left, hidden or not


def test_a_failed_write_names_the_folder_given_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    done = _command(tmp_path, "conformance", "write", "file/pack")
    line = one_error_line(done)
    assert line.startswith("splitops: error: cannot write file/pack: ")
    assert ".splitops-" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# --- run: nothing outside the pack is read ------------------------------------------------


@pytest.mark.parametrize(
    "fifo", ["cases.json", f"{SPLIT}/model.onnx", f"{SPLIT}/test_data_set_0/input_0.pb",
             f"{SPLIT}/test_data_set_0/output_0.pb"],
)  # fmt: skip
def test_a_fifo_in_place_of_a_file_is_refused_without_waiting(pack: Path, fifo: str) -> None:
    """Opening a FIFO for reading waits for a writer, for ever: the command must not."""
    (pack / fifo).unlink()
    os.mkfifo(pack / fifo)
    done = _command(pack.parent, "conformance", "run", "pack", "--runtime", "onnx.reference")
    assert done.returncode == ExitCode.BAD_INPUT
    assert f"{fifo}: it is not a regular file" in one_error_line(done)


def test_a_value_linked_to_a_device_is_refused_unread(pack: Path, capsys: Any) -> None:
    data = pack / SPLIT / "test_data_set_0"
    (data / "input_0.pb").unlink()
    os.symlink("/dev/zero", data / "input_0.pb")
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert "input_0.pb: it is a symbolic link, which is not followed" in line


@pytest.mark.parametrize(
    "linked", [SPLIT, f"{SPLIT}/model.onnx", f"{SPLIT}/test_data_set_0",
               f"{SPLIT}/test_data_set_0/output_1.pb", "cases.json"],
)  # fmt: skip
def test_links_to_a_copy_outside_the_pack_are_not_followed(
    pack: Path, tmp_path: Path, capsys: Any, linked: str
) -> None:
    outside = tmp_path / "outside"
    os.rename(pack / linked, outside)
    os.symlink(outside, pack / linked)
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert f"{pack / linked}: it is a symbolic link, which is not followed" in line


def test_a_hard_link_to_a_file_outside_is_refused(pack: Path, tmp_path: Path, capsys: Any) -> None:
    value = pack / SPLIT / "test_data_set_0" / "input_0.pb"
    os.link(value, tmp_path / "outside.pb")
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert "input_0.pb: it has 2 hard links" in line


def test_a_value_keeping_its_data_outside_is_refused_unread(pack: Path) -> None:
    """onnx reads a tensor's external data from a path relative to the process's folder:
    the secret lies there, and must never reach the runtime."""
    (pack.parent / "secret.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    value = pack / SPLIT / "test_data_set_0" / "input_0.pb"
    tensor = onnx.TensorProto()
    tensor.ParseFromString(value.read_bytes())
    onnx.external_data_helper.set_external_data(tensor, "secret.bin")
    tensor.ClearField("raw_data")
    value.write_bytes(tensor.SerializeToString())
    done = _command(pack.parent, "conformance", "run", "pack", "--runtime", "onnx.reference")
    assert done.returncode == ExitCode.BAD_INPUT
    assert "keeps its data outside the file" in one_error_line(done)
    assert done.stdout == ""  # no case ran


def test_a_model_with_external_data_is_refused(pack: Path, capsys: Any) -> None:
    model = onnx.load(pack / SPLIT / "model.onnx")
    sizes = onnx.numpy_helper.from_array(np.array([2, 2], np.int64), "w")
    onnx.external_data_helper.set_external_data(sizes, "w.bin")
    sizes.ClearField("raw_data")
    model.graph.initializer.append(sizes)
    (pack / SPLIT / "w.bin").write_bytes(np.array([2, 2], np.int64).tobytes())
    onnx.save(model, pack / SPLIT / "model.onnx")
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert line.startswith(f"splitops: error: cannot load {pack / SPLIT / 'model.onnx'}: its ")
    assert "external data" in line


def test_a_value_claiming_more_elements_than_the_limit_is_refused_unallocated(
    pack: Path, capsys: Any
) -> None:
    value = pack / SPLIT / "test_data_set_0" / "input_0.pb"
    tensor = onnx.TensorProto(name="input", data_type=onnx.TensorProto.UINT32, dims=[2**40])
    value.write_bytes(tensor.SerializeToString())
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert "claim 1099511627776 elements or more, over the max_input_elements limit" in line


# --- run: a pack whose data do not fit its model is a bad pack ------------------------------


def _replace_value(path: Path, array: np.ndarray[Any, Any], name: str) -> None:
    path.write_bytes(onnx.numpy_helper.from_array(array, name).SerializeToString())


@pytest.mark.parametrize(
    ("file", "array", "said"),
    [
        ("input_0.pb", np.arange(5, dtype=np.uint32), "its inputs do not fit its model"),
        ("input_0.pb", np.arange(4, dtype=np.float32), "its inputs do not fit its model"),
        ("input_1.pb", np.array([2, 2], np.int32), "its inputs do not fit its model"),
        ("output_0.pb", np.arange(3, dtype=np.uint32), "does not fit the output 'output_1'"),
        ("output_1.pb", np.arange(2, dtype=np.int64), "does not fit the output 'output_2'"),
    ],
)
def test_data_that_do_not_fit_the_model_blame_the_pack(
    pack: Path, capsys: Any, file: str, array: np.ndarray[Any, Any], said: str
) -> None:
    _replace_value(pack / SPLIT / "test_data_set_0" / file, array, "v")
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert said in line


def test_a_case_listed_as_another_op_or_opset_is_a_bad_pack(pack: Path, capsys: Any) -> None:
    listing = json.loads((pack / "cases.json").read_text())
    listing["cases"][0]["opset"] = 13
    (pack / "cases.json").write_text(json.dumps(listing))
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert "cases.json lists it as Split-13, and its model holds Split at opset 18" in line


def test_a_sequence_value_of_sequences_is_refused(pack: Path, capsys: Any) -> None:
    inner = onnx.numpy_helper.from_list([np.zeros(2, np.float32)], "inner")
    outer = onnx.SequenceProto(name="o", elem_type=onnx.SequenceProto.SEQUENCE)
    outer.sequence_values.append(inner)
    (pack / SEQUENCE / "test_data_set_0" / "output_0.pb").write_bytes(outer.SerializeToString())
    code, line = _run(capsys, pack)
    assert code == ExitCode.BAD_INPUT
    assert "it is a sequence of something other than tensors" in line


def test_a_pack_an_earlier_splitops_wrote_is_replaced(pack: Path, capsys: Any) -> None:
    """Its cases.json had other fields ("valid"): the folders it lists are what count."""
    listing = json.loads((pack / "cases.json").read_text())
    for entry in listing["cases"]:
        entry["valid"] = entry.pop("expect") == "outputs"
        del entry["readings"], entry["control"]
    (pack / "cases.json").write_text(json.dumps(listing))
    assert main(["conformance", "write", str(pack)]) == ExitCode.OK
    capsys.readouterr()
    assert sorted(p.name for p in pack.iterdir()) == sorted(
        ["cases.json", *(case.name for case in CASES)]
    )


@pytest.mark.parametrize("stage", ["building", "moving in"])
def test_a_write_broken_off_leaves_the_old_pack_as_it_was(
    pack: Path, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    from splitops.conformance import _pack

    before = _tree(pack.parent)
    if stage == "building":

        def broken(folder: Path, case: Any) -> None:
            raise KeyboardInterrupt

        monkeypatch.setattr(_pack, "_write_case", broken)
    else:
        renames: list[int] = []
        real = os.rename

        def rename(source: Any, target: Any) -> None:
            renames.append(1)
            if len(renames) == 4:  # the old pack moved aside, one new entry moved in
                raise KeyboardInterrupt
            real(source, target)

        monkeypatch.setattr(_pack.os, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        write_pack(pack)
    monkeypatch.undo()
    assert _tree(pack.parent) == before
