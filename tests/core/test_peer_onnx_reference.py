"""Split-18 with num_outputs, against onnx's reference implementation run live.

onnx.reference computes the same ceil formula but never checks the last part, so where the
rest is negative it slices silently and returns sizes that add up yet break the spec's
"every part ceil(d/n) but the last". splitops agrees with it everywhere else and rejects
those cases; the difference is pinned below.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import splitops
from splitops import SplitError


def reference_split18(x: Any, count: int, axis: int) -> list[Any]:
    outputs = [f"y{i}" for i in range(count)]
    node = helper.make_node("Split", ["x"], outputs, axis=axis, num_outputs=count)
    graph = helper.make_graph(
        [node],
        "split",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    return list(ReferenceEvaluator(model).run(None, {"x": x}))


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
