"""``splitops conformance write`` and ``run``: the pack in ONNX's on-disk layout (read by onnx's
own loader and runner), run live on onnxruntime and onnx.reference, failing exactly the cases
each is known to fail, and bad input answered in one line with a documented exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx.backend.test.loader import load_model_tests
from tests.conformance.onnx_runner import run_tests

from splitops import backend
from splitops.cli import ExitCode, main
from splitops.conformance import CASES

VALID = {case.name for case in CASES if case.valid}
READ_TWO_WAYS = {case.name for case in CASES if case.readings}
ELEMENTS = {case.name: onnx.helper.np_dtype_to_tensor_dtype(case.inputs[0].dtype) for case in CASES}
SPLIT_1 = {case.name for case in CASES if case.valid and case.op == "Split" and case.opset == 1}
COMPLEX = {
    name
    for name, element in ELEMENTS.items()
    if element in (onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128)
}


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("conformance") / "pack"
    assert main(["conformance", "write", str(folder)]) == ExitCode.OK
    return folder


def _run(pack: Path, runtime: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["conformance", "run", str(pack), "--runtime", runtime])
    return code, capsys.readouterr().out.splitlines()


def _failed(lines: list[str]) -> dict[str, str]:
    """The lines of the cases a runtime failed, by case (not those it reads one of two ways)."""
    shown = dict(line.split(": ", 1) for line in lines[:-1])
    return {name: said for name, said in shown.items() if name not in READ_TWO_WAYS}


def _readings(lines: list[str]) -> dict[str, str]:
    shown = dict(line.split(": ", 1) for line in lines[:-1])
    return {name: said for name, said in shown.items() if name in READ_TWO_WAYS}


# --- the layout -----------------------------------------------------------------------------


def test_cases_json_lists_every_case_with_what_a_runtime_must_do(pack: Path) -> None:
    listed = json.loads((pack / "cases.json").read_text())["cases"]
    assert listed == [
        {
            "name": c.name,
            "op": c.op,
            "opset": c.opset,
            "why": c.why,
            "expect": "outputs" if c.valid else "refusal" if c.rejected else "readings",
            "readings": [
                {"key": r.key, "why": r.why, "rejects": r.outputs is None, "splitops": r.splitops}
                for r in c.readings
            ],
            "control": c.control,
        }
        for c in CASES
    ]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_case_is_a_model_and_a_data_set_with_outputs_only_where_valid(
    pack: Path, case: Any
) -> None:
    data = pack / case.name / "test_data_set_0"
    model = onnx.load(pack / case.name / "model.onnx")
    assert sorted(p.name for p in data.iterdir()) == sorted(
        [f"input_{i}.pb" for i in range(len(model.graph.input))]
        + [f"output_{i}.pb" for i in range(len(model.graph.output) if case.valid else 0)]
    )
    computing = [r.key for r in case.readings if r.outputs is not None]
    assert sorted(p.name for p in (pack / case.name).iterdir()) == sorted(
        ["model.onnx", "test_data_set_0", *(f"reading_{key}" for key in computing)]
    )


def test_onnx_own_loader_and_runner_read_the_pack(pack: Path, tmp_path: Path) -> None:
    """onnx.backend.test loads on-disk kinds of tests the way it loads this pack (a folder of
    ``test_*`` folders); its runner reads the data sets, sequences too, and compares with its
    own tolerance. On splitops' backend every valid case passes but one that onnx's runner
    cannot compare (docs/upstream/backend_test_runner.py is the fix proposed with the
    upstream files)."""
    found = load_model_tests(data_dir=str(pack.parent), kind=pack.name)
    assert sorted(test.name for test in found) == sorted(case.name for case in CASES)
    valid = tmp_path / "valid"
    valid.mkdir()
    for name in VALID:  # these harnesses know no "must be refused": the valid cases
        (valid / name).symlink_to(pack / name)
    count, failed = run_tests(backend, tmp_path, "valid")
    # onnx registers each test once per device; this backend runs on the CPU only.
    assert count == len(VALID)
    # onnx's runner compares a sequence by recursing into each element's rows as if they were
    # outputs: a sequence of string tensors fails there with "'str' object has no attribute
    # 'shape'", whatever the backend returns (onnx 1.23's assert_similar_outputs).
    strings = "test_split_to_sequence_string_opset11"
    assert failed == {f"{strings}_cpu": "AttributeError: 'str' object has no attribute 'shape'"}


# --- live runs ------------------------------------------------------------------------------

#: onnx.reference's Split and SplitToSequence slice with what they are given and check nothing
#: (onnx/reference/ops/op_split.py, op_split_to_sequence.py): a case the spec rejects is
#: refused only where numpy or Python fails on its own (an axis out of range, a chunk of 0, a
#: 2-d split, an output no part fills), and onnx.reference has no Split-1.
REFERENCE_COMPUTES = {
    "test_split_num_outputs_5_into_4_rejected_opset18": "float32 (2,) [1., 2.]; float32 (2,) "
    "[3., 4.]; float32 (1,) [5.]; float32 (0,) []",
    "test_split_equal_parts_not_divisible_rejected_opset13": "float32 (3,) [1., 2., 3.]; "
    "float32 (3,) [4., 5., 6.]; float32 (1,) [7.]",
    "test_split_sizes_sum_mismatch_rejected_opset18": "float32 (2,) [1., 2.]; float32 (2,) "
    "[3., 4.]",
    "test_split_sizes_negative_rejected_opset18": "float32 (4,) [1., 2., 3., 4.]; float32 (1,) "
    "[5.]",
    "test_split_sizes_and_num_outputs_rejected_opset18": "float32 (2,) [1., 2.]; float32 (2,) "
    "[3., 4.]",
    "test_split_neither_sizes_nor_num_outputs_rejected_opset18": "float32 (2,) [1., 2.]; "
    "float32 (2,) [3., 4.]",
    "test_split_int32_sizes_rejected_opset18": "float32 (2,) [1., 2.]; float32 (2,) [3., 4.]",
    "test_split_int32_sizes_rejected_opset13": "float32 (2,) [1., 2.]; float32 (2,) [3., 4.]",
    "test_split_attribute_negative_size_rejected_opset11": "float32 (4,) [1., 2., 3., 4.]; "
    "float32 (1,) [5.]",
    "test_split_bfloat16_rejected_opset11": "bfloat16 (2,) [1., 2.]; bfloat16 (2,) [3., 4.]",
    "test_split_more_sizes_than_outputs_rejected_opset13": "float32 (2,) [1., 2.]; float32 "
    "(2,) [3., 4.]",
    "test_split_to_sequence_scalar_negative_rejected_opset11": "sequence of 0 []",
    "test_split_to_sequence_sizes_sum_mismatch_rejected_opset11": "sequence of 2 [float32 (1,) "
    "[1.], float32 (2,) [2., 3.]]",
    "test_split_to_sequence_sizes_negative_rejected_opset11": "sequence of 2 [float32 (4,) "
    "[1., 2., 3., 4.], float32 (1,) [5.]]",
    "test_split_to_sequence_bfloat16_rejected_opset11": "sequence of 2 [bfloat16 (2,) [1., "
    "2.], bfloat16 (2,) [3., 4.]]",
}


def test_onnx_reference_fails_split1_and_the_rejected_cases_it_computes(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _run(pack, "onnx.reference", capsys)
    failed = _failed(lines)
    assert code == ExitCode.RULE_BROKEN
    assert set(failed) == SPLIT_1 | set(REFERENCE_COMPUTES)
    for name in SPLIT_1:
        assert failed[name].startswith("refused: ")
        assert "version 1" in failed[name]
    for name, returned in REFERENCE_COMPUTES.items():
        assert failed[name] == f"must be refused, but returned {returned}"
    # Its SplitToSequence keeps the axis for any given split, and cuts an empty part for 0.
    assert _readings(lines) == {
        "test_split_to_sequence_scalar_1_keepdims_0_opset11": "reads it as keeps-axis",
        "test_split_to_sequence_sizes_with_zero_opset11": "reads it as empty-part",
    }
    passed = len(CASES) - len(failed) - len(READ_TWO_WAYS)
    assert lines[-1] == f"{passed} passed, {len(failed)} failed, 2 read two ways"


#: onnxruntime's SplitToSequence kernel takes these element types only (its CPU provider's
#: registration); complex types it has no kernel for at all, and no Split below version 2.
ORT_SEQUENCE_TYPES = {
    getattr(onnx.TensorProto, name)
    for name in ("FLOAT", "DOUBLE", "FLOAT16", "INT32", "INT64", "BOOL", "STRING")
}


def _onnxruntime_departures(version: tuple[int, ...]) -> set[str]:
    departures = SPLIT_1 | COMPLEX
    departures |= {
        case.name
        for case in CASES
        if case.valid
        and case.op == "SplitToSequence"
        and ELEMENTS[case.name] not in ORT_SEQUENCE_TYPES
    }
    departures |= {
        # a scalar split other than 1 with keepdims=0: it tries to drop the axis of chunks
        # of 2 and fails
        "test_split_to_sequence_scalar_2_keepdims_0_ignored_opset11",
        # it flattens a 2-d split instead of refusing it
        "test_split_to_sequence_2d_split_rejected_opset11",
        # it aborts (SIGABRT) on a node listing more outputs than num_outputs
        "test_split_more_outputs_than_num_outputs_rejected_opset18",
        # 1.32 refuses a node listing fewer outputs than num_outputs; 1.31 cut 4, 4
        "test_split_num_outputs_fewer_outputs_listed_opset18",
        "test_split_num_outputs_fewer_outputs_listed_uneven_opset18",
    }
    if version < (1, 32):  # an empty last part, and num_outputs=1 on an empty axis, refused
        departures |= {
            "test_split_num_outputs_empty_last_9_into_4_opset18",
            "test_split_num_outputs_one_empty_axis_opset18",
        }
    return departures


def test_onnxruntime_fails_exactly_its_known_departures(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    version = tuple(int(part) for part in onnxruntime.__version__.split(".")[:2])
    code, lines = _run(pack, "onnxruntime", capsys)
    failed = _failed(lines)
    assert code == ExitCode.RULE_BROKEN
    assert set(failed) == _onnxruntime_departures(version)
    # A crash is a crash: never a pass, never a refusal.
    crashed = failed["test_split_more_outputs_than_num_outputs_rejected_opset18"]
    assert crashed == "crashed: the runtime crashed (signal 6)"
    assert _readings(lines) == {
        "test_split_to_sequence_scalar_1_keepdims_0_opset11": "reads it as drops-axis",
        "test_split_to_sequence_sizes_with_zero_opset11": "reads it as empty-part",
    }
    if version >= (1, 32):
        fewer = failed["test_split_num_outputs_fewer_outputs_listed_opset18"]
        assert fewer.startswith("refused: ")
        assert "does not match num_outputs (4)" in fewer
    passed = len(CASES) - len(failed) - len(READ_TWO_WAYS)
    assert lines[-1] == f"{passed} passed, {len(failed)} failed, 2 read two ways"


def test_a_runtime_passing_every_case_exits_0(tmp_path: Path, capsys: Any) -> None:
    from splitops.conformance import write_pack

    passing = [case for case in CASES if case.valid and case.op == "Split" and case.opset == 18]
    write_pack(tmp_path / "pack", passing[:3])
    code, lines = _run(tmp_path / "pack", "onnx.reference", capsys)
    assert (code, lines) == (ExitCode.OK, ["3 passed, 0 failed"])


# --- bad input ------------------------------------------------------------------------------


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path, capsys: Any) -> None:
    code, out, err = _error(
        capsys, "conformance", "run", str(tmp_path / "no"), "--runtime", "onnx.reference"
    )
    assert (code, out) == (ExitCode.BAD_INPUT, "")
    assert err == [f"splitops: error: {tmp_path / 'no'}: no such folder. Write a pack with "
                   f"`splitops conformance write {tmp_path / 'no'}`."]  # fmt: skip


def test_a_folder_that_is_no_pack_is_one_line_and_exit_2(tmp_path: Path, capsys: Any) -> None:
    code, _, err = _error(capsys, "conformance", "run", str(tmp_path), "--runtime", "onnxruntime")
    assert code == ExitCode.BAD_INPUT
    assert err == [f"splitops: error: {tmp_path} is not a conformance pack: it has no cases.json. "
                   f"Write one with `splitops conformance write {tmp_path}`."]  # fmt: skip


def _listing(**entry: object) -> str:
    case = {"name": "a", "op": "Split", "opset": 18, "why": "", "expect": "outputs"}
    return json.dumps({"cases": [{**case, "readings": [], **entry}]})


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        ("not json", "is not a readable case list"),
        ('{"cases": [{"name": "a"}]}', "is not a case list"),
        (_listing(valid=True, expect=None), "is not a case list"),
        (_listing(expect="maybe"), "is not a case list"),
        (_listing(opset=True), "is not a case list"),
        (_listing(expect="readings"), "is not a case list"),
        (_listing(name="../up"), "names a case '../up' that is no folder name"),
        (_listing(name="gone"), "is not a whole pack: gone is missing (case gone)"),
        (
            _listing(expect="readings", readings=[
                {"key": "../x", "why": "", "rejects": True, "splitops": False}
            ]),
            "names a reading '../x' of a that is no name",
        ),
        ("[" * 100_000 + "]" * 100_000, "is not a readable case list: it nests too deep"),
        (
            _listing(opset=0).replace('"opset": 0', '"opset": ' + "9" * 5000),
            "is not a readable case list: a number of 5000 digits",
        ),
        (_listing(opset=float("nan")), "is not a readable case list: NaN is no JSON number"),
    ],
)  # fmt: skip
def test_a_broken_case_list_is_one_line_and_exit_2(
    tmp_path: Path, capsys: Any, listing: str, said: str
) -> None:
    (tmp_path / "cases.json").write_text(listing)
    code, _, err = _error(capsys, "conformance", "run", str(tmp_path), "--runtime", "onnxruntime")
    assert code == ExitCode.BAD_INPUT
    assert len(err) == 1
    assert said in err[0]


def test_an_unknown_runtime_is_a_usage_error_in_one_line(pack: Path, capsys: Any) -> None:
    code, _, err = _error(capsys, "conformance", "run", str(pack), "--runtime", "tensorrt")
    assert code == ExitCode.BAD_INPUT
    assert err == ["splitops: error: --runtime 'tensorrt' is no runtime splitops runs; choose one "
                   "of onnxruntime, onnx.reference, openvino, tract, tvm, tinygrad, "
                   "onnx2torch."]  # fmt: skip


def test_writing_over_a_folder_of_other_files_is_refused_and_keeps_them(
    tmp_path: Path, capsys: Any
) -> None:
    (tmp_path / "mine.txt").write_text("keep")
    code, _, err = _error(capsys, "conformance", "write", str(tmp_path))
    assert code == ExitCode.BAD_INPUT
    assert err == [f"splitops: error: cannot write {tmp_path}: it is a folder that holds files "
                   "and no pack; name a new or empty folder, or a pack's"]  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_writing_onto_a_file_is_refused_in_one_line(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "file").write_text("keep")
    code, _, err = _error(capsys, "conformance", "write", str(tmp_path / "file"))
    assert (code, len(err)) == (ExitCode.BAD_INPUT, 1)
    assert (tmp_path / "file").read_text() == "keep"


def test_writing_over_a_pack_replaces_it_whole(tmp_path: Path, capsys: Any) -> None:
    from splitops.conformance import write_pack

    write_pack(tmp_path / "pack", CASES[:2])
    assert main(["conformance", "write", str(tmp_path / "pack")]) == ExitCode.OK
    assert capsys.readouterr().out == (
        f"wrote {len(CASES)} case(s) to {tmp_path / 'pack'}: {len(VALID)} valid, "
        f"{sum(c.rejected for c in CASES)} that the spec rejects, {len(READ_TWO_WAYS)} that it "
        "says two ways\n"
    )
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == sorted(
        [case.name for case in CASES] + ["cases.json"]
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]  # no temporary folder left


def test_a_sequence_output_is_written_as_a_sequence_proto(pack: Path) -> None:
    name = "test_split_to_sequence_scalar_uneven_7_by_3_opset11"
    sequence = onnx.SequenceProto()
    sequence.ParseFromString((pack / name / "test_data_set_0" / "output_0.pb").read_bytes())
    parts = onnx.numpy_helper.to_list(sequence)
    assert [part.shape for part in parts] == [(3, 2), (3, 2), (1, 2)]
    assert np.concatenate(parts).ravel().tolist() == list(range(1, 15))


def test_the_pack_folder_gets_the_permissions_mkdir_gives(tmp_path: Path) -> None:
    import os
    import stat

    from splitops.conformance import write_pack

    write_pack(tmp_path / "pack", CASES[:1])
    os.mkdir(tmp_path / "plain")
    assert stat.S_IMODE((tmp_path / "pack").stat().st_mode) == stat.S_IMODE(
        (tmp_path / "plain").stat().st_mode
    )


def test_a_runtime_not_installed_is_one_line_saying_how_to_install_it(
    pack: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from splitops.onnx import Runtime

    monkeypatch.setattr(Runtime, "is_installed", lambda self: False)
    code, _, err = _error(capsys, "conformance", "run", str(pack), "--runtime", "openvino")
    assert code == ExitCode.BAD_INPUT
    assert err == ["splitops: error: openvino is not installed: pip install openvino"]
