"""Build ``split_tour.onnx``, the example model ``splitops run`` runs by default.

Run ``python -m splitops.examples.build`` to write it beside this file. The model is built
the same way every time, so the committed file can be checked against this script.

>>> model = build_example()
>>> [node.op_type for node in model.graph.node]
['Split', 'Split', 'SplitToSequence']
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, TensorProto, helper, numpy_helper

from . import EXAMPLE_MODEL

__all__ = ["build_example", "main"]


def build_example() -> ModelProto:
    """The example model: three ways to cut ``x`` of shape ``[batch, 7]`` along axis 1."""
    nodes = [
        helper.make_node(
            "Split",
            ["x"],
            [f"quarter_{i}" for i in range(4)],
            name="quarters",
            axis=1,
            num_outputs=4,
            doc_string="Split-18 by num_outputs: parts of ceil(7/4)=2, the last one gets 1.",
        ),
        helper.make_node(
            "Split",
            ["x", "head_tail_sizes"],
            ["head", "tail"],
            name="head_tail",
            axis=1,
            doc_string="Split by explicit sizes, given as an int64 input.",
        ),
        helper.make_node(
            "SplitToSequence",
            ["tail", "chunk_length"],
            ["tail_chunks"],
            name="tail_chunks",
            axis=1,
            doc_string="SplitToSequence by a scalar chunk length: chunks of 3, the rest last.",
        ),
    ]
    floats = TensorProto.FLOAT
    outputs = [
        *(
            helper.make_tensor_value_info(f"quarter_{i}", floats, ["batch", n])
            for i, n in enumerate([2, 2, 2, 1])
        ),
        helper.make_tensor_value_info("head", floats, ["batch", 3]),
        helper.make_tensor_value_info("tail", floats, ["batch", 4]),
        helper.make_tensor_sequence_value_info("tail_chunks", floats, ["batch", None]),
    ]
    graph = helper.make_graph(
        nodes,
        "split_tour",
        [helper.make_tensor_value_info("x", floats, ["batch", 7])],
        outputs,
        initializer=[
            numpy_helper.from_array(np.array([3, 4], dtype=np.int64), "head_tail_sizes"),
            numpy_helper.from_array(np.array(3, dtype=np.int64), "chunk_length"),
        ],
        doc_string="Three ways to cut x along axis 1: Split-18 by num_outputs, Split by sizes, "
        "SplitToSequence by chunk length.",
    )
    # IR 8 is the oldest that carries opset 18: runtimes of any age since then can load it.
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18)],
        ir_version=8,
        producer_name="splitops.examples.build",
    )


def main() -> None:
    """Write the example model beside this file."""
    EXAMPLE_MODEL.write_bytes(build_example().SerializeToString())
    print(f"wrote {EXAMPLE_MODEL}")


if __name__ == "__main__":
    main()
