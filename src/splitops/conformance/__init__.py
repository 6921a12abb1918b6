"""A conformance pack for Split and SplitToSequence, runnable by every runtime's own harness.

The cases are data (:data:`CASES`: a :class:`ConformanceCase` each, one node at one opset,
its inputs, the outputs the spec gives or ``None`` where the spec rejects it, each
:class:`Reading` where the spec's text is read two ways, and ``why``: the wrong rule it
catches). :func:`write_pack` writes them in ONNX's node-test layout, which
``onnx_test_runner``, tract's suite and ``onnx.backend.test`` read; :func:`run_pack` runs a
pack on one runtime and :func:`judge` gives an outcome's :class:`Verdict` (a crash is never a
pass); :func:`upstream_sources` gives the valid cases as onnx's own node tests (``expect``),
proposed to onnx in ``docs/upstream/`` with the two fixes onnx needs to pass them.

>>> from splitops.conformance import CASES
>>> sorted({case.op for case in CASES})
['Split', 'SplitToSequence']
"""

from ._cases import CASES, ConformanceCase, Reading, case_named
from ._pack import (
    CaseResult,
    PackCase,
    PackReading,
    Verdict,
    judge,
    read_pack,
    run_pack,
    summary,
    write_pack,
)
from ._upstream import UPSTREAM_FILES, upstream_sources, write_upstream

__all__ = [
    "CASES",
    "UPSTREAM_FILES",
    "CaseResult",
    "ConformanceCase",
    "PackCase",
    "PackReading",
    "Reading",
    "Verdict",
    "case_named",
    "judge",
    "read_pack",
    "run_pack",
    "summary",
    "upstream_sources",
    "write_pack",
    "write_upstream",
]
