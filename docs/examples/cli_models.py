"""Write the models that the command-line examples in ``docs/cli.md`` read.

``python docs/examples/cli_models.py DIR`` writes, into ``DIR``:

- ``broken.onnx``: three nodes that each break a rule (Split-18 ``num_outputs=4`` on an axis
  of 5, sizes [2, 2] for an axis of 5, a SplitToSequence axis past the rank);
- ``halves.onnx``: Split-18 ``num_outputs=2`` on an axis of symbolic length ``N``;
- ``greedy.onnx``: a Split asking for a billion parts;
- ``chunks.onnx``: ``x`` of shape ``[batch, N]`` cut by Split-18 ``num_outputs=4`` listing
  two outputs, and by SplitToSequence into chunks of 3 read by SequenceAt and
  SequenceLength (what ``splitops lower`` rewrites);
- ``downloads/model.onnx``: a weight whose external data claims to live in
  ``../../../etc/passwd``;
- ``weighted.onnx``: ``x`` of shape ``[1, 4096]`` times a weight of 4096 x 7 floats kept in
  ``weighted.data``, cut by Split-18 ``num_outputs=4``;
- ``unbind.onnx``: ``x.unbind(1)[0]`` as torch's TorchScript exporter writes it, a
  SplitToSequence of the scalar split 1 with ``keepdims=0`` read by SequenceAt at a position
  of shape [1].
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def _model(
    nodes: list[NodeProto],
    x_shape: list[int | str],
    outputs: list[str],
    initializer: list[TensorProto] | None = None,
) -> ModelProto:
    rank = len(x_shape)
    values = [
        helper.make_tensor_sequence_value_info(name, F, None)
        if name.startswith("seq")
        else helper.make_tensor_value_info(name, F, [None] * rank)
        for name in outputs
    ]
    x = helper.make_tensor_value_info("x", F, x_shape)
    body = helper.make_graph(nodes, "example", [x], values, initializer=initializer)
    return helper.make_model(body, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def broken() -> ModelProto:
    nodes = [
        helper.make_node(
            "Split", ["x"], ["q0", "q1", "q2", "q3"], "quarters", axis=1, num_outputs=4
        ),
        helper.make_node("Split", ["x", "sizes"], ["head", "tail"], "head_tail", axis=1),
        helper.make_node("SplitToSequence", ["x"], ["seq"], "chunks", axis=2),
    ]
    sizes = numpy_helper.from_array(np.array([2, 2], dtype=np.int64), "sizes")
    outputs = ["q0", "q1", "q2", "q3", "head", "tail", "seq"]
    return _model(nodes, ["batch", 5], outputs, initializer=[sizes])


def halves() -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b"], "halves", num_outputs=2)
    return _model([node], ["N"], ["a", "b"])


def chunks() -> ModelProto:
    nodes = [
        helper.make_node("Split", ["x"], ["first", "second"], "quarters", axis=1, num_outputs=4),
        helper.make_node("SplitToSequence", ["x", "three"], ["parts"], "chunks", axis=1),
        helper.make_node("SequenceAt", ["parts", "zero"], ["head"], "head"),
        helper.make_node("SequenceLength", ["parts"], ["count"], "count"),
    ]
    constants = [
        numpy_helper.from_array(np.array(3, dtype=np.int64), "three"),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
    ]
    model = _model(nodes, ["batch", "N"], ["first", "second", "head"], initializer=constants)
    model.graph.output.append(helper.make_tensor_value_info("count", TensorProto.INT64, []))
    return model


def greedy() -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a"], "greedy", num_outputs=10**9)
    return _model([node], [0], ["a"])


def outside_data() -> ModelProto:
    weight = numpy_helper.from_array(np.zeros(6, dtype=np.float32), "w")
    weight.ClearField("raw_data")
    weight.data_location = TensorProto.EXTERNAL
    weight.external_data.add(key="location", value="../../../etc/passwd")
    node = helper.make_node("Split", ["w"], ["a", "b"], "halves", num_outputs=2)
    return _model([node], [6], ["a", "b"], initializer=[weight])


def weighted() -> ModelProto:
    weight = numpy_helper.from_array(np.ones((4096, 7), dtype=np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["y"], "project"),
        helper.make_node("Split", ["y"], ["a", "b", "c", "d"], "quarters", axis=1, num_outputs=4),
    ]
    return _model(nodes, [1, 4096], list("abcd"), initializer=[weight])


def unbind() -> ModelProto:
    nodes = [
        helper.make_node("SplitToSequence", ["x", "one"], ["parts"], "unbind", axis=1, keepdims=0),
        helper.make_node("SequenceAt", ["parts", "first"], ["y"], "first_part"),
    ]
    one = numpy_helper.from_array(np.array(1, dtype=np.int64), "one")
    first = numpy_helper.from_array(np.array([0], dtype=np.int64), "first")
    model = _model(nodes, ["batch", 3, 4], ["y"], initializer=[one, first])
    model.opset_import[0].version = 11
    return model


def main(folder: Path) -> None:
    (folder / "downloads").mkdir(parents=True, exist_ok=True)
    for name, model in [
        ("broken.onnx", broken()),
        ("halves.onnx", halves()),
        ("greedy.onnx", greedy()),
        ("chunks.onnx", chunks()),
        ("unbind.onnx", unbind()),
        ("downloads/model.onnx", outside_data()),
    ]:
        # Written as bytes: onnx.save_model would try to resolve the external data.
        (folder / name).write_bytes(model.SerializeToString())
        print(f"wrote {folder / name}")
    onnx.save_model(
        weighted(), folder / "weighted.onnx", save_as_external_data=True, location="weighted.data"
    )
    print(f"wrote {folder / 'weighted.onnx'} and {folder / 'weighted.data'}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
