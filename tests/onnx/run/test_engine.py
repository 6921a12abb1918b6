"""The onnxruntime engine of splitops.backend: the lowered model on onnxruntime gives the
reference engine's outputs and errors, where onnxruntime alone departs from the spec."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from tests.processes import GUARD_SECONDS

import splitops
from splitops import SplitError, backend
from splitops.examples import EXAMPLE_MODEL
from splitops.onnx.run.backend import EngineFallbackWarning, OnnxruntimeRep

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT


def model_of(
    nodes: list[onnx.NodeProto],
    x: list[int | str | None],
    outputs: list[str],
    *,
    opset: int = 18,
    element: int = F,
    inputs: list[onnx.ValueInfoProto] | None = None,
    initializers: dict[str, Any] | None = None,
) -> ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", element, x), *(inputs or [])],
        [helper.make_tensor_value_info(o, element, [None] * len(x)) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def same(actual: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        if isinstance(e, list):
            same(tuple(a), tuple(e))
        else:
            np.testing.assert_array_equal(a, e, strict=True)


def test_the_example_model_gives_the_reference_engines_outputs() -> None:
    model = splitops.load_model(EXAMPLE_MODEL)
    x = np.arange(21, dtype=np.float32).reshape(3, 7)
    fast = backend.prepare(model, engine="onnxruntime")
    assert isinstance(fast, OnnxruntimeRep)
    assert fast.engine == "onnxruntime"
    same(fast.run([x]), backend.run_model(model, [x]))


def test_where_onnxruntime_refuses_the_original_the_engine_gives_the_spec() -> None:
    """9 into 4 (onnxruntime 1.31 refuses it) and fewer outputs than num_outputs
    (onnxruntime 1.32 refuses it), on an axis known only at run time."""
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b", "c", "d"], axis=1, num_outputs=4),
        helper.make_node("Split", ["x"], ["e", "f"], axis=1, num_outputs=4),
    ]
    model = model_of(nodes, [2, "N"], list("abcdef"))
    x = np.arange(18, dtype=np.float32).reshape(2, 9)
    expected = backend.run_model(model, [x])
    assert [p.shape[1] for p in expected] == [3, 3, 3, 0, 3, 3]
    with pytest.raises(Exception):  # noqa: B017, PT011 (one departure or the other)
        ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    same(backend.run_model(model, [x], engine="onnxruntime"), expected)


def test_a_bfloat16_model_runs_on_the_engine() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2)
    model = model_of([node], ["N"], ["a", "b"], element=TensorProto.BFLOAT16)
    x = np.arange(5, dtype=np.float32).astype(ml_dtypes.bfloat16)
    got = backend.run_model(model, {"x": x}, engine="onnxruntime")
    assert [p.dtype for p in got] == [np.dtype(ml_dtypes.bfloat16)] * 2
    same(got, backend.run_model(model, {"x": x}))


#: Every element type ONNX defines, with the numpy dtype onnx maps it to (ml_dtypes for
#: float8, int4, float4e2m1, ...).
ELEMENT_TYPES = {
    name: code for name, code in TensorProto.DataType.items() if code != TensorProto.UNDEFINED
}


def _identity(code: int) -> ModelProto:
    x = helper.make_tensor_value_info("x", code, [5])
    y = helper.make_tensor_value_info("y", code, [5])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)], ir_version=12)


def _values(code: int) -> np.ndarray[Any, Any]:
    if code == TensorProto.STRING:
        return np.array(list("abcde"), dtype=object)
    small = np.array([0, 1, 1, 0, 1], dtype=np.float32)  # int2 holds -2 to 1
    return small.astype(helper.tensor_dtype_to_np_dtype(code))


@pytest.mark.parametrize("code", ELEMENT_TYPES.values(), ids=ELEMENT_TYPES)
def test_every_onnx_element_type_runs_and_comes_back_alike_on_both_engines(code: int) -> None:
    """Both engines take and give the dtype onnx maps each element type to; where
    onnxruntime has no Identity kernel for it, the reference engine runs it (with a
    warning)."""
    model, x = _identity(code), _values(code)
    (by_reference,) = backend.run_model(model, [x])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EngineFallbackWarning)
        (by_engine,) = backend.run_model(model, [x], engine="onnxruntime")
    assert by_reference.dtype == by_engine.dtype == helper.tensor_dtype_to_np_dtype(code)
    assert by_reference.tobytes() == by_engine.tobytes() == x.tobytes()


@pytest.mark.parametrize(
    ("code", "opset"),
    [(TensorProto.INT4, 21), (TensorProto.UINT4, 21), (TensorProto.INT2, 25)],
    ids=["int4", "uint4", "int2"],
)
def test_sub_byte_values_reach_onnxruntime_packed_as_onnx_packs_them(code: int, opset: int) -> None:
    """onnxruntime reads int4 two to a byte (int2 four): the engine packs what it feeds and
    unpacks what it gets, with no fallback (a warning would fail this test)."""
    to_float = helper.make_node("Cast", ["x"], ["f"], to=F)
    back = helper.make_node("Cast", ["f"], ["y"], to=code)
    graph = helper.make_graph(
        [to_float, back],
        "g",
        [helper.make_tensor_value_info("x", code, [5])],
        [helper.make_tensor_value_info("f", F, [5]), helper.make_tensor_value_info("y", code, [5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=11)
    x = _values(code)
    rep = backend.prepare(model, engine="onnxruntime")
    assert rep.engine == "onnxruntime"
    floats, same_again = rep.run([x])
    assert floats.tolist() == [0.0, 1.0, 1.0, 0.0, 1.0]
    assert same_again.dtype == x.dtype
    assert same_again.tobytes() == x.tobytes()


def test_numpy_scalars_are_taken_as_0_d_arrays() -> None:
    """``onnxruntime.backend`` takes ``np.float32(2.0)`` for a scalar input; so do both
    engines (onnxruntime's own session refuses it)."""
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", F, [])],
        [helper.make_tensor_value_info("y", F, [])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    for engine in backend.ENGINES:
        (y,) = backend.run_model(model, [np.float32(2.0)], engine=engine)
        assert y.shape == ()
        assert y == -2.0


def test_errors_at_run_time_are_the_reference_engines() -> None:
    """Sizes given at run time that do not add up: onnxruntime fails with its own message;
    the engine raises the reference engine's SplitError, message and rule alike."""
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")
    sizes = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    model = model_of([node], ["N"], ["a", "b"], opset=13, inputs=[sizes])
    feeds = {"x": np.arange(5, dtype=np.float32), "s": np.array([1, 2])}
    with pytest.raises(SplitError) as by_reference:
        backend.run_model(model, feeds)
    with pytest.raises(SplitError) as by_engine:
        backend.run_model(model, feeds, engine="onnxruntime")
    assert str(by_engine.value) == str(by_reference.value)
    assert by_engine.value.rule is by_reference.value.rule


def test_a_check_failing_in_the_lowered_graph_raises_the_specs_error() -> None:
    """5 into 4 on an axis known only at run time: the lowered graph's check fails on
    onnxruntime, and the engine raises the reference engine's SplitError."""
    node = helper.make_node("Split", ["x"], ["a", "b", "c", "d"], num_outputs=4, name="q")
    model = model_of([node], ["N"], list("abcd"))
    x = np.arange(5, dtype=np.float32)
    with pytest.raises(SplitError, match="cannot split a dim of 5 into 4") as by_engine:
        backend.run_model(model, [x], engine="onnxruntime")
    with pytest.raises(SplitError) as by_reference:
        backend.run_model(model, [x])
    assert str(by_engine.value) == str(by_reference.value)


def test_a_model_lowering_refuses_runs_on_the_reference_engine_with_a_warning() -> None:
    """A node the spec rejects in an If branch these inputs never take: the reference engine
    runs the model, and so does the onnxruntime engine, saying so."""
    bad = helper.make_node("Split", ["x"], ["p", "q", "r", "s"], num_outputs=4, axis=0)
    then = helper.make_graph([bad], "then", [], [helper.make_tensor_value_info("p", F, [None])])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "else",
        [],
        [helper.make_tensor_value_info("y", F, [None])],
    )
    node = helper.make_node("If", ["flag"], ["out"], then_branch=then, else_branch=other)
    flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [])
    model = model_of([node], [5], ["out"], inputs=[flag])
    feeds = {"x": np.arange(5, dtype=np.float32), "flag": np.array(False)}
    with pytest.warns(EngineFallbackWarning, match="lower_model refused the model") as said:
        rep = backend.prepare(model, engine="onnxruntime")  # the warning's line
    assert rep.engine == "reference"
    same(rep.run(feeds), backend.run_model(model, feeds))
    # The warning names the caller's line, not the backend's.
    assert (said[0].filename, said[0].lineno) == (__file__, _line_of("# the warning's line"))
    with pytest.warns(EngineFallbackWarning) as deeper:
        backend.run_model(model, feeds, engine="onnxruntime")
    assert deeper[0].filename == __file__


def _line_of(text: str) -> int:
    """The line of this file that holds ``text`` (once)."""
    (line,) = [n for n, code in enumerate(Path(__file__).read_text().splitlines(), 1)
               if code.endswith(text)]  # fmt: skip
    return line


def test_outputs_the_reference_engine_gives_where_onnxruntime_fails_come_with_a_warning() -> None:
    """onnxruntime has no SplitToSequence kernel for int8: a sequence output cannot be
    lowered away, so onnxruntime fails, and the reference engine's outputs come back."""
    node = helper.make_node("SplitToSequence", ["x"], ["seq"], axis=0)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [3])],
        [helper.make_tensor_sequence_value_info("seq", TensorProto.INT8, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)
    x = np.arange(3, dtype=np.int8)
    with pytest.warns(EngineFallbackWarning) as said:
        got = backend.prepare(model, engine="onnxruntime").run([x])  # where it warns
    same(got, backend.run_model(model, [x]))
    assert (said[0].filename, said[0].lineno) == (__file__, _line_of("# where it warns"))


def test_session_options_and_providers_reach_onnxruntime() -> None:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    model = splitops.load_model(EXAMPLE_MODEL)
    rep = backend.prepare(
        model, engine="onnxruntime", session_options=options, providers=["CPUExecutionProvider"]
    )
    assert isinstance(rep, OnnxruntimeRep)
    assert rep.session.get_providers() == ["CPUExecutionProvider"]
    assert rep.session.get_session_options().intra_op_num_threads == 1


def test_an_unknown_engine_is_named() -> None:
    with pytest.raises(SplitError, match="reference, onnxruntime"):
        backend.prepare(splitops.load_model(EXAMPLE_MODEL), engine="tvm")


_WITHOUT_ORT = """
import sys
sys.modules["onnxruntime"] = None
import splitops
from splitops.examples import EXAMPLE_MODEL
try:
    splitops.backend.prepare(splitops.load_model(EXAMPLE_MODEL), engine="onnxruntime")
except ImportError as error:
    print(error)
"""


def test_without_onnxruntime_the_engine_says_how_to_install_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ORT],
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "pip install onnxruntime" in done.stdout


def _sequences_in_a_loop() -> ModelProto:
    """A Loop whose body cuts ``x`` into chunks of 1 and adds how many to a total: each
    iteration makes len(x) parts, which die with it."""
    scalar = [helper.make_tensor_value_info(n, TensorProto.INT64, []) for n in ("i", "t", "u")]
    body = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x"], ["s"], name="chunks"),
            helper.make_node("SequenceLength", ["s"], ["n"]),
            helper.make_node("Add", ["t", "n"], ["u"]),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [scalar[0], helper.make_tensor_value_info("cond", TensorProto.BOOL, []), scalar[1]],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), scalar[2]],
    )
    loop = helper.make_node("Loop", ["trips", "go", "zero"], ["total"], body=body)
    graph = helper.make_graph(
        [loop],
        "g",
        [
            helper.make_tensor_value_info("x", F, [None]),
            helper.make_tensor_value_info("trips", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("total", TensorProto.INT64, [])],
        [
            numpy_helper.from_array(np.array(0, np.int64), "zero"),
            numpy_helper.from_array(np.array(True), "go"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def test_the_sequences_of_one_run_are_bounded_in_all_by_max_model_parts() -> None:
    """The limit holds for a whole run, every Loop iteration included: 3 iterations of 400
    parts are 1,200 parts. Each run counts afresh."""
    rep = backend.prepare(_sequences_in_a_loop())
    x = np.zeros(400, np.float32)
    with splitops.limits(max_model_parts=1200):
        for _ in range(2):
            (total,) = rep.run({"x": x, "trips": np.array(3)})
            assert total == 1200
    with splitops.limits(max_model_parts=1199), pytest.raises(SplitError) as refused:
        rep.run({"x": x, "trips": np.array(3)})
    assert refused.value.rule is splitops.Rule.LIMIT
    assert "would hold 1200 parts in all, over the max_model_parts limit of 1199" in str(
        refused.value
    )


# --- forms that kill onnxruntime's process ------------------------------------------------
# Each runs in a subprocess: before the engine avoided them, the signal ended the whole run.

_RUN_BOTH_ENGINES = """
import sys, warnings
import numpy as np, onnx
from splitops import backend
model = onnx.load(sys.argv[1])
feeds = dict(np.load(sys.argv[2]))
with warnings.catch_warnings(record=True) as notes:
    warnings.simplefilter("always")
    rep = backend.prepare(model, engine="onnxruntime")
    fast = rep.run(feeds)
slow = backend.run_model(model, feeds)
for a, b in zip(fast, slow, strict=True):
    np.testing.assert_array_equal(a, b, strict=True)
print(rep.engine)
print(*[str(note.message) for note in notes], sep="\\n")
"""


def both_engines(model: ModelProto, feeds: dict[str, Any], tmp_path: Any) -> list[str]:
    """The onnxruntime engine's name and warnings, run in a subprocess, once its outputs were
    found equal to the reference engine's."""
    onnx.save(model, tmp_path / "model.onnx")
    np.savez(tmp_path / "feeds.npz", **feeds)
    done = subprocess.run(
        [sys.executable, "-c", _RUN_BOTH_ENGINES, tmp_path / "model.onnx", tmp_path / "feeds.npz"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


@pytest.mark.parametrize("outputs", [["a", "", "b"], ["a", "b", ""], ["", "a", "b"]])
def test_a_split_leaving_outputs_out_runs_on_onnxruntime(outputs: list[str], tmp_path: Any) -> None:
    """onnxruntime 1.32 dies (SIGSEGV) running such a node: each omitted output gets a name."""
    node = helper.make_node("Split", ["x"], outputs, axis=0, num_outputs=3)
    model = model_of([node], [6], ["a", "b"])
    said = both_engines(model, {"x": np.arange(6, dtype=np.float32)}, tmp_path)
    assert said[0] == "onnxruntime"


def test_a_scan_stacking_along_another_axis_runs_on_the_reference_engine(tmp_path: Any) -> None:
    """onnxruntime 1.32 dies (SIGFPE) stacking an empty scan output along axis 1."""
    info = helper.make_tensor_value_info
    sizes = helper.make_node(
        "Constant", [], ["sizes"], value=helper.make_tensor("sizes", TensorProto.INT64, [2], [0, 3])
    )
    body = helper.make_graph(
        [sizes, helper.make_node("Split", ["x", "sizes"], ["p", "q"], axis=0)],
        "body",
        [info("x", F, [3, 2])],
        [info("p", F, [0, 2]), info("q", F, [3, 2])],
    )
    scan = helper.make_node(
        "Scan", ["xs"], ["ps", "qs"], body=body, num_scan_inputs=1, scan_output_axes=[1, 0]
    )
    graph = helper.make_graph(
        [scan], "g", [info("xs", F, [4, 3, 2])], [info("ps", F, None), info("qs", F, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    said = both_engines(model, {"xs": np.zeros((4, 3, 2), np.float32)}, tmp_path)
    assert said[0] == "reference"
    assert any("onnxruntime dies (SIGFPE)" in line for line in said[1:])
