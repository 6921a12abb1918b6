"""Split-18 and SplitToSequence against the ONNX peers, run live.

onnx.reference computes the same ceil formula as splitops but never checks the last part, so
where the rest is negative it slices silently and returns sizes that add up yet break the
spec's "every part ceil(d/n) but the last"; splitops agrees with it everywhere else and
rejects those cases. The other facts the README's semantics table quotes are pinned here too:
onnx shape inference gives a dim of -1 for 5 into 4; onnxruntime rejects uneven num_outputs
that leave 0 for the last part and n parts of an empty axis; onnxruntime dies with SIGFPE on a
constant scalar split of 0.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument
from tests.processes import GUARD_SECONDS

import splitops
from splitops import SplitError


def split18_model(shape: tuple[int, ...], count: int, axis: int = 0) -> onnx.ModelProto:
    outputs = [f"y{i}" for i in range(count)]
    node = helper.make_node("Split", ["x"], outputs, axis=axis, num_outputs=count)
    graph = helper.make_graph(
        [node],
        "split",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8  # an IR version every onnxruntime that runs opset 18 loads
    return model


def reference_split18(x: Any, count: int, axis: int) -> list[Any]:
    return list(ReferenceEvaluator(split18_model(x.shape, count, axis)).run(None, {"x": x}))


def chunk(dim: int, count: int) -> int:
    return -(-dim // count)


GRID = [(dim, count) for dim in range(13) for count in range(1, 7)]
# Where the spec's formula leaves a rest >= 0 for the last part, both must give it.
AGREED = [(d, n) for d, n in GRID if d - chunk(d, n) * (n - 1) >= 0]
DISPUTED = [(d, n) for d, n in GRID if d - chunk(d, n) * (n - 1) < 0]


def test_grid_has_both_kinds_of_case() -> None:
    assert (9, 4) in AGREED
    assert (7, 4) in AGREED
    assert (5, 4) in DISPUTED
    assert (1, 3) in DISPUTED


@pytest.mark.parametrize(("dim", "count"), AGREED)
def test_split18_num_outputs_agrees_with_onnx_reference(dim: int, count: int) -> None:
    x = np.arange(3 * dim, dtype=np.float32).reshape(3, dim)
    ours = splitops.split(x, axis=-1, num_outputs=count)
    theirs = reference_split18(x, count, axis=-1)
    assert len(ours) == len(theirs) == count
    for mine, peer in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(mine, peer, strict=True)


@pytest.mark.parametrize(("dim", "count"), DISPUTED)
def test_split18_negative_rest_onnx_reference_slices_silently_we_reject(
    dim: int, count: int
) -> None:
    x = np.arange(dim, dtype=np.float32)
    sizes = [p.shape[0] for p in reference_split18(x, count, axis=0)]
    # onnx.reference answers: sizes that add up, but not every part but the last is ceil(d/n).
    assert sum(sizes) == dim
    assert any(size < chunk(dim, count) for size in sizes[:-1])
    with pytest.raises(SplitError, match=rf"cannot split a dim of {dim} into {count} parts"):
        splitops.split(x, num_outputs=count)


def test_split18_five_into_four_onnx_reference_says_2_2_1_0_we_raise() -> None:
    x = np.arange(5, dtype=np.float32)
    theirs = reference_split18(x, 4, axis=0)
    assert [p.shape[0] for p in theirs] == [2, 2, 1, 0]
    np.testing.assert_array_equal(np.concatenate(theirs), x)
    message = r"parts of ceil\(5/4\)=2 leave -1 for the last\. Pass explicit sizes"
    with pytest.raises(SplitError, match=message):
        splitops.split(x, num_outputs=4)


def run_onnxruntime(model: onnx.ModelProto, feeds: dict[str, Any]) -> list[Any]:
    options = ort.SessionOptions()
    options.log_severity_level = 4  # the failure is the point; keep its log off stderr
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, feeds))


def test_onnx_shape_inference_gives_minus_one_for_five_into_four() -> None:
    inferred = onnx.shape_inference.infer_shapes(split18_model((5,), 4), strict_mode=True)
    dims = [out.type.tensor_type.shape.dim[0].dim_value for out in inferred.graph.output]
    assert dims == [2, 2, 2, -1]
    with pytest.raises(SplitError, match=r"leave -1 for the last"):
        splitops.split_sizes(5, num_outputs=4)


# onnxruntime 1.32 accepts what 1.31 rejected here, and rejects a constant scalar split of 0
# instead of dying; each test pins both sides of that release.
ORT_1_32 = tuple(int(part) for part in ort.__version__.split(".")[:2]) >= (1, 32)


@pytest.mark.parametrize(
    ("dim", "count", "sizes"), [(9, 4, (3, 3, 3, 0)), (0, 1, (0,)), (0, 3, (0, 0, 0))]
)
def test_onnxruntime_rejects_what_the_spec_allows_until_1_32(
    dim: int, count: int, sizes: tuple[int, ...]
) -> None:
    x = np.arange(dim, dtype=np.float32)
    assert [p.shape[0] for p in splitops.split(x, num_outputs=count)] == list(sizes)
    if ORT_1_32:
        theirs = run_onnxruntime(split18_model((dim,), count), {"x": x})
        assert [p.shape[0] for p in theirs] == list(sizes)
    else:
        match = r"exceeds the remaining|Invalid num_outputs"
        with pytest.raises((Fail, InvalidArgument), match=match):
            run_onnxruntime(split18_model((dim,), count), {"x": x})


@pytest.mark.parametrize(("dim", "count"), [(7, 4), (6, 3)])
def test_onnxruntime_agrees_on_a_positive_rest(dim: int, count: int) -> None:
    x = np.arange(dim, dtype=np.float32)
    theirs = run_onnxruntime(split18_model((dim,), count), {"x": x})
    ours = splitops.split(x, num_outputs=count)
    for mine, peer in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(mine, peer, strict=True)


SCALAR_ZERO_SPLIT = textwrap.dedent(
    """
    import numpy as np, onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    node = helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=0)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.array(0, dtype=np.int64), "s")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGFPE is a POSIX signal")
def test_onnxruntime_dies_on_a_constant_scalar_split_of_zero_until_1_32() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCALAR_ZERO_SPLIT],
        capture_output=True,
        timeout=GUARD_SECONDS,
        check=False,
    )
    if ORT_1_32:
        assert result.returncode == 1
        assert b"Scalar input 'split' must be greater than zero" in result.stderr
    else:
        assert result.returncode == -signal.SIGFPE
    with pytest.raises(SplitError, match=r"scalar split \(the chunk length\) must be >= 1; 0"):
        splitops.split_to_sequence(np.zeros(4, np.float32), 0)
