"""Run a command and say what it cost: wall time, and peak resident memory, both of its
largest process (what ``/usr/bin/time -v`` reports as "Maximum resident set size") and of
all its processes at once (the command and every child it starts, summed, sampled every
0.1 s). Exit with the command's status, or 1 when the summed peak exceeds ``--budget``.

    python .ci/peak.py --budget 2e9 -- pytest

The README quotes what this prints for the test suite in CI. Linux only (it reads /proc).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in task.read_text().split()]
        except OSError:
            continue
    return found


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and its descendants now."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue  # it ended meanwhile
        pending += _children(pid)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, help="the most bytes all processes may hold")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    began = time.monotonic()
    process = subprocess.Popen(command)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.1):
            peak = max(peak, _tree_rss(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    status = process.wait()
    done.set()
    sampler.join()
    seconds = time.monotonic() - began
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(
        f"peak.py: {' '.join(command)}: exit {status}, {seconds / 60:.1f} min, peak memory "
        f"{largest / 1e9:.2f} GB in its largest process, {peak / 1e9:.2f} GB in all at once",
        file=sys.stderr,
    )
    if args.budget is not None and peak > args.budget:
        print(f"peak.py: over the budget of {args.budget / 1e9:.2f} GB", file=sys.stderr)
        return status or 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
