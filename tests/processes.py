"""The suite's one wall-clock bound on the processes its tests start.

A test must not fail because the machine is slow: the work a hostile input may cause is bounded
by ``splitops.limits`` and by counters (nodes, parts, elements), and each test asserts those.
This bound is a last-resort guard against a hang, generous enough that a machine loaded many
times over never meets it; timings belong in the benchmarks.
"""

from __future__ import annotations

#: The most seconds a subprocess of a test may run before the test fails as hung.
GUARD_SECONDS = 1800
