"""``python -m benchmarks``: check every peer's parts, time them with pyperf, report.

The full run hands each (case, peer) to pyperf's Runner, which times it in its own worker
processes (``python -m benchmarks --worker ...``, calibrated loops, medians over every value);
the workers register the same benchmarks in the same order and run only theirs. ``--quick``
times everything in this process with a fixed, small number of loops: a smoke test of the
whole pipeline (checks, table, JSON, plots) whose timings mean little.

Exit status: 0, or 1 when a peer's parts differ from splitops'. Targets print PASS or FAIL and
never change the exit status: they are measurements, not assertions. A quick run prints ``n/a``
for the timed targets, whose figures it does not measure.
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import time
import timeit
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import checks as checks_module
from . import targets
from .cases import Case, cpu_cases, gpu_cases, make_input
from .folders import add_out, default_out
from .measured import Measured
from .peers import CPU_PEERS, SPLITOPS, Peer

__all__ = ["Measured", "main"]


#: pyperf settings of the full run: per benchmark, one worker process that calibrates the
#: loops, then one that takes 5 values of at least 50 ms each, after 1 warmup.
PROCESSES, VALUES, WARMUPS, MIN_TIME = 1, 5, 1, 0.05

#: Paired target measurements: rounds, and about how long each side runs per round.
PAIRED_ROUNDS, QUICK_PAIRED_ROUNDS, PAIRED_SECONDS = 21, 3, 0.02

#: The counted targets: copy=True of this many bytes, and this many calls per thread.
MEMORY_BYTES, QUICK_MEMORY_BYTES = 512 << 20, 64 << 20
THREAD_CALLS, QUICK_THREAD_CALLS = 20_000, 500

#: The quick run, in this process: a fixed number of loops, one value after one warmup.
QUICK_PYPERF_ARGS = ["--worker", "--loops=5", "--warmups=1", "--values=1"]


# Preparing and timing one (case, peer) ----------------------------------------------------


@functools.lru_cache(maxsize=1)
def _input(case: Case) -> Any:
    # One host input alive at a time, shared by the peers of a case.
    return make_input(case)


def _prepared(case: Case, peer: Peer) -> dict[str, Any]:
    return peer.prepare(case, _input(case))


def _timed_code(case: Case, peer: Peer) -> str:
    statement = peer.statement(case)
    return statement if case.device == "cpu" else f"{statement}\nsync()"


class _Timed:
    """pyperf's time function for one (case, peer): ``loops`` runs of the statement, inline.

    The statement runs in a function whose locals are the prepared names, as ``timeit`` does,
    with the garbage collector on (as in real use); preparing happens once, outside the timing.
    """

    def __init__(self, case: Case, peer: Peer) -> None:
        self.case, self.peer = case, peer
        self.timer: timeit.Timer | None = None

    def __call__(self, loops: int) -> float:
        if self.timer is None:
            names = _prepared(self.case, self.peer)
            setup = "".join(f"{name} = _names[{name!r}]\n" for name in names) + "gc.enable()"
            code = _timed_code(self.case, self.peer)
            self.timer = timeit.Timer(code, setup, globals={"_names": names, "gc": gc})
        return self.timer.timeit(loops)

    def release(self) -> None:
        self.timer = None


# Checking every peer against splitops -----------------------------------------------------


def _difference(got: Sequence[Any], expected: Sequence[Any]) -> str | None:
    if len(got) != len(expected):
        return f"{len(got)} parts, splitops gives {len(expected)}"
    for i, (part, want) in enumerate(zip(got, expected, strict=True)):
        part = np.asarray(part)
        if part.shape != want.shape or part.dtype != want.dtype:
            return f"part {i} is {part.dtype}{part.shape}, splitops gives {want.dtype}{want.shape}"
        if not np.array_equal(part, want):
            return f"part {i} holds other values than splitops' part {i}"
    return None


def _run_once(case: Case, peer: Peer) -> list[Any]:
    names = _prepared(case, peer)
    value = eval(compile(peer.statement(case), "<check>", "eval"), dict(names))
    if case.device != "cpu":
        names["sync"]()
    return peer.parts(value, names, case)


def check_peers(measured: Measured) -> bool:
    """Run each peer once per case and compare its parts with splitops' (on the host input)."""
    everything_agrees = True
    for case in measured.cases:
        host_case = Case(**{**case.__dict__, "device": "cpu"})
        expected = [np.asarray(p) for p in _run_once(host_case, SPLITOPS)]
        row = measured.checks.setdefault(case.id, {})
        for peer in measured.peers[case.id]:
            try:
                difference = _difference(_run_once(case, peer), expected)
            except Exception as error:  # a peer that fails is reported, not fatal
                difference = f"{type(error).__name__}: {error}"
            row[peer.name] = difference or "ok"
            if difference:
                everything_agrees = False
                print(f"  MISMATCH {case.id} | {peer.name}: {difference}")
        del expected
        _input.cache_clear()
    return everything_agrees


# Paired ratios for the targets ------------------------------------------------------------


def paired_ratios(measured: Measured, rounds: int) -> dict[str, float | None]:
    """Each target's ratio from both sides timed here in alternation: the median of the
    per-round ratios, so that a change of load between moments cancels out."""
    by_id = {case.id: case for case in measured.cases}
    ratios: dict[str, float | None] = {}
    for pair in targets.pairs(measured):
        sides = [_paired_side(measured, by_id, side) for side in (pair.numerator, pair.denominator)]
        if None in sides:
            ratios[pair.target] = None
            continue
        timed = [side for side in sides if side is not None]
        for clock, loops in timed:
            clock(loops)  # prepares, and warms up
        per_round = []
        for index in range(rounds):
            seconds = [0.0, 0.0]
            for side in (0, 1) if index % 2 else (1, 0):  # each side first every other round
                clock, loops = timed[side]
                seconds[side] = clock(loops) / loops
            per_round.append(seconds[0] / seconds[1])
        for clock, _ in timed:
            clock.release()
        _input.cache_clear()
        ratios[pair.target] = statistics.median(per_round)
    return ratios


def _paired_side(
    measured: Measured, by_id: dict[str, Case], side: tuple[str, str]
) -> tuple[_Timed, int] | None:
    case_id, name = side
    median = measured.median(case_id, name)
    peer = next((p for p in measured.peers.get(case_id, []) if p.name == name), None)
    if median is None or peer is None:
        return None
    return _Timed(by_id[case_id], peer), max(1, round(PAIRED_SECONDS / median))


# The run ----------------------------------------------------------------------------------


def _parser_extras(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n", 1)[0] if __doc__ else None
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: tiny cases, few loops, in-process"
    )
    add_out(parser)
    parser.add_argument("--only", default="", help="only the cases whose id contains this text")
    parser.add_argument("--no-gpu", action="store_true", help="leave out the GPU section")
    parser.add_argument("--no-plots", action="store_true", help="write no PNG plots")
    # Set by the main process for its workers, so that they register the same benchmarks.
    parser.add_argument("--gpu-peers", default=None, help=argparse.SUPPRESS)


def _forward(cmd: list[str], args: argparse.Namespace) -> None:
    cmd.extend(["--gpu-peers", args.gpu_peers or ""])
    if args.only:
        cmd.extend(["--only", args.only])


def _plan(args: argparse.Namespace) -> Measured:
    """The cases and peers of this run, identical in the main process and its workers."""
    cases = cpu_cases(quick=args.quick)
    gpu_names = [name for name in (args.gpu_peers or "").split(",") if name]
    gpu_peers: list[Peer] = []
    if gpu_names:
        from .gpu import GPU_PEERS

        gpu_peers = [peer for peer in GPU_PEERS if peer.name in gpu_names]
        cases += gpu_cases(quick=args.quick)
    cases = [case for case in cases if args.only in case.id]
    cpu_peers = [peer for peer in CPU_PEERS if peer.available()]
    peers = {
        case.id: [
            peer
            for peer in (cpu_peers if case.device == "cpu" else gpu_peers)
            if peer.applies(case) and (not case.only or peer.name in case.only)
        ]
        for case in cases
    }
    return Measured(cases=cases, peers=peers)


def _gpu_peer_names(args: argparse.Namespace) -> str:
    if args.no_gpu:
        return ""
    from .gpu import GPU_PEERS

    return ",".join(peer.name for peer in GPU_PEERS if peer.available())


def main(argv: Sequence[str]) -> int:
    import pyperf  # type: ignore[import-untyped]

    quick = "--quick" in argv
    runner = pyperf.Runner(
        processes=PROCESSES,
        values=VALUES,
        warmups=WARMUPS,
        min_time=MIN_TIME,
        program_args=("-m", "benchmarks"),
        add_cmdline_args=_forward,
    )
    _parser_extras(runner.argparser)
    # Workers inherit the whole environment: the one-thread settings and PYTHONPATH.
    runner.argparser.set_defaults(copy_env=True)
    args = runner.parse_args([*argv, *QUICK_PYPERF_ARGS] if quick else list(argv))
    is_worker = args.worker and not quick
    if args.gpu_peers is None:
        args.gpu_peers = "" if is_worker else _gpu_peer_names(args)
    measured = _plan(args)

    from . import machine, report

    started = time.time()
    plots = not args.no_plots and report.can_plot()
    if not is_worker:
        if not args.no_plots and not plots:
            print(report.NO_PLOTS)
        print(machine.describe(machine.collect()))
        if not args.gpu_peers:
            print("GPU section: skipped: no CUDA" if not args.no_gpu else "GPU section: left out")
        print(f"Checking {sum(map(len, measured.peers.values()))} (case, peer) pairs ...")
    agrees = True if is_worker else check_peers(measured)

    for case in measured.cases:
        for peer in measured.peers[case.id]:
            timed = _Timed(case, peer)
            bench = runner.bench_time_func(f"{case.id} | {peer.name}", timed)
            timed.release()
            _input.cache_clear()
            if bench is not None and not is_worker:
                measured.medians.setdefault(case.id, {})[peer.name] = bench.median()
                measured.values.setdefault(case.id, {})[peer.name] = list(bench.get_values())
    if is_worker:
        return 0

    print("Timing each target's two sides in alternation ...")
    paired = paired_ratios(measured, QUICK_PAIRED_ROUNDS if quick else PAIRED_ROUNDS)
    print("Counting: the plan cache, memory given back, threads; timing start-up ...")
    checks = {
        "plan_cache": checks_module.plan_cache_check(),
        "memory": checks_module.memory_checks(QUICK_MEMORY_BYTES if quick else MEMORY_BYTES),
        "threads": checks_module.threads_check(calls=QUICK_THREAD_CALLS if quick else THREAD_CALLS),
        "startup": checks_module.startup_check(runs=3 if quick else 7),
    }
    results = targets.evaluate(measured, paired, checks, quick=quick)
    out = args.out or default_out(quick=quick)
    summary = report.write(
        measured,
        results,
        checks,
        out,
        machine=machine.collect(),
        settings={
            "quick": quick,
            "pyperf": " ".join(QUICK_PYPERF_ARGS)
            if quick
            else f"processes={args.processes} values={args.values} warmups={args.warmups} "
            f"min_time={args.min_time}s",
            "seconds": round(time.time() - started, 1),
            "gpu_peers": args.gpu_peers.split(",") if args.gpu_peers else [],
        },
        plots=plots,
    )
    print(summary)
    if quick:
        print("(--quick: a few loops per benchmark, so the figures above are not measurements)")
    if not agrees:
        print("Some peers' parts differ from splitops' (MISMATCH lines above).")
    return 0 if agrees else 1
