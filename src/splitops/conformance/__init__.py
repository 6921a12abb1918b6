"""A conformance pack for Split and SplitToSequence, runnable by every runtime's own harness.

The cases are data (:data:`CASES`: a :class:`ConformanceCase` each, one node at one opset,
its inputs, the outputs the spec gives or ``None`` where the spec rejects it, and ``why``:
the wrong rule it catches). :func:`write_pack` writes them in ONNX's node-test layout,
which ``onnx_test_runner``, tract's suite and ``onnx.backend.test`` read; :func:`run_pack`
runs a pack on one runtime and :func:`judge` says whether an outcome passes a case;
:func:`upstream_sources` gives the valid cases as onnx's own node tests (``expect``).

>>> from splitops.conformance import CASES
>>> sorted({case.op for case in CASES})
['Split', 'SplitToSequence']
"""

from ._cases import CASES, ConformanceCase, case_named
from ._pack import CaseResult, PackCase, judge, read_pack, run_pack, summary, write_pack
from ._upstream import UPSTREAM_FILES, upstream_sources, write_upstream

__all__ = [
    "CASES",
    "UPSTREAM_FILES",
    "CaseResult",
    "ConformanceCase",
    "PackCase",
    "case_named",
    "judge",
    "read_pack",
    "run_pack",
    "summary",
    "upstream_sources",
    "write_pack",
    "write_upstream",
]
