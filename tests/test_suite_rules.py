"""Rules of the test suite itself: it passes alike on a machine loaded many times over."""

from __future__ import annotations

import re
from pathlib import Path

from tests.processes import GUARD_SECONDS

TESTS = Path(__file__).resolve().parent


def test_no_test_bounds_a_subprocess_by_a_wall_clock_of_its_own() -> None:
    """Outside the benchmarks' checks (tests/perf), a subprocess's only wall-clock bound is
    the suite's guard: a per-test timeout of 120 s failed 134 hostile-model tests at load 6 to
    11 on 2 cores."""
    found = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if "perf" not in path.relative_to(TESTS).parts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\btimeout\s*=\s*[0-9]", line)
    ]
    assert found == []
    assert GUARD_SECONDS >= 1800
