"""array-api-strict: the generic path uses nothing but the standard, so any compliant library works.

array-api-strict refuses everything the standard does not specify (numpy conversions,
implicit trailing axes in an index, ...). Splitting under its strictest flags, at every
version of the standard it implements, proves splitops asks no more of a library.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

xp = pytest.importorskip("array_api_strict")

from splitops import split, split_to_sequence  # noqa: E402

VALUES = np.arange(2 * 5 * 3, dtype=np.int64).reshape(2, 5, 3)


def _versions() -> list[str]:
    from array_api_strict._flags import supported_versions

    # 2021.12 is served as 2022.12 (array-api-strict warns), so it adds nothing.
    return [version for version in supported_versions if version != "2021.12"]


@pytest.fixture(params=_versions())
def strictest(request: pytest.FixtureRequest) -> Iterator[str]:
    """array-api-strict at one version of the standard, with no optional features on."""
    with xp.ArrayAPIStrictFlags(
        api_version=request.param,
        boolean_indexing=False,
        data_dependent_shapes=False,
        enabled_extensions=(),
    ):
        yield request.param


def _host(part: Any) -> np.ndarray:
    return np.asarray(xp.asarray(part, device=xp.Device("CPU_DEVICE")))


def test_every_cut_under_the_strictest_flags_gives_numpy_values(strictest: str) -> None:
    x = xp.asarray(VALUES, device=xp.Device("device2"))
    got = [
        *split(x, [2, 0, 3], axis=1),
        *split(x, num_outputs=2, axis=-1),
        *split_to_sequence(x, 2, axis=1),
        *split_to_sequence(x, axis=2, keepdims=0),
        *split(x, [1, 4], axis=1, copy=True),
        *split_to_sequence(x, axis=0, keepdims=0, copy=True),
    ]
    expected = [
        *np.split(VALUES, [2, 2], axis=1),
        *np.split(VALUES, [2], axis=2),
        *np.split(VALUES, [2, 4], axis=1),
        *(VALUES[:, :, i] for i in range(3)),
        *np.split(VALUES, [1], axis=1),
        *VALUES,
    ]
    assert all(type(part) is type(x) for part in got), strictest
    assert {part.device for part in got} == {xp.Device("device2")}
    for part, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(_host(part), want, strict=True)


def test_split_sizes_may_be_an_int64_array_of_the_library() -> None:
    x = xp.asarray(VALUES)
    parts = split(x, xp.asarray([3, 2], dtype=xp.int64), axis=1)
    assert [tuple(part.shape) for part in parts] == [(2, 3, 3), (2, 2, 3)]


def test_copy_true_parts_can_be_written_without_touching_the_input() -> None:
    x = xp.asarray(VALUES)
    parts = split(x, [1, 4], axis=1, copy=True)
    parts[0][...] = -1
    np.testing.assert_array_equal(_host(x), VALUES, strict=True)
    np.testing.assert_array_equal(_host(parts[0]), np.full((2, 1, 3), -1), strict=True)
