"""copy=True and out= on the libraries with strided memory (numpy, torch on every device, cupy).

copy=True promises contiguous parts cut from one new allocation of the input's size, sharing
no byte with the input or with each other; out= arrays that are the parts of an earlier
copy=True call are filled in place, and any other arrays too, whatever their order. numpy's
own slicing of the same values is the oracle; the memory each part touches is read from the
library (numpy's and cupy's byte bounds, torch's data pointers and strides).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import splitops

from .conftest import Backend, ToBackend, ToNumpy, available

STRIDED = (Backend.NUMPY, Backend.TORCH, Backend.TORCH_CUDA, Backend.CUPY)
CUTS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(params=STRIDED, ids=lambda backend: backend.value)
def library(request: pytest.FixtureRequest) -> Backend:
    """The strided libraries only; one that is absent (or CUDA without a device) skips."""
    return available(request.param)


@st.composite
def cuts(draw: st.DrawFn) -> dict[str, Any]:
    """An input shape and layout, and a call that cuts it: explicit sizes (any, or a run of
    equal parts and a rest), Split-18's count, SplitToSequence's chunks, or unit parts with
    the axis dropped."""
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=4)))
    axis = draw(st.integers(0, len(shape) - 1))
    dim = shape[axis]
    kind = draw(st.sampled_from(["sizes", "run", "count", "chunks", "drop"]))
    call: dict[str, Any] = {"op": "split", "axis": axis}
    if kind == "sizes":
        cuts_at = sorted(draw(st.lists(st.integers(0, dim), max_size=4)))
        call["split"] = np.diff([0, *cuts_at, dim]).tolist()
    elif kind == "run":
        length = draw(st.integers(1, max(dim, 1)))
        call["split"] = [length] * (dim // length) + ([dim % length] if dim % length else [])
        if not dim:
            call["split"] = [0, 0]
    elif kind == "count":
        count = draw(st.integers(1, max(dim, 1)))
        chunk = -(-dim // count) if dim else 0
        if chunk * (count - 1) > dim:
            count = 1
        call["num_outputs"] = count
    else:
        call["op"] = "split_to_sequence"
        if kind == "chunks":
            call["split"] = draw(st.integers(1, max(dim, 1)))
        else:
            call["keepdims"] = 0
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided", "reversed"]))
    return {"shape": shape, "layout": layout, "call": call}


def _laid_out(values: np.ndarray, layout: str, library: Backend, asarray: ToBackend) -> Any:
    """``values`` in ``library``, stored in ``layout`` (torch has no negative strides: its
    reversed layout is the transposed one)."""
    rank = values.ndim
    if layout == "transposed" or (layout == "reversed" and library is not Backend.NUMPY):
        order = tuple(reversed(range(rank)))
        stored = asarray(np.ascontiguousarray(values.transpose(order)))
        return stored.permute(order) if hasattr(stored, "permute") else stored.transpose(order)
    if layout == "strided":
        doubled = asarray(np.repeat(values, 2, axis=-1))
        return doubled[..., ::2]
    if layout == "reversed":
        flipped = asarray(np.ascontiguousarray(values[(slice(None, None, -1),) * rank]))
        return flipped[(slice(None, None, -1),) * rank]
    return asarray(values)


def _run(call: dict[str, Any], x: Any, **options: Any) -> Any:
    arguments = {k: v for k, v in call.items() if k != "op"}
    return getattr(splitops, call["op"])(x, **arguments, **options)


def _expected(values: np.ndarray, call: dict[str, Any]) -> list[np.ndarray]:
    return [np.asarray(part) for part in _run(call, values)]  # views: numpy's own slicing


def _span(part: Any) -> tuple[int, int] | None:
    """The bytes a part may touch (its library's own account), or None when it is empty."""
    if math.prod(part.shape) == 0:
        return None
    if hasattr(part, "data_ptr"):  # torch
        start = part.data_ptr()
        reach = sum((n - 1) * s for n, s in zip(part.shape, part.stride(), strict=True))
        return start, start + (reach + 1) * part.element_size()
    if isinstance(part, np.ndarray):
        low, high = np.lib.array_utils.byte_bounds(part)
        return int(low), int(high)
    start = int(part.data.ptr)  # cupy
    low = sum((n - 1) * s for n, s in zip(part.shape, part.strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(part.shape, part.strides, strict=True) if s > 0)
    return start + low, start + high + part.itemsize


def _contiguous(part: Any) -> bool:
    return bool(part.is_contiguous() if hasattr(part, "is_contiguous") else part.flags.c_contiguous)


def _assert_apart(parts: Any, x: Any) -> None:
    spans = sorted(span for span in map(_span, parts) if span)
    own = _span(x)
    for first, second in itertools.pairwise(spans):
        assert first[1] <= second[0], "two parts share bytes"
    for span in spans:
        assert own is None or span[1] <= own[0] or own[1] <= span[0], "a part shares the input"


@CUTS
@given(case=cuts())
def test_copies_are_contiguous_apart_and_cut_from_one_allocation_of_the_input_size(
    case: dict[str, Any], library: Backend, asarray: ToBackend, to_numpy: ToNumpy
) -> None:
    values = np.arange(math.prod(case["shape"]), dtype=np.float32).reshape(case["shape"])
    x = _laid_out(values, case["layout"], library, asarray)
    parts = _run(case["call"], x, copy=True)
    expected = _expected(values, case["call"])
    assert len(parts) == len(expected)
    for part, want in zip(parts, expected, strict=True):
        np.testing.assert_array_equal(to_numpy(part), want, strict=True)
        assert _contiguous(part)
    _assert_apart(parts, x)
    spans = [span for span in map(_span, parts) if span]
    if spans:  # every byte of the parts lies in one span no larger than the input
        assert max(s[1] for s in spans) - min(s[0] for s in spans) <= values.nbytes


@CUTS
@given(case=cuts())
def test_out_given_the_parts_of_a_copy_receives_the_parts_in_place(
    case: dict[str, Any], library: Backend, asarray: ToBackend, to_numpy: ToNumpy
) -> None:
    values = np.arange(math.prod(case["shape"]), dtype=np.float32).reshape(case["shape"])
    x = _laid_out(values, case["layout"], library, asarray)
    out = list(_run(case["call"], _laid_out(-values, case["layout"], library, asarray), copy=True))
    spans = [_span(array) for array in out]
    parts = _run(case["call"], x, out=out)
    assert all(part is array for part, array in zip(parts, out, strict=True))
    assert [_span(array) for array in out] == spans  # written where they lie
    for part, want in zip(parts, _expected(values, case["call"]), strict=True):
        np.testing.assert_array_equal(to_numpy(part), want, strict=True)


def test_out_in_another_order_than_its_buffer_still_gets_each_part_in_its_array(
    library: Backend, asarray: ToBackend, to_numpy: ToNumpy
) -> None:
    # Equal parts of one copy, passed last first: every array has its part's shape, but the
    # arrays do not lie in the order of the parts, so no single copy may fill them.
    values = np.arange(24, dtype=np.float32).reshape(4, 6)
    for axis in (0, 1):
        out = list(
            splitops.split(asarray(np.zeros_like(values)), num_outputs=2, axis=axis, copy=True)
        )
        parts = splitops.split(asarray(values), num_outputs=2, axis=axis, out=out[::-1])
        for part, want in zip(parts, np.split(values, 2, axis=axis), strict=True):
            np.testing.assert_array_equal(to_numpy(part), want, strict=True)


def test_out_that_tiles_the_input_itself_is_rejected_untouched(
    library: Backend, asarray: ToBackend, to_numpy: ToNumpy
) -> None:
    # Views of x, one after the other in x's own memory: they tile a buffer in order, and that
    # buffer is the input.
    values = np.arange(12, dtype=np.float32)
    x = asarray(values)
    with pytest.raises(splitops.SplitError, match=r"out\[0\] shares memory with the input"):
        splitops.split(x, [4, 8], out=list(splitops.split(x, [4, 8])))
    np.testing.assert_array_equal(to_numpy(x), values, strict=True)
