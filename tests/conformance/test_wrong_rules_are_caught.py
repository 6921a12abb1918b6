"""The pack catches the wrong rules it was made for: fake runtimes, each breaking one rule of
the spec and following it otherwise (:mod:`tests.conformance.spec_oracle`), run every case
of a written pack, and :func:`splitops.conformance.judge` must fail them where they break
it, and only there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.conformance.spec_oracle import SPEC, RefusedError, Rules, run_model
from tests.conformance.test_cases import BUG_CLASSES

from splitops.conformance import CaseResult, PackCase, Verdict, judge, read_pack, write_pack
from splitops.onnx import RuntimeCrashError


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> list[PackCase]:
    folder = tmp_path_factory.mktemp("conformance") / "pack"
    write_pack(folder)
    return read_pack(folder)


def _failures(pack: list[PackCase], rules: Rules) -> list[CaseResult]:
    """The valid cases a runtime computing by ``rules`` fails."""
    results = []
    for case in pack:
        if not case.valid:
            continue
        try:
            outcome: list[object] | Exception = run_model(case.model, case.feeds, rules)
        except RefusedError as refusal:
            outcome = refusal
        results.append(judge(case, outcome))
    return [result for result in results if not result.passed]


def test_a_runtime_that_follows_the_spec_passes_every_valid_case(pack: list[PackCase]) -> None:
    assert _failures(pack, SPEC) == []


def test_a_balanced_split18_like_numpy_array_split_is_caught(pack: list[PackCase]) -> None:
    failed = {result.name for result in _failures(pack, Rules(num_outputs="balanced"))}
    assert {
        "test_split_num_outputs_uneven_10_into_4_opset18",
        "test_split_num_outputs_uneven_13_into_5_opset18",
        "test_split_num_outputs_empty_last_9_into_4_opset18",
        "test_split_num_outputs_fewer_outputs_listed_uneven_opset18",
    } <= failed
    # 7 into 3 (3, 3, 1 against 3, 2, 2) fails too: every failure is an uneven num_outputs.
    assert all("num_outputs" in name for name in failed)


def test_a_split_to_sequence_that_squeezes_despite_a_split_is_caught(
    pack: list[PackCase],
) -> None:
    failures = _failures(pack, Rules(squeeze_despite_split=True))
    assert {result.name for result in failures} == {
        "test_split_to_sequence_scalar_2_keepdims_0_ignored_opset11",
        "test_split_to_sequence_sizes_keepdims_0_ignored_opset11",
    }
    assert all(result.verdict is Verdict.WRONG for result in failures)
    assert "expected sequence of 3 [float32 (2, 2)" in failures[0].detail
    assert "float32 (2,) [5., 10.]" in failures[0].detail


def _named(pack: list[PackCase], name: str) -> PackCase:
    return next(case for case in pack if case.name == name)


@pytest.mark.parametrize("item", BUG_CLASSES)
def test_each_bug_class_is_caught_by_its_case(pack: list[PackCase], item: str) -> None:
    """A runtime that slices what it is given, checking none of these rules, accepts each
    case; one that refuses it passes."""
    case = _named(pack, BUG_CLASSES[item])
    result = judge(case, run_model(case.model, case.feeds))
    assert result.verdict is Verdict.ACCEPTS
    assert result.detail.startswith("must be refused, but returned ")
    assert judge(case, RefusedError("no")).passed


@pytest.mark.parametrize(
    ("name", "rules", "reading"),
    [
        ("test_split_to_sequence_scalar_1_keepdims_0_opset11", SPEC, "drops-axis"),
        (
            "test_split_to_sequence_scalar_1_keepdims_0_opset11",
            Rules(scalar_one_keeps_axis=True),
            "keeps-axis",
        ),
        ("test_split_to_sequence_sizes_with_zero_opset11", SPEC, "empty-part"),
    ],
)
def test_a_case_read_two_ways_says_which_reading_a_runtime_follows(
    pack: list[PackCase], name: str, rules: Rules, reading: str
) -> None:
    case = _named(pack, name)
    result = judge(case, run_model(case.model, case.feeds, rules))
    assert (result.verdict, result.reading) == (Verdict.READING, reading)
    assert not result.passed
    assert not result.failed


def test_a_refusal_follows_the_reading_that_rejects_and_no_other(pack: list[PackCase]) -> None:
    zero = judge(_named(pack, "test_split_to_sequence_sizes_with_zero_opset11"), RefusedError("0"))
    assert (zero.verdict, zero.reading) == (Verdict.READING, "rejected")
    # Both readings of the scalar 1 compute: a refusal is a refusal.
    scalar = judge(
        _named(pack, "test_split_to_sequence_scalar_1_keepdims_0_opset11"), RefusedError("no")
    )
    assert scalar.verdict is Verdict.REFUSED
    assert scalar.failed


def test_outputs_no_reading_gives_are_wrong(pack: list[PackCase]) -> None:
    case = _named(pack, "test_split_to_sequence_scalar_1_keepdims_0_opset11")
    result = judge(case, [[np.zeros((2, 3), np.float32)]])
    assert result.verdict is Verdict.WRONG
    assert result.detail.startswith("reads it as neither drops-axis or keeps-axis")


@pytest.mark.parametrize("rejected", [True, False])
def test_a_crash_is_never_a_pass_nor_a_refusal(pack: list[PackCase], rejected: bool) -> None:
    case = next(case for case in pack if case.rejected == rejected and not case.readings)
    result = judge(case, RuntimeCrashError("the runtime crashed (signal 6)"))
    assert result.verdict is Verdict.CRASH
    assert result.failed
    assert result.detail == "crashed: the runtime crashed (signal 6)"


def test_a_refusal_of_fewer_listed_outputs_than_num_outputs_is_caught(
    pack: list[PackCase],
) -> None:
    failures = _failures(pack, Rules(refuse_fewer_outputs=True))
    assert {result.name for result in failures} == {
        "test_split_num_outputs_fewer_outputs_listed_opset18",
        "test_split_num_outputs_fewer_outputs_listed_uneven_opset18",
    }
    assert all(result.detail.startswith("refused: 2 outputs listed") for result in failures)


def test_a_rejected_case_passes_only_by_refusing(pack: list[PackCase]) -> None:
    case = next(case for case in pack if case.name.startswith("test_split_num_outputs_5_into"))
    assert judge(case, RefusedError("no")).passed
    result = judge(case, run_model(case.model, case.feeds))
    assert not result.passed
    assert result.detail.startswith("must be refused, but returned float32 (2,) [1., 2.]")


def test_a_valid_case_fails_on_missing_outputs_or_another_element_type(
    pack: list[PackCase],
) -> None:
    case = next(case for case in pack if case.name == "test_split_sizes_uint32_opset18")
    parts = run_model(case.model, case.feeds)
    assert judge(case, parts).passed
    assert "returned 1 output(s), expected 2" in judge(case, parts[:1]).detail
    widened = [part.astype("int64") for part in parts]
    assert judge(case, widened).detail.startswith("output_1: expected uint32 (2,)")


def test_the_pack_reads_back_what_was_written(tmp_path: Path) -> None:
    from splitops.conformance import CASES

    write_pack(tmp_path / "pack")
    for case, read in zip(CASES, read_pack(tmp_path / "pack"), strict=True):
        assert (read.name, read.op, read.opset, read.why, read.valid, read.rejected) == (
            case.name,
            case.op,
            case.opset,
            case.why,
            case.valid,
            case.rejected,
        )
        assert [(r.key, r.why, r.splitops) for r in read.readings] == [
            (r.key, r.why, r.splitops) for r in case.readings
        ]
        assert judge(read, list(map(_as_output, case.outputs or ()))).passed == case.valid
        for reading in case.readings:
            if reading.outputs is not None:
                result = judge(read, list(map(_as_output, reading.outputs)))
                assert result.reading == reading.key


def _as_output(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value
