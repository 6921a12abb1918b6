"""Split sizes computed by other nodes, as exporters write them (``Shape -> Gather -> Div
-> Concat``): splitops follows the values, and the part sizes become expressions of the
input's dims that evaluate to the sizes onnxruntime executes, at every size tried, where
onnx and onnxruntime's symbolic tool know no more. What it cannot follow stays unknown.

Each followed operator, on concrete values, computes what onnxruntime computes; on symbolic
values, it gives either nothing or an expression that holds at every value.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import pytest
import sympy
from harness.shapes import KNOWN, UNKNOWN, executed_shapes, split_dim_verdicts
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from splitops import infer_shapes
from splitops.onnx.inference._number_types import number_type
from splitops.onnx.inference._values import Items, from_array, propagate

F, I64 = TensorProto.FLOAT, TensorProto.INT64
SIZES = [(2, 5), (3, 7), (2, 9), (3, 12)]


def _int(name: str, value: Any, dtype: Any = np.int64) -> NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype), name)
    )


def _model(nodes: list[NodeProto], outputs: list[str], opset: int = 18) -> ModelProto:
    graph = helper.make_graph(
        nodes,
        "computed",
        [helper.make_tensor_value_info("x", F, ["B", "S", 4])],
        [helper.make_value_info(name, onnx.TypeProto()) for name in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _dim(start: int, name: str) -> list[NodeProto]:
    """``name`` = the 0-d length of axis ``start`` of x (Shape with start/end, Squeeze)."""
    return [
        helper.make_node("Shape", ["x"], [f"{name}_1d"], start=start, end=start + 1),
        helper.make_node("Squeeze", [f"{name}_1d"], [name]),
    ]


def _sizes(parts: list[str], out: str = "sizes") -> list[NodeProto]:
    """Reshape each 0-d part to [1] and concatenate them."""
    nodes = [_int("flat", [-1])]
    nodes += [helper.make_node("Reshape", [p, "flat"], [f"{p}_1"]) for p in dict.fromkeys(parts)]
    return [*nodes, helper.make_node("Concat", [f"{p}_1" for p in parts], [out], axis=0)]


def _split(axis: int, count: int) -> NodeProto:
    return helper.make_node("Split", ["x", "sizes"], [f"y{i}" for i in range(count)], axis=axis)


def _first_and_rest(nodes: list[NodeProto], axis: int) -> ModelProto:
    """A model of ``nodes`` computing 0-d ``first`` and ``rest``, split into those sizes."""
    return _model([*nodes, *_sizes(["first", "rest"]), _split(axis, 2)], ["y0", "y1"])


def halves_of_the_batch() -> ModelProto:
    """split([(b + 1) // 2, b - (b + 1) // 2], 0), as the dynamo exporter writes it."""
    nodes = [*_dim(0, "b"), _int("one", 1), _int("two", 2)]
    nodes += [
        helper.make_node("Add", ["one", "b"], ["b1"]),
        helper.make_node("Div", ["b1", "two"], ["first"]),
        helper.make_node("Sub", ["b", "first"], ["rest"]),
    ]
    return _first_and_rest(nodes, axis=0)


def thirds_of_the_sequence() -> ModelProto:
    """split([s // 3, s // 3, s - 2 * (s // 3)], 1)."""
    nodes = [*_dim(1, "s"), _int("three", 3), _int("two", 2)]
    nodes += [
        helper.make_node("Div", ["s", "three"], ["third"]),
        helper.make_node("Mul", ["two", "third"], ["both"]),
        helper.make_node("Sub", ["s", "both"], ["rest"]),
    ]
    return _model([*nodes, *_sizes(["third", "third", "rest"]), _split(1, 3)], ["y0", "y1", "y2"])


def ceiling_through_floats(axis: int = 1) -> ModelProto:
    """ceil(s / 2) by Cast to float, Div, Ceil and Cast back, with Gather on the full Shape.
    On the symbolic axis it is unknown: float32 holds no dim above 2**24 exactly, and the
    Cast may round it."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _int("one", axis),
        helper.make_node("Gather", ["shape", "one"], ["s"], axis=0),
        helper.make_node("Cast", ["s"], ["sf"], to=F),
        helper.make_node("Constant", [], ["half"], value_float=2.0),
        helper.make_node("Div", ["sf", "half"], ["q"]),
        helper.make_node("Ceil", ["q"], ["qc"]),
        helper.make_node("Cast", ["qc"], ["first"], to=I64),
        helper.make_node("Sub", ["s", "first"], ["rest"]),
    ]
    return _first_and_rest(nodes, axis=axis)


def ceiling_of_a_static_dim_through_floats() -> ModelProto:
    """The same on the static axis of 4: its value is computed in float32, as it runs."""
    return ceiling_through_floats(axis=2)


def clamped_by_min_of_a_slice() -> ModelProto:
    """sizes [min(s, 3), s - min(s, 3)], s sliced from the shape with negative bounds."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _int("start", [-2]),
        _int("end", [-1]),
        helper.make_node("Slice", ["shape", "start", "end"], ["s_1"]),
        _int("three", [3]),
        helper.make_node("Min", ["s_1", "three"], ["first"]),
        helper.make_node("Sub", ["s_1", "first"], ["rest"]),
        helper.make_node("Concat", ["first", "rest"], ["sizes"], axis=0),
    ]
    return _model([*nodes, _split(1, 2)], ["y0", "y1"])


def remainder_last() -> ModelProto:
    """sizes [s - s % 4, s % 4]."""
    nodes = [*_dim(1, "s"), _int("four", 4)]
    nodes += [
        helper.make_node("Mod", ["s", "four"], ["rest"]),
        helper.make_node("Sub", ["s", "rest"], ["first"]),
    ]
    return _first_and_rest(nodes, axis=1)


def every_other_by_range() -> ModelProto:
    """k = Size(Range(0, s, 2)), that is ceil(s / 2); sizes [k, s - k]."""
    nodes = [*_dim(1, "s"), _int("zero", 0), _int("two", 2)]
    nodes += [
        helper.make_node("Range", ["zero", "s", "two"], ["evens"]),
        helper.make_node("Size", ["evens"], ["first"]),
        helper.make_node("Sub", ["s", "first"], ["rest"]),
    ]
    return _first_and_rest(nodes, axis=1)


def reshaped_then_halved() -> ModelProto:
    """A Reshape to Where(Equal(shape, -1), 1, shape) of [b, s, -1] (the torchscript way of
    writing a target shape), then Split-18 into 2 on the last axis: 4 * ... / (b * s)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        _int("first_two", [0, 1]),
        helper.make_node("Gather", ["shape", "first_two"], ["bs"], axis=0),
        _int("rest", [-1]),
        helper.make_node("Concat", ["bs", "rest"], ["target"], axis=0),
        _int("minus", [-1, -1, -1]),
        helper.make_node("Equal", ["target", "minus"], ["is_rest"]),
        _int("ones", [1, 1, 1]),
        helper.make_node("Where", ["is_rest", "ones", "target"], ["expanded"]),
        helper.make_node("Expand", ["x", "expanded"], ["big"]),
        helper.make_node("Reshape", ["big", "target"], ["flat"]),
        helper.make_node("Split", ["flat"], ["y0", "y1"], axis=-1, num_outputs=2),
    ]
    return _model(nodes, ["y0", "y1"])


def chunks_of_half_the_sequence() -> ModelProto:
    """SplitToSequence by a computed chunk max(s // 2, 1): the parts' length is unknown."""
    nodes = [*_dim(1, "s"), _int("two", 2), _int("one", 1)]
    nodes += [
        helper.make_node("Div", ["s", "two"], ["h"]),
        helper.make_node("Max", ["h", "one"], ["chunk"]),
        helper.make_node("SplitToSequence", ["x", "chunk"], ["parts"], axis=1),
    ]
    return _model(nodes, ["parts"])


#: Each model, and whether its split axis is known at every size (else it must be unknown).
CASES: list[tuple[Callable[[], ModelProto], bool]] = [
    (halves_of_the_batch, True),
    (thirds_of_the_sequence, True),
    (ceiling_through_floats, False),
    (ceiling_of_a_static_dim_through_floats, True),
    (clamped_by_min_of_a_slice, True),
    (remainder_last, True),
    (every_other_by_range, True),
    (reshaped_then_halved, True),
    (chunks_of_half_the_sequence, False),
]


def _peers(model: ModelProto) -> list[ModelProto | None]:
    found: list[ModelProto | None] = [onnx.shape_inference.infer_shapes(model, data_prop=True)]
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found.append(SymbolicShapeInference.infer_shapes(model, auto_merge=True))
    except Exception:  # not installed, or fails on the model: it knows nothing then
        found.append(None)
    return found


@pytest.mark.parametrize(("build", "known"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_computed_sizes_are_expressions_of_the_dims_that_execution_confirms(
    build: Callable[[], ModelProto], known: bool
) -> None:
    pytest.importorskip("onnxruntime")
    model = build()
    feeds = [{"x": np.zeros((b, s, 4), np.float32)} for b, s in SIZES]
    shapes = executed_shapes(model, feeds)
    ours = split_dim_verdicts(infer_shapes(model), shapes)
    for name, row in ours.items():
        assert set(row) == {KNOWN} if known else set(row) <= {KNOWN, UNKNOWN}, (name, row)
    for inferred in _peers(model):
        for name, row in split_dim_verdicts(inferred, shapes).items():
            assert all(v != KNOWN or o == KNOWN for v, o in zip(row, ours[name], strict=False))


def test_a_split_fed_by_a_graph_input_keeps_its_axis_unknown(make_model: Any) -> None:
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
    model = make_model([node], {"x": (F, ["B", "S"]), "sizes": (I64, [2])}, opset=13)
    types = {v.name: v.type for v in infer_shapes(model).graph.output}
    dims = types["a"].tensor_type.shape.dim
    assert dims[0].dim_param == "B"
    assert not dims[1].dim_param
    assert not dims[1].HasField("dim_value")


# --- each operator on concrete values, against onnxruntime ------------------------------------

small = st.integers(-12, 12)
vectors = st.lists(small, min_size=1, max_size=4)


def _executed(node: NodeProto, arrays: list[np.ndarray[Any, Any]], opset: int = 18) -> Any:
    """``node`` run by onnxruntime. (``onnx.reference`` slices as numpy does, not as the spec
    clamps: ``[0][-2:-2:-1]`` is ``[0]`` by the spec and onnxruntime, empty by it.)"""
    onnxruntime = pytest.importorskip("onnxruntime")
    names = list(node.input)
    graph = helper.make_graph(
        [node],
        "op",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in zip(names, arrays, strict=True) if n],
        [helper.make_value_info(node.output[0], onnx.TypeProto())],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    feeds = {n: a for n, a in zip(names, arrays, strict=True) if n}
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)[0]


def _ours(node: NodeProto, arrays: list[np.ndarray[Any, Any]], opset: int = 18) -> Any:
    values = [from_array(a) for a in arrays]
    shapes = [list(a.shape) for a in arrays]
    found = propagate(node, opset, values, shapes)
    assert found is not None, node.op_type
    return found


def _same(found: Items, expected: Any) -> None:
    expected = np.asarray(expected)
    assert found.shape == expected.shape
    assert np.array_equal(np.asarray(found.host(), dtype=np.float64), expected.astype(np.float64))


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Mod", "Min", "Max", "Equal"])
@settings(max_examples=40, deadline=None)
@given(a=vectors, b=st.lists(small.filter(bool), min_size=1, max_size=1), fmod=st.booleans())
def test_binary_operators_compute_what_onnxruntime_computes(
    op: str, a: list[int], b: list[int], fmod: bool
) -> None:
    extra = {"fmod": int(fmod)} if op == "Mod" else {}
    node = helper.make_node(op, ["a", "b"], ["c"], **extra)
    arrays = [np.array(a, np.int64), np.array(b[0], np.int64)]
    _same(_ours(node, arrays), _executed(node, arrays))


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(small, min_size=1, max_size=6),
    start=st.integers(-8, 8),
    end=st.integers(-8, 8),
    step=st.integers(-3, 3).filter(bool),
)
def test_slice_clamps_as_the_spec_says(data: list[int], start: int, end: int, step: int) -> None:
    node = helper.make_node("Slice", ["d", "s", "e", "a", "t"], ["y"])
    arrays = [np.array(v, np.int64) for v in (data, [start], [end], [0], [step])]
    _same(_ours(node, arrays), _executed(node, arrays))


@settings(max_examples=40, deadline=None)
@given(data=st.lists(small, min_size=1, max_size=5), index=st.integers(-5, 4))
def test_gather_takes_negative_indices_as_onnxruntime_does(data: list[int], index: int) -> None:
    if not -len(data) <= index < len(data):
        return
    node = helper.make_node("Gather", ["d", "i"], ["y"], axis=0)
    arrays = [np.array(data, np.int64), np.array(index, np.int64)]
    _same(_ours(node, arrays), _executed(node, arrays))


@pytest.mark.parametrize(
    ("node", "arrays"),
    [
        (helper.make_node("Neg", ["a"], ["y"]), [np.array([3, -2], np.int64)]),
        (helper.make_node("Not", ["a"], ["y"]), [np.array([True, False])]),
        (helper.make_node("Where", ["c", "a", "b"], ["y"]),
         [np.array([True, False]), np.array([1, 2], np.int64), np.array([7, 8], np.int64)]),
        (helper.make_node("Cast", ["a"], ["y"], to=I64), [np.array([2.7, -2.7, 0.5], np.float32)]),
        (helper.make_node("Cast", ["a"], ["y"], to=F), [np.array([3, -4], np.int64)]),
        (helper.make_node("Ceil", ["a"], ["y"]), [np.array([2.5, -2.5], np.float32)]),
        (helper.make_node("Floor", ["a"], ["y"]), [np.array([2.5, -2.5], np.float32)]),
        (helper.make_node("Concat", ["a", "b"], ["y"], axis=0),
         [np.array([1], np.int64), np.array([2, 3], np.int64)]),
        (helper.make_node("Unsqueeze", ["a", "x"], ["y"]),
         [np.array(4, np.int64), np.array([0], np.int64)]),
        (helper.make_node("Squeeze", ["a", "x"], ["y"]),
         [np.array([[4]], np.int64), np.array([-1], np.int64)]),
        (helper.make_node("Squeeze", ["a"], ["y"]), [np.array([[4]], np.int64)]),
        (helper.make_node("Reshape", ["a", "s"], ["y"]),
         [np.array([[1, 2, 3], [4, 5, 6]], np.int64), np.array([0, -1, 1], np.int64)]),
        (helper.make_node("Tile", ["a", "r"], ["y"]),
         [np.array([1, 2], np.int64), np.array([3], np.int64)]),
        (helper.make_node("Expand", ["a", "s"], ["y"]),
         [np.array([5], np.int64), np.array([2, 3], np.int64)]),
        (helper.make_node("Range", ["a", "b", "c"], ["y"]),
         [np.array(7, np.int64), np.array(-2, np.int64), np.array(-3, np.int64)]),
        (helper.make_node("ConstantOfShape", ["s"], ["y"],
                          value=numpy_helper.from_array(np.array([4], np.int64))),
         [np.array([2, 2], np.int64)]),
        (helper.make_node("Shape", ["a"], ["y"], start=-2), [np.zeros((2, 3, 4), np.float32)]),
        (helper.make_node("Size", ["a"], ["y"]), [np.zeros((2, 3, 4), np.float32)]),
        (helper.make_node("Identity", ["a"], ["y"]), [np.array([1, 2], np.int64)]),
        (helper.make_node("Max", ["a", "b", "c"], ["y"]),
         [np.array([1, 9], np.int64), np.array(4, np.int64), np.array([5, 2], np.int64)]),
    ],
    ids=lambda v: getattr(v, "op_type", ""),
)  # fmt: skip
def test_each_followed_operator_computes_what_onnxruntime_computes(
    node: NodeProto, arrays: list[np.ndarray[Any, Any]]
) -> None:
    _same(_ours(node, arrays), _executed(node, arrays))


# --- on symbolic values: nothing, or an expression that holds at every value ------------------

S = sympy.Symbol("S", integer=True, nonnegative=True)
NUMERATORS = [S, S + 1, S - 3, 2 * S - 7, -S, S - sympy.Mod(S, 3), sympy.floor(S / 2) - 2]


@pytest.mark.parametrize("numerator", NUMERATORS, ids=str)
@pytest.mark.parametrize(
    ("op", "divisor", "extra"),
    [("Div", 2, {}), ("Div", -3, {}), ("Mod", 3, {}), ("Mod", 3, {"fmod": 1}), ("Mod", -2, {})],
)
def test_symbolic_division_is_exact_or_unknown(
    numerator: Any, op: str, divisor: int, extra: dict[str, int]
) -> None:
    node = helper.make_node(op, ["a", "b"], ["c"], **extra)
    found = propagate(node, 18, [Items.of(numerator), Items.of(divisor)])
    assert found is not None
    (item,) = found.flat()
    for s in range(25):
        arrays = [np.array(int(numerator.subs(S, s)), np.int64), np.array(divisor, np.int64)]
        expected = int(_executed(node, arrays))
        if item is not None:
            assert int(sympy.sympify(item).subs(S, s)) == expected, (item, s)


CAST_TYPES = [code for code in TensorProto.DataType.values() if number_type(code) is not None]


@pytest.mark.parametrize("to", CAST_TYPES, ids=helper.tensor_dtype_to_string)
@pytest.mark.parametrize("numerator", NUMERATORS, ids=str)
def test_a_dim_cast_to_a_type_that_may_not_hold_it_is_unknown(numerator: Any, to: int) -> None:
    # int64 holds every dim; every other type rounds or wraps some (float32 from 2**24 + 1,
    # int32 from 2**31, uint64 every negative value). A bool is certain only where the
    # value's truth is.
    node = helper.make_node("Cast", ["a"], ["c"], to=to)
    found = propagate(node, 21, [Items.of(numerator)])
    assert found is not None
    (item,) = found.flat()
    if to == TensorProto.INT64:
        assert item == numerator
    elif to == TensorProto.BOOL and item is not None:
        assert all(item == int(numerator.subs(S, s) != 0) for s in range(25))
    else:
        assert item is None
    if to == TensorProto.BOOL and numerator in (S + 1, 2 * S - 7):
        assert item == 1  # never 0


@pytest.mark.parametrize(
    ("op", "numerator", "divisor", "expected"),
    [
        ("Div", S, 2, sympy.floor(S / 2)),
        ("Div", S + 1, 2, sympy.floor((S + 1) / 2)),
        ("Div", -S, 2, sympy.ceiling(-S / 2)),
        ("Mod", S, 3, sympy.Mod(S, 3)),
        ("Div", S - 3, 2, None),  # S = 0 truncates to -1, floors to -2: left unknown
    ],
)
def test_division_of_a_dim_is_floor_where_the_quotient_cannot_be_negative(
    op: str, numerator: Any, divisor: int, expected: Any
) -> None:
    node = helper.make_node(op, ["a", "b"], ["c"])
    found = propagate(node, 18, [Items.of(numerator), Items.of(divisor)])
    assert found is not None
    assert found.flat() == [expected]


def test_values_of_every_type_are_followed_without_sympy() -> None:
    # A model whose shapes are all static is inferred without importing sympy (it takes a
    # third of a second).
    code = (
        "import sys, numpy as np, ml_dtypes\n"
        "from onnx import helper\n"
        "from splitops.onnx.inference._values import from_array, propagate\n"
        "values = [from_array(np.array([2049.5, 3], t)) for t in\n"
        "          (np.float16, ml_dtypes.bfloat16, np.float32)]\n"
        "values += [from_array(np.array([-3, 3], np.int8)),\n"
        "           from_array(np.array([2**64 - 1, 3], np.uint64))]\n"
        "cast = helper.make_node('Cast', ['a'], ['b'], to=7)\n"
        "print([propagate(cast, 21, [v]).host() for v in values], 'sympy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[2050, 3], [2048, 3], [2049, 3], [-3, 3], [-1, 3]] False"


def test_sympy_loaded_inside_a_numpy_loop_raises_no_numpy_warning() -> None:
    # Importing sympy raises the FPU's invalid flag, which numpy reported as a RuntimeWarning
    # when the first use was inside its loop over the items of a value.
    code = (
        "import numpy as np\n"
        "from splitops.onnx.inference._symbolic import dim_symbol\n"
        "names = np.frompyfunc(dim_symbol, 1, 1)(np.array(['N', 'M'], dtype=object))\n"
        "print(list(names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[N, M]"


# --- ranks known where the values are not: torch's chunk by a tensor k -----------------------


def chunks_by_a_run_time_count() -> ModelProto:
    """torch's ``x.chunk(int(k), dim=1)`` with ``k`` a 0-d input, as the TorchScript exporter
    writes it: sizes ``Concat(Expand(d, Where(...)), [last])``. The Expand's shape is a value
    known only at run time, but its length, 1, is known, so the sizes are 1-d: a split, not
    the scalar chunk of a default split."""
    nodes = [_int("axis", 1), _int("one", [1]), _int("minus", -1)]
    nodes += [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "axis"], ["s"], axis=0),
        helper.make_node("Sub", ["k", "one"], ["k_less_one"]),
        helper.make_node("Add", ["s", "k_less_one"], ["raised"]),
        helper.make_node("Div", ["raised", "k"], ["each"]),
        helper.make_node("Shape", ["k_less_one"], ["count_shape"]),
        helper.make_node("ConstantOfShape", ["count_shape"], ["ones"],
                         value=numpy_helper.from_array(np.array([1], np.int64))),
        helper.make_node("Mul", ["ones", "minus"], ["minus_ones"]),
        helper.make_node("Equal", ["k_less_one", "minus_ones"], ["is_minus"]),
        helper.make_node("Where", ["is_minus", "ones", "k_less_one"], ["count"]),
        helper.make_node("Expand", ["each", "count"], ["firsts"]),
        helper.make_node("Mul", ["each", "k_less_one"], ["taken"]),
        helper.make_node("Sub", ["s", "taken"], ["last"]),
        helper.make_node("Concat", ["firsts", "last"], ["sizes"], axis=0),
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=1),
    ]  # fmt: skip
    model = _model(nodes, ["firsts", "sizes", "parts"], opset=13)
    model.graph.input.append(helper.make_tensor_value_info("k", TensorProto.INT64, []))
    return model


def test_an_expand_to_a_shape_of_known_length_has_that_rank() -> None:
    import onnxruntime

    model = chunks_by_a_run_time_count()
    inferred = infer_shapes(model).graph
    typed = {v.name: v.type for v in (*inferred.value_info, *inferred.output)}
    session = onnxruntime.InferenceSession(model.SerializeToString())
    x = np.zeros((2, 9, 4), np.float32)
    firsts, sizes, _ = session.run(None, {"x": x, "k": np.array(3, np.int64)})
    for name, executed in (("firsts", firsts), ("sizes", sizes)):
        dims = typed[name].tensor_type.shape.dim
        assert len(dims) == executed.ndim == 1  # the rank, though no length is known
        assert not dims[0].HasField("dim_value")
    assert list(sizes) == [3, 3, 3]
