"""``python -m benchmarks.exports``: real model exports on every installed runtime, original
and lowered for every target (:mod:`harness.exports` says how they are built and judged). It
rewrites the section "Real exports" of ``portability.md`` in the folder ``--out`` names
(``benchmarks/results/latest`` by default, ``docs`` for the committed document; ``python -m
benchmarks.portability`` keeps that section)::

    python -m benchmarks.exports --torch-env /tmp/torch2.4 --build-only
    python -m benchmarks.exports --torch-env /tmp/torch2.4 --families scripted --build-only
    python -m benchmarks.exports                  # run what the cache holds, write the doc
    python -m benchmarks.exports --runtimes onnxruntime tract --out /tmp/p
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from harness.documents import replace_section
from harness.export_models import EXPORTERS, FAMILIES
from harness.exports import (
    CACHE,
    HEADING,
    build,
    export_failures,
    keep,
    read_corpus,
    read_exports,
    regressions,
    report,
    reproductions,
    run_exports,
)

from .portability import runtimes_and_out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.exports", add_help=False)
    parser.add_argument("--torch-env", type=Path, help="a venv whose torch exports the corpus")
    parser.add_argument("--build-only", action="store_true", help="export, run nothing")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"default: {CACHE}")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these architectures only")
    parser.add_argument("--exporters", nargs="+", choices=EXPORTERS)
    parser.add_argument(
        "--families",
        nargs="+",
        choices=FAMILIES,
        help="what to export and run: transformers models, scripted modules (default: both)",
    )
    parser.add_argument(
        "--keep",
        nargs="+",
        metavar=("FOLDER", "FILE"),
        help="copy these exports (torch-<version>/<file>.onnx) into FOLDER as test fixtures",
    )
    ours, _ = parser.parse_known_args(argv)
    # --runtimes and --out are read (and --help, listing every option, answered) before
    # anything is exported.
    runtimes, out = runtimes_and_out(argv, "exports", "portability.md", parents=[parser])
    python = str(ours.torch_env.absolute() / "bin" / "python") if ours.torch_env else sys.executable
    began = time.perf_counter()
    if ours.torch_env or not (ours.keep or any(ours.cache.glob("*/manifest.jsonl"))):
        print(f"exporting with {python}", file=sys.stderr, flush=True)
        build(python, ours.cache, ours.only, ours.exporters, ours.families)
    if ours.keep:
        folder, *files = ours.keep
        known = {f"{e.path.parent.name}/{e.path.name}": e for e in read_exports(ours.cache)}
        for name in files:
            print(keep(known[name], Path(folder)), file=sys.stderr)
        return 0
    if ours.build_only:
        return 0
    exports = read_exports(ours.cache)
    if ours.only:
        exports = [e for e in exports if e.model in ours.only]
    if ours.families:
        exports = [e for e in exports if e.family in ours.families]
    corpus = read_corpus(exports)
    rows = run_exports(corpus, runtimes, progress=lambda s: print(s, file=sys.stderr, flush=True))
    found = reproductions(corpus, rows, runtimes)
    section = report(
        corpus, rows, runtimes, export_failures(ours.cache), time.perf_counter() - began, found
    )
    document = out.read_text() if out.exists() else ""
    out.write_text(replace_section(document, HEADING, section))
    print(f"wrote {out}", file=sys.stderr)
    for line in regressions(rows):
        print(f"regression: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
