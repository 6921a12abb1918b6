"""What one run of ``python -m benchmarks`` found, which the suite fills and the report and
the targets read."""

from __future__ import annotations

from dataclasses import dataclass, field

from .cases import Case
from .peers import Peer

__all__ = ["Measured"]


@dataclass
class Measured:
    """Everything a run found: checks, medians and values per case and peer."""

    cases: list[Case]
    peers: dict[str, list[Peer]]  # case id -> the peers run on it, splitops first
    checks: dict[str, dict[str, str]] = field(default_factory=dict)  # "ok" or what differs
    medians: dict[str, dict[str, float]] = field(default_factory=dict)  # seconds
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def median(self, case_id: str, peer: str) -> float | None:
        return self.medians.get(case_id, {}).get(peer)
