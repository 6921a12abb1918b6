"""Values that pass through narrowing types: the dims splitops infers against the shapes
that ``onnx.reference`` and onnxruntime execute.

A seeded generator writes small models. The length ``L`` of an input, read by ``Shape``,
gets an int64 offset near a limit of a type, is cast to that type (every integer and float
type, and bool), goes through one to three operators of that type with constants near its
limits (Add, Sub, Mul, Div, Mod with ``fmod`` 0 and 1, BitShift, Neg, Min, Max, Ceil,
Floor, Equal, Not, a Cast on to another type, float 8 included), and is cast back to int64.
That number, mostly taken modulo ``L + 1`` so that the node can run, is the first size of
the ``split`` input of a Split-13 or Split-18 (the second is the rest of ``L``), or the
first dim of a Reshape target. Each model is inferred twice, with the input's length as a
number and as a name, and run by both runtimes. The verdicts:

* a dim splitops knows is the dim each runtime executes (an expression, at the ``L`` run);
* a node that a runtime refuses at run time gets no sizes: a problem, or unknown dims;
* a Split that onnxruntime runs gets no problem. (``onnx.reference`` runs invalid splits
  too: numpy cuts where the sizes say, whatever they are.)

A runtime that cannot run a model's operator or type (onnxruntime has no bfloat16 Add on
CPU, no float ``Mod`` with ``fmod=0``) is left out for that model, and the tally says how
often. The generator never divides an integer by 0, nor a 32- or 64-bit one by -1: that
traps, and would end the test process.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnx.defs
import pytest
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from splitops.onnx.inference._engine import infer_model_and_nodes

onnxruntime = pytest.importorskip("onnxruntime")
sympy = pytest.importorskip("sympy")

OPSET = 21
#: The element types a size goes through.
TYPES = [
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT16,
    TensorProto.UINT16,
    TensorProto.INT32,
    TensorProto.UINT32,
    TensorProto.INT64,
    TensorProto.UINT64,
    TensorProto.FLOAT16,
    TensorProto.BFLOAT16,
    TensorProto.FLOAT,
    TensorProto.DOUBLE,
    TensorProto.BOOL,
]
#: Types a value may pass on its way, only by Cast.
FLOAT8 = [
    TensorProto.FLOAT8E4M3FN,
    TensorProto.FLOAT8E4M3FNUZ,
    TensorProto.FLOAT8E5M2,
    TensorProto.FLOAT8E5M2FNUZ,
]
UNARY = ["Neg", "Ceil", "Floor", "Not"]
BINARY = ["Add", "Sub", "Mul", "Div", "Mod", "BitShift", "Min", "Max", "Equal"]
#: How many models the seeded generator writes (each is also inferred with a symbolic L).
CASES = 1000


def _dtype(elem: int) -> np.dtype[Any]:
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem))


def _name(elem: int) -> str:
    """The ONNX name of a type: ``float16``, ``float``, ``double``."""
    return helper.tensor_dtype_to_string(elem).split(".")[-1].lower()


def _takes(op: str, elem: int) -> bool:
    """Whether ``op`` at :data:`OPSET` takes ``elem`` (its schema's first type constraint)."""
    constraint = onnx.defs.get_schema(op, OPSET).type_constraints[0]
    return f"tensor({_name(elem)})" in constraint.allowed_type_strs


def _limits(elem: int) -> tuple[float, float, int]:
    """The least and greatest numbers of a type, and its precision in bits (0 for ints)."""
    dtype = _dtype(elem)
    if dtype == np.bool_:
        return 0, 1, 0
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max), 0
    formats = ml_dtypes.finfo(dtype)
    return -float(formats.max), float(formats.max), int(formats.nmant) + 1


def _anchors(elem: int) -> list[int]:
    """Where a type wraps or rounds: its limits, 2**bits, 2**precision."""
    low, high, precision = _limits(elem)
    if precision:
        found = [2**precision, 2 ** (precision + 1), int(high)]
    else:
        found = [int(high) + 1, int(high) - int(low) + 1, int(high)]
    return [a for a in found if a < 2**63]


def _constant(rng: random.Random, elem: int, *, divisor: bool = False) -> float | int:
    """A constant of type ``elem``: small, or near one of its limits."""
    low, high, precision = _limits(elem)
    if elem == TensorProto.BOOL:
        return rng.choice([0, 1])
    if precision:
        found: float = rng.choice(
            [0.5, 1.5, 2.0, 3.0, 7.0, 1 / 3, 2.0**precision, 2.0**precision + 1, high, -high,
             high / 2, 2.0 ** (precision - 1) + 0.5, -2.5, 255.0, 256.0, 257.0]
        )  # fmt: skip
        return found
    choices = [1, 2, 3, 7, high, high - 1, high // 2, high // 2 + 1, low, low + 1]
    if low < 0:
        choices += [-1, -2, -3]
    found_int = int(rng.choice(choices))
    if divisor and (found_int == 0 or (found_int == -1 and _dtype(elem).itemsize >= 4)):
        return 3  # an integer divided by 0, or the least int32 or int64 by -1, traps
    return found_int


@dataclass
class Case:
    """One generated model: how the size is computed, and where it goes."""

    length: int
    steps: list[str] = field(default_factory=list)
    nodes: list[NodeProto] = field(default_factory=list)
    initializers: list[TensorProto] = field(default_factory=list)
    target: str = "Split-18"

    def add_constant(self, value: Any, elem: int) -> str:
        name = f"k{len(self.initializers)}"
        array = np.array([value]).astype(_dtype(elem)) if elem != TensorProto.BOOL else None
        if array is None:
            array = np.array([bool(value)])
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def add(self, op: str, inputs: list[str], **attributes: Any) -> str:
        out = f"v{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [out], **attributes))
        return out

    def model(self, dim: int | str) -> ModelProto:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim])
        outputs = ["a", "b"] if self.target.startswith("Split") else ["r"]
        graph = helper.make_graph(
            self.nodes,
            "sizes",
            [x],
            [helper.make_value_info(n, onnx.TypeProto()) for n in outputs],
            initializer=self.initializers,
        )
        opset = 17 if self.target == "Split-13" else OPSET  # Split-13 holds to opset 17
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def generate(seed: int) -> Case:
    """One case: a size computed through a type, as described above."""
    rng = random.Random(seed)
    target = rng.choice(["Split-13", "Split-18", "Split-18", "Reshape"])
    elem = rng.choice(TYPES)
    length = rng.choice([0, 1, 2, 3, 5, 7, 12, 60, 240, 255, 256, 257, 300, 720, 2049])
    case = Case(length, target=target)
    value = case.add("Shape", ["x"], start=0, end=1)
    offset = rng.choice([0, 0, *(a - rng.randint(0, 300) for a in _anchors(elem))])
    if offset:
        value = case.add("Add", [value, case.add_constant(offset, TensorProto.INT64)])
        case.steps.append(f"+{offset}")
    value = case.add("Cast", [value], to=elem)
    case.steps.append(f"Cast({_name(elem)})")
    for _ in range(rng.randint(1, 3)):
        value, elem = _step(rng, case, value, elem)
    if elem != TensorProto.INT64:
        value = case.add("Cast", [value], to=TensorProto.INT64)
        case.steps.append("Cast(int64)")
    if rng.random() < 0.75:  # a size the node takes
        bound = case.add("Add", [case.add("Shape", ["x"], start=0, end=1), _one(case)])
        value = case.add("Mod", [value, bound])
        case.steps.append("Mod(L + 1)")
    _target(case, value)
    return case


def _one(case: Case) -> str:
    return case.add_constant(1, TensorProto.INT64)


def _step(rng: random.Random, case: Case, value: str, elem: int) -> tuple[str, int]:
    """One operator (or a Cast on) of a value of type ``elem``: the value and its type."""
    if rng.random() < 0.2:
        to = rng.choice([*TYPES, *FLOAT8] if case.target != "Split-13" else TYPES)
        extra = {"saturate": rng.choice([0, 1])} if to in FLOAT8 else {}
        case.steps.append(f"Cast({_name(to)}, {extra})")
        out = case.add("Cast", [value], to=to, **extra)
        if to in FLOAT8:  # float 8 types only cast: back to a float
            out = case.add("Cast", [out], to=TensorProto.FLOAT)
            to = TensorProto.FLOAT
        return out, to
    ops = [op for op in [*UNARY, *BINARY] if _takes(op, elem)]
    op = rng.choice(ops)
    if op in UNARY:
        case.steps.append(op)
        return case.add(op, [value]), elem
    extra: dict[str, Any] = {}
    if op == "Mod":
        fmod = 1 if _limits(elem)[2] else rng.choice([0, 1])
        extra["fmod"] = fmod if rng.random() < 0.9 else 0  # float with fmod=0: refused
    if op == "BitShift":
        extra["direction"] = rng.choice(["LEFT", "RIGHT"])
    constant = _constant(rng, elem, divisor=op in ("Div", "Mod"))
    inputs = [value, case.add_constant(constant, elem)]
    if rng.random() < 0.3 and op not in ("Div", "Mod", "BitShift"):
        inputs.reverse()
    case.steps.append(f"{op}({constant}, {extra})")
    out = case.add(op, inputs, **extra)
    return out, (TensorProto.BOOL if op == "Equal" else elem)


def _target(case: Case, first: str) -> None:
    """``first`` (int64 [1]) as the first size of the case's target."""
    if case.target == "Reshape":
        rest = case.add_constant(-1, TensorProto.INT64)
        shape = case.add("Concat", [first, rest], axis=0)
        case.nodes.append(helper.make_node("Reshape", ["x", shape], ["r"]))
        return
    whole = case.add("Shape", ["x"], start=0, end=1)
    rest = case.add("Sub", [whole, first])
    sizes = case.add("Concat", [first, rest], axis=0)
    case.nodes.append(helper.make_node("Split", ["x", sizes], ["a", "b"], axis=0))


# --- running and judging ----------------------------------------------------------------------

#: What a runtime did with a model: ran it, could not run an operator or type, or refused it
#: at run time.
RAN, CANNOT, REFUSED = "ran", "cannot run", "refused"


def _on_onnxruntime(model: ModelProto, feed: np.ndarray[Any, Any]) -> tuple[str, Any]:
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4
    try:
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # no kernel for an operator and type: it cannot run it
        return CANNOT, str(error).split("\n")[0][:120]
    try:
        return RAN, session.run(None, {"x": feed})
    except Exception as error:
        return REFUSED, str(error).split("\n")[0][:120]


def _on_reference(model: ModelProto, feed: np.ndarray[Any, Any]) -> tuple[str, Any]:
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")  # numpy's overflow and invalid-cast warnings
            return RAN, ReferenceEvaluator(model).run(None, {"x": feed})
    except Exception as error:
        return REFUSED, f"{type(error).__name__}: {str(error)[:100]}"


PEERS: dict[str, Callable[[ModelProto, np.ndarray[Any, Any]], tuple[str, Any]]] = {
    "onnx.reference": _on_reference,
    "onnxruntime": _on_onnxruntime,
}


@dataclass
class Run:
    """What one runtime did with a case: the sizes it computed (the Split's ``split``, the
    Reshape's target), and the shapes of the outputs where the whole model ran."""

    outcome: str
    why: str = ""
    sizes: list[int] = field(default_factory=list)
    shapes: list[tuple[int, ...]] | None = None


def execute(case: Case, peer: str) -> Run:
    feed = np.zeros(case.length, np.float32)
    probe = case.model(case.length)
    last = probe.graph.node.pop()
    del probe.graph.output[:]
    probe.graph.output.append(helper.make_value_info(last.input[1], onnx.TypeProto()))
    outcome, found = PEERS[peer](probe, feed)
    if outcome != RAN:
        return Run(outcome, str(found))
    sizes = [int(v) for v in np.asarray(found[0]).reshape(-1)]
    outcome, found = PEERS[peer](case.model(case.length), feed)
    if outcome != RAN:
        return Run(RAN, str(found), sizes)
    return Run(RAN, "", sizes, [np.shape(o) for o in found])


def _dims(type_proto: onnx.TypeProto | None) -> list[int | str | None] | None:
    if type_proto is None or not type_proto.tensor_type.HasField("shape"):
        return None
    return [
        int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
        for d in type_proto.tensor_type.shape.dim
    ]


def _value(dim: int | str | None, length: int) -> float | None:
    """An inferred dim at ``L = length``; ``None`` where unknown, or a name of onnx's own
    (``unk__0``); nan where it is no length there (``L/0``)."""
    if dim is None or isinstance(dim, int):
        return dim
    symbol = sympy.Symbol("L")
    expr = sympy.sympify(dim, locals={"L": symbol})
    if expr.free_symbols - {symbol}:
        return None
    found = expr.subs(symbol, length)
    return int(found) if found.is_Integer else math.nan


def judge(case: Case, symbolic: bool, runs: dict[str, Run]) -> Iterator[str]:
    """Each contradiction between splitops' inference of ``case`` and the ``runs``."""
    model = case.model("L" if symbolic else case.length)
    inferred, records = infer_model_and_nodes(model)
    types = {v.name: v.type for v in [*inferred.graph.value_info, *inferred.graph.output]}
    outputs = ["a", "b"] if case.target.startswith("Split") else ["r"]
    claims = [_dims(types.get(name)) or [] for name in outputs]
    values = [[_value(d, case.length) for d in claim] for claim in claims]
    known = [v for claim in values for v in claim if v is not None]
    problems = [str(p) for r in records for _, p in r.problems]
    said = f"splitops inferred {claims}" + (f" and found {problems}" if problems else "")
    for peer, run in runs.items():
        if run.outcome == CANNOT:
            continue
        if run.outcome == REFUSED:  # a runtime error before the sizes: nothing is known
            if known or problems:
                yield f"{peer} failed before the sizes ({run.why}), {said}"
            continue
        first = run.sizes[0]
        if case.target.startswith("Split"):
            if not 0 <= first <= case.length:
                # The node cannot run. A name's expressions hold only where it runs.
                if not symbolic and known and not problems:
                    yield f"{peer} computed the sizes {run.sizes}, {said}"
                continue
            if problems:
                yield f"{peer} computed the valid sizes {run.sizes}, {said}"
        elif run.shapes is None:  # a Reshape it refused: the first dim is its target's
            wanted = case.length if first == 0 else first  # 0 keeps the input's dim
            if values[0] and values[0][0] is not None and (first < 0 or values[0][0] != wanted):
                yield f"{peer} refused the target {run.sizes} ({run.why}), {said}"
            continue
        if run.shapes is None:
            yield f"{peer} refused the valid sizes {run.sizes} ({run.why}), {said}"
            continue
        for claim, shape in zip(values, run.shapes, strict=True):
            if len(claim) != len(shape) or any(
                v is not None and v != n for v, n in zip(claim, shape, strict=True)
            ):
                yield f"{peer} ran {run.shapes} (sizes {run.sizes}), {said}"
                break


def contradictions(seeds: range) -> tuple[list[str], Counter[tuple[str, str]]]:
    """Every contradiction over the cases of ``seeds``, each with its case; and how often
    each runtime ran a model to the end, ran only its sizes, could not run or refused it."""
    found = []
    tally: Counter[tuple[str, str]] = Counter()
    for seed in seeds:
        case = generate(seed)
        runs = {peer: execute(case, peer) for peer in PEERS}
        for peer, run in runs.items():
            tally[(peer, run.outcome if run.shapes is not None else f"{run.outcome}, sizes")] += 1
        for symbolic in (False, True):
            for problem in judge(case, symbolic, runs):
                where = f"L={'name' if symbolic else case.length}"
                found.append(f"seed {seed} ({case.target}, {where}, {case.steps}): {problem}")
    return found, tally


def test_inferred_dims_through_every_type_are_the_executed_dims() -> None:
    found, tally = contradictions(range(CASES))
    assert not found, "\n".join(found[:20])
    # Both runtimes ran most models to the end: the comparison is not vacuous.
    for peer in PEERS:
        assert tally[(peer, RAN)] > CASES // 2, tally


# --- the cases of the issue, by name ----------------------------------------------------------


def _through(length: int, *steps: tuple[str, dict[str, Any], Any, int | None]) -> Case:
    """A Split-18 of ``[length]`` into ``first`` and the rest, ``first`` being the length
    through ``steps``: (op, attributes, constant or None, its type)."""
    case = Case(length)
    value = case.add("Shape", ["x"], start=0, end=1)
    for op, attributes, constant, elem in steps:
        inputs = [value] if constant is None else [value, case.add_constant(constant, elem or 0)]
        value = case.add(op, inputs, **attributes)
    _target(case, value)
    return case


def _cast(to: int) -> tuple[str, dict[str, Any], None, None]:
    return "Cast", {"to": to}, None, None


I64 = TensorProto.INT64


@pytest.mark.parametrize(
    ("case", "parts"),
    [
        (_through(2049, _cast(TensorProto.FLOAT16), _cast(I64)), [2048, 1]),
        (_through(258, _cast(TensorProto.UINT8), _cast(I64)), [2, 256]),
        (_through(300, _cast(TensorProto.INT8), _cast(I64)), [44, 256]),
        (_through(8, _cast(TensorProto.INT32), ("Mul", {}, 2**28, TensorProto.INT32),
                  ("Div", {}, 2**29, TensorProto.INT32), _cast(I64)), None),
        (_through(5, _cast(TensorProto.BFLOAT16), ("Add", {}, 254.0, TensorProto.BFLOAT16),
                  _cast(I64), ("Sub", {}, 255, I64)), [5, 0]),
        (_through(6, _cast(TensorProto.FLOAT8E4M3FN), _cast(TensorProto.FLOAT),
                  ("Mul", {}, 100.0, TensorProto.FLOAT), _cast(TensorProto.FLOAT8E4M3FN),
                  _cast(I64), ("Sub", {}, 446, I64)), [2, 4]),
        (_through(12, _cast(TensorProto.UINT16), ("BitShift", {"direction": "LEFT"}, 14,
                  TensorProto.UINT16), ("BitShift", {"direction": "RIGHT"}, 13,
                  TensorProto.UINT16), _cast(I64)), [0, 12]),
    ],
    ids=["2049-as-float16", "258-as-uint8", "300-as-int8", "int32-product-overflows",
         "bfloat16-rounds-259-to-260", "float8-saturates-at-448", "uint16-shift-drops-bits"],
)  # fmt: skip
def test_sizes_through_a_narrowing_type_are_the_runtimes_sizes(
    case: Case, parts: list[int] | None
) -> None:
    inferred, records = infer_model_and_nodes(case.model(case.length))
    types = {v.name: v.type for v in [*inferred.graph.value_info, *inferred.graph.output]}
    (record,) = records
    if parts is None:  # a negative size: every runtime refuses the node
        assert [p.rule for _, p in record.problems] == ["split-negative"]
        assert execute(case, "onnxruntime").shapes is None  # refused
        return
    assert not record.problems
    assert [_dims(types[n]) for n in "ab"] == [[parts[0]], [parts[1]]]
    runs = {peer: execute(case, peer) for peer in PEERS}
    assert not list(judge(case, False, runs))


def test_a_dim_through_a_narrowing_type_is_unknown() -> None:
    case = _through(2049, _cast(TensorProto.FLOAT16), _cast(I64))
    inferred, records = infer_model_and_nodes(case.model("L"))
    types = {v.name: v.type for v in [*inferred.graph.value_info, *inferred.graph.output]}
    assert not records[0].problems
    assert [_dims(types[n]) for n in "ab"] == [[None], [None]]
