"""splitops against onnxruntime, live: seeded random valid nodes must give identical bits.

Every case is one Split or SplitToSequence node in a model of its own, run by an
``onnxruntime.InferenceSession`` on the CPU, by :func:`splitops.run_node` and by
:mod:`splitops.backend`. Outputs must match in shape, dtype and every byte (NaN payloads and
signed zeros included). ``SPLITOPS_FULL=1`` runs 5000 cases instead of the default 1000.

Where onnxruntime 1.31 departs from the ONNX spec, :func:`ort_departure` names the case and
the reason, and the case is compared with onnxruntime on an equivalent node it runs right
(the tests at the end of this file show each departure on onnxruntime itself).
"""

from __future__ import annotations

import ctypes
import itertools
import math
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, replace
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops import SplitError, backend
from splitops.core import ElementType, opset_rule

ort = pytest.importorskip("onnxruntime")

#: onnxruntime 1.32 fixed three departures (9 into 4 and num_outputs=1 on an empty axis are
#: accepted, a constant scalar split of 0 is rejected instead of killing the process) and
#: began rejecting a Split-18 node that lists fewer outputs than num_outputs. The tests below
#: pin each behaviour on both sides of that release.
ORT_1_32 = tuple(int(part) for part in ort.__version__.split(".")[:2]) >= (1, 32)

CASES = 5000 if os.environ.get("SPLITOPS_FULL") == "1" else 1000
SEED = 20240611

# The element types onnxruntime 1.31's CPU kernels register, per operator version: those of
# the version, less the complex types (no kernel anywhere) and, for SplitToSequence, less the
# 8- and 16-bit and unsigned integers and bfloat16.
_ORT_NEVER = frozenset({"complex64", "complex128"})
_ORT_SEQUENCE = frozenset({"bool", "int32", "int64", "float16", "float", "double", "string"})
ORT_TYPES = {
    ("Split", v): tuple(sorted(opset_rule("Split", v).dtypes - _ORT_NEVER)) for v in (11, 13, 18)
} | {
    ("SplitToSequence", v): tuple(sorted(opset_rule("SplitToSequence", v).dtypes & _ORT_SEQUENCE))
    for v in (11, 24)
}
SPLIT_OPSETS = tuple(range(11, 19))
SEQUENCE_OPSETS = (11, 24)


@dataclass(frozen=True)
class Case:
    """One node and its input, as plain data."""

    op: str
    opset: int
    shape: tuple[int, ...]
    axis: int
    dtype: str
    #: Sizes (a tuple), a chunk length (an int, SplitToSequence only) or None.
    split: tuple[int, ...] | int | None = None
    split_dtype: str = "int64"
    #: Split-11/12 read sizes from the attribute; later versions from the second input.
    split_as_attribute: bool = False
    #: The split input as an initializer rather than a graph input.
    split_as_initializer: bool = False
    num_outputs: int | None = None
    #: How many outputs a Split node lists.
    outputs: int = 1
    keepdims: int | None = None
    seed: int = 0

    @property
    def version(self) -> int:
        versions = (11, 13, 18) if self.op == "Split" else SEQUENCE_OPSETS
        return max(v for v in versions if v <= self.opset)

    def __str__(self) -> str:
        parts = [f"{self.op}{self.opset}", self.dtype, "x".join(map(str, self.shape)) or "()"]
        parts.append(f"axis{self.axis}")
        if isinstance(self.split, tuple):
            parts.append(f"split{list(self.split)}")
        elif self.split is not None:
            parts.append(f"chunk{self.split}")
        if self.num_outputs is not None:
            parts.append(f"n{self.num_outputs}")
        if self.op == "Split":
            parts.append(f"out{self.outputs}")
        if self.keepdims is not None:
            parts.append(f"keep{self.keepdims}")
        return "-".join(parts)


def spec_num_outputs_sizes(dim: int, count: int) -> list[int]:
    """Split-18's rule in the spec's words: parts of ceil(dim / num_outputs), the last smaller."""
    chunk = math.ceil(dim / count)
    return [chunk] * (count - 1) + [dim - chunk * (count - 1)]


def _composition(rng: np.random.Generator, total: int, parts: int) -> tuple[int, ...]:
    """``parts`` sizes >= 0 adding up to ``total`` (zero-size parts included)."""
    cuts = np.sort(rng.integers(0, total + 1, size=parts - 1))
    edges = [0, *cuts.tolist(), total]
    return tuple(int(b - a) for a, b in itertools.pairwise(edges))


def random_case(seed: int) -> Case:
    """A valid node drawn from ``seed``: every opset, ranks 1 to 5, zero-size parts."""
    rng = np.random.default_rng([SEED, seed])
    op = "Split" if rng.random() < 0.7 else "SplitToSequence"
    opset = int(rng.choice(SPLIT_OPSETS if op == "Split" else SEQUENCE_OPSETS))
    rank = int(rng.integers(1, 6))
    shape = [int(d) for d in rng.integers(1, 4, size=rank)]
    axis = int(rng.integers(-rank, rank))
    shape[axis] = int(rng.choice([0, *range(1, 10)], p=[0.06, *[0.94 / 9] * 9]))
    dim = shape[axis]
    case = Case(op, opset, tuple(shape), axis, "", seed=seed)
    case = replace(case, dtype=str(rng.choice(ORT_TYPES[op, case.version])))
    if op == "SplitToSequence":
        return _sequence_split(rng, case, dim)
    return _split_sizes(rng, case, dim)


def _split_sizes(rng: np.random.Generator, case: Case, dim: int) -> Case:
    mode = rng.random()
    if case.version == 18 and mode < 0.45:
        counts = [n for n in range(1, dim + 3) if spec_num_outputs_sizes(dim, n)[-1] >= 0]
        count = int(rng.choice(counts))
        listed = count if rng.random() < 0.75 else int(rng.integers(1, count + 1))
        return replace(case, num_outputs=count, outputs=listed)
    if mode < 0.7:
        parts = int(rng.integers(1, 6))
        sizes = _composition(rng, dim, parts)
        return replace(
            case,
            split=sizes,
            outputs=parts,
            split_as_attribute=case.version == 11,
            split_as_initializer=bool(rng.random() < 0.5),
        )
    if case.version == 18:  # equal parts by num_outputs
        count = int(rng.choice([n for n in range(1, 6) if dim % n == 0]))
        return replace(case, num_outputs=count, outputs=count)
    # Before 18 without sizes: equal parts, as many as the node lists outputs.
    count = int(rng.choice([n for n in range(1, 6) if dim % n == 0]))
    return replace(case, outputs=count)


def _sequence_split(rng: np.random.Generator, case: Case, dim: int) -> Case:
    mode = rng.random()
    keepdims = int(rng.integers(0, 2)) if rng.random() < 0.7 else None
    split_dtype = str(rng.choice(["int32", "int64"]))
    initializer = bool(rng.random() < 0.5)
    if mode < 0.3:
        return replace(case, keepdims=keepdims)
    if mode < 0.65:
        chunk = int(rng.integers(1, dim + 3))
        return replace(
            case,
            split=chunk,
            split_dtype=split_dtype,
            keepdims=keepdims,
            split_as_initializer=initializer,
        )
    sizes = _composition(rng, dim, int(rng.integers(1, 6)))
    return replace(
        case,
        split=sizes,
        split_dtype=split_dtype,
        keepdims=keepdims,
        split_as_initializer=initializer,
    )


def ort_departure(case: Case) -> str | None:
    """Why onnxruntime 1.31 runs this valid node differently from the spec, or None.

    Each reason is shown on onnxruntime itself by a ``test_onnxruntime_*`` test below.
    """
    if case.num_outputs is not None:
        dim = case.shape[case.axis]
        if spec_num_outputs_sizes(dim, case.num_outputs)[-1] == 0:
            return "onnxruntime rejects a num_outputs split whose last part is empty"
        if case.outputs < case.num_outputs:
            return "onnxruntime cuts into as many parts as the node lists outputs, not num_outputs"
    scalar = isinstance(case.split, int) and case.split != 1
    if case.op == "SplitToSequence" and scalar and case.keepdims == 0:
        return "onnxruntime applies keepdims=0 to every scalar split, not only the default 1"
    return None


def ort_equivalent(case: Case) -> tuple[Case, int]:
    """A node onnxruntime runs right whose first outputs are the spec's outputs of ``case``.

    Returns the node and how many of its outputs to compare.
    """
    if case.num_outputs is not None and ort_departure(case) is not None:
        dim = case.shape[case.axis]
        sizes = tuple(spec_num_outputs_sizes(dim, case.num_outputs))
        full = replace(case, split=sizes, num_outputs=None, outputs=len(sizes))
        return full, case.outputs
    if ort_departure(case) is not None:
        return replace(case, keepdims=1), 1
    return case, case.outputs if case.op == "Split" else 1


def input_values(case: Case) -> np.ndarray[Any, Any]:
    """Random values of the case's type; floats include NaN, infinities and -0.0."""
    rng = np.random.default_rng([SEED, case.seed, 1])
    size = math.prod(case.shape)
    name = case.dtype
    if name == "string":
        words = np.array(["", "a", "split", "ünï", "日本", "x" * 9], dtype=object)
        return rng.choice(words, size=size).reshape(case.shape)
    if name == "bool":
        return rng.random(case.shape) < 0.5
    dtype = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else _numpy_type(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=case.shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(size) * 100
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0])
    mask = rng.random(size) < 0.15
    values[mask] = rng.choice(specials, size=int(mask.sum()))
    return values.astype(dtype).reshape(case.shape)


def _code(name: str) -> int:
    element = ElementType.from_name(name)
    assert element is not None
    return element.code


def _numpy_type(name: str) -> np.dtype[Any]:
    return helper.tensor_dtype_to_np_dtype(_code(name))


def split_value(case: Case) -> np.ndarray[Any, Any] | None:
    if case.split is None or case.split_as_attribute:
        return None
    return np.array(case.split, dtype=case.split_dtype)


def make_node(case: Case) -> Any:
    inputs = ["x"] if split_value(case) is None else ["x", "split"]
    outputs = [f"y{i}" for i in range(case.outputs)] if case.op == "Split" else ["seq"]
    attributes: dict[str, Any] = {"axis": case.axis}
    if case.split_as_attribute:
        attributes["split"] = list(case.split or ())
    if case.num_outputs is not None:
        attributes["num_outputs"] = case.num_outputs
    if case.keepdims is not None:
        attributes["keepdims"] = case.keepdims
    return helper.make_node(case.op, inputs, outputs, name=f"node{case.seed}", **attributes)


def make_model(case: Case) -> ModelProto:
    node = make_node(case)
    element = _code(case.dtype)
    graph_inputs = [helper.make_tensor_value_info("x", element, case.shape)]
    initializers = []
    split = split_value(case)
    if split is not None:
        if case.split_as_initializer:
            initializers.append(numpy_helper.from_array(split, "split"))
        else:
            split_type = _code(case.split_dtype)
            graph_inputs.append(helper.make_tensor_value_info("split", split_type, split.shape))
    unknown = [None] * len(case.shape)
    if case.op == "Split":
        graph_outputs = [helper.make_tensor_value_info(n, element, unknown) for n in node.output]
    else:
        graph_outputs = [helper.make_tensor_sequence_value_info("seq", element, unknown)]
    graph = helper.make_graph([node], "case", graph_inputs, graph_outputs, initializers)
    opsets = [helper.make_opsetid("", case.opset)]
    # The oldest IR version that carries the opset; onnxruntime 1.31 reads IR versions <= 13.
    ir_version = helper.find_min_ir_version_for(opsets)
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def feeds(case: Case, x: np.ndarray[Any, Any]) -> dict[str, Any]:
    values = {"x": x}
    split = split_value(case)
    if split is not None and not case.split_as_initializer:
        values["split"] = split
    return values


def run_onnxruntime(case: Case, x: np.ndarray[Any, Any]) -> list[Any]:
    """The case's outputs as onnxruntime computes them (a sequence output as a list)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(
        make_model(case).SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    if case.dtype != "bfloat16":
        return list(session.run(None, feeds(case, x)))
    # onnxruntime's numpy bridge has no bfloat16: hand it over and read it back as raw bits.
    values = {
        name: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
            value.view(np.uint16), onnx_element_type=TensorProto.BFLOAT16
        )
        if name == "x"
        else ort.OrtValue.ortvalue_from_numpy(value)
        for name, value in feeds(case, x).items()
    }
    return [_bfloat16_array(value) for value in session.run_with_ort_values(None, values)]


def _bfloat16_array(value: Any) -> np.ndarray[Any, Any]:
    shape = tuple(value.shape())
    size = value.tensor_size_in_bytes()
    raw = ctypes.string_at(value.data_ptr(), size) if size else b""
    return np.frombuffer(raw, dtype=np.uint16).reshape(shape).view(ml_dtypes.bfloat16)


def assert_identical(actual: Any, expected: Any, where: str) -> None:
    """Same nesting, shapes, dtypes and bytes; strings compared as Python strings."""
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: a sequence was expected, got {type(actual)}"
        assert len(actual) == len(expected), f"{where}: {len(actual)} vs {len(expected)} parts"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_identical(a, e, f"{where}[{i}]")
        return
    assert isinstance(actual, np.ndarray), f"{where}: an array was expected, got {type(actual)}"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} vs {expected.shape}"
    if expected.dtype == object:
        assert actual.dtype == object, f"{where}: dtype {actual.dtype} vs object"
        assert actual.tolist() == expected.tolist(), where
        return
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} vs {expected.dtype}"
    assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes(), (
        f"{where}: values differ\n{actual!r}\n{expected!r}"
    )


ALL_CASES = [random_case(seed) for seed in range(CASES)]


def test_generator_covers_every_version_rank_and_feature() -> None:
    """The random cases reach every opset, rank, dtype and the edge cases the rules name."""
    split_opsets = {c.opset for c in ALL_CASES if c.op == "Split"}
    sequence_opsets = {c.opset for c in ALL_CASES if c.op == "SplitToSequence"}
    assert split_opsets == set(SPLIT_OPSETS)
    assert sequence_opsets == set(SEQUENCE_OPSETS)
    assert {len(c.shape) for c in ALL_CASES} == {1, 2, 3, 4, 5}
    assert any(c.axis < 0 for c in ALL_CASES)
    assert any(isinstance(c.split, tuple) and 0 in c.split for c in ALL_CASES)
    uneven = [c for c in ALL_CASES if c.num_outputs and c.shape[c.axis] % c.num_outputs]
    assert uneven
    assert any(isinstance(c.split, int) for c in ALL_CASES)
    sequence_sizes = [c for c in ALL_CASES if c.op == "SplitToSequence"]
    assert any(isinstance(c.split, tuple) for c in sequence_sizes)
    assert {c.split_dtype for c in sequence_sizes if c.split is not None} == {"int32", "int64"}
    every_type = {t for types in ORT_TYPES.values() for t in types}
    assert {c.dtype for c in ALL_CASES} == every_type
    departures = [c for c in ALL_CASES if ort_departure(c)]
    print(f"\n{len(ALL_CASES)} cases, {len(departures)} compared through an equivalent node")


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_splitops_matches_onnxruntime_bit_for_bit(case: Case) -> None:
    x = input_values(case)
    reference_case, compared = ort_equivalent(case)
    expected = run_onnxruntime(reference_case, x)[:compared]
    node = make_node(case)
    inputs = [x] if split_value(case) is None else [x, split_value(case)]
    by_node = splitops.run_node(node, inputs, opset=case.opset)
    assert_identical(by_node, expected, "run_node")
    by_model = backend.run_model(make_model(case), feeds(case, x))
    assert_identical(list(by_model), expected, "backend.run_model")


# Where onnxruntime departs from the spec: each departure shown on onnxruntime itself, next to
# what splitops does. If an onnxruntime release fixes one, its test fails and says so.


def _ort_error(case: Case, x: np.ndarray[Any, Any]) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 (onnxruntime raises its own classes)
        run_onnxruntime(case, x)
    return str(info.value)


def _shapes(values: list[Any]) -> list[tuple[int, ...]]:
    return [tuple(np.asarray(v).shape) for v in values]


def test_onnxruntime_rejects_9_into_4_which_split18_allows_until_1_32() -> None:
    """Split-18: ceil(9/4) = 3, so the parts are 3, 3, 3 and an empty last part."""
    case = Case("Split", 18, (9,), 0, "float", num_outputs=4, outputs=4)
    x = np.arange(9, dtype=np.float32)
    parts = splitops.run_node(make_node(case), [x], opset=18)
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], []]
    if ORT_1_32:
        assert [p.tolist() for p in run_onnxruntime(case, x)] == [p.tolist() for p in parts]
    else:
        assert "Invalid value in 'split'" in _ort_error(case, x)


def test_onnxruntime_rejects_num_outputs_1_on_an_empty_axis_until_1_32() -> None:
    """Split-18 with num_outputs=1 on an axis of length 0 has one empty part."""
    case = Case("Split", 18, (2, 0), 1, "float", num_outputs=1, outputs=1)
    x = np.zeros((2, 0), dtype=np.float32)
    parts = splitops.run_node(make_node(case), [x], opset=18)
    assert _shapes(parts) == [(2, 0)]
    if ORT_1_32:
        assert _shapes(run_onnxruntime(case, x)) == [(2, 0)]
    else:
        assert "Invalid num_outputs value of 1" in _ort_error(case, x)


def test_onnxruntime_departs_when_trailing_outputs_are_omitted() -> None:
    """A Split-18 node may list fewer outputs than num_outputs; the parts stay the same size.
    onnxruntime cut as many parts as listed outputs until 1.31, and rejects the node since."""
    case = Case("Split", 18, (8,), 0, "float", num_outputs=4, outputs=2)
    x = np.arange(8, dtype=np.float32)
    parts = splitops.run_node(make_node(case), [x], opset=18)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3]]
    if ORT_1_32:
        assert "Number of outputs (2) does not match num_outputs (4)" in _ort_error(case, x)
    else:
        assert _shapes(run_onnxruntime(case, x)) == [(4,), (4,)]


def test_onnxruntime_applies_keepdims_to_every_scalar_split() -> None:
    """The scalar split 1 is the default split: keepdims=0 drops the axis, on onnxruntime as
    in splitops (torch's unbind). onnxruntime applies keepdims=0 to other scalar splits too,
    and fails there, where the spec ignores keepdims."""
    ones = Case("SplitToSequence", 11, (3, 2), 0, "float", split=1, keepdims=0)
    twos = replace(ones, split=2)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert _shapes(run_onnxruntime(ones, x)[0]) == [(2,), (2,), (2,)]
    _ort_error(twos, x)
    by_ones = splitops.run_node(make_node(ones), [x, np.array(1)], opset=11)[0]
    by_twos = splitops.run_node(make_node(twos), [x, np.array(2)], opset=11)[0]
    assert _shapes(by_ones) == [(2,), (2,), (2,)]
    assert _shapes(by_twos) == [(2, 2), (1, 2)]


def test_onnxruntime_takes_an_empty_split_input_as_absent() -> None:
    """Split-13 with a split input of no sizes: onnxruntime splits into equal parts as if it
    were absent; the spec reads it as sizes, which must add up to the axis."""
    case = Case("Split", 13, (3,), 0, "float", split=(), outputs=3)
    x = np.arange(3, dtype=np.float32)
    assert _shapes(run_onnxruntime(case, x)) == [(1,), (1,), (1,)]
    with pytest.raises(SplitError, match="at least one size"):
        splitops.run_node(make_node(case), [x, np.zeros(0, np.int64)], opset=13)


def test_onnxruntime_flattens_a_2d_sequence_split() -> None:
    """SplitToSequence's split is a scalar or 1-d; onnxruntime also takes [[1, 2]]."""
    case = Case("SplitToSequence", 11, (3,), 0, "float", split=(1, 2))
    x = np.arange(3, dtype=np.float32)
    split = np.array([[1, 2]], dtype=np.int64)
    model = make_model(case)
    model.graph.input[1].CopyFrom(
        helper.make_tensor_value_info("split", TensorProto.INT64, split.shape)
    )
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert _shapes(session.run(None, {"x": x, "split": split})[0]) == [(1,), (2,)]
    with pytest.raises(SplitError, match="scalar or 1-d"):
        splitops.run_node(make_node(case), [x, split], opset=11)


_SIGFPE_SCRIPT = """
import numpy as np, onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
node = helper.make_node("SplitToSequence", ["x", "split"], ["seq"])
graph = helper.make_graph(
    [node], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, [None])],
    [numpy_helper.from_array(np.array(0, dtype=np.int64), "split")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
"""


@pytest.mark.skipif(not hasattr(signal, "SIGFPE"), reason="needs POSIX signals")
def test_onnxruntime_dies_on_a_scalar_split_of_0_until_1_32() -> None:
    """A constant chunk length of 0 kills onnxruntime before 1.32 with SIGFPE while it builds
    the session (a division by zero), so it runs in a subprocess; 1.32 rejects the model.
    splitops raises SplitError. (Given as a graph input instead, onnxruntime raises an error
    at run time.)"""
    result = subprocess.run(
        [sys.executable, "-c", _SIGFPE_SCRIPT],
        capture_output=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    stderr = result.stderr.decode(errors="replace")
    if ORT_1_32:
        assert result.returncode == 1, stderr[-2000:]
        assert "Scalar input 'split' must be greater than zero" in stderr
    else:
        assert result.returncode == -signal.SIGFPE, stderr[-2000:]
    node = helper.make_node("SplitToSequence", ["x", "split"], ["seq"], name="chunks")
    x = np.zeros(4, np.float32)
    with pytest.raises(SplitError, match=r"'chunks' \(SplitToSequence\).*must be >= 1"):
        splitops.run_node(node, [x, np.array(0)], opset=11)
    case = Case("SplitToSequence", 11, (4,), 0, "float", split=0, split_as_initializer=True)
    model = make_model(case)
    model.graph.node[0].name = "chunks"
    with pytest.raises(SplitError, match=r"'chunks' \(SplitToSequence\).*must be >= 1"):
        backend.run_model(model, {"x": x})
