"""``python -m benchmarks.corpus``: export the corpus of real ONNX models holding Split and
SplitToSequence nodes (:mod:`harness.corpus`, which names the models and says how they are
exported), one line a model::

    python -m benchmarks.corpus --out /tmp/corpus                  # every model, ~40 s
    python -m benchmarks.corpus --out /tmp/corpus --only gpt2 glu  # some of them
    python -m benchmarks.corpus --out /tmp/corpus --force --verify # re-export, run on onnxruntime
    python -m benchmarks.corpus --out /tmp/left --left-out --describe  # the left-out ones too

Each model prints one line: name, exporter, seconds, nodes, Split and SplitToSequence
nodes, file size. ``--verify`` adds the full onnx check and an onnxruntime run at two
input sizes compared with torch; ``--describe`` one line per split node (where its sizes
come from).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from harness.corpus import (
    export,
    is_cached,
    one_line,
    op_counts,
    selected,
    split_nodes,
    verify,
    version_stamp,
)


def _size(nbytes: int) -> str:
    return f"{nbytes / 1024:.0f} KiB" if nbytes < 1024**2 else f"{nbytes / 1024**2:.1f} MiB"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.corpus --out DIR [--only NAME ...] [--force] [--verify]
    [--left-out] [--describe]``; 1 if an export failed or a verification failed unflagged."""
    import onnx

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.corpus",
        description="Export the corpus of ONNX models with Split and SplitToSequence nodes.",
    )
    parser.add_argument("--out", required=True, type=Path, help="folder of the .onnx files")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these models only")
    parser.add_argument("--force", action="store_true", help="export even if cached")
    parser.add_argument("--verify", action="store_true", help="full check, onnxruntime run")
    parser.add_argument("--left-out", action="store_true", help="the left-out ones too")
    parser.add_argument("--describe", action="store_true", help="one line per split node")
    options = parser.parse_args(argv)
    try:
        entries = selected(options.only, left_out=options.left_out)
    except ValueError as error:
        parser.error(str(error))
    failures = 0
    exporting = checking = 0.0
    for entry in entries:
        began = time.perf_counter()
        cached = not options.force and is_cached(entry, options.out)
        try:
            path = export(entry, options.out, force=options.force)
        except Exception as error:  # one line per model, then go on
            failures += 1
            print(f"{entry.name:<18} {entry.exporter:<11} FAILED {one_line(error)}", flush=True)
            continue
        seconds = time.perf_counter() - began
        exporting += seconds
        model = onnx.load(os.fspath(path))
        counts = op_counts(model)
        line = (
            f"{entry.name:<18} {entry.exporter:<11} {seconds:6.2f} s {counts.total():4d} nodes"
            f" {counts['Split']:2d} Split {counts['SplitToSequence']:2d} SplitToSequence"
            f" {_size(path.stat().st_size):>9}" + ("  (cached)" if cached else "")
        )
        if options.verify:
            began = time.perf_counter()
            result = verify(entry, path)
            checking += time.perf_counter() - began
            if result.ok:
                line += f"  ok (max error {result.max_abs_error:.1e})"
            else:
                failures += entry.left_out is None and (
                    entry.ort_issue is None or result.checker is not None
                )
                known = " (known)" if entry.ort_issue is not None else ""
                line += f"  check: {result.checker or 'ok'}; onnxruntime{known}: "
                line += result.onnxruntime or "ok"
        print(line, flush=True)
        if options.describe:
            for node in split_nodes(model):
                print(
                    f"    {node.op} axis={node.axis} outputs={node.outputs} sizes: {node.sizes};"
                    f" input from {node.data_from}",
                    flush=True,
                )
    print(
        f"{len(entries)} models: export {exporting:.1f} s"
        + (f", verification {checking:.1f} s" if options.verify else "")
        + f"; {version_stamp()}",
        flush=True,
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
