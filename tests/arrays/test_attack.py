"""The attack, kept running: hostile arguments to every public array function, on every
installed library, against an oracle written here from the spec's words.

For each drawn call the oracle says which sizes the spec gives, or that no valid answer
exists. splitops must then give exactly those parts (compared with plain slicing of the numpy
input), or raise a ``SplitError``; any other exception, a wrong part, or a warning fails.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import splitops
from splitops import SplitError

from .conftest import Backend, ToBackend, ToNumpy

ATTACK = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
VERSIONS = {"Split": [1, 2, 11, 13, 18], "SplitToSequence": [11, 24]}
FLOATS = {"float16", "float32", "float64", "bfloat16"}
Reject = None

sizes_items = st.one_of(
    st.integers(-2, 6), st.booleans(), st.sampled_from([2.0, 1.5, 10**30, -(10**30)])
)
splits = st.one_of(
    st.none(),
    st.integers(-3, 8),
    st.sampled_from([10**30, True, 2.5]),
    st.lists(st.integers(0, 6), min_size=0, max_size=6),
    st.lists(sizes_items, min_size=0, max_size=6),
    st.lists(st.integers(0, 6), min_size=1, max_size=6).map(lambda v: np.array(v, np.int32)),
    st.lists(st.integers(0, 6), min_size=1, max_size=6).map(lambda v: np.array(v, np.float64)),
)
hostile_calls = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["Split", "SplitToSequence"]),
        "shape": st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple),
        "dtype": st.sampled_from(["float32", "int32", "bool", "bfloat16", "float64"]),
        "axis": st.one_of(st.integers(-4, 4), st.sampled_from([True, 1.0, "0"])),
        "split": splits,
        "num_outputs": st.one_of(
            st.none(), st.integers(-1, 8), st.sampled_from([10**9, 2**31, True, 2.0])
        ),
        "keepdims": st.sampled_from([0, 1, True, False, 2, -1]),
        "opset": st.one_of(
            st.sampled_from([1, 2, 11, 13, 17, 18, 24, 25]), st.sampled_from([0, 10, 18.0])
        ),
        "copy": st.sampled_from([False, True, 1, None]),
    }
)


@st.composite
def plausible_calls(draw: st.DrawFn) -> dict[str, Any]:
    """Calls a user would make: most are valid, some break one rule (a sum off by one, an
    uneven count), so that the valid paths are attacked as hard as the invalid ones."""
    op = draw(st.sampled_from(["Split", "SplitToSequence"]))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    cuts = sorted(draw(st.lists(st.integers(0, dim), max_size=5)))
    sizes = np.diff([0, *cuts, dim]).tolist()
    sizes[-1] += draw(st.sampled_from([0, 0, 0, 1, -1]))
    as_array = draw(st.booleans())
    explicit = np.array(sizes, np.int64) if as_array else sizes
    if op == "Split":
        split = draw(st.sampled_from([None, explicit]))
        count = None if split is not None else draw(st.integers(1, dim + 3))
    else:
        split = draw(st.sampled_from([None, explicit, draw(st.integers(1, dim + 2))]))
        count = None
    return {
        "op": op, "shape": shape, "dtype": draw(st.sampled_from(["float32", "int32", "bool"])),
        "axis": axis, "split": split, "num_outputs": count,
        "keepdims": draw(st.sampled_from([0, 1])),
        "opset": draw(st.sampled_from(VERSIONS[op] + [17, 25])), "copy": draw(st.booleans()),
    }  # fmt: skip


calls = st.one_of(plausible_calls(), hostile_calls)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _sizes_of(split: Any, version: int) -> list[int] | None:
    """``split`` read as the spec types it: ints, or whole floats only where split is T."""
    values = split.tolist() if isinstance(split, np.ndarray) else split
    read = []
    for value in values:
        if _is_int(value):
            read.append(value)
        elif isinstance(value, float) and value.is_integer() and version == 1:
            read.append(int(value))
        else:
            return Reject
    return read


def expected(call: dict[str, Any], limit: int) -> tuple[list[int], bool] | None:
    """The sizes of the parts and whether the axis is dropped, or ``None`` for a rejection."""
    op, opset, shape, split = call["op"], call["opset"], call["shape"], call["split"]
    if not _is_int(opset) or not [v for v in VERSIONS[op] if v <= opset]:
        return Reject
    version = max(v for v in VERSIONS[op] if v <= opset)
    dtype = call["dtype"]
    if op == "Split" and version == 1 and dtype not in FLOATS - {"bfloat16"}:
        return Reject
    if dtype == "bfloat16" and version < (13 if op == "Split" else 24):
        return Reject
    if not isinstance(call["copy"], bool) or not shape:
        return Reject
    axis = call["axis"]
    if not _is_int(axis) or not -len(shape) <= axis < len(shape):
        return Reject
    dim = shape[axis]
    array_split = isinstance(split, np.ndarray)
    if array_split and split.dtype.kind == "f" and not (op == "Split" and version == 1):
        return Reject
    if op == "SplitToSequence":
        keepdims = call["keepdims"]
        if keepdims not in (0, 1):
            return Reject
        if split is None:
            return ([1] * dim, not keepdims) if dim <= limit else Reject
        if _is_int(split):
            if split < 1 or math.ceil(dim / split) > limit:
                return Reject
            # The scalar 1 is the default split, so keepdims applies to it (docs/semantics.md).
            drop = split == 1 and not keepdims
            return [split] * (dim // split) + ([dim % split] if dim % split else []), drop
        if not isinstance(split, (list, np.ndarray)):
            return Reject
        sizes = _sizes_of(split, version)
        if not sizes or min(sizes) < 0 or sum(sizes) != dim:
            return Reject
        return sizes, False
    count = call["num_outputs"]
    if count is not None and (not _is_int(count) or not 1 <= count <= 2**31 - 1 or count > limit):
        return Reject
    if split is not None:
        if not isinstance(split, (list, np.ndarray)):
            return Reject
        sizes = _sizes_of(split, version)
        if not sizes or min(sizes) < 0 or sum(sizes) != dim:
            return Reject
        if count is not None and (version == 18 or count != len(sizes)):
            return Reject
        return sizes, False
    if count is None:
        return Reject
    if version < 18:
        return ([dim // count] * count, False) if dim % count == 0 else Reject
    chunk = -(-dim // count)
    rest = dim - chunk * (count - 1)
    return ([chunk] * (count - 1) + [rest], False) if rest >= 0 else Reject


def _numpy_input(shape: tuple[int, ...], dtype: str) -> Any:
    numpy_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    return (np.arange(math.prod(shape)) % 7).astype(numpy_dtype).reshape(shape)


def _oracle_parts(x: Any, axis: int, sizes: list[int], drop: bool) -> list[Any]:
    axis %= x.ndim
    if drop:
        return [np.take(x, i, axis=axis) for i in range(len(sizes))]
    bounds = np.cumsum([0, *sizes]).tolist()
    lead = (slice(None),) * axis
    return [x[(*lead, slice(a, b))] for a, b in itertools.pairwise(bounds)]


def _call(call: dict[str, Any], x: Any) -> Any:
    options = {"axis": call["axis"], "opset": call["opset"], "copy": call["copy"]}
    if call["op"] == "Split":
        return splitops.split(x, call["split"], num_outputs=call["num_outputs"], **options)
    return splitops.split_to_sequence(x, call["split"], keepdims=call["keepdims"], **options)


@ATTACK
@given(call=calls)
def test_every_call_gives_the_spec_parts_or_a_split_error(
    call: dict[str, Any], library: Backend, asarray: ToBackend, to_numpy: ToNumpy
) -> None:
    wanted = ml_dtypes.bfloat16 if call["dtype"] == "bfloat16" else call["dtype"]
    assume(np.dtype(wanted) in library.onnx_types.values())  # types the library has
    values = _numpy_input(call["shape"], call["dtype"])
    want = expected(call, splitops.core.current_limits().max_parts)
    if want is Reject:
        with pytest.raises(SplitError):
            _call(call, asarray(values))
        return
    sizes, drop = want
    parts = _call(call, asarray(values))
    assert len(parts) == len(sizes)
    for part, oracle in zip(parts, _oracle_parts(values, call["axis"], sizes, drop), strict=True):
        got = to_numpy(part)
        assert got.shape == oracle.shape
        np.testing.assert_array_equal(got, oracle)


@ATTACK
@given(
    dim=st.one_of(st.integers(-3, 40), st.sampled_from([10**100, 2**31, True, 2.0])),
    split=splits,
    count=st.one_of(st.none(), st.integers(-1, 9), st.sampled_from([10**12, True])),
    opset=st.sampled_from([1, 11, 13, 18, 24, 0, 18.5]),
)
def test_the_size_functions_give_the_spec_sizes_or_a_split_error(
    dim: Any, split: Any, count: Any, opset: Any
) -> None:
    limit = splitops.core.current_limits().max_parts
    for op in ("Split", "SplitToSequence"):
        shape_ok = _is_int(dim) and dim >= 0
        call = {
            "op": op, "shape": (dim,) if shape_ok else (), "dtype": "float32", "axis": 0,
            "split": split, "num_outputs": count, "keepdims": 1, "opset": opset, "copy": False,
        }  # fmt: skip
        want = expected(call, limit) if shape_ok else Reject
        function = splitops.split_sizes if op == "Split" else splitops.sequence_sizes
        arguments: dict[str, Any] = {"opset": opset}
        if op == "Split":
            arguments["num_outputs"] = count
        if want is Reject:
            with pytest.raises(SplitError):
                function(dim, split, **arguments)
        else:
            assert list(function(dim, split, **arguments)) == want[0]
