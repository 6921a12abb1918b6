"""The targets that are counts, not timings: the plan cache, memory given back, threads.

Each check returns a JSON-ready dict with ``ok`` and what it saw; :mod:`benchmarks.targets`
turns them into PASS or FAIL lines.

>>> plan_cache_check(calls=10)["ok"]
True
>>> mixed_calls(seed=0, calls=50, torch=None)
[]
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

import splitops
from splitops.core import plan_cache_clear, plan_cache_info

__all__ = [
    "memory_check",
    "memory_checks",
    "mixed_calls",
    "plan_cache_check",
    "startup_check",
    "threads_check",
]

#: Start-up commands, timed as whole processes: what a user waits for.
STARTUP_COMMANDS = {
    "splitops --help": ["--help"],
    "splitops check split_tour.onnx": ["check", "EXAMPLE"],
}

#: The most resident memory a process may keep after ``copy=True`` parts are gone.
MEMORY_SLACK = 16 << 20


def plan_cache_check(calls: int = 100) -> dict[str, Any]:
    """``calls`` identical Splits (sizes as an array, then ``num_outputs``) and SplitToSequences
    must each plan once and hit the cache on every later call."""
    x = np.zeros((4, 6), np.float32)
    seen = {}
    for name, call in (
        ("split array", lambda: splitops.split(x, np.array([2, 4]), axis=1)),
        ("num_outputs", lambda: splitops.split(x, num_outputs=2, axis=1)),
        ("sequence", lambda: splitops.split_to_sequence(x, 2, axis=1)),
    ):
        plan_cache_clear()
        for _ in range(calls):
            call()
        info = plan_cache_info()
        seen[name] = {"hits": info["hits"], "misses": info["misses"]}
    ok = all(v == {"hits": calls - 1, "misses": 1} for v in seen.values())
    return {"calls": calls, **seen, "ok": ok}


_MEMORY_PROBE = """
import gc, sys
import numpy as np, splitops
{imports}
def rss():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

x = {make}
before = rss()
parts = splitops.split(x, num_outputs=2, copy=True)
during = rss()
del parts
gc.collect()
after = rss()
print(before, during, after)
"""


#: How the memory probe makes its input, per library: (imports, the input of ``n`` floats).
_PROBE_INPUTS = {
    "numpy": ("", "np.ones(({n},), np.float32)"),
    "torch": ("import torch\n", "torch.ones({n}, dtype=torch.float32)"),
}


def memory_check(nbytes: int = 512 << 20, library: str = "numpy") -> dict[str, Any]:
    """``copy=True`` of ``nbytes`` of ``library`` (numpy or torch) in two in a fresh process;
    after ``del parts`` its resident memory must be back within :data:`MEMORY_SLACK` of where
    it was. Linux only (it reads ``/proc/self/status``)."""
    if not Path("/proc/self/status").exists():
        return {"ok": None, "why": "needs /proc/self/status (Linux)"}
    imports, make = _PROBE_INPUTS[library]
    code = _MEMORY_PROBE.format(imports=imports, make=make.format(n=nbytes // 4))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    before, during, after = map(int, done.stdout.split())
    return {
        "library": library,
        "nbytes": nbytes,
        "rss_before": before,
        "rss_with_parts": during,
        "rss_after_del": after,
        "kept": after - before,
        "ok": after - before <= MEMORY_SLACK and during - before >= nbytes // 2,
    }


def memory_checks(nbytes: int) -> dict[str, Any]:
    """:func:`memory_check` on numpy, and on torch where it is installed: the worst of them
    (the most memory kept), with each one's figures under ``by_library``."""
    libraries = ["numpy"] + (["torch"] if importlib.util.find_spec("torch") else [])
    found = {library: memory_check(nbytes, library) for library in libraries}
    worst = max(found.values(), key=lambda result: result.get("kept", 0))
    oks = [result["ok"] for result in found.values()]
    ok = None if None in oks else all(oks)
    return {**worst, "ok": ok, "by_library": found}


def mixed_calls(seed: int, calls: int, torch: Any) -> list[str]:
    """``calls`` Splits and SplitToSequences of many shapes, enough to overflow the plan cache,
    on numpy (and on torch every third call when ``torch`` is given), each checked against
    numpy's own cut at bounds worked out here; returns what went wrong."""
    rng = np.random.default_rng(seed)
    wrong = []
    for i in range(calls):
        length = int(rng.integers(1, 3000))
        x = np.arange(2 * length, dtype=np.float32).reshape(2, length)
        count = int(rng.integers(1, 5))
        chunk = -(-length // count)
        if chunk * (count - 1) > length:  # Split-18 rejects it: cut in one part instead
            count, chunk = 1, length
        given = torch.from_numpy(x) if torch is not None and i % 3 == 0 else x
        try:
            if i % 2:  # Split-18: count parts, every one but the last of the chunk's length
                parts = splitops.split(given, num_outputs=count, axis=1)
                bounds = [chunk * k for k in range(1, count)]
            else:  # SplitToSequence: chunks, the rest last
                parts = splitops.split_to_sequence(given, chunk, axis=1)
                bounds = list(range(chunk, length, chunk))
        except Exception as error:  # reported, not raised: the check counts every failure
            wrong.append(f"call {i}: {type(error).__name__}: {error}")
            continue
        expected = np.split(x, bounds, axis=1)
        got = [np.asarray(p) for p in parts]
        if len(got) != len(expected) or any(
            not np.array_equal(a, b) for a, b in zip(got, expected, strict=True)
        ):
            wrong.append(f"call {i}: length {length}, count {count}, chunk {chunk}: wrong parts")
    return wrong


def threads_check(threads: int = 8, calls: int = 20_000) -> dict[str, Any]:
    """``threads`` threads making ``calls`` mixed calls each (numpy and, when installed, torch),
    with a switch interval short enough that they interleave inside the plan cache: every
    result must be right and no call may raise."""
    torch = importlib.import_module("torch") if importlib.util.find_spec("torch") else None
    wrong: list[str] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    plan_cache_clear()
    try:
        workers = [
            threading.Thread(target=lambda s=seed: wrong.extend(mixed_calls(s, calls, torch)))
            for seed in range(threads)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    info = plan_cache_info()
    return {
        "threads": threads,
        "calls_per_thread": calls,
        "torch": torch is not None,
        "plans_made": info["misses"],
        "wrong": wrong[:10],
        "ok": not wrong,
    }


def startup_check(runs: int = 7) -> dict[str, Any]:
    """The wall time of whole ``splitops`` processes (``--help``, and ``check`` of the shipped
    example model), the median of ``runs`` each: the command imports only what it uses."""
    import statistics
    import time

    from splitops.examples import EXAMPLE_MODEL

    seconds = {}
    for name, args in STARTUP_COMMANDS.items():
        command = [
            sys.executable,
            "-m",
            "splitops",
            *(str(EXAMPLE_MODEL) if a == "EXAMPLE" else a for a in args),
        ]
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, check=False, timeout=120)
            times.append(time.perf_counter() - started)
        seconds[name] = statistics.median(times)
    return {"runs": runs, "seconds": seconds, "ok": max(seconds.values()) < 0.5}
