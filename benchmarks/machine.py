"""The machine and software a run measured: CPU model, cores, memory, load, versions.

>>> info = collect()
>>> sorted(info)[:3]
['cores', 'cpu', 'kernel']
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

__all__ = ["collect", "describe"]

_PACKAGES = ("splitops", "numpy", "onnxruntime", "onnx", "torch", "pyperf", "cupy")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def collect() -> dict[str, Any]:
    """What a reader needs to compare these figures with their own."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": {p: v for p in _PACKAGES if (v := _version(p)) is not None},
        "threads": {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
    }


def describe(info: dict[str, Any]) -> str:
    """One paragraph for the terminal and the Markdown report."""
    versions = ", ".join(f"{name} {version}" for name, version in info["versions"].items())
    load = " ".join(str(v) for v in info["load_average"])
    return (
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory_gib']} GiB, "
        f"Linux {info['kernel']}, Python {info['python']}; load average {load}.\n"
        f"Versions: {versions}. One thread everywhere (OMP/BLAS env, torch.set_num_threads(1), "
        "onnxruntime intra/inter op threads 1)."
    )
