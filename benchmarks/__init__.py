"""Benchmarks: splitops against onnxruntime, onnx.reference, numpy and torch.

Run from the repository root::

    python -m benchmarks           # full run, a few minutes; writes benchmarks/results/
    python -m benchmarks --quick   # smoke run, seconds: every peer checked, timings not kept

Timings come from pyperf (each benchmark in its own worker processes, values calibrated by
pyperf); every library is pinned to one thread. The suite prints a table of medians and
ratios, one PASS/FAIL line per performance target, and writes JSON, Markdown and PNG plots.
"""

from __future__ import annotations

import os

# Before numpy, torch or onnxruntime load: one thread each, here and in pyperf's workers.
for _variable in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ[_variable] = "1"
# jax (XLA's CPU client): one thread for its own computations.
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)
