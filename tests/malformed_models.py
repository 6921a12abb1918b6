"""Malformed and hostile model files, each a few hundred bytes at most, generated rather than
stored: ``python tests/malformed_models.py DIR`` writes them into ``DIR``.

Each :class:`Malformed` is a file name, the bytes of the model, and the other files it needs
beside it (external data, a file outside the folder; a FIFO, a link or a sparse file of
gigabytes, which bytes cannot hold, as :class:`Made`). Every one of them must leave every
command with one line on stderr and a documented exit code, within a memory and a time
limit (``tests/cli/test_hostile_models.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from onnx import (
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    StringStringEntryProto,
    TensorProto,
    helper,
    numpy_helper,
)

F = TensorProto.FLOAT
I64 = TensorProto.INT64


@dataclass(frozen=True)
class Made:
    """A file that bytes cannot describe: a FIFO, a symbolic or hard link to ``target``
    (relative to the model's folder), or a sparse file of ``size`` bytes (no disk used)."""

    kind: Literal["fifo", "symlink", "hardlink", "sparse"]
    target: str = ""
    size: int = 0

    def make(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.kind == "fifo":
            os.mkfifo(path)
        elif self.kind == "symlink":
            os.symlink(self.target, path)
        elif self.kind == "hardlink":
            os.link(path.parent / self.target, path)
        else:
            with path.open("wb") as stream:
                stream.truncate(self.size)


@dataclass(frozen=True)
class Malformed:
    """One hostile model: its file name (in a folder of its own where it names one), its
    bytes, files to write beside it, and files to make there (in order: a link's target
    first)."""

    name: str
    data: bytes
    beside: dict[str, bytes] = field(default_factory=dict)
    made: dict[str, Made] = field(default_factory=dict)

    @property
    def alone(self) -> bool:
        """Whether the model is one file and nothing else."""
        return not self.beside and not self.made


def _model(
    nodes: list[NodeProto],
    inputs: dict[str, tuple[int, list[int | str | None] | None]],
    outputs: list[str],
    *,
    opset: int = 18,
    initializers: list[TensorProto] | None = None,
    functions: list[FunctionProto] | None = None,
    sequence_outputs: bool = False,
) -> ModelProto:
    make = (
        helper.make_tensor_sequence_value_info
        if sequence_outputs
        else helper.make_tensor_value_info
    )
    graph = helper.make_graph(
        nodes,
        "hostile",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [make(name, F, None) for name in outputs],
        initializer=initializers or [],
    )
    imports = [helper.make_opsetid("", opset), helper.make_opsetid("local", 1)]
    return helper.make_model(graph, opset_imports=imports, ir_version=8, functions=functions or [])


def _split_with_sizes(sizes: TensorProto) -> ModelProto:
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], name="sized")
    return _model([node], {"x": (F, [4])}, ["a", "b"], initializers=[sizes])


def _raw(name: str, data_type: int, dims: list[int], raw: bytes) -> TensorProto:
    return TensorProto(name=name, data_type=data_type, dims=dims, raw_data=raw)


def _external(
    location: str,
    *,
    offset: str | None = None,
    length: str | None = None,
    data_type: int = F,
    dims: tuple[int, ...] = (6,),
) -> ModelProto:
    weight = TensorProto(
        name="w", data_type=data_type, dims=dims, data_location=TensorProto.EXTERNAL
    )
    entries = {"location": location, "offset": offset, "length": length}
    weight.external_data.extend(
        StringStringEntryProto(key=k, value=v) for k, v in entries.items() if v is not None
    )
    if data_type != F or dims != (6,):  # read by a graph output of its own
        nodes = [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")]
        model = _model(nodes, {"x": (F, [6])}, ["a", "b"], initializers=[weight])
        model.graph.output.append(helper.make_tensor_value_info("w", data_type, list(dims)))
        return model
    nodes = [
        helper.make_node("Add", ["x", "w"], ["y"]),
        helper.make_node("Split", ["y"], ["a", "b"], num_outputs=2, name="halves"),
    ]
    return _model(nodes, {"x": (F, [6])}, ["a", "b"], initializers=[weight])


def _text(model: ModelProto, old: bytes, new: bytes) -> bytes:
    data = model.SerializeToString()
    assert old in data
    return data.replace(old, new, 1)


def _sequence(inputs: list[str], shape: list[int | str | None], **attributes: object) -> ModelProto:
    node = helper.make_node("SplitToSequence", inputs, ["seq"], name="chunks", **attributes)
    return _model([node], {"x": (F, shape)}, ["seq"], sequence_outputs=True)


def _function(name: str, calls: str) -> FunctionProto:
    body = [helper.make_node(calls, ["x"], ["y"], domain="local")]
    return helper.make_function(
        "local", name, ["x"], ["y"], body, opset_imports=[helper.make_opsetid("", 18)]
    )


def _calling_twice(levels: int) -> ModelProto:
    """Local functions of which each calls the one below twice: ``F0`` splits, ``Fk`` calls
    ``F(k-1)`` twice, the main graph calls the top one: 2^levels calls in a few hundred bytes."""
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    split = [
        helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves"),
        helper.make_node("Concat", ["a", "b"], ["y"], axis=0),
    ]
    functions = [helper.make_function("local", "F0", ["x"], ["y"], split, opsets)]
    for level in range(1, levels + 1):
        twice = [
            helper.make_node(f"F{level - 1}", ["x"], ["t"], domain="local"),
            helper.make_node(f"F{level - 1}", ["t"], ["y"], domain="local"),
        ]
        functions.append(helper.make_function("local", f"F{level}", ["x"], ["y"], twice, opsets))
    call = helper.make_node(f"F{levels}", ["x"], ["y"], domain="local")
    return _model([call], {"x": (F, [4])}, ["y"], functions=functions)


def _if_tree(depth: int) -> ModelProto:
    """Ifs nested ``depth`` deep whose both branches hold the If below, a Split at every leaf:
    2^depth Splits, every branch alike."""
    inner: GraphProto = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")],
        "leaf",
        [],
        [helper.make_tensor_value_info("a", F, None)],
    )
    for level in range(depth):
        node = helper.make_node(
            "If", ["c"], [f"o{level}"], then_branch=inner, else_branch=inner, name=f"if{level}"
        )
        inner = helper.make_graph(
            [node], f"g{level}", [], [helper.make_tensor_value_info(f"o{level}", F, None)]
        )
    return _model(list(inner.node), {"c": (TensorProto.BOOL, []), "x": (F, [4])}, [f"o{depth - 1}"])


def _sequences(count: int, parts: int, reader: str) -> ModelProto:
    """``count`` SplitToSequence nodes cutting an input of ``parts`` into chunks of 1, each
    sequence read by ``reader``: a few dozen bytes a node, ``parts`` parts each."""
    nodes, outputs = [], []
    for index in range(count):
        nodes.append(
            helper.make_node("SplitToSequence", ["x"], [f"s{index}"], name=f"chunks{index}")
        )
        extra = {"axis": 0} if reader == "ConcatFromSequence" else {}
        nodes.append(helper.make_node(reader, [f"s{index}"], [f"n{index}"], **extra))
        outputs.append(f"n{index}")
    return _model(nodes, {"x": (F, [parts])}, outputs)


def _named_outputs(count: int) -> ModelProto:
    node = helper.make_node(
        "Split", ["x"], [f"o{i}" for i in range(count)], num_outputs=count, name="wide"
    )
    return _model([node], {"x": (F, [count])}, ["o0"])


def _halves_of(length: int) -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    return _model([node], {"x": (F, [length])}, ["a", "b"])


def _opset_past_onnx() -> ModelProto:
    """An opset import of 10**12 (onnx's schema lookup takes 32-bit versions) and an
    operator no opset has."""
    nodes = [
        helper.make_node("Frobnicate", ["x"], ["y"]),
        helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves"),
    ]
    model = _model(nodes, {"x": (F, [4])}, ["a", "b"])
    model.opset_import[0].version = 10**12
    return model


def _unread_sequence() -> ModelProto:
    """A SplitToSequence whose sizes come at run time, and whose sequence nothing reads."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "s"], ["seq"], name="unread"),
        helper.make_node("Identity", ["x"], ["y"]),
    ]
    return _model(nodes, {"x": (F, [4]), "s": (I64, [2])}, ["y"])


def _nested_ifs(depth: int, outputs: tuple[str, ...] = ("a",)) -> ModelProto:
    inner: GraphProto = helper.make_graph(
        [helper.make_node("Split", ["x"], list(outputs), num_outputs=1, name="deep")],
        "leaf",
        [],
        [helper.make_tensor_value_info("a", F, None)],
    )
    leaf = inner
    for level in range(depth):
        node = helper.make_node(
            "If", ["c"], [f"o{level}"], then_branch=inner, else_branch=leaf, name=f"if{level}"
        )
        inner = helper.make_graph(
            [node], f"g{level}", [], [helper.make_tensor_value_info(f"o{level}", F, None)]
        )
    return _model(list(inner.node), {"c": (TensorProto.BOOL, []), "x": (F, [2])}, [f"o{depth - 1}"])


def _branch_without_type() -> ModelProto:
    model = _nested_ifs(1, ("a", "b"))
    branch = next(a for a in model.graph.node[0].attribute if a.name == "else_branch")
    branch.ClearField("type")
    return model


def _branch_twice() -> ModelProto:
    model = _nested_ifs(2)
    outer = model.graph.node[0]
    else_branch = next(a for a in outer.attribute if a.name == "else_branch")
    else_branch.name = "then_branch"
    return model


def _node_with_group() -> ModelProto:
    """What the fuzzer found: a node carrying an unknown field 14 that is a protobuf group
    holding a field number 0. Python's protobuf keeps it; onnx's C++ parser refuses the model
    ("Unable to parse proto") in every tool that hands it over."""
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    group = bytes([14 << 3 | 3, 0 << 3 | 5]) + b"\0\0\0\0" + bytes([14 << 3 | 4])
    odd = NodeProto.FromString(node.SerializeToString() + group)
    return _model([odd], {"x": (F, [4])}, ["a", "b"])


def _dim_param(name: str, text: str) -> Malformed:
    """Split-18 in halves of an input whose only dim is ``text``."""
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    return Malformed(name, _model([node], {"x": (F, [text])}, ["a", "b"]).SerializeToString())


def _untyped_branches() -> ModelProto:
    """What the fuzzer found: an If whose branches are an If with an empty branch, and a Split
    without sizes or count whose output declares no element type (onnx 1.23's shape inference
    raises ValueError: "Invalid tensor data type 0")."""
    split = helper.make_node("Split", ["x"], ["a"], name="deep")
    untyped = helper.make_tensor_value_info("a", F, None)
    untyped.type.tensor_type.ClearField("elem_type")
    leaf = helper.make_graph([split], "leaf", [], [untyped])
    empty = helper.make_graph([], "empty", [], [])
    split_leaf = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a"], num_outputs=1, name="deep")],
        "leaf",
        [],
        [helper.make_tensor_value_info("a", F, None)],
    )
    inner = helper.make_node("If", ["c"], ["o0"], then_branch=empty, else_branch=split_leaf)
    holder = helper.make_graph([inner], "g0", [], [helper.make_tensor_value_info("o0", F, None)])
    outer = helper.make_node("If", ["c"], ["o1"], then_branch=holder, else_branch=leaf, name="if1")
    return _model([outer], {"c": (TensorProto.BOOL, []), "x": (F, [2])}, ["o1"])


def _without_default_opset() -> ModelProto:
    """What the fuzzer found: an operator onnx has no schema for, and no opset import for
    ONNX's own domain (onnx's shape inference raises on it)."""
    model = _sequence(["x"], [2**31])
    model.graph.node[0].op_type = "SplitToS/quence"
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("local", 1))
    return model


def _if_without_else(x_type: int = F, *, known_shape: bool = True) -> ModelProto:
    branch = helper.make_graph(
        [helper.make_node("Split", ["x"], ["a"], num_outputs=1, name="inner")],
        "then",
        [],
        [helper.make_tensor_value_info("a", F, None)],
    )
    node = helper.make_node("If", ["c"], ["o"], then_branch=branch, name="half")
    return _model(
        [node], {"c": (TensorProto.BOOL, []), "x": (x_type, [2] if known_shape else None)}, ["o"]
    )


def _greedy_outputs(count: int) -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a"], num_outputs=count, name="greedy")
    return _model([node], {"x": (F, [count])}, ["a"])


def _twice(name: str, first: int, second: int) -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b"], name="twice")
    node.attribute.extend([helper.make_attribute(name, first), helper.make_attribute(name, second)])
    return _model([node], {"x": (F, [4])}, ["a", "b"])


def _more_outputs_than_num_outputs() -> ModelProto:
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], num_outputs=2, name="more")
    return _model([node], {"x": (F, [4])}, ["a", "b"])


def _long_vector_sum() -> ModelProto:
    add = helper.make_node("Add", ["x", "x"], ["y"], name="sum")
    node = helper.make_node("Split", ["y"], ["a", "b"], num_outputs=2, name="halves")
    return _model([add, node], {"x": (F, [2**31])}, ["a", "b"])


def _negative_dims() -> ModelProto:
    nodes = [helper.make_node("Split", [n], [f"{n}0"], num_outputs=1) for n in "xyz"]
    inputs: dict[str, tuple[int, list[int | str | None] | None]] = {
        "x": (F, [4]),
        "y": (F, [2**28]),
        "z": (F, [-(2**28)]),
    }
    return _model(nodes, inputs, ["x0", "y0", "z0"])


CASES: dict[str, Callable[[], Malformed]] = {
    "raw_data not a multiple of 8": lambda: Malformed(
        "raw7.onnx", _split_with_sizes(_raw("s", I64, [2], b"\x02" * 7)).SerializeToString()
    ),
    "dims of 2**40 over 16 bytes": lambda: Malformed(
        "huge_dims.onnx",
        _split_with_sizes(_raw("s", I64, [2**40], b"\x02" * 16)).SerializeToString(),
    ),
    "weight of 2**40 elements in 16 bytes": lambda: Malformed(
        "huge_weight.onnx",
        _with_initializer(
            _greedy_outputs(2), _raw("w", F, [2**40], b"\x00" * 16)
        ).SerializeToString(),
    ),
    "short int64_data": lambda: Malformed(
        "short.onnx",
        _split_with_sizes(
            TensorProto(name="s", data_type=I64, dims=[3], int64_data=[2, 2])
        ).SerializeToString(),
    ),
    "data_type 999": lambda: Malformed(
        "type999.onnx", _split_with_sizes(_raw("s", 999, [2], b"\x02" * 16)).SerializeToString()
    ),
    "data_type UNDEFINED": lambda: Malformed(
        "undefined.onnx",
        _split_with_sizes(
            TensorProto(name="s", data_type=0, dims=[2], int64_data=[2, 2])
        ).SerializeToString(),
    ),
    "string split with invalid UTF-8": lambda: Malformed(
        "strings.onnx",
        _split_with_sizes(
            TensorProto(
                name="s", data_type=TensorProto.STRING, dims=[2], string_data=[b"\xff", b"2"]
            )
        ).SerializeToString(),
    ),
    "external data shorter than its dims": lambda: Malformed(
        "short_data.onnx", _external("short.bin").SerializeToString(), {"short.bin": b"\x00" * 8}
    ),
    "external location is the model itself": lambda: Malformed(
        "itself.onnx", _external("itself.onnx").SerializeToString()
    ),
    "external offset of a superscript two": lambda: Malformed(
        "superscript.onnx",
        _external("w.bin", offset="\u00b2").SerializeToString(),
        {"w.bin": b"\x00" * 24},
    ),
    "external length of a superscript two": lambda: Malformed(
        "superscript_length.onnx",
        _external("w.bin", length="\u00b2").SerializeToString(),
        {"w.bin": b"\x00" * 24},
    ),
    # os.open raised ValueError on it (found by fuzzing).
    "external location holding a NUL": lambda: Malformed(
        "nul.onnx", _external("w\0.bin").SerializeToString(), {"w.bin": b"\x00" * 24}
    ),
    "external location of 5,000 characters": lambda: Malformed(
        "long.onnx", _external("w" * 5000).SerializeToString()
    ),
    "external location not UTF-8": lambda: Malformed(
        "location.onnx",
        _text(_external("w.bin"), b"w.bin", b"w\xffbin"),
        {"w.bin": b"\x00" * 24},
    ),
    "external data absolute": lambda: Malformed(
        "absolute.onnx", _external("/etc/passwd").SerializeToString()
    ),
    "node name not UTF-8": lambda: Malformed(
        "name.onnx", _text(_greedy_outputs(2), b"greedy", b"gr\xff\xfedy")
    ),
    "op_type not UTF-8": lambda: Malformed(
        "op_type.onnx", _text(_greedy_outputs(2), b"Split", b"Spl\xffit")
    ),
    "dim_param Mod(N, 0)": lambda: _dim_param("mod0.onnx", "Mod(N, 0)"),
    # sympy's tokenizer raised TokenError on it (found by fuzzing).
    "dim_param Mod8N, 0)": lambda: _dim_param("unclosed.onnx", "Mod8N, 0)"),
    "node holding a protobuf group": lambda: Malformed(
        "group.onnx", _node_with_group().SerializeToString()
    ),
    "recursive local function": lambda: Malformed(
        "recursive.onnx",
        _model(
            [helper.make_node("Loops", ["x"], ["y"], domain="local")],
            {"x": (F, [2])},
            ["y"],
            functions=[_function("Loops", "Loops")],
        ).SerializeToString(),
    ),
    "mutually recursive local functions": lambda: Malformed(
        "mutual.onnx",
        _model(
            [helper.make_node("Ping", ["x"], ["y"], domain="local")],
            {"x": (F, [2])},
            ["y"],
            functions=[_function("Ping", "Pong"), _function("Pong", "Ping")],
        ).SerializeToString(),
    ),
    "duplicated local function": lambda: Malformed(
        "duplicated.onnx",
        _model(
            [helper.make_node("Twin", ["x"], ["y"], domain="local")],
            {"x": (F, [2])},
            ["y"],
            functions=[_function("Twin", "Relu"), _function("Twin", "Relu")],
        ).SerializeToString(),
    ),
    "graph output of elem_type 999": lambda: Malformed("output999.onnx", _output_type_999()),
    "num_outputs 40000 with one output listed": lambda: Malformed(
        "greedy40k.onnx", _greedy_outputs(40_000).SerializeToString()
    ),
    "num_outputs a billion": lambda: Malformed(
        "billion.onnx", _greedy_outputs(10**9).SerializeToString()
    ),
    "SplitToSequence of a [2**31] input": lambda: Malformed(
        "seq2e31.onnx", _sequence(["x"], [2**31]).SerializeToString()
    ),
    "SplitToSequence split of 2**22 entries": lambda: Malformed(
        "seq_split.onnx",
        _with_initializer(
            _sequence(["x", "s"], [2**22]), _raw("s", I64, [2**22], b"")
        ).SerializeToString(),
    ),
    # Holds nothing, but a tolist() of it is 10**9 lists (found by fuzzing: 24 GB).
    "SplitToSequence split of an empty 8-d shape": lambda: Malformed(
        "empty_8d_split.onnx",
        _with_initializer(
            _sequence(["x", "s"], [4]), _raw("s", I64, [1000, 1000, 1000, 0, 0, 1, 1, 1], b"")
        ).SerializeToString(),
    ),
    "SplitToSequence constant split of 0": lambda: Malformed(
        "chunk0.onnx",
        _with_initializer(
            _sequence(["x", "s"], [6]), numpy_helper.from_array(np.array(0, np.int64), "s")
        ).SerializeToString(),
    ),
    "200 initializers on one external file": lambda: _shared_external(200),
    "negative declared dims": lambda: Malformed(
        "negative.onnx", _negative_dims().SerializeToString()
    ),
    "num_outputs given twice": lambda: Malformed(
        "twice.onnx", _twice("num_outputs", 2, 3).SerializeToString()
    ),
    # onnx's shape inference aborts the process on it (found by fuzzing: convert died).
    "Split-18 listing more outputs than num_outputs": lambda: Malformed(
        "more_outputs.onnx", _more_outputs_than_num_outputs().SerializeToString()
    ),
    # onnx's data propagation allocates some 150 bytes per item of a 1-d tensor whose length it
    # knows, at an Add (found by fuzzing: 2**31 items took all memory in check and infer).
    "Add of a [2**31] vector before a Split": lambda: Malformed(
        "long_vector.onnx", _long_vector_sum().SerializeToString()
    ),
    "If nested 20 deep": lambda: Malformed("deep.onnx", _nested_ifs(20).SerializeToString()),
    # onnx's inference of an If infers its branches: found by fuzzing, an abort in check.
    "If nested 3 deep around a Split listing more outputs than num_outputs": lambda: Malformed(
        "deep_more_outputs.onnx", _nested_ifs(3, ("a", "b")).SerializeToString()
    ),
    # Found by fuzzing: the place main/if1.then_branch named two graphs.
    "If holding two then_branch graphs": lambda: Malformed(
        "branch_twice.onnx", _branch_twice().SerializeToString()
    ),
    # onnx infers a branch whose attribute has no type: found by fuzzing, an abort in check.
    "If branch without a type around a Split listing more outputs": lambda: Malformed(
        "untyped_branch.onnx", _branch_without_type().SerializeToString()
    ),
    "unknown operator, no default opset": lambda: Malformed(
        "no_opset.onnx", _without_default_opset().SerializeToString()
    ),
    "If branches without outputs and untyped": lambda: Malformed(
        "untyped_branches.onnx", _untyped_branches().SerializeToString()
    ),
    "If without its else_branch": lambda: Malformed(
        "half_if.onnx", _if_without_else().SerializeToString()
    ),
    # onnx's node-level inference of the If raises its checker's ValidationError.
    "If without its else_branch, branch input of unknown shape": lambda: Malformed(
        "half_if_unknown.onnx",
        _if_without_else(TensorProto.UINT8, known_shape=False).SerializeToString(),
    ),
    # Inferred once per call, 2^12 calls took 26 s in check, 2^20 never ended: now once per
    # call alike; and the max_nodes limit counts each call as the nodes of its body. (Fewer
    # levels here: onnxruntime's own session takes time that grows faster than the calls.)
    "local functions calling one another twice per level, 2**10 calls": lambda: Malformed(
        "twice10.onnx", _calling_twice(10).SerializeToString()
    ),
    "local functions calling one another twice per level, 2**26 calls": lambda: Malformed(
        "twice26.onnx", _calling_twice(26).SerializeToString()
    ),
    # 2^16 deep it took every command a minute or more: branches alike are inferred once.
    "If nested 12 deep, the If below in both branches": lambda: Malformed(
        "tree.onnx", _if_tree(12).SerializeToString()
    ),
    # lower wrote 16 Splits of 2^20 outputs (4 GB, then a crash); the max_model_parts limit.
    "16 SplitToSequence nodes of 2**20 parts": lambda: Malformed(
        "sequences16.onnx", _sequences(16, 2**20, "SequenceLength").SerializeToString()
    ),
    "one SplitToSequence of 2**20 parts read by ConcatFromSequence": lambda: Malformed(
        "concat_parts.onnx", _sequences(1, 2**20, "ConcatFromSequence").SerializeToString()
    ),
    "Split listing 2**16 named outputs": lambda: Malformed(
        "named.onnx", _named_outputs(2**16).SerializeToString()
    ),
    # check --portability allocated a probe input of the declared length (3.2 GB).
    "Split of a declared [2**28] input": lambda: Malformed(
        "long_axis.onnx", _halves_of(2**28).SerializeToString()
    ),
    # onnx's inference of Split reads the axis as 32 bits: lowering wrote a model its own
    # check refused (exit 4).
    "Split of a declared [2**63-1] input": lambda: Malformed(
        "longest_axis.onnx", _halves_of(2**63 - 1).SerializeToString()
    ),
    "opset 10**12 and an unknown operator": lambda: Malformed(
        "opset_past.onnx", _opset_past_onnx().SerializeToString()
    ),
    "SplitToSequence of run-time sizes that nothing reads": lambda: Malformed(
        "unread.onnx", _unread_sequence().SerializeToString()
    ),
    # Opened before any check, a FIFO blocked every command for ever.
    "external data in a FIFO": lambda: Malformed(
        "fifo/fifo.onnx", _external("w.bin").SerializeToString(), made={"w.bin": Made("fifo")}
    ),
    "external data a link to a FIFO outside the folder": lambda: Malformed(
        "fifo_link/fifo_link.onnx",
        _external("w.bin").SerializeToString(),
        made={"../outside/fifo.bin": Made("fifo"), "w.bin": Made("symlink", "../outside/fifo.bin")},
    ),
    # Checked by its path, a hard link to a file outside the folder was read.
    "external data a hard link to a file outside the folder": lambda: Malformed(
        "hard_link/hard_link.onnx",
        _external("w.bin").SerializeToString(),
        beside={"../outside/secret.bin": b"\x01" * 24},
        made={"w.bin": Made("hardlink", "../outside/secret.bin")},
    ),
    "external data a link to /dev/zero": lambda: Malformed(
        "device/device.onnx",
        _external("w.bin").SerializeToString(),
        made={"w.bin": Made("symlink", "/dev/zero")},
    ),
    # Counted a byte per element, a valid packed FLOAT4E2M1 tensor was refused.
    "external FLOAT4E2M1 of 6 elements in 3 bytes": lambda: Malformed(
        "float4/float4.onnx",
        _external("w.bin", length="3", data_type=TensorProto.FLOAT4E2M1).SerializeToString(),
        beside={"w.bin": b"\x12\x34\x56"},
    ),
    # Counted as 0 bytes, then read whole: with --max-external-bytes 1024, 512 MiB of INT4
    # took 3.1 GB; this one is 8 MiB, refused under that limit.
    "external INT4 of 2**24 elements without a length": lambda: Malformed(
        "int4/int4.onnx",
        _external("w.bin", data_type=TensorProto.INT4, dims=(2**24,)).SerializeToString(),
        made={"w.bin": Made("sparse", size=2**23)},
    ),
    "external STRING tensor": lambda: Malformed(
        "string/string.onnx",
        _external("w.bin", data_type=TensorProto.STRING, dims=(4,)).SerializeToString(),
        made={"w.bin": Made("sparse", size=2**29)},
    ),
    # Within every limit but not the address space: protobuf died with SIGSEGV copying it.
    "external FLOAT of 3 GiB": lambda: Malformed(
        "three_gib/three_gib.onnx",
        _external("w.bin", dims=(3 * 2**28,)).SerializeToString(),
        made={"w.bin": Made("sparse", size=3 * 2**30)},
    ),
    "truncated": lambda: Malformed("truncated.onnx", _greedy_outputs(2).SerializeToString()[:41]),
    "garbage": lambda: Malformed("garbage.onnx", bytes(range(256)) * 2),
    "empty": lambda: Malformed("empty.onnx", b""),
}


def _with_initializer(model: ModelProto, tensor: TensorProto) -> ModelProto:
    model.graph.initializer.append(tensor)
    return model


def _output_type_999() -> bytes:
    model = _greedy_outputs(2)
    model.graph.output[0].type.tensor_type.elem_type = 999
    return model.SerializeToString()


def _shared_external(count: int, length: int = 2**16) -> Malformed:
    """``count`` weights of ``length`` floats, each claiming the whole of one file: 50 MiB
    read from a file of 256 KiB (enough to show each claim read on its own, and little
    enough that the suite stays within a laptop's memory)."""
    weights = []
    for index in range(count):
        weight = TensorProto(
            name=f"w{index}", data_type=F, dims=[length], data_location=TensorProto.EXTERNAL
        )
        weight.external_data.append(StringStringEntryProto(key="location", value="big.bin"))
        weights.append(weight)
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")
    model = _model([node], {"x": (F, [4])}, ["a", "b"], initializers=weights)
    return Malformed("shared.onnx", model.SerializeToString(), {"big.bin": b"\x00" * (4 * length)})


def write_all(folder: Path) -> dict[str, Path]:
    """Write every case into ``folder``; returns the model file of each, by case name."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for what, make in CASES.items():
        case = make()
        model = folder / case.name
        model.parent.mkdir(parents=True, exist_ok=True)
        model.write_bytes(case.data)
        for name, data in case.beside.items():
            (model.parent / name).parent.mkdir(parents=True, exist_ok=True)
            (model.parent / name).write_bytes(data)
        for name, made in case.made.items():
            made.make(model.parent / name)
        written[what] = model
    return written


if __name__ == "__main__":
    for what, path in write_all(Path(sys.argv[1])).items():
        print(f"{path.name}: {what}")
