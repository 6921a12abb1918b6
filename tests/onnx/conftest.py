"""Shared pieces of the ONNX tests: a count of the nodes splitops runs, and a session summary
of the ONNX backend suite's results."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Generator, Iterator
from unittest import mock

import pytest

from splitops.onnx.run import _reference as onnx_reference


@pytest.fixture
def splitops_calls() -> Iterator[mock.MagicMock]:
    """Records every node splitops' op classes run inside an evaluator (and still runs it)."""
    original = onnx_reference._SplitopsOp._run_node
    with mock.patch.object(
        onnx_reference._SplitopsOp, "_run_node", autospec=True, side_effect=original
    ) as calls:
        yield calls


#: Outcomes of the ONNX suite's tests (classes ``OnnxBackend*Test``), by family.
_suite_outcomes: defaultdict[str, Counter[str]] = defaultdict(Counter)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    cls = getattr(item, "cls", None)
    family = getattr(getattr(item, "module", None), "family", None)
    in_suite = cls is not None and cls.__name__.startswith("OnnxBackend") and family is not None
    if in_suite and (report.when == "call" or (report.when == "setup" and not report.passed)):
        assert family is not None
        _suite_outcomes[family(item.name.removesuffix("_cpu"))][report.outcome] += 1
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _suite_outcomes:
        return
    total: Counter[str] = Counter()
    for outcomes in _suite_outcomes.values():
        total.update(outcomes)
    terminalreporter.section("ONNX backend test suite on splitops.backend")
    terminalreporter.line(
        f"{sum(total.values())} tests holding Split/SplitToSequence ran: "
        f"{total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped"
    )
    for family, outcomes in sorted(_suite_outcomes.items()):
        terminalreporter.line(
            f"  {family}: {sum(outcomes.values())} ran, {outcomes['passed']} passed"
        )
