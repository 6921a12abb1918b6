"""``python -m benchmarks.portability``: what every installed runtime computes for each kind
of Split and SplitToSequence, original and lowered for each target, against the spec (the
matrix of :mod:`harness.portability`, which defines the cases and the verdicts), with the
cost of lowering on onnxruntime and the speed of ``check --portability``, timed here.

It writes ``portability.md`` in the folder ``--out`` names (``benchmarks/results/latest`` by
default; ``--out docs`` replaces the committed document), as ``python -m benchmarks --out``
takes a folder. The section of real exports
(``python -m benchmarks.exports``) is kept as it is, or, with ``--exports``, run again on
what the export cache holds, so that one command writes the whole document::

    python -m benchmarks.portability                 # a few minutes (TVM compiles each model)
    python -m benchmarks.portability --exports       # and the real exports: an hour or more
    python -m benchmarks.portability --runtimes onnxruntime openvino tract --out /tmp/p
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from harness.documents import kept_section
from harness.exports import CACHE, HEADING
from harness.portability import (
    blocks_model,
    cases,
    cost_chain,
    feeds_at,
    regressions,
    report,
    run_matrix,
    split_model,
)

import splitops
from splitops.onnx.run import Runtime, RuntimeRunError, RuntimeWorkers, installed_runtimes

from .folders import LATEST

# --- the cost of lowering, on onnxruntime ---------------------------------------------------


def lowering_time() -> list[tuple[int, float]]:
    """The best of three lowerings of 1,000 and of 4,000 nodes of :func:`blocks_model`."""
    splitops.lower_model(blocks_model(2))  # imports and caches
    found = []
    for count in (125, 500):
        model = blocks_model(count)
        times = []
        for _ in range(3):
            began = time.perf_counter()
            splitops.lower_model(model)
            times.append(time.perf_counter() - began)
        found.append((len(model.graph.node), min(times)))
    return found


def cost(rounds: int = 15) -> list[tuple[str, int, float, float]]:
    """onnxruntime's time for the chain and each case lowered, against the original's: for
    each target, (model, extra nodes, the original's median time per run, the median ratio
    of lowered to original time). Runs interleave, one thread, so that load hits both
    alike."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    found = []
    chain = cost_chain()
    models = [
        (f"chain of 400 at {shape}", chain, {"x": _chain_feed(shape)})
        for shape in ((8, 64), (64, 1024))
    ]
    models += [
        (name, model, feeds_at(lengths[0]))
        for case in cases()
        for name, model, lengths in case.models()
        # onnxruntime dies by SIGSEGV running a Split that leaves outputs out (in this
        # process, no worker): the matrix above runs those.
        if name.endswith("dynamic")
        and case.name.startswith("split18")
        and not case.name.endswith("omitted")
    ]
    for name, model, feeds in models:
        try:
            onnxruntime.InferenceSession(model.SerializeToString(), options).run(None, feeds)
        except Exception:  # onnxruntime refuses the original (fewer outputs listed): no cost
            continue
        for target, release in (
            # For the release that runs it, as the onnxruntime engine lowers (the bound's
            # row); for any release (exact on 1.31 and onnx.reference too); and portable.
            ("onnxruntime", onnxruntime.__version__),
            ("onnxruntime", None),
            ("portable", None),
        ):
            lowered = splitops.lower_model(model, target=target, release=release)
            sessions = [
                onnxruntime.InferenceSession(m.SerializeToString(), options)
                for m in (model, lowered)
            ]
            ratios, originals = [], []
            for _ in range(rounds):
                times = []
                for session in sessions:
                    began = time.perf_counter()
                    for _ in range(20):
                        session.run(None, feeds)
                    times.append((time.perf_counter() - began) / 20)
                ratios.append(times[1] / times[0])
                originals.append(times[0])
            extra = len(lowered.graph.node) - len(model.graph.node)
            original = sorted(originals)[len(originals) // 2]
            ratio = sorted(ratios)[len(ratios) // 2]
            what = target if target != "onnxruntime" or release else f"{target}, any release"
            found.append((f"{name}, {what}", extra, original, ratio))
    return found


def _chain_feed(shape: tuple[int, int]) -> Any:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def cost_report(rows: Sequence[tuple[str, int, float, float]]) -> str:
    lines = [
        "",
        "## The cost of lowering on onnxruntime",
        "",
        "onnxruntime's time for the lowered model over the original's (one thread, runs "
        "interleaved, the median of 15 rounds of 20 runs). Target `onnxruntime` is lowered "
        "for the release that runs it, as the onnxruntime engine and `lower --release` do "
        "(bound: 1.2); `onnxruntime, any release` is the target without a release, whose "
        "forms are exact on onnxruntime 1.31 and onnx.reference too, and costs what their "
        "nodes cost (each 0.3 to 0.8 µs on onnxruntime); `portable`, the forms every runtime "
        "runs, with their run-time checks. The chain is 400 "
        "Split-18 `num_outputs=2` on the axis `N` of `[B, N]`, each followed by a Concat and 8 "
        "Relu, run at two shapes; the cases run at their first dynamic length.",
        "",
        "| model, target | nodes added | original, per run | lowered / original "
        "| lowered - original |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {extra} | {original * 1e6:.1f} µs | {ratio:.2f} | "
        f"{(ratio - 1) * original * 1e6:+.1f} µs |"
        for name, extra, original, ratio in rows
    ]
    return "\n".join(lines) + "\n"


# --- the speed of check --portability -------------------------------------------------------


class _OneAtATime(RuntimeWorkers):
    """The workers as ``check --portability`` once used them, the baseline: each started at
    its first run, one after another, and a probe loaded again for each axis length."""

    def start(self, runtimes: Sequence[Runtime]) -> None:
        pass

    def run_each(
        self, runtime: Runtime, model: bytes, runs: Sequence[dict[str, Any]]
    ) -> list[list[Any] | RuntimeRunError]:
        found: list[list[Any] | RuntimeRunError] = []
        for feeds in runs:
            found += super().run_each(runtime, model, [feeds])
        return found


def check_speed(runtimes: Sequence[Runtime], rounds: int = 3) -> tuple[float, float]:
    """The wall time of ``check_portability`` on a one-node model (Split-18 into 3 parts of
    a run-time axis, probed at 8 lengths) on ``runtimes``, workers started and stopped:
    (baseline, now), the best of ``rounds`` each, interleaved."""
    from splitops.onnx.run import check_portability

    model = split_model(3, opset=18, num_outputs=3)("N")
    names = [runtime.name for runtime in runtimes]
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(rounds):
        for kind in times:
            began = time.perf_counter()
            with _OneAtATime() if kind == "before" else RuntimeWorkers() as workers:
                check_portability(model, runtimes=names, workers=workers)
            times[kind].append(time.perf_counter() - began)
    return min(times["before"]), min(times["after"])


def check_speed_report(runtimes: Sequence[Runtime]) -> str:
    before, after = check_speed(runtimes)
    names = ", ".join(runtime.name for runtime in runtimes)
    return (
        f"\n`check --portability` of a one-node model on {names} (workers started and "
        f"stopped, the best of 3): {after:.1f} s, against {before:.1f} s with workers started "
        f"one after another and each probe loaded per axis length ({before / after:.1f}x).\n"
    )


def runtimes_and_out(
    argv: Sequence[str] | None,
    module: str,
    document: str,
    parents: Sequence[argparse.ArgumentParser] = (),
) -> tuple[list[Runtime], Path]:
    """The options of ``python -m benchmarks.MODULE``, a benchmark that runs the installed
    runtimes and writes ``DOCUMENT`` into a folder: ``--runtimes`` (default: every one
    installed) and ``--out`` (the folder, ``benchmarks/results/latest`` by default; ``docs``
    for the committed documents), beside those of ``parents``
    (which the caller reads). Returns the runtimes and the document's path."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{module}", parents=parents)
    parser.add_argument("--runtimes", nargs="*", help="the runtimes to run (all installed)")
    parser.add_argument(
        "--out",
        type=Path,
        default=LATEST,
        help=f"the folder {document} goes in, as `python -m benchmarks --out` takes a "
        "folder (default: benchmarks/results/latest, not kept in git; --out docs replaces "
        f"docs/{document})",
    )
    args = parser.parse_args(argv)
    if args.out.suffix == ".md" or (args.out.exists() and not args.out.is_dir()):
        parser.error(f"--out takes a folder ({document} goes in it); {args.out} was given")
    runtimes = [r for r in installed_runtimes() if not args.runtimes or r.name in args.runtimes]
    args.out.mkdir(parents=True, exist_ok=True)
    return runtimes, args.out / document


def main(argv: Sequence[str] | None = None) -> int:
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument(
        "--exports",
        action="store_true",
        help=f"run the real exports the cache holds ({CACHE}) again and write their section "
        "(python -m benchmarks.exports), which is kept as it is otherwise",
    )
    options, _ = flags.parse_known_args(argv)
    runtimes, out = runtimes_and_out(argv, "portability", "portability.md", [flags])
    began = time.perf_counter()
    rows = run_matrix(runtimes, progress=lambda name: print(name, file=sys.stderr, flush=True))
    text = report(rows, runtimes, time.perf_counter() - began)
    if any(runtime.name == "onnxruntime" for runtime in runtimes):
        print("cost on onnxruntime", file=sys.stderr, flush=True)
        costs = cost()
        text += cost_report(costs)
        timed = lowering_time()
        text += (
            "\nLowering time (the best of 3; bound: 2 s for 4,000 nodes, linear): "
            + ", ".join(f"{nodes:,} nodes {seconds:.2f} s" for nodes, seconds in timed)
            + ".\n"
        )
        for name, _, _, ratio in costs:
            if name.endswith(", onnxruntime") and ratio > 1.2:  # the bound's rows
                print(f"FAIL cost: {name}: {ratio:.2f} > 1.2", file=sys.stderr)
    quick = [r for r in runtimes if r.name in ("onnxruntime", "openvino", "tract")]
    if quick:
        print("check --portability speed", file=sys.stderr, flush=True)
        speed = check_speed_report(quick)
        print(speed.strip(), file=sys.stderr)
        text += speed
    if out.exists():  # the section of real exports is written by benchmarks.exports: kept
        kept = kept_section(out.read_text(), HEADING)
        text += "\n" + kept if kept else ""
    out.write_text(text)
    print(f"wrote {out}", file=sys.stderr)
    for line in regressions(rows):
        print(f"regression: {line}", file=sys.stderr)
    if options.exports:  # the same runtimes, in a process of its own
        names = [runtime.name for runtime in runtimes]
        command = ["-m", "benchmarks.exports", "--runtimes", *names, "--out", str(out.parent)]
        root = Path(__file__).resolve().parents[1]
        return subprocess.run([sys.executable, *command], cwd=root, check=False).returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
