"""``copy=True`` gives its memory back when the parts die: no pool, no cache of buffers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from benchmarks.checks import MEMORY_SLACK, memory_check

import splitops


@pytest.mark.skipif(sys.platform != "linux", reason="reads resident memory from /proc")
@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_resident_memory_returns_after_copy_true_parts_are_gone(library: str) -> None:
    pytest.importorskip(library)
    result = memory_check(64 << 20, library)
    assert result["rss_with_parts"] - result["rss_before"] >= 32 << 20  # the copies were made
    assert result["kept"] <= MEMORY_SLACK
    assert result["ok"]


def test_copy_true_parts_are_one_buffer_that_outlives_no_part() -> None:
    x = np.arange(24.0).reshape(4, 6)
    parts = splitops.split(x, [1, 3], copy=True)
    base = parts[0].base
    assert base is not None
    assert all(part.base is base for part in parts)  # one allocation for all parts
    assert base.nbytes == x.nbytes  # and nothing more
    assert not np.shares_memory(parts[0], parts[1])


#: In a fresh process: a model of 64 MiB of weights in 32 initializers, saved, then
#: inferred, lowered and converted to opset 13 (each result dropped before the next); prints
#: the peak resident memory (KiB) after building the model, after saving it and after the
#: three tools, then whether the saved file loads back equal.
_MODEL_PROBE = """
import sys, warnings
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from splitops import infer_shapes, lower_model
from splitops.onnx.rewrite._convert import convert_model
from splitops.onnx.model._io import save_model

def peak():  # this process's own high-water mark (ru_maxrss counts pytest's in)
    status = open("/proc/self/status").read().splitlines()
    return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])

weights = [
    numpy_helper.from_array(np.full(2 << 18, i, np.float32), f"w{i}") for i in range(32)
]
nodes = [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")]
nodes += [helper.make_node("Neg", [f"w{i}"], [f"o{i}"]) for i in range(32)]
graph = helper.make_graph(
    nodes, "weights",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"]
    + [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, [2 << 18]) for i in range(32)],
    weights,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
built = peak()
save_model(model, sys.argv[1])
after_save = peak()
with warnings.catch_warnings():
    warnings.simplefilter("error")
    for tool in (infer_shapes, lower_model, lambda m: convert_model(m, 13)):
        result = tool(model)
        assert {f"w{i}" for i in range(32)} <= {t.name for t in result.graph.initializer}
        del result
after_tools = peak()
print(built, after_save, after_tools, onnx.load(sys.argv[1]) == model)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads peak resident memory")
def test_model_tools_copy_the_weights_once_and_saving_not_at_all(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MODEL_PROBE, str(tmp_path / "w13.onnx")],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    built, after_save, after_tools, equal = done.stdout.split()
    weights_kib = 64 << 10
    # Saving serializes one weight at a time (ModelProto.ByteSize() and SerializeToString()
    # of the whole model each made a copy); each tool's result is one copy of the weights
    # (onnx's checker and shape inference, given the weights, made three more).
    assert int(after_save) - int(built) < 0.25 * weights_kib
    assert int(after_tools) - int(after_save) < 1.5 * weights_kib
    assert equal == "True"
