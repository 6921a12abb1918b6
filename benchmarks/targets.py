"""The performance targets, each checked from the run's medians: PASS, FAIL, or n/a.

A ratio reads "how many times": ``onnxruntime / splitops = 4.2`` means onnxruntime took 4.2 times
as long as splitops. Bandwidth ratios divide the other way (the baseline's time by splitops'),
so that 0.8 reads "80% of the baseline's bandwidth".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .units import format_time, human_bytes

if TYPE_CHECKING:
    from .suite import Measured

__all__ = ["Target", "evaluate", "planning_cache_check"]


@dataclass(frozen=True)
class Target:
    """One checked target: what it asks, the measured ratio, the verdict."""

    id: str
    text: str
    ratio: float | None
    bound: str  # ">= 4" or "<= 2"
    status: str  # PASS, FAIL or n/a
    detail: str

    def line(self) -> str:
        ratio = "-" if self.ratio is None else f"{self.ratio:.2f}"
        verdict = f"{self.status:4}  {self.id:3} {self.text}: {ratio} (target {self.bound})"
        return f"{verdict}. {self.detail}"

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _verdict(ratio: float | None, bound: str) -> str:
    if ratio is None:
        return "n/a"
    sign, limit = bound.split()
    passed = ratio >= float(limit) if sign == ">=" else ratio <= float(limit)
    return "PASS" if passed else "FAIL"


def _by_size(measured: Measured, group: str) -> list[str]:
    cases = sorted((c for c in measured.cases if c.group == group), key=lambda c: c.nbytes)
    return [c.id for c in cases]


def _ratio(
    measured: Measured, case_id: str | None, numerator: str, denominator: str
) -> tuple[float | None, str]:
    if case_id is None:
        return None, "case not run"
    top = measured.median(case_id, numerator)
    bottom = measured.median(case_id, denominator)
    if top is None or bottom is None:
        return None, f"{numerator} or {denominator} not measured on {case_id}"
    return (
        top / bottom,
        f"{numerator} {format_time(top)}, {denominator} {format_time(bottom)} on {case_id}",
    )


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


def evaluate(measured: Measured, cache: dict[str, Any]) -> list[Target]:
    """Every target of the brief, in order."""
    views = _by_size(measured, "size-views")
    copies = _by_size(measured, "size-copies")
    big_copy = copies[-1] if copies else None
    rows: list[tuple[str, str, Callable[[], tuple[float | None, str]], str]] = [
        (
            "1a",
            "small Split, onnxruntime / splitops",
            lambda: _ratio(measured, "small", "onnxruntime", "splitops"),
            ">= 4",
        ),
        (
            "1b",
            "small Split, splitops / hand-written slicing",
            lambda: _ratio(measured, "small", "splitops", "slicing"),
            "<= 2",
        ),
        (
            "2a",
            "100,000 parts, onnxruntime / splitops",
            lambda: _ratio(measured, "many-parts", "onnxruntime", "splitops"),
            ">= 3",
        ),
        (
            "2b",
            "100,000 parts, onnx.reference / splitops",
            lambda: _ratio(measured, "many-parts", "onnx.reference", "splitops"),
            ">= 1.5",
        ),
        (
            "3",
            "views, largest / smallest input, splitops",
            lambda: _size_independence(measured, views),
            "<= 2",
        ),
        (
            "4a",
            "copies into out=, bandwidth vs np.copyto",
            lambda: _ratio(measured, big_copy, "np.copyto", "splitops out="),
            ">= 0.8",
        ),
        (
            "4a'",
            "copies into out=, bandwidth vs np.copyto of each part",
            lambda: _ratio(measured, big_copy, "np.copyto per part", "splitops out="),
            ">= 0.8",
        ),
        (
            "4b",
            "copy=True (new arrays), bandwidth vs np.copyto",
            lambda: _ratio(measured, big_copy, "np.copyto", "splitops"),
            ">= 0.8",
        ),
        (
            "4c",
            "copy=True, onnxruntime / splitops",
            lambda: _ratio(measured, big_copy, "onnxruntime", "splitops"),
            ">= 1",
        ),
        (
            "4d",
            "copies into out=, onnxruntime / splitops",
            lambda: _ratio(measured, big_copy, "onnxruntime", "splitops out="),
            ">= 1",
        ),
        ("5", "planning cached, cache hits / repeated calls", lambda: _cache_ratio(cache), ">= 1"),
    ]
    targets = []
    for target_id, text, measure, bound in rows:
        ratio, detail = measure()
        status = _verdict(ratio, bound)
        if (
            target_id == "5"
            and ratio is not None
            and cache["num_outputs"] != {"hits": 0, "misses": 1}
        ):
            status = "FAIL"
        targets.append(Target(target_id, text, ratio, bound, status, detail))
    return targets


def _size_independence(measured: Measured, views: list[str]) -> tuple[float | None, str]:
    if len(views) < 2:
        return None, "fewer than two sizes run"
    big = measured.median(views[-1], "splitops")
    small = measured.median(views[0], "splitops")
    if big is None or small is None:
        return None, "splitops not measured"
    sizes = [c.nbytes for c in measured.cases if c.id in (views[0], views[-1])]
    largest, smallest = human_bytes(max(sizes)), human_bytes(min(sizes))
    return big / small, f"{largest} {format_time(big)}, {smallest} {format_time(small)}"


def _cache_ratio(cache: dict[str, Any]) -> tuple[float, str]:
    calls = cache["calls"]
    array, recipe = cache["split_array"], cache["num_outputs"]
    detail = (
        f"{calls} calls with a split array: {array['misses']} planned, {array['hits']} from the "
        f"planner's cache; {calls} with num_outputs: planner reached {recipe['misses']} time(s), "
        "the rest reused the recipe"
    )
    return array["hits"] / (calls - 1), detail
