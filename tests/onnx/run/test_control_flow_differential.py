"""Both engines against onnxruntime, live, on Split nodes inside Loop, Scan, If and local
functions: seeded random models, every element type Split-18 takes.

Each model is run by an ``onnxruntime.InferenceSession`` (the oracle) and by
``splitops.backend`` with each engine; outputs must match in shape, dtype and every value.
Where onnxruntime has no kernel for a type in such a model, the engines must agree with each
other (the onnxruntime engine then runs the model on the reference engine), and the test
counts those cases so that the comparison with onnxruntime never becomes vacuous.

The models are where onnx.reference departs from the spec and the reference engine runs its
own Loop, Scan and function dispatch (:mod:`splitops.onnx.run._control_flow`): a Loop
without ``cond``, scan outputs of rank >= 2, zero-trip loops, every Scan axis and direction,
and two overloads of one local function.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from onnx import FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, helper

from splitops import ModelCheckWarning, backend
from splitops.core import ElementType, opset_rule
from splitops.onnx.model._types import dtype_of_code
from splitops.onnx.run._ort import needs_raw_values, run_session
from splitops.onnx.run.backend import EngineFallbackWarning

ort = pytest.importorskip("onnxruntime")

SEED = 20261127
#: The model's opset: Split-18's rules, and Loop, Scan, If and Identity of opset 21.
OPSET = 21
#: Every element type the Split of this opset takes, from the project's rule table.
ELEMENTS = sorted(opset_rule("Split", OPSET).dtypes, key=lambda element: element.code)
I64, BOOL = TensorProto.INT64, TensorProto.BOOL


@dataclass(frozen=True)
class Case:
    """A model and the feeds it runs on."""

    name: str
    model: ModelProto
    feeds: dict[str, Any]


def info(name: str, element: int, shape: list[int | str | None] | None) -> Any:
    return helper.make_tensor_value_info(name, element, shape)


def sizes_of(rng: random.Random, length: int, parts: int, *, least: int = 0) -> list[int]:
    """``parts`` sizes >= ``least`` adding up to ``length``."""
    spare = length - least * parts
    cuts = sorted(rng.randint(0, spare) for _ in range(parts - 1))
    return [b - a + least for a, b in zip([0, *cuts], [*cuts, spare], strict=True)]


def split_node(
    rng: random.Random,
    source: str,
    outputs: list[str],
    length: int,
    axis: int,
    *,
    least: int = 0,
) -> tuple[list[NodeProto], list[int]]:
    """A Split-18 of ``source`` along ``axis`` (of ``length``) into ``outputs``: sizes (each
    at least ``least``) as a Constant input, or ``num_outputs`` where it cuts equal parts;
    and the sizes."""
    count = len(outputs)
    if length % count == 0 and rng.random() < 0.4:
        node = helper.make_node("Split", [source], outputs, axis=axis, num_outputs=count)
        return [node], [length // count] * count
    sizes = sizes_of(rng, length, count, least=least)
    constant = helper.make_node(
        "Constant",
        [],
        [f"{outputs[0]}_sizes"],
        value=helper.make_tensor(f"{outputs[0]}_sizes", I64, [count], sizes),
    )
    node = helper.make_node("Split", [source, constant.output[0]], outputs, axis=axis)
    return [constant, node], sizes


def values(rng: random.Random, element: ElementType, shape: tuple[int, ...]) -> Any:
    """An array of ``shape`` and ``element``: small whole numbers, which every type holds."""
    numbers = np.array([rng.randint(0, 5) for _ in range(int(np.prod(shape)))]).reshape(shape)
    if element is ElementType.STRING:
        return numbers.astype(str).astype(object)
    dtype = dtype_of_code(element.code)
    assert dtype is not None
    return numbers.astype(dtype)


def make_model(graph: GraphProto, functions: list[FunctionProto] | None = None) -> ModelProto:
    imports = [helper.make_opsetid("", OPSET), helper.make_opsetid("local", 1)]
    return helper.make_model(graph, opset_imports=imports, functions=functions, ir_version=10)


def loop_case(rng: random.Random, element: ElementType) -> Case:
    """A Loop whose body splits its carried value, each part a scan output of rank 2 (stacked
    to rank 3); ``cond`` left out, or given, perhaps false (no iteration)."""
    code = element.code
    rows, cols = rng.randint(1, 4), rng.randint(1, 4)
    axis = rng.choice([0, 1, -1])
    length = (rows, cols)[axis]
    nodes, sizes = split_node(rng, "v", ["p0", "p1"], length, axis)
    parts = [[size, cols] if axis == 0 else [rows, size] for size in sizes]
    body = helper.make_graph(
        [*nodes, *(helper.make_node("Identity", [n], [f"{n}_out"]) for n in "cv")],
        "body",
        [info("i", I64, []), info("c", BOOL, []), info("v", code, [rows, cols])],
        [info("c_out", BOOL, []), info("v_out", code, [rows, cols])]
        + [info(f"p{k}", code, part) for k, part in enumerate(parts)],
    )
    with_cond = rng.random() < 0.5
    loop = helper.make_node(
        "Loop", ["M", "c0" if with_cond else "", "v0"], ["v_final", "s0", "s1"], body=body
    )
    inputs = [info("M", I64, []), info("v0", code, [rows, cols])]
    feeds = {"M": np.array(rng.randint(0, 3), np.int64), "v0": values(rng, element, (rows, cols))}
    if with_cond:
        inputs.append(info("c0", BOOL, []))
        feeds["c0"] = np.array(rng.random() < 0.8)
    outputs = [info("v_final", code, [rows, cols])]
    outputs += [info(f"s{k}", code, [None, *part]) for k, part in enumerate(parts)]
    graph = helper.make_graph([loop], "main", inputs, outputs)
    return Case(f"loop-{element}-cond{int(with_cond)}", make_model(graph), feeds)


def scan_case(rng: random.Random, element: ElementType) -> Case:
    """A Scan over a rank-3 input along a random axis and direction, whose body splits each
    slice; its parts are scan outputs stacked along random axes and directions. Parts are
    empty only where every scan output is stacked along the first axis: onnxruntime dies
    (SIGFPE) stacking an empty one along another (the engine runs such models on the
    reference engine, ``test_engine.py`` shows it)."""
    code = element.code
    shape = tuple(rng.randint(2, 3) for _ in range(3))
    in_axis = rng.choice([0, 1, 2, -1])
    slice_shape = [d for k, d in enumerate(shape) if k != in_axis % 3]
    split_axis = rng.choice([0, 1])
    out_axes = [rng.choice([0, 0, 1, 2, -1]) for _ in range(2)]
    nodes, sizes = split_node(
        rng, "x", ["p0", "p1"], slice_shape[split_axis], split_axis, least=int(any(out_axes))
    )
    parts = []
    for size in sizes:
        part = list(slice_shape)
        part[split_axis] = size
        parts.append(part)
    body = helper.make_graph(
        [*nodes, helper.make_node("Identity", ["state"], ["state_out"])],
        "body",
        [info("state", code, [2]), info("x", code, slice_shape)],
        [info("state_out", code, [2])] + [info(f"p{k}", code, p) for k, p in enumerate(parts)],
    )
    scan = helper.make_node(
        "Scan",
        ["state0", "xs"],
        ["state_final", "s0", "s1"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[in_axis],
        scan_input_directions=[rng.randint(0, 1)],
        scan_output_axes=out_axes,
        scan_output_directions=[rng.randint(0, 1) for _ in parts],
    )
    graph = helper.make_graph(
        [scan],
        "main",
        [info("state0", code, [2]), info("xs", code, list(shape))],
        [info("state_final", code, [2]), info("s0", code, None), info("s1", code, None)],
    )
    feeds = {"state0": values(rng, element, (2,)), "xs": values(rng, element, shape)}
    return Case(f"scan-{element}", make_model(graph), feeds)


def if_case(rng: random.Random, element: ElementType) -> Case:
    """An If whose branches split the same input two different ways."""
    code = element.code
    rows, cols = rng.randint(1, 4), rng.randint(1, 4)

    def branch(name: str) -> GraphProto:
        axis = rng.choice([0, 1])
        nodes, _ = split_node(rng, "x", [f"{name}0", f"{name}1"], (rows, cols)[axis], axis)
        return helper.make_graph(
            nodes, name, [], [info(f"{name}{k}", code, [None, None]) for k in range(2)]
        )

    node = helper.make_node(
        "If", ["c"], ["a", "b"], then_branch=branch("then"), else_branch=branch("else")
    )
    graph = helper.make_graph(
        [node],
        "main",
        [info("c", BOOL, []), info("x", code, [rows, cols])],
        [info(n, code, [None, None]) for n in "ab"],
    )
    feeds = {"c": np.array(rng.random() < 0.5), "x": values(rng, element, (rows, cols))}
    return Case(f"if-{element}", make_model(graph), feeds)


def overloads_case(rng: random.Random, element: ElementType) -> Case:
    """Two overloads of one local function, each splitting its input its own way, and a call
    of each."""
    code = element.code
    rows, cols = rng.randint(1, 4), rng.randint(1, 4)
    functions = []
    for overload, axis in (("rows", 0), ("cols", 1)):
        nodes, _ = split_node(rng, "x", ["y0", "y1"], (rows, cols)[axis], axis)
        functions.append(
            helper.make_function(
                "local", "cut", ["x"], ["y0", "y1"], nodes,
                [helper.make_opsetid("", OPSET)], overload=overload,
            )
        )  # fmt: skip
    calls = []
    for overload in ("rows", "cols"):
        call = helper.make_node("cut", ["x"], [f"{overload}0", f"{overload}1"], domain="local")
        call.overload = overload
        calls.append(call)
    names = ["rows0", "rows1", "cols0", "cols1"]
    graph = helper.make_graph(
        calls,
        "main",
        [info("x", code, [rows, cols])],
        [info(name, code, [None, None]) for name in names],
    )
    feeds = {"x": values(rng, element, (rows, cols))}
    return Case(f"overloads-{element}", make_model(graph, functions), feeds)


KINDS: dict[str, Callable[[random.Random, ElementType], Case]] = {
    "loop": loop_case,
    "scan": scan_case,
    "if": if_case,
    "overloads": overloads_case,
}
#: Models of each kind for each element type.
REPEATS = 4


def cases(kind: str) -> list[Case]:
    rng = random.Random(f"{SEED}-{kind}")
    return [KINDS[kind](rng, element) for element in ELEMENTS for _ in range(REPEATS)]


def on_onnxruntime(case: Case) -> list[Any] | None:
    """onnxruntime's outputs, or ``None`` where it has no kernel for the model's types."""
    try:
        session = ort.InferenceSession(
            case.model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime's own classes
        said = str(error)
        assert "NOT_IMPLEMENTED" in said or "not currently registered" in said, said
        return None
    # bfloat16 goes in and out through its bytes, as the onnxruntime engine passes it.
    return run_session(session, case.feeds, raw=needs_raw_values(session))


def on_engine(case: Case, engine: str) -> list[Any]:
    with warnings.catch_warnings():
        # Bodies declare no shapes for some values; a type onnxruntime lacks falls back.
        warnings.simplefilter("ignore", ModelCheckWarning)
        warnings.simplefilter("ignore", EngineFallbackWarning)
        return list(backend.run_model(case.model, case.feeds, engine=engine))


def same(actual: list[Any], expected: list[Any], where: str) -> None:
    assert len(actual) == len(expected), where
    for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
        a, e = np.asarray(a), np.asarray(e)
        assert (a.shape, a.dtype) == (e.shape, e.dtype), f"{where}: output {index}"
        assert a.tolist() == e.tolist(), f"{where}: output {index}"


@pytest.mark.parametrize("kind", list(KINDS))
def test_engines_compute_control_flow_as_onnxruntime_does(kind: str) -> None:
    compared = 0
    for case in cases(kind):
        reference = on_engine(case, "reference")
        fast = on_engine(case, "onnxruntime")
        same(fast, reference, f"{case.name}: the onnxruntime engine and the reference engine")
        expected = on_onnxruntime(case)
        if expected is not None:
            same(reference, expected, f"{case.name}: the reference engine and onnxruntime")
            compared += 1
    # onnxruntime runs these operators on most types: the comparison must stay real.
    assert compared >= len(ELEMENTS), f"onnxruntime ran only {compared} {kind} models"


def test_the_differential_covers_every_element_type_split_takes() -> None:
    assert {ElementType.STRING, ElementType.BFLOAT16, ElementType.COMPLEX128} <= set(ELEMENTS)
    assert len(ELEMENTS) == len(opset_rule("Split", 18).dtypes)


# --- the departures of onnx.reference, one rule each ---------------------------------------


def loop_model(*, with_cond: bool) -> ModelProto:
    rng = random.Random(0)
    while True:
        case = loop_case(rng, ElementType.FLOAT)
        if (case.model.graph.node[0].input[1] != "") is with_cond:
            return case.model


def test_loop_without_cond_runs_m_iterations() -> None:
    model = loop_model(with_cond=False)
    rows, cols = (d.dim_value for d in model.graph.input[1].type.tensor_type.shape.dim)
    x = np.ones((rows, cols), np.float32)
    outputs = on_engine(Case("", model, {"M": np.array(2, np.int64), "v0": x}), "reference")
    assert [o.shape[0] for o in outputs[1:]] == [2, 2]


def test_loop_stacks_scan_outputs_of_rank_two_along_a_new_axis() -> None:
    model = loop_model(with_cond=True)
    rows, cols = (d.dim_value for d in model.graph.input[1].type.tensor_type.shape.dim)
    feeds = {"M": np.array(3, np.int64), "v0": np.ones((rows, cols), np.float32)}
    outputs = on_engine(Case("", model, {**feeds, "c0": np.array(True)}), "reference")
    assert all(o.ndim == 3 and o.shape[0] == 3 for o in outputs[1:])


def test_each_call_of_a_function_runs_the_overload_it_names() -> None:
    case = overloads_case(random.Random(1), ElementType.INT64)
    rows0, rows1, cols0, cols1 = on_engine(case, "reference")
    x = case.feeds["x"]
    assert rows0.shape[1] == rows1.shape[1] == x.shape[1]
    assert cols0.shape[0] == cols1.shape[0] == x.shape[0]
    np.testing.assert_array_equal(np.concatenate([cols0, cols1], axis=1), x)
