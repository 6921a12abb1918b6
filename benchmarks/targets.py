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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .units import format_time

if TYPE_CHECKING:
    from .suite import Measured

__all__ = ["Pair", "Target", "evaluate", "pairs", "planning_cache_check"]


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
        Pair("1b", "small Split, splitops / hand-written slicing", "<= 2",
             ("small", "splitops"), ("small", "slicing")),
        Pair("2a", "many parts, onnxruntime / splitops", ">= 3",
             ("many-parts", "onnxruntime"), ("many-parts", "splitops")),
        Pair("2b", "many parts, onnx.reference / splitops", ">= 1.5",
             ("many-parts", "onnx.reference"), ("many-parts", "splitops")),
        Pair("3", "views, largest / smallest input, splitops", "<= 2",
             (views[-1], "splitops"), (views[0], "splitops")),
        Pair("4a", "copies into out=, bandwidth vs np.copyto", ">= 0.8",
             (copy, "np.copyto"), (copy, "splitops out=")),
        Pair("4a'", "copies into out=, bandwidth vs np.copyto of each part", ">= 0.8",
             (copy, "np.copyto per part"), (copy, "splitops out=")),
        Pair("4b", "copy=True (new arrays), bandwidth vs np.copyto", ">= 0.8",
             (copy, "np.copyto"), (copy, "splitops")),
        Pair("4c", "copy=True, onnxruntime / splitops", ">= 1",
             (copy, "onnxruntime"), (copy, "splitops")),
        Pair("4d", "copies into out=, onnxruntime / splitops", ">= 1",
             (copy, "onnxruntime"), (copy, "splitops out=")),
    ]  # fmt: skip


def _verdict(ratio: float | None, bound: str) -> str:
    if ratio is None:
        return "n/a"
    sign, limit = bound.split()
    passed = ratio >= float(limit) if sign == ">=" else ratio <= float(limit)
    return "PASS" if passed else "FAIL"


def _side(measured: Measured, side: tuple[str, str]) -> str:
    median = measured.median(*side)
    return f"{side[1]} on {side[0]} {'-' if median is None else format_time(median)}"


def planning_cache_check(calls: int = 100) -> dict[str, Any]:
    """Target 5, from the planner's cache counters (not from timings).

    ``calls`` identical Splits whose ``split`` is an array (no recipe key: each call asks the
    planner) must plan once and hit the cache after; identical Splits with ``num_outputs``
    must reach the planner once in all (later calls reuse the recipe).
    """
    import splitops
    from splitops import planner, recipes

    x = np.zeros((4, 6), np.float32)
    sizes = np.array([2, 4])
    recipes.forget()
    planner._plan_split.cache_clear()
    for _ in range(calls):
        splitops.split(x, sizes, axis=1)
    through_planner = planner._plan_split.cache_info()
    recipes.forget()
    planner._plan_split.cache_clear()
    for _ in range(calls):
        splitops.split(x, num_outputs=2, axis=1)
    through_recipe = planner._plan_split.cache_info()
    return {
        "calls": calls,
        "split_array": {"hits": through_planner.hits, "misses": through_planner.misses},
        "num_outputs": {"hits": through_recipe.hits, "misses": through_recipe.misses},
    }


def evaluate(
    measured: Measured, paired: dict[str, float | None], cache: dict[str, Any]
) -> list[Target]:
    """Every performance target, in order: the timed ones, then planning (target 5)."""
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
    calls = cache["calls"]
    array, recipe = cache["split_array"], cache["num_outputs"]
    hits = array["hits"] / (calls - 1)
    reuse = recipe == {"hits": 0, "misses": 1}
    detail = (
        f"{calls} calls with a split array: {array['misses']} planned, {array['hits']} from the "
        f"planner's cache; {calls} with num_outputs: the planner reached {recipe['misses']} "
        "time(s), the other calls reused the recipe"
    )
    status = "PASS" if hits == 1 and reuse else "FAIL"
    text = "planning cached, cache hits / repeated calls"
    targets.append(Target("5", text, hits, None, "= 1", status, detail))
    return targets
