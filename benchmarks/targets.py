"""The performance targets, each checked from measured times: PASS, FAIL, or n/a.

A ratio reads "how many times": ``onnxruntime / splitops = 4.2`` means onnxruntime took 4.2 times
as long as splitops. Bandwidth targets divide the other way (the baseline's time by splitops'),
so that 0.8 reads "80% of the baseline's bandwidth".

Each ratio is measured twice. From pyperf's medians, taken in separate worker processes at
different moments; and *paired*: both sides timed in this process in alternation, round after
round, and the median of the per-round ratios kept. On a machine shared with other work the
load changes between moments, and only the paired ratio cancels it, so the verdict uses it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .measured import Measured
from .units import format_time

__all__ = ["Pair", "Target", "evaluate", "pairs"]


@dataclass(frozen=True)
class Pair:
    """What a target divides: the time of (case, peer) over the time of another (case, peer)."""

    target: str
    text: str
    bound: str  # ">= 4" or "<= 2"
    numerator: tuple[str, str]
    denominator: tuple[str, str]


@dataclass(frozen=True)
class Target:
    """One checked target: what it asks, the measured ratios, the verdict."""

    id: str
    text: str
    ratio: float | None  # paired, the verdict's ratio
    median_ratio: float | None  # from pyperf's medians
    bound: str
    status: str  # PASS, FAIL or n/a
    detail: str

    def line(self) -> str:
        ratio = "-" if self.ratio is None else f"{self.ratio:.2f}"
        verdict = f"{self.status:4}  {self.id:3} {self.text}: {ratio} (target {self.bound})"
        return f"{verdict}. {self.detail}"

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _by_size(measured: Measured, group: str) -> list[str]:
    cases = sorted((c for c in measured.cases if c.group == group), key=lambda c: c.nbytes)
    return [c.id for c in cases]


def pairs(measured: Measured) -> list[Pair]:
    """The timed performance targets, resolved to this run's cases (largest copy, ...)."""
    views = _by_size(measured, "size-views") or ["size-views"]
    copy = (_by_size(measured, "size-copies") or ["size-copies"])[-1]
    return [
        Pair("1a", "small Split, onnxruntime / splitops", ">= 4",
             ("small", "onnxruntime"), ("small", "splitops")),
        Pair("1b", "small Split, splitops / hand-written slicing", "<= 3",
             ("small", "splitops"), ("small", "slicing")),
        Pair("2a", "many parts, onnxruntime / splitops", ">= 3",
             ("many-parts", "onnxruntime"), ("many-parts", "splitops")),
        Pair("2b", "many parts, onnx.reference / splitops", ">= 1.5",
             ("many-parts", "onnx.reference"), ("many-parts", "splitops")),
        Pair("3", "views, largest / smallest input, splitops", "<= 2",
             (views[-1], "splitops"), (views[0], "splitops")),
        Pair("4a", "copy=True, bandwidth vs np.split then .copy() of each part", ">= 0.9",
             (copy, "np.split"), (copy, "splitops")),
        # The same copies as out= makes, one np.copyto per part into arrays allocated once.
        # One np.copyto of the whole array is no baseline for a call that makes several
        # copies: on this machine glibc copies 256 MiB at once faster than in two halves,
        # into the very same memory (docs/performance.md has the figures).
        Pair("4b", "copies into out=, bandwidth vs np.copyto of each part", ">= 0.9",
             (copy, "np.copyto per part"), (copy, "splitops out=")),
        *_copy_pairs(measured),
        Pair("11", "out= into 1,024 parts, bandwidth vs one np.copyto of the whole", ">= 0.85",
             ("copies-out-1024", "np.copyto"), ("copies-out-1024", "splitops out=")),
        Pair("12a", "SplitToSequence into 100,000 parts, copy=True / views, numpy", "<= 1.5",
             ("many-parts-copies", "splitops"), ("many-parts", "splitops")),
        Pair("12b", "the same on torch", "<= 1.5",
             ("many-parts-copies", "splitops on torch"), ("many-parts", "splitops on torch")),
        Pair("13a", "views, small Split: splitops on torch / torch.split", "<= 1.2",
             ("small", "splitops on torch"), ("small", "torch.split")),
        Pair("13b", "views, 100,000 parts: splitops on torch / torch.split", "<= 1.2",
             ("many-parts", "splitops on torch"), ("many-parts", "torch.split")),
        Pair("13c", "views, small Split: splitops on jax / jnp.split", "<= 1.5",
             ("small", "splitops on jax"), ("small", "jnp.split")),
    ]  # fmt: skip


#: The copy=True targets: (number, cases, bound on numpy, bound on torch, what is cut).
_COPY_TARGETS = (
    ("9", "copies-axis0-", ">= 0.85", ">= 0.85", "along axis 0 into {parts:,} parts"),
    ("10", "copies-axis1-", ">= 0.7", ">= 0.7", "along axis 1 into {parts:,} parts"),
    (
        "10",
        "copies-innermost-",
        ">= 0.45",
        ">= 0.6",
        "along an innermost axis of {dim} into {parts} parts",
    ),
)


def _copy_pairs(measured: Measured) -> list[Pair]:
    """Targets 9 and 10: copy=True against one copy of the whole input then views of it, on
    numpy and on torch (bandwidth: the bound's time over splitops')."""
    pairs: list[Pair] = []
    for number, prefix, on_numpy, on_torch, what in _COPY_TARGETS:
        letters = iter("abcdefgh"[len([p for p in pairs if p.target[:-1] == number]) :])
        for case in sorted(
            (c for c in measured.cases if c.id.startswith(prefix)), key=lambda c: c.parts
        ):
            cut = what.format(parts=case.parts, dim=case.dim)
            pairs += [
                Pair(f"{number}{next(letters)}", f"copy=True {cut}, numpy: one copy then views "
                     "/ splitops", on_numpy, (case.id, "copy, then views"), (case.id, "splitops")),
                Pair(f"{number}{next(letters)}", "the same on torch: one clone then views / "
                     "splitops", on_torch, (case.id, "clone, then views"),
                     (case.id, "splitops on torch")),
            ]  # fmt: skip
    return pairs


def _verdict(ratio: float | None, bound: str) -> str:
    if ratio is None:
        return "n/a"
    sign, limit = bound.split()
    passed = ratio >= float(limit) if sign == ">=" else ratio <= float(limit)
    return "PASS" if passed else "FAIL"


def _side(measured: Measured, side: tuple[str, str]) -> str:
    median = measured.median(*side)
    return f"{side[1]} on {side[0]} {'-' if median is None else format_time(median)}"


def evaluate(
    measured: Measured, paired: dict[str, float | None], checks: dict[str, Any], *, quick: bool
) -> list[Target]:
    """Every performance target, in the order of their numbers (5 to 7 are counted).

    In a quick run the timed targets are ``n/a``: a few loops per benchmark measure nothing.
    """
    targets = []
    for pair in pairs(measured):
        top, bottom = measured.median(*pair.numerator), measured.median(*pair.denominator)
        median_ratio = None if top is None or bottom is None else top / bottom
        ratio = paired.get(pair.target)
        detail = (
            f"medians: {_side(measured, pair.numerator)}, {_side(measured, pair.denominator)}"
            + ("" if median_ratio is None else f" (ratio {median_ratio:.2f})")
        )
        targets.append(
            Target(pair.target, pair.text, ratio, median_ratio, pair.bound,
                   _verdict(ratio, pair.bound), detail)
        )  # fmt: skip
    targets += _checked(checks)
    startup = checks["startup"]
    slowest = max(startup["seconds"], key=startup["seconds"].get)
    targets.append(
        Target(
            "8", "start-up, whole process, seconds", startup["seconds"][slowest], None, "< 0.5",
            _status(startup["ok"]),
            "; ".join(f"{name}: {s:.2f} s" for name, s in startup["seconds"].items())
            + f" (median of {startup['runs']})",
        )
    )  # fmt: skip
    targets.sort(key=lambda target: int(target.id.rstrip("abcdefgh")))
    if quick:  # a few loops per benchmark: the timings are no measurements
        targets = [t if t.id in _COUNTED else replace(t, status="n/a") for t in targets]
    return targets


#: The targets that are counts, not timings: their verdicts stand even in a quick run.
_COUNTED = ("5", "6", "7")


def _checked(checks: dict[str, Any]) -> list[Target]:
    """Targets 5 to 7, from :mod:`benchmarks.checks`."""
    cache, memory, threads = checks["plan_cache"], checks["memory"], checks["threads"]
    calls = cache["calls"]
    planned = ", ".join(
        f"{name}: {cache[name]['misses']} planned, {cache[name]['hits']} from the cache"
        for name in ("split array", "num_outputs", "sequence")
    )
    hits = min(cache[name]["hits"] for name in ("split array", "num_outputs", "sequence"))
    kept = memory.get("kept")
    threads_detail = (
        f"{threads['threads']} threads x {threads['calls_per_thread']} calls "
        f"({'numpy and torch' if threads['torch'] else 'numpy'}), {threads['plans_made']} plans "
        f"made: {'every result right' if threads['ok'] else '; '.join(threads['wrong'])}"
    )
    return [
        Target("5", "planning cached, cache hits / repeated calls", hits / (calls - 1), None,
               "= 1", _status(cache["ok"]), f"{calls} calls each; {planned}"),
        Target("6", "memory kept after copy=True parts are gone, MiB",
               None if kept is None else kept / 2**20, None, "<= 16", _status(memory["ok"]),
               memory.get("why") or _memory_detail(memory)),
        Target("7", "threads, wrong results or exceptions", float(len(threads["wrong"])), None,
               "= 0", _status(threads["ok"]), threads_detail),
    ]  # fmt: skip


def _status(ok: bool | None) -> str:
    return "n/a" if ok is None else "PASS" if ok else "FAIL"


def _memory_detail(memory: dict[str, Any]) -> str:
    found = memory.get("by_library") or {memory.get("library", "numpy"): memory}
    return "; ".join(_memory_line(library, result) for library, result in found.items())


def _memory_line(library: str, memory: dict[str, Any]) -> str:
    mib = {key: memory[key] / 2**20 for key in ("rss_before", "rss_with_parts", "rss_after_del")}
    return (
        f"{library} copy=True of {memory['nbytes'] >> 20} MiB in a fresh process: resident "
        f"memory {mib['rss_before']:.0f} MiB before, {mib['rss_with_parts']:.0f} MiB with the "
        f"parts, {mib['rss_after_del']:.0f} MiB after del"
    )
