"""Inferred shapes are executed shapes: seeded random valid nodes of every version, run by
``splitops.run_node`` and inferred by ``splitops.shape_inference``, with static axis dims
and with the axis dim a symbol ``N`` (evaluated by sympy at every ``N`` the node accepts)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import sympy
from onnx import NodeProto, helper

from splitops import SplitError, run_node
from splitops.arrays import element_of, numpy_dtype
from splitops.core import ElementType, opset_rule
from splitops.onnx.inference._engine import infer_split_nodes

VERSIONS = [
    ("Split", 1),
    ("Split", 2),
    ("Split", 11),
    ("Split", 13),
    ("Split", 18),
    ("SplitToSequence", 11),
    ("SplitToSequence", 24),
]
SEEDS = range(40)
#: Element types the cases draw from (each version keeps those it accepts).
ELEMENT_TYPES = ("float", "double", "float16", "bfloat16", "int32", "int64", "uint8", "bool")


@dataclass(frozen=True)
class Case:
    """A valid node with its input tensor and the value of its (constant) split input."""

    node: NodeProto
    opset: int
    x: np.ndarray[Any, Any]
    axis: int
    split: np.ndarray[Any, Any] | None
    #: SplitToSequence: whether every part has length 1 (no split, or a scalar split of 1).
    unit_chunks: bool = False

    @property
    def elem(self) -> int:
        element = element_of(self.x.dtype)
        assert isinstance(element, ElementType)
        return element.code

    def run(self, x: np.ndarray[Any, Any]) -> list[Any]:
        inputs = [x] if self.split is None else [x, self.split]
        return run_node(self.node, inputs, opset=self.opset)


def _random_split_case(opset: int, rng: random.Random) -> Case:
    rank = rng.randint(1, 3)
    axis = rng.randint(-rank, rank - 1)
    attributes: dict[str, Any] = {"axis": axis}
    if axis == 0 and rng.random() < 0.5:
        del attributes["axis"]  # the default
    mode = rng.choice(["sizes", "equal" if opset < 18 else "num_outputs"])
    sizes: list[int] = []
    listed = 0
    if mode == "sizes":
        sizes = [rng.randint(0, 4) for _ in range(rng.randint(1, 4))]
        dim, listed = sum(sizes), len(sizes)
    elif mode == "equal":
        listed = rng.randint(1, 4)
        dim = listed * rng.randint(0, 3)
    else:
        count = rng.randint(1, 5)
        dim = rng.choice([d for d in range(13) if d - -(-d // count) * (count - 1) >= 0])
        attributes["num_outputs"] = count
        listed = rng.randint(1, count)
    x = _random_input(rank, axis, dim, opset_rule("Split", opset).dtypes, rng)
    split = None
    inputs = ["x"]
    by_input = opset >= 13 or (opset == 1 and rng.random() < 0.5)
    if mode == "sizes" and by_input:
        split = np.array(sizes, dtype=x.dtype if opset == 1 else np.int64)
        inputs.append("split")
    elif mode == "sizes":
        attributes["split"] = sizes
    outputs = [f"part{i}" for i in range(listed)]
    node = helper.make_node("Split", inputs, outputs, name="split", **attributes)
    return Case(node, opset, x, axis % rank, split)


def _random_sequence_case(opset: int, rng: random.Random) -> Case:
    rank = rng.randint(1, 3)
    axis = rng.randint(-rank, rank - 1)
    attributes: dict[str, Any] = {"axis": axis}
    if rng.random() < 0.7:
        attributes["keepdims"] = rng.randint(0, 1)
    mode = rng.choice(["none", "scalar", "sizes"])
    split = None
    if mode == "none":
        dim = rng.randint(0, 5)
    elif mode == "scalar":
        dim = rng.randint(0, 9)
        split = np.array(rng.randint(1, 4), dtype=rng.choice([np.int32, np.int64]))
    else:
        sizes = [rng.randint(0, 3) for _ in range(rng.randint(1, 4))]
        dim = sum(sizes)
        split = np.array(sizes, dtype=rng.choice([np.int32, np.int64]))
    x = _random_input(rank, axis, dim, opset_rule("SplitToSequence", opset).dtypes, rng)
    inputs = ["x"] if split is None else ["x", "split"]
    node = helper.make_node("SplitToSequence", inputs, ["seq"], name="seq", **attributes)
    unit = split is None or (split.ndim == 0 and int(split) == 1)
    return Case(node, opset, x, axis % rank, split, unit_chunks=unit)


def _random_input(
    rank: int, axis: int, dim: int, allowed: frozenset[str], rng: random.Random
) -> np.ndarray[Any, Any]:
    shape = [rng.randint(0, 3) for _ in range(rank)]
    shape[axis] = dim
    elem = rng.choice([t for t in ELEMENT_TYPES if t in allowed])
    element = ElementType.from_name(elem)
    assert element is not None
    return np.zeros(shape, dtype=numpy_dtype(element))


def random_case(op: str, opset: int, seed: int) -> Case:
    rng = random.Random(f"{op}-{opset}-{seed}")
    if op == "Split":
        return _random_split_case(opset, rng)
    return _random_sequence_case(opset, rng)


def case_model(case: Case, make_model: Any, axis_dim: int | str) -> Any:
    dims: list[int | str] = list(case.x.shape)
    dims[case.axis] = axis_dim
    constants = {} if case.split is None else {"split": case.split}
    return make_model([case.node], {"x": (case.elem, dims)}, opset=case.opset, constants=constants)


def inferred_outputs(case: Case, make_model: Any, shape_of: Any, axis_dim: int | str) -> Any:
    (record,) = infer_split_nodes(case_model(case, make_model, axis_dim))
    assert record.problems == ()
    return {name: shape_of(t) for name, t in record.outputs}


def expected_sequence_dims(case: Case, parts: list[Any]) -> list[int | None]:
    """The element shape a sequence type can state: each dim all parts share (the axis dim
    is 1 for chunks of 1 even with no parts); dropped with keepdims=0 and the default split
    (none, or the scalar 1 the spec names as the default)."""
    shape: list[int | None] = list(case.x.shape)
    keepdims = next((a.i for a in case.node.attribute if a.name == "keepdims"), 1)
    default = case.split is None or (np.ndim(case.split) == 0 and int(case.split) == 1)
    if default and not keepdims:
        return shape[: case.axis] + shape[case.axis + 1 :]
    lengths = {part.shape[case.axis] for part in parts}
    shape[case.axis] = 1 if case.unit_chunks else (lengths.pop() if len(lengths) == 1 else None)
    return shape


@pytest.mark.parametrize(("op", "opset"), VERSIONS)
def test_inferred_shapes_equal_executed_shapes(
    op: str, opset: int, make_model: Any, shape_of: Any
) -> None:
    for seed in SEEDS:
        case = random_case(op, opset, seed)
        executed = case.run(case.x)
        inferred = inferred_outputs(case, make_model, shape_of, case.x.shape[case.axis])
        if op == "Split":
            expected = {
                name: ("tensor", case.elem, list(part.shape))
                for name, part in zip(case.node.output, executed, strict=True)
            }
        else:
            expected = {"seq": ("seq", case.elem, expected_sequence_dims(case, executed[0]))}
        assert inferred == expected, (seed, case.node)


def _evaluate(dim: int | str, n: int) -> int:
    if isinstance(dim, int):
        return dim
    value = sympy.sympify(dim, locals={"N": sympy.Symbol("N")}).subs("N", n)
    assert value.is_Integer, (dim, n)
    return int(value)


@pytest.mark.parametrize(("op", "opset"), VERSIONS)
def test_symbolic_sizes_evaluate_to_executed_sizes(
    op: str, opset: int, make_model: Any, shape_of: Any
) -> None:
    for seed in SEEDS:
        case = random_case(op, opset, seed)
        inferred = inferred_outputs(case, make_model, shape_of, "N")
        valid = 0
        for n in {*range(13), case.x.shape[case.axis]}:
            shape = list(case.x.shape)
            shape[case.axis] = n
            try:
                executed = case.run(np.zeros(shape, dtype=case.x.dtype))
            except SplitError:
                continue  # the node rejects this N; sizes need only hold where it runs
            valid += 1
            if op == "Split":
                for name, part in zip(case.node.output, executed, strict=True):
                    size = inferred[name][2][case.axis]
                    assert size is not None, (seed, case.node)
                    assert _evaluate(size, n) == part.shape[case.axis], (seed, n, size)
            else:
                _check_sequence_dim(case, inferred["seq"][2], executed[0], n)
        assert valid >= 1


def _check_sequence_dim(case: Case, dims: list[Any], parts: list[Any], n: int) -> None:
    keepdims = next((a.i for a in case.node.attribute if a.name == "keepdims"), 1)
    if case.split is None and not keepdims:
        assert len(dims) == case.x.ndim - 1
        return
    size = dims[case.axis]
    if case.split is not None and case.split.ndim == 0 and int(case.split) > 1:
        # Chunks of s on an unknown N: the last may be shorter, so no one length holds.
        assert size is None
        return
    if size is None:
        lengths = {int(s) for s in case.split.tolist()} if case.split is not None else set()
        assert len(lengths) > 1, case.node
        return
    for part in parts:
        assert _evaluate(size, n) == part.shape[case.axis]
