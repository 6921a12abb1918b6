"""Run a command and say what it cost: wall time, and peak memory, both of its largest
process (its resident set, what ``/usr/bin/time -v`` reports as "Maximum resident set size")
and of all its processes at once (the command and every child it starts, their proportional
set sizes summed, sampled every 0.1 s). Exit with the command's status, or 1 when the summed
peak exceeds ``--budget``. The largest processes at the summed peak are listed.

    python .ci/peak.py --budget 2e9 -- pytest

The README quotes what this prints for the test suite in CI. Linux only (it reads /proc).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(child) for child in task.read_text().split()]
        except OSError:
            continue
    return found


def _layout(pid: int) -> tuple[str, ...]:
    """Where a process's code and stack lie (``/proc/<pid>/stat`` fields 26 to 28): the same
    in a child that has not yet run exec as in its parent, different after exec."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rfind(")") + 2 :].split()
    return tuple(fields[23:26])


def _tree(root: int) -> list[tuple[int, int, str]]:
    """Each process of the tree under ``root`` now: its proportional resident bytes (PSS:
    a page shared by several processes, a library's say, counts once in all), its resident
    bytes, and its command line."""
    found: list[tuple[int, int, str]] = []
    pending: list[tuple[int, tuple[str, ...]]] = [(root, ())]
    while pending:
        pid, parents = pending.pop()
        try:
            layout = _layout(pid)
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            after = _layout(pid)
        except (OSError, UnicodeDecodeError, IndexError):
            continue  # it ended meanwhile
        pending += [(child, after) for child in _children(pid)]
        if parents in (layout, after) or layout != after:
            # A child between fork and exec (Python's subprocess forks with vfork, which
            # shares its parent's memory map), or one that ran exec while it was read: its
            # pages were its parent's, counted there.
            continue
        fields = dict(line.split(":", 1) for line in rollup.splitlines()[1:] if ":" in line)
        kib = {name: int(value.split()[0]) * 1024 for name, value in fields.items()}
        found.append((kib.get("Pss", 0), kib.get("Rss", 0), command[:120]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, help="the most bytes all processes may hold")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    began = time.monotonic()
    process = subprocess.Popen(command)
    peak, at_peak = 0, []
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, at_peak
        while not done.wait(0.1):
            tree = _tree(process.pid)
            total = sum(pss for pss, _, _ in tree)
            if total > peak:
                peak, at_peak = total, tree

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    status = process.wait()
    done.set()
    sampler.join()
    seconds = time.monotonic() - began
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(
        f"peak.py: {' '.join(command)}: exit {status}, {seconds / 60:.1f} min, peak memory "
        f"{largest / 1e9:.2f} GB in its largest process, {peak / 1e9:.2f} GB in all at once "
        "(proportional set sizes)",
        file=sys.stderr,
    )
    for pss, rss, line in sorted(at_peak, reverse=True)[:5]:
        line = " ".join(line.split())
        print(
            f"  at the peak: {pss / 1e9:.2f} GB (resident {rss / 1e9:.2f}) {line}", file=sys.stderr
        )
    if args.budget is not None and peak > args.budget:
        print(f"peak.py: over the budget of {args.budget / 1e9:.2f} GB", file=sys.stderr)
        return status or 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
