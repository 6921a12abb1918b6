"""Where the benchmarks write: the committed results only when asked.

A run writes into :data:`LATEST` (``benchmarks/results/latest``, which git ignores) unless
``--out`` names a folder, so that measuring on a laptop leaves the committed figures and
documents as they are; ``--out benchmarks/results`` (or ``--out docs`` for the benchmarks that
write a document) replaces them. ``--quick`` runs write into :data:`QUICK`, ignored too.

>>> default_out(quick=False).relative_to(RESULTS.parent).as_posix()
'results/latest'
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["LATEST", "QUICK", "RESULTS", "add_out", "default_out"]

#: The committed results.
RESULTS = Path(__file__).resolve().parent / "results"
#: Where a full run writes unless ``--out`` says otherwise.
LATEST = RESULTS / "latest"
#: Where a ``--quick`` run writes unless ``--out`` says otherwise.
QUICK = RESULTS / "quick"


def default_out(*, quick: bool) -> Path:
    """The folder a run writes into when ``--out`` names none."""
    return QUICK if quick else LATEST


def add_out(parser: argparse.ArgumentParser, *, default: Path | None = None) -> None:
    """The ``--out`` option every benchmark takes: its results folder, ``default`` (``None``:
    :func:`default_out` of the run's ``--quick``) when left out."""
    parser.add_argument(
        "--out",
        type=Path,
        default=default,
        help="results folder (default: benchmarks/results/latest, not kept in git; "
        "--out benchmarks/results replaces the committed results)",
    )
