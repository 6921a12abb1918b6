"""Fixtures shared by the core tests: numpy's own cut as the oracle for every part."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

AssertCut = Callable[[Sequence[Any], Any, Sequence[int], int], None]


def _assert_cut(parts: Sequence[Any], x: Any, sizes: Sequence[int], axis: int) -> None:
    """``parts`` equal numpy's ``np.split`` of ``x`` at the running sums of ``sizes``."""
    assert len(parts) == len(sizes)
    if not sizes:
        return
    expected = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    for part, want in zip(parts, expected, strict=True):
        np.testing.assert_array_equal(part, want, strict=True)


@pytest.fixture
def assert_cut() -> AssertCut:
    """Check parts against numpy's cut: ``assert_cut(parts, x, sizes, axis)``."""
    return _assert_cut
