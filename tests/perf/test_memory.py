"""``copy=True`` gives its memory back when the parts die: no pool, no cache of buffers."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from benchmarks.checks import MEMORY_SLACK, memory_check

import splitops


@pytest.mark.skipif(sys.platform != "linux", reason="reads resident memory from /proc")
def test_resident_memory_returns_after_copy_true_parts_are_gone() -> None:
    result = memory_check(64 << 20)
    assert result["rss_with_parts"] - result["rss_before"] >= 32 << 20  # the copies were made
    assert result["kept"] <= MEMORY_SLACK
    assert result["ok"]


def test_copy_true_parts_are_one_buffer_that_outlives_no_part() -> None:
    x = np.arange(24.0).reshape(4, 6)
    parts = splitops.split(x, [1, 3], copy=True)
    base = parts[0].base
    assert base is not None
    assert all(part.base is base for part in parts)  # one allocation for all parts
    assert base.nbytes == x.nbytes  # and nothing more
    assert not np.shares_memory(parts[0], parts[1])
