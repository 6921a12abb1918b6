"""A coverage-guided fuzz target (atheris) for what reads model files: load, then check,
infer, convert, lower and prepare.

Every input must end in a model that the tools handle, or in an exception splitops raises on
purpose (:class:`splitops.SplitopsError`, or ``ImportError`` for a missing extra): any other
exception is a finding, and atheris stops on it with the input that caused it.

Each input is read twice: as a model file, byte for byte, and as the recipe of a model
(:func:`structured_model`) whose local functions call one another and whose Ifs nest in both
branches. Mutating a protobuf's bytes seldom makes a new call or a deeper branch; mutating a
recipe does at every step.

Run it (``pip install -e ".[fuzz]"`` installs atheris), for five minutes, from the repository
root, seeded with the malformed models of ``tests/malformed_models.py``::

    python tests/malformed_models.py /tmp/fuzz-seeds
    mkdir -p /tmp/fuzz-corpus
    python tests/fuzz/fuzz_models.py /tmp/fuzz-corpus /tmp/fuzz-seeds -max_total_time=300

This file is not a test module (pytest does not collect it); ``tests/cli/test_fuzz_target.py``
runs its one-input function on the seeds, so that it cannot rot.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from pathlib import Path

from onnx import FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, helper

import splitops
from splitops import SplitopsError

#: How far a recipe may go: the tools must stay fast on every input.
MOST_FUNCTIONS = 12
MOST_DEPTH = 8


def one_input(data: bytes) -> None:
    """Put ``data`` through every tool that reads models: as a model file, and as the recipe
    of a model of function calls and nested branches."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.onnx"
        path.write_bytes(data)
        _every_tool(path)
        path.write_bytes(structured_model(data).SerializeToString())
        _every_tool(path)


def _every_tool(path: Path) -> None:
    try:
        model = splitops.load_model(path)
    except SplitopsError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for tool in (
            splitops.check_model,
            splitops.infer_shapes,
            lambda m: splitops.convert_model(m, 13),
            splitops.lower_model,
            splitops.backend.prepare,
        ):
            with contextlib.suppress(SplitopsError, ImportError):
                tool(model)


class _Recipe:
    """The bytes of an input, read as small numbers; past the end, every number is 0."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def number(self, below: int) -> int:
        """A number in ``[0, below)``."""
        byte = self.data[self.at] if self.at < len(self.data) else 0
        self.at += 1
        return byte % below


def structured_model(data: bytes) -> ModelProto:
    """The model that ``data`` describes, byte by byte: a leaf Split or SplitToSequence (its
    axis length, count or sizes chosen), local functions each calling the one below once or
    twice (or holding the leaf), and Ifs nested with the level below in one or both branches.

    >>> model = structured_model(bytes([3, 2, 1, 3, 1, 1, 2, 1, 1]))
    >>> [f.name for f in model.functions], [n.op_type for n in model.functions[-1].node]
    (['F0', 'F1', 'F2'], ['F1', 'F1'])
    >>> branches = {a.name: a.g for a in model.graph.node[0].attribute}
    >>> model.graph.node[0].op_type, branches["then_branch"] == branches["else_branch"]
    ('If', True)
    """
    recipe = _Recipe(data)
    length = recipe.number(9)
    leaf = _leaf(recipe, length)
    functions: list[FunctionProto] = []
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    for level in range(recipe.number(MOST_FUNCTIONS + 1)):
        if level == 0:
            body = leaf
        else:
            calls = 1 + recipe.number(2)
            names = ["x", *(f"t{k}" for k in range(calls - 1)), "y"]
            body = [
                helper.make_node(f"F{level - 1}", [names[k]], [names[k + 1]], domain="local")
                for k in range(calls)
            ]
        functions.append(helper.make_function("local", f"F{level}", ["x"], ["y"], body, opsets))
    nodes = leaf
    if functions:
        nodes = [helper.make_node(functions[-1].name, ["x"], ["y"], domain="local")]
    graph = helper.make_graph(nodes, "leaf", [], [helper.make_tensor_value_info("y", 1, None)])
    for level in range(recipe.number(MOST_DEPTH + 1)):
        both = recipe.number(2)
        other = graph if both else _identity_graph(f"e{level}")
        node = helper.make_node(
            "If", ["c"], [f"o{level}"], then_branch=graph, else_branch=other, name=f"if{level}"
        )
        output = helper.make_tensor_value_info(f"o{level}", 1, None)
        graph = helper.make_graph([node], f"g{level}", [], [output])
    inputs = [
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [length]),
    ]
    main = helper.make_graph(list(graph.node), "main", inputs, list(graph.output))
    return helper.make_model(main, opset_imports=opsets, ir_version=8, functions=functions)


def _leaf(recipe: _Recipe, length: int) -> list[NodeProto]:
    """A Split (of ``num_outputs``, or of constant sizes) or a SplitToSequence (of chunks)
    from ``x`` to ``y``: its numbers may break a rule, which the tools must report."""
    kind = recipe.number(3)
    if kind == 0:
        count = 1 + recipe.number(4)
        outputs = ["y", *(f"p{k}" for k in range(1, count))]
        return [helper.make_node("Split", ["x"], outputs, num_outputs=count, name="leaf")]
    if kind == 1:
        sizes = [recipe.number(5) for _ in range(1 + recipe.number(3))]
        outputs = ["y", *(f"p{k}" for k in range(1, len(sizes)))]
        split = helper.make_node("Constant", [], ["s"], value_ints=sizes)
        return [split, helper.make_node("Split", ["x", "s"], outputs, name="leaf")]
    chunk = helper.make_node("Constant", [], ["k"], value_int=recipe.number(4))
    return [
        chunk,
        helper.make_node("SplitToSequence", ["x", "k"], ["q"], name="leaf"),
        helper.make_node("ConcatFromSequence", ["q"], ["y"], axis=0),
    ]


def _identity_graph(name: str) -> GraphProto:
    return helper.make_graph(
        [helper.make_node("Identity", ["x"], [name])],
        name,
        [],
        [helper.make_tensor_value_info(name, 1, None)],
    )


def main() -> None:
    import atheris

    atheris.instrument_all()
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
