"""The pack catches the wrong rules it was made for: fake runtimes, each breaking one rule of
the spec and following it otherwise (:mod:`tests.conformance.spec_oracle`), run every case
of a written pack, and :func:`splitops.conformance.judge` must fail them where they break
it, and only there."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conformance.spec_oracle import SPEC, RefusedError, Rules, run_model

from splitops.conformance import CaseResult, PackCase, judge, read_pack, write_pack


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
        "test_split_to_sequence_scalar_keepdims_0_ignored_opset11",
        "test_split_to_sequence_sizes_keepdims_0_ignored_opset11",
    }
    assert "expected sequence of 3 [float32 (2, 1)" in failures[0].detail
    assert "got sequence of 3 [float32 (2,)" in failures[0].detail


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
        assert (read.name, read.op, read.opset, read.why, read.valid) == (
            case.name,
            case.op,
            case.opset,
            case.why,
            case.valid,
        )
        assert judge(read, list(map(_as_output, case.outputs or ()))).passed == case.valid


def _as_output(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value
