"""lower_model keeps what every scope computes: a generated differential test over models
whose subgraphs and functions reuse names.

Each model is generated from a seed (:func:`random.Random` seeded by the case's name) in one
of these families:

- ``if-siblings``: an ``If`` whose then- and else-branches each define a ``Constant`` of the
  same name (``k``, and ``p`` for a position) with different values, feeding a
  ``SplitToSequence`` read by ``SequenceAt``, ``SequenceLength`` and ``ConcatFromSequence``,
  or a ``Split`` (opset 13/18 sizes ``k``, equal parts, uneven ``num_outputs``); the
  branches' Split nodes often share a node name too, so that names lowering derives from it
  meet. The branches read ``x`` from the main graph.
- ``loop``: ``Loop`` bodies (trip count 2, constant condition) with a Split or a
  SplitToSequence, their parts as scan outputs or carried values, beside a sibling ``Loop``
  or ``If`` that defines the same names, or under a main-graph Split of the same node name.
  (ONNX's SSA rule forbids a body redefining a value name of the graph around it, so the
  value names a body reuses are its siblings'; the node names are the outer graph's.)
- ``nested``: If inside If, the innermost branch splitting ``x`` of the main graph or a
  value of the branch around it.
- ``function``: model-local functions holding a Split or a SplitToSequence with a Constant
  named like a main-graph value (``k``), called from the main graph beside a main-graph
  Split of the same node name.
- ``overloads``: two overloads of one model-local function (one domain and name, overloads
  ``a`` and ``b``) whose bodies define the same value and node names and cut them otherwise,
  called side by side; half of them with two ``If`` nodes named ``choose`` and ``/choose``
  too, whose branches are scopes of one label (``main/choose.then_branch``) that cut
  otherwise. onnx.reference runs one overload's body for every
  call, so their oracle is onnxruntime on the original
  (:func:`test_onnx_reference_runs_one_overload_for_every_call` pins why).
- ``initializer-input``: a split initializer ``s`` also listed in ``graph.input``. At IR 4
  and later it is a default the caller may override: each model runs with the default and
  with overrides. At IR 3 every initializer must be a graph input, and it is a constant:
  models at opsets 11 to 18 (which ``onnx.checker`` and onnxruntime accept at IR 3, though
  ``onnx.helper.VERSION_TABLE`` pairs IR 3 with opsets up to 8 only) split by ``s``, and
  models at the opsets of IR 3's own releases use Split-1 (opset 1) with ``s`` as its sizes,
  or Split-2 (opsets 7, 8, with sizes as the attribute) with ``s`` as data. Neither
  onnxruntime nor onnx.reference has Split-1, so the opset-1 models run on the reference
  engine only
  (``Scoped.peer_limits``; :func:`test_a_peer_is_skipped_only_where_it_refuses_the_original`
  pins that both refuse the original too).
- ``unused-sequence``: a graph input ``k`` (or an initializer input) that only feeds a
  SplitToSequence whose sequence nothing reads: lowering removes the node, not the input.

Some models of every family but ``function`` (which needs IR 8) are at IR 3 too, where what
lowering adds cannot be an initializer (it would have to be a graph input).

Data are float32 or int64, of static (``[6, 2]``) or symbolic (``["N", 2]``) shape, fed at
lengths the splits accept. For each model and each target, the oracle is
``splitops.backend.run_model`` on the ORIGINAL model; the lowered model must keep its graph
inputs and outputs exactly, pass ``onnx.checker``'s full check, and give the oracle's
outputs bit for bit on onnxruntime and on onnx.reference (and ``prepare(engine=
"onnxruntime")`` on the original as well). ``target="no-sequences"`` may refuse a model only
with a SplitError that names a SplitToSequence node of it.
"""

from __future__ import annotations

import functools
import itertools
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import splitops
from splitops import SplitError
from splitops.backend import EngineFallbackWarning
from splitops.onnx.rewrite import FORMS
from splitops.onnx.rewrite import TARGETS as ALL_TARGETS

ort = pytest.importorskip("onnxruntime")

TARGETS = ("portable", "no-sequences", "onnxruntime")
LOCAL = "local.functions"
BOOL, I64 = TensorProto.BOOL, TensorProto.INT64
ELEMENTS = {"f32": (TensorProto.FLOAT, np.float32), "i64": (TensorProto.INT64, np.int64)}
PEERS = ("onnxruntime", "onnx.reference")

Dims = Sequence[int | str | None]


# --- Building blocks --------------------------------------------------------------------------


def constant(name: str, value: Any, dtype: Any = np.int64) -> NodeProto:
    return helper.make_node(
        "Constant", [], [name], value=numpy_helper.from_array(np.asarray(value, dtype))
    )


def info(name: str, element: int, dims: Dims | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, element, dims)


@dataclass(frozen=True)
class Data:
    """The data a model splits: element type, declared dims and the lengths fed along axis 0."""

    tag: str
    symbolic: bool
    lengths: tuple[int, ...] = (6,)

    @property
    def element(self) -> int:
        return ELEMENTS[self.tag][0]

    @property
    def dims(self) -> list[int | str]:
        return ["N", 2] if self.symbolic else [6, 2]

    def array(self, length: int, offset: int = 0) -> np.ndarray[Any, Any]:
        values = np.arange(offset, offset + 2 * length).reshape(length, 2)
        if self.tag == "f32":
            values = values * 0.5 - 3
        return values.astype(ELEMENTS[self.tag][1])

    def text(self) -> str:
        return f"{self.tag}-{'N' if self.symbolic else 'static'}"


#: How one scope splits its data: ``("chunk", c)`` (scalar k), ``("sizes", [..])`` (1-d k),
#: ``("ones", None)`` (SplitToSequence without a split), ``("num", c)`` (Split-18
#: num_outputs), ``("equal", None)`` (Split-13 equal parts by output count).
Form = tuple[str, Any]


def rows(form: Form, length: int, outputs: int = 0) -> list[int]:
    """The part sizes the spec gives ``form`` on ``length`` rows (a Split's listed parts only):
    to pick forms whose results differ and lengths they accept, never as expected values."""
    kind, value = form
    if kind == "sizes":
        return list(value)
    if kind == "ones":
        return [1] * length
    if kind == "chunk":
        return list(splitops.sequence_sizes(length, value, opset=11))
    if kind == "num":
        return list(splitops.split_sizes(length, num_outputs=value))[:outputs]
    return list(splitops.split_sizes(length, num_outputs=outputs, opset=13))


def part_count(form: Form, length: int, outputs: int) -> int:
    return len(rows(form, length, outputs))


def observed(form: Form, readers: Sequence[str], position: int, outputs: int = 0) -> Any:
    """What the readers of a scope see of ``form`` on 6 rows: sibling scopes must differ
    there, or a lowering that gave one scope the other's constant would go unseen (a
    ConcatFromSequence gives the data back whatever the split)."""
    sizes = rows(form, 6, outputs)
    if not readers:  # a Split: its parts
        return sizes
    seen = []
    if "len" in readers:
        seen.append(len(sizes))
    if "at" in readers:
        index = position % len(sizes)
        seen.append((sum(sizes[:index]), sizes[index]))
    return seen


def accepts(form: Form, length: int, outputs: int) -> bool:
    """Whether the spec accepts ``form`` on an axis of ``length`` (used to pick lengths to
    feed; the values a model computes come from the oracle only)."""
    kind, value = form
    try:
        if kind == "sizes":
            return sum(value) == length
        if kind == "num":
            return len(splitops.split_sizes(length, num_outputs=value)) >= outputs
        if kind == "equal":
            return length % outputs == 0
        if kind == "chunk":
            splitops.sequence_sizes(length, value, opset=11)
    except SplitError:
        return False
    return True


@dataclass
class Scope:
    """Nodes of one scope, with the names of its outputs and their declared types."""

    nodes: list[NodeProto] = field(default_factory=list)
    outputs: list[onnx.ValueInfoProto] = field(default_factory=list)


def sequence_scope(
    data: str,
    element: int,
    form: Form,
    readers: Sequence[str],
    *,
    name: str,
    position: int | str,
    keepdims: int | None = None,
    split_type: Any = np.int64,
    position_type: Any = np.int64,
    k: str = "k",
    p: str = "p",
    local_k: bool = True,
) -> Scope:
    """SplitToSequence of ``data`` (axis 0) by ``form`` (a Constant ``k`` unless
    ``local_k`` is false, then ``k`` is read from outside), read by ``readers`` (``at``,
    ``len``, ``concat``); ``position`` an int (a Constant ``p`` of this scope) or the name of a
    value outside. Outputs ``at``, ``n``, ``joined``."""
    scope = Scope()
    inputs = [data]
    if form[0] != "ones":
        if local_k:
            scope.nodes.append(constant(k, form[1], split_type))
        inputs.append(k)
    attributes = {} if keepdims is None else {"keepdims": keepdims}
    scope.nodes.append(
        helper.make_node("SplitToSequence", inputs, ["seq"], axis=0, name=name, **attributes)
    )
    drops = form[0] == "ones" and keepdims == 0
    rank = 1 if drops else 2
    for reader in readers:
        if reader == "at":
            if isinstance(position, int):
                scope.nodes.append(constant(p, position, position_type))
                position_name = p
            else:
                position_name = position
            scope.nodes.append(helper.make_node("SequenceAt", ["seq", position_name], ["at"]))
            scope.outputs.append(info("at", element, [None] * rank))
        elif reader == "len":
            scope.nodes.append(helper.make_node("SequenceLength", ["seq"], ["n"]))
            scope.outputs.append(info("n", I64, []))
        else:
            stack = {"new_axis": 1} if drops else {}
            scope.nodes.append(
                helper.make_node("ConcatFromSequence", ["seq"], ["joined"], axis=0, **stack)
            )
            scope.outputs.append(info("joined", element, [None, 2]))
    return scope


def split_scope(
    data: str,
    element: int,
    form: Form,
    outputs: int,
    *,
    name: str,
    prefix: str = "part",
    k: str = "k",
    local_k: bool = True,
) -> Scope:
    """Split of ``data`` (axis 0) into ``outputs`` listed parts by ``form``."""
    scope = Scope()
    parts = [f"{prefix}{i}" for i in range(outputs)]
    kind, value = form
    if kind == "sizes":
        if local_k:
            scope.nodes.append(constant(k, value))
        node = helper.make_node("Split", [data, k], parts, axis=0, name=name)
    elif kind == "num":
        node = helper.make_node("Split", [data], parts, axis=0, num_outputs=value, name=name)
    else:
        node = helper.make_node("Split", [data], parts, axis=0, name=name)
    scope.nodes.append(node)
    scope.outputs += [info(part, element, [None, 2]) for part in parts]
    return scope


def body(scope: Scope, name: str, inputs: Sequence[onnx.ValueInfoProto] = ()) -> GraphProto:
    return helper.make_graph(scope.nodes, name, list(inputs), scope.outputs)


def if_node(
    condition: str,
    branches: tuple[Scope, Scope],
    outputs: Sequence[onnx.ValueInfoProto],
    name: str,
    labels: tuple[str, str] = ("then", "else"),
) -> NodeProto:
    """An If choosing between two scopes (each becomes a branch graph named by ``labels``)."""
    return helper.make_node(
        "If",
        [condition],
        [v.name for v in outputs],
        then_branch=body(branches[0], labels[0]),
        else_branch=body(branches[1], labels[1]),
        name=name,
    )


def model_of(
    nodes: Sequence[NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    *,
    opset: int,
    initializers: Sequence[TensorProto] = (),
    functions: Sequence[FunctionProto] = (),
    ir_version: int | None = None,
) -> ModelProto:
    inputs = list(inputs)
    if ir_version == 3:  # IR 3: every initializer is a graph input too (and a constant)
        listed = {v.name for v in inputs}
        inputs += [
            info(t.name, t.data_type, list(t.dims)) for t in initializers if t.name not in listed
        ]
    graph = helper.make_graph(list(nodes), "main", inputs, list(outputs), list(initializers))
    imports = [helper.make_opsetid("", opset)]
    if functions:
        imports.append(helper.make_opsetid(LOCAL, 1))
    if ir_version is None:
        ir_version = max(helper.find_min_ir_version_for(imports[:1]), 8 if functions else 3)
    return helper.make_model(
        graph, opset_imports=imports, functions=list(functions), ir_version=ir_version
    )


def scalar(name: str, value: Any, dtype: Any = np.int64) -> TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype), name)


def outer_outputs(scope: Scope, prefix: str) -> list[onnx.ValueInfoProto]:
    """The types of a node's outputs in the graph around it, for the outputs of ``scope``."""
    found = []
    for value in scope.outputs:
        renamed = onnx.ValueInfoProto()
        renamed.CopyFrom(value)
        renamed.name = f"{prefix}{value.name}"
        found.append(renamed)
    return found


@dataclass(frozen=True)
class Scoped:
    """One generated model, the feeds it runs on (by label), and the peers that are known
    to refuse its original model (peer -> why)."""

    name: str
    model: ModelProto
    feeds: tuple[tuple[str, dict[str, Any]], ...]
    peer_limits: tuple[tuple[str, str], ...] = ()
    #: Whose outputs of the original are the oracle: splitops' reference engine, or
    #: onnxruntime where onnx.reference computes the original otherwise.
    oracle: str = "splitops"

    def __str__(self) -> str:
        return self.name


def feeds_for(
    data: Data, flags: Sequence[str] = (), extra: dict[str, Any] | None = None
) -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every length of ``data`` with every combination of the boolean inputs ``flags``."""
    found = []
    for length in data.lengths:
        for values in itertools.product((True, False), repeat=len(flags)):
            label = ",".join(
                [
                    f"N={length}",
                    *(f"{f}={'T' if v else 'F'}" for f, v in zip(flags, values, strict=True)),
                ]
            )
            feed = {"x": data.array(length)}
            feed.update({f: np.array(v) for f, v in zip(flags, values, strict=True)})
            feed.update(extra or {})
            found.append((label, feed))
    return tuple(found)


def pick_lengths(
    rng: random.Random, symbolic: bool, forms: Sequence[Form], outputs: int, least: int = 1
) -> tuple[int, ...]:
    """6, and for symbolic data one more length every form accepts with ``least`` parts."""
    if not symbolic:
        return (6,)
    good = [
        n
        for n in range(4, 13)
        if n != 6
        and all(accepts(f, n, outputs) and part_count(f, n, outputs) >= least for f in forms)
    ]
    return (6, rng.choice(good)) if good else (6,)


# --- Families -----------------------------------------------------------------------------------

SEQUENCE_FORMS: list[Form] = [
    ("chunk", 2),
    ("chunk", 3),
    ("chunk", 4),
    ("sizes", [1, 2, 3]),
    ("sizes", [3, 3]),
    ("sizes", [2, 4]),
    ("sizes", [4, 1, 1]),
    ("ones", None),
]
SIZES = {2: [[2, 4], [3, 3], [5, 1], [0, 6]], 3: [[1, 2, 3], [2, 2, 2], [3, 3, 0], [4, 1, 1]]}


def split_forms(rng: random.Random, opset: int, outputs: int) -> tuple[Form, Form]:
    """Two forms for sibling Splits listing ``outputs`` parts of 6 rows, cutting them
    differently."""
    options: list[Form] = [("sizes", s) for s in SIZES[outputs]]
    if opset >= 18:
        options += [("num", c) for c in range(outputs, 6) if accepts(("num", c), 6, outputs)]
    else:
        options.append(("equal", None))
    while True:
        then, other = rng.sample(options, 2)
        if observed(then, (), 0, outputs) != observed(other, (), 0, outputs):
            return then, other


def sequence_forms(
    rng: random.Random, readers: Sequence[str], positions: Sequence[int], count: int = 2
) -> list[Form]:
    """``count`` forms for sibling SplitToSequence scopes (no chunks of 1 unless
    ``count == 2``), each seen differently by ``readers`` at ``positions``."""
    options = SEQUENCE_FORMS if count == 2 else [f for f in SEQUENCE_FORMS if f[0] != "ones"]
    while True:
        forms = rng.sample(options, count)
        seen = [observed(f, readers, p) for f, p in zip(forms, positions, strict=False)]
        if len({repr(v) for v in seen}) == count:
            return forms


def if_siblings(i: int) -> Scoped:
    rng = random.Random(f"if-siblings-{i}")
    op = ("SplitToSequence", "Split")[i % 2]
    tag = ("f32", "i64")[i // 2 % 2]
    symbolic = i // 4 % 2 == 1
    same_node_name = rng.random() < 0.7
    names = ("cut", "cut") if same_node_name else ("cut_then", "cut_else")
    decoy = same_node_name and rng.random() < 0.4
    if op == "SplitToSequence":
        outputs = 0
        readers = ["concat"]
        while readers == ["concat"]:  # ConcatFromSequence alone gives x back in both
            readers = sorted(rng.sample(["at", "len", "concat"], rng.randint(1, 3)))
        both_ones = "at" in readers and rng.random() < 0.15
        if both_ones:  # the branches differ in the position they read only
            forms = [("ones", None)] * 2
            positions = rng.sample([0, 1, -1, 2], 2)
            keepdims = rng.choice([None, 0, 1])
        else:
            positions = [rng.choice([0, 1, -1])] * 2
            if rng.random() < 0.3:
                positions[1] = rng.choice([0, 1, -1])
            forms = sequence_forms(rng, readers, positions)
            # keepdims=0 drops the axis of chunks of 1 only: both branches keep their rank
            keepdims = rng.choice([None, 1]) if ("ones", None) in forms else rng.choice([None, 0])
        outer_position = positions[0] == positions[1] and rng.random() < 0.3
        least = max(abs(p) + (p >= 0) for p in positions)
        data = Data(tag, symbolic, pick_lengths(rng, symbolic, forms, 0, least))
        split_type = rng.choice([np.int64, np.int32])
        position_type = rng.choice([np.int64, np.int32])
        scopes = [
            sequence_scope(
                "x",
                data.element,
                form,
                readers,
                name=names[b],
                position="pos" if outer_position else positions[b],
                keepdims=keepdims,
                split_type=split_type,
                position_type=position_type,
            )
            for b, form in enumerate(forms)
        ]
        opset = rng.choice([11, 13, 18])
        detail = f"{forms[0][0]}{forms[0][1]}-vs-{forms[1][0]}{forms[1][1]}-{'+'.join(readers)}"
    else:
        outputs = rng.choice([2, 3])
        opset = rng.choice([13, 18])
        forms = split_forms(rng, opset, outputs)
        data = Data(tag, symbolic, pick_lengths(rng, symbolic, forms, outputs))
        scopes = [
            split_scope("x", data.element, form, outputs, name=names[b])
            for b, form in enumerate(forms)
        ]
        outer_position = False
        detail = f"{forms[0][0]}{forms[0][1]}-vs-{forms[1][0]}{forms[1][1]}"
    then, other = (body(scope, f"branch{b}") for b, scope in enumerate(scopes))
    results = outer_outputs(scopes[0], "y_")
    nodes = [
        helper.make_node(
            "If", ["c"], [v.name for v in results], then_branch=then, else_branch=other, name="if"
        )
    ]
    initializers = [scalar("pos", positions[0])] if outer_position else []
    if decoy:  # a main-graph value named as lowering would name its sizes in a branch
        initializers.append(scalar("cut_split", [7, 7]))
        nodes.append(helper.make_node("Identity", ["cut_split"], ["decoy"]))
        results.append(info("decoy", I64, [2]))
    ir3 = i % 5 == 4  # IR 3: what lowering adds must not need a new graph input
    model = model_of(
        nodes,
        [info("x", data.element, data.dims), info("c", BOOL, [])],
        results,
        opset=opset,
        initializers=initializers,
        ir_version=3 if ir3 else None,
    )
    detail += "-ir3" if ir3 else ""
    name = f"if-siblings-{op}-{data.text()}-{detail}".replace(" ", "")
    return Scoped(f"{name}-{i:02d}", model, feeds_for(data, ["c"]))


def loop_body(
    rng: random.Random,
    op: str,
    data: Data,
    form: Form,
    *,
    carry: bool,
    name: str,
    position: int,
) -> tuple[GraphProto, list[onnx.ValueInfoProto]]:
    """A Loop body (iteration, condition, carried count[, carried parts]) splitting outer
    ``x``; its parts as a scan output or concatenated onto a carried value. Returns the body
    and the types of the Loop's outputs after the count."""
    element = data.element
    inputs = [info("i", I64, []), info("c_in", BOOL, []), info("total_in", I64, [])]
    if carry:
        inputs.append(info("acc_in", element, [None, 2]))
    if op == "SplitToSequence":
        scope = sequence_scope("x", element, form, ["at", "len"], name=name, position=position)
        counted, piece = "n", "at"
        scope.outputs = []
    else:
        scope = split_scope("x", element, form, 2, name=name)
        scope.nodes.append(helper.make_node("Size", ["part1"], ["n"]))
        counted, piece = "n", rng.choice(["part0", "part1"])
        scope.outputs = []
    scope.nodes += [
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        helper.make_node("Add", ["total_in", counted], ["total_out"]),
    ]
    scope.outputs += [info("c_out", BOOL, []), info("total_out", I64, [])]
    if carry:
        scope.nodes.append(helper.make_node("Concat", ["acc_in", piece], ["acc_out"], axis=0))
        scope.outputs.append(info("acc_out", element, [None, 2]))
        after = [info("acc", element, [None, 2])]
    else:
        # Scan outputs of rank 1: the spec stacks them on a new axis, and onnx.reference
        # (1.23), which the oracle runs Loop on, joins them with np.vstack, which stacks
        # only 1-d values (it concatenates 2-d ones along their axis 0).
        scope.nodes.append(helper.make_node("Reshape", [piece, "flat"], ["scanned"]))
        scope.nodes.insert(0, constant("flat", [-1]))
        scope.outputs.append(info("scanned", element, [None]))
        after = [info("scan", element, [2, None])]
    return body(scope, "loop_body", inputs), after


def loop_node(
    graph: GraphProto, prefix: str, carry: bool, after: list[onnx.ValueInfoProto]
) -> tuple[NodeProto, list[onnx.ValueInfoProto]]:
    inputs = ["trips", "go", "zero"] + (["empty"] if carry else [])
    outputs = [info(f"{prefix}total", I64, []), *outer_outputs(Scope(outputs=after), prefix)]
    node = helper.make_node(
        "Loop", inputs, [v.name for v in outputs], body=graph, name=f"{prefix}loop"
    )
    return node, outputs


def loops(i: int) -> Scoped:
    rng = random.Random(f"loop-{i}")
    op = ("SplitToSequence", "Split")[i % 2]
    tag = ("f32", "i64")[i // 2 % 2]
    symbolic = i // 4 % 2 == 1
    sibling = ("loop", "if", "outer-split")[i % 3]
    opset = rng.choice([13, 18])
    if op == "SplitToSequence":
        positions = [rng.choice([0, 1, -1])] * 2
        forms = sequence_forms(rng, ["at", "len"], positions)
    else:
        forms = list(split_forms(rng, opset, 2))
        positions = [0, 0]
    outer_form = forms[1]
    if sibling == "outer-split":  # the main graph's Split uses a form lowering rewrites
        outer_form = ("num", 2) if opset >= 18 else ("equal", None)
    data = Data(tag, symbolic, pick_lengths(rng, symbolic, [*forms, outer_form], 2, 2))
    carries = [rng.random() < 0.5, rng.random() < 0.5]
    element = data.element
    nodes: list[NodeProto] = []
    results: list[onnx.ValueInfoProto] = []
    graph, after = loop_body(
        rng, op, data, forms[0], carry=carries[0], name="cut", position=positions[0]
    )
    node, outputs = loop_node(graph, "a_", carries[0], after)
    nodes.append(node)
    results += outputs
    inputs = [info("x", element, data.dims)]
    flags: list[str] = []
    if sibling == "loop":
        graph, after = loop_body(
            rng, op, data, forms[1], carry=carries[1], name="cut", position=positions[1]
        )
        node, outputs = loop_node(graph, "b_", carries[1], after)
        nodes.append(node)
        results += outputs
    elif sibling == "if":
        branches = []
        for form in forms[::-1]:
            if op == "SplitToSequence":
                scope = sequence_scope(
                    "x", element, form, ["at", "len"], name="cut", position=positions[0]
                )
            else:
                scope = split_scope("x", element, form, 2, name="cut")
            branches.append(scope)
        if_outputs = outer_outputs(branches[0], "if_")
        nodes.append(if_node("c", (branches[0], branches[1]), if_outputs, "if"))
        results += if_outputs
        inputs.append(info("c", BOOL, []))
        flags.append("c")
    else:
        scope = split_scope("x", element, outer_form, 2, name="cut", prefix="main_part")
        nodes += scope.nodes
        results += scope.outputs
    initializers = [
        scalar("trips", 2),
        scalar("go", True, np.bool_),
        scalar("zero", 0),
        numpy_helper.from_array(np.zeros((0, 2), ELEMENTS[tag][1]), "empty"),
    ]
    ir3 = i % 5 == 1
    model = model_of(
        nodes,
        inputs,
        results,
        opset=opset,
        initializers=initializers,
        ir_version=3 if ir3 else None,
    )
    detail = f"{forms[0][0]}{forms[0][1]}-{'carry' if carries[0] else 'scan'}-beside-{sibling}"
    detail += "-ir3" if ir3 else ""
    name = f"loop-{op}-{data.text()}-{detail}".replace(" ", "")
    return Scoped(f"{name}-{i:02d}", model, feeds_for(data, flags))


def nested(i: int) -> Scoped:
    rng = random.Random(f"nested-{i}")
    op = ("Split", "SplitToSequence")[i % 2]
    tag = ("f32", "i64")[i // 2 % 2]
    symbolic = i // 4 % 2 == 1
    reads_branch_value = rng.random() < 0.5
    opset = rng.choice([13, 18])
    element = ELEMENTS[tag][0]
    if op == "Split":
        options = [("sizes", s) for s in SIZES[2]] + [
            ("num", 2) if opset >= 18 else ("equal", None)
        ]
        forms = rng.sample(options, 3)
        while len({repr(observed(f, (), 0, 2)) for f in forms}) < 3:
            forms = rng.sample(options, 3)
    else:
        forms = sequence_forms(rng, ["at", "len", "concat"], [-1] * 3, count=3)
    data = Data(tag, symbolic, pick_lengths(rng, symbolic, forms, 2, 2))
    inner_data = "xx" if reads_branch_value else "x"

    def leaf(form: Form, source: str) -> Scope:
        if op == "Split":
            return split_scope(source, element, form, 2, name="cut")
        return sequence_scope(
            source, element, form, ["at", "len", "concat"], name="cut", position=-1
        )

    inner = [leaf(forms[0], inner_data), leaf(forms[1], inner_data)]
    inner_outputs = outer_outputs(inner[0], "in_")
    # The outer then-branch gives the inner If's outputs (the leaves' names are the inner
    # branches' own: the SSA rule keeps them out of every scope around those).
    outer_then = Scope(
        [helper.make_node("Neg", ["x"], ["xx"])] if reads_branch_value else [], inner_outputs
    )
    outer_then.nodes.append(
        if_node("c2", (inner[0], inner[1]), inner_outputs, "inner_if", ("inner_then", "inner_else"))
    )
    outer_else = leaf(forms[2], "x")
    results = outer_outputs(inner[0], "y_")
    node = if_node(
        "c1", (outer_then, outer_else), results, "outer_if", ("outer_then", "outer_else")
    )
    inputs = [info("x", element, data.dims), info("c1", BOOL, []), info("c2", BOOL, [])]
    ir3 = i % 5 == 2
    model = model_of([node], inputs, results, opset=opset, ir_version=3 if ir3 else None)
    detail = "-".join(f"{f[0]}{f[1]}" for f in forms) + ("-reads-xx" if reads_branch_value else "")
    detail += "-ir3" if ir3 else ""
    name = f"nested-{op}-{data.text()}-{detail}".replace(" ", "")
    return Scoped(f"{name}-{i:02d}", model, feeds_for(data, ["c1", "c2"]))


def functions(i: int) -> Scoped:
    rng = random.Random(f"function-{i}")
    op = ("SplitToSequence", "Split")[i % 2]
    tag = ("f32", "i64")[i // 2 % 2]
    symbolic = i // 4 % 2 == 1
    opset = rng.choice([13, 18])
    element = ELEMENTS[tag][0]
    main_k_initializer = rng.random() < 0.5
    if op == "Split":
        forms: list[Form] = [("sizes", rng.choice(SIZES[2]))]
        scope = split_scope("v", element, forms[0], 2, name="cut")
    else:
        forms = [rng.choice([f for f in SEQUENCE_FORMS if f[0] in ("chunk", "sizes")])]
        scope = sequence_scope(
            "v", element, forms[0], ["at", "len", "concat"], name="cut", position=1
        )
    outs = [v.name for v in scope.outputs]
    function = helper.make_function(
        LOCAL, "Cut", ["v"], outs, scope.nodes, [helper.make_opsetid("", opset)]
    )
    calls = rng.choice([1, 2])
    nodes: list[NodeProto] = []
    results: list[onnx.ValueInfoProto] = []
    for call in range(calls):
        source = "x" if call == 0 else "x_neg"
        if call:
            nodes.append(helper.make_node("Neg", ["x"], ["x_neg"]))
        named = outer_outputs(scope, f"f{call}_")
        nodes.append(
            helper.make_node(
                "Cut", [source], [v.name for v in named], domain=LOCAL, name=f"call{call}"
            )
        )
        results += named
    # The main graph's own k (another value) and a Split of the same node name.
    # The main graph's k cuts x otherwise than the function's k (as the readers see it).
    readers = ("at", "len") if op == "SplitToSequence" else ()
    seen = observed(forms[0], readers, 1, 2)
    main_form: Form = (
        "sizes",
        rng.choice([s for s in SIZES[2] if observed(("sizes", s), readers, 1, 2) != seen]),
    )
    initializers = []
    if main_k_initializer:
        initializers.append(numpy_helper.from_array(np.array(main_form[1], np.int64), "k"))
    else:
        nodes.append(constant("k", main_form[1]))
    main = split_scope("x", element, main_form, 2, name="cut", prefix="main_part", local_k=False)
    nodes += main.nodes
    results += main.outputs
    data = Data(tag, symbolic, (6,))
    model = model_of(
        nodes,
        [info("x", element, data.dims)],
        results,
        opset=opset,
        initializers=initializers,
        functions=[function],
    )
    detail = f"{forms[0][0]}{forms[0][1]}-main-k{main_form[1]}-calls{calls}"
    name = f"function-{op}-{data.text()}-{detail}".replace(" ", "")
    return Scoped(f"{name}-{i:02d}", model, feeds_for(data))


def overloads(i: int) -> Scoped:
    rng = random.Random(f"overloads-{i}")
    tag = ("f32", "i64")[i % 2]
    symbolic = i // 2 % 2 == 1
    same_label = i // 4 % 2 == 1
    element = ELEMENTS[tag][0]
    # onnxruntime, the oracle here, refuses a Split-18 listing fewer outputs than num_outputs.
    options: list[Form] = [("sizes", s) for s in SIZES[2]] + [("num", 2)]
    # Overload a's num_outputs is rewritten by every target (its axis is unknown in the body).
    forms = (("num", 2), rng.choice(options))
    functions = []
    for overload, form in zip("ab", forms, strict=True):
        # Bodies of other lengths and values (b negates): an edit placed by index in the other
        # body would land on another node.
        scope = split_scope("v" if overload == "a" else "w", element, form, 2, name="cut")
        if overload == "b":
            scope.nodes.insert(0, helper.make_node("Neg", ["v"], ["w"], name="negate"))
        functions.append(
            helper.make_function(
                LOCAL,
                "Cut",
                ["v"],
                [v.name for v in scope.outputs],
                scope.nodes,
                [helper.make_opsetid("", 18)],
                overload=overload,
            )
        )
    nodes: list[NodeProto] = []
    results: list[onnx.ValueInfoProto] = []
    for overload in "ab":
        named = outer_outputs(scope, f"{overload}_")
        nodes.append(
            helper.make_node(
                "Cut",
                ["x"],
                [v.name for v in named],
                domain=LOCAL,
                overload=overload,
                name=f"call_{overload}",
            )
        )
        results += named
    flags: list[str] = []
    if same_label:
        flags = ["c"]
        for which in range(2):
            then, other = rng.sample(options, 2)
            branches = (
                split_scope("x", element, then, 2, name="cut", prefix=f"t{which}_"),
                split_scope("x", element, other, 2, name="cut", prefix=f"e{which}_"),
            )
            outs = [info(f"if{which}_{k}", element, [None, 2]) for k in range(2)]
            for branch in branches:
                branch.outputs = [info(v.name, element, [None, 2]) for v in branch.outputs]
            # "choose" and "/choose": two names, one label (a leading slash is dropped).
            nodes.append(if_node("c", branches, outs, name="/choose" if which else "choose"))
            results += outs
    data = Data(tag, symbolic, pick_lengths(rng, symbolic, forms, 2) if symbolic else (6,))
    model = model_of(
        nodes,
        [info("x", element, data.dims), *(info(f, BOOL, []) for f in flags)],
        results,
        opset=18,
        functions=functions,
        ir_version=10,
    )
    detail = f"{forms[0][0]}{forms[0][1]}-{forms[1][0]}{forms[1][1]}"
    name = f"overloads-{data.text()}-{detail}{'-same-label-ifs' if same_label else ''}"
    return Scoped(
        f"{name.replace(' ', '')}-{i:02d}", model, feeds_for(data, flags), oracle="onnxruntime"
    )


def initializer_inputs(i: int) -> Scoped:
    """A split initializer ``s`` also listed as a graph input; see the module docstring."""
    rng = random.Random(f"initializer-input-{i}")
    variant = (
        "ir3-split1",
        "ir3-split2-data",
        "ir4-split2-data",
        "split13",
        "split18",
        "sequence-chunk",
        "sequence-sizes",
        "branch-split",
    )[i % 8]
    tag = ("f32", "i64")[i // 8 % 2]
    symbolic = i // 16 % 2 == 1
    if variant == "ir3-split1":
        tag = "f32"  # Split-1 takes float types only, and its sizes typed like the data
    data = Data(tag, symbolic, (6,))
    element = ELEMENTS[tag][0]
    x = info("x", element, data.dims)
    overrides: list[tuple[str, Any]] = []
    limits: tuple[tuple[str, str], ...] = ()
    # The split-input variants at IR 3 as well (onnx.checker and onnxruntime take IR 3 with
    # a later opset), where s is a constant, in half the dtype and shape blocks.
    ir_version: int | None = 3 if i // 8 in (1, 2) else None
    if variant == "ir3-split1":
        sizes = rng.choice(SIZES[2])
        default = np.array(sizes, np.float32)
        nodes = [helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")]
        results = [info(n, element, [None, 2]) for n in "ab"]
        opset, ir_version = 1, 3
        s_dims: list[int] = [2]
        limits = (("onnxruntime", "no Split-1 kernel"), ("onnx.reference", "no Split-1"))
    elif variant in ("ir3-split2-data", "ir4-split2-data"):
        default = data.array(6, offset=100) if not symbolic else data.array(1, offset=100)
        s_dims = [6, 2] if not symbolic else [1, 2]
        # Split-2: sizes as the attribute on 6 rows, equal halves on N rows
        sizes = rng.choice(SIZES[2] + SIZES[3]) if not symbolic else [0, 0]
        parts = [f"p{j}" for j in range(len(sizes))]
        attributes = {"split": sizes} if not symbolic else {}
        nodes = [
            helper.make_node("Add", ["x", "s"], ["xs"]),
            helper.make_node("Split", ["xs"], parts, axis=0, name="cut", **attributes),
        ]
        results = [info(p, element, [None, 2]) for p in parts]
        opset, ir_version = (rng.choice([7, 8]), 3) if variant.startswith("ir3") else (9, 4)
        if variant.startswith("ir4"):
            overrides.append(("s=other", data.array(len(default), offset=-50)))
    elif variant in ("split13", "split18", "branch-split"):
        sizes = rng.choice(SIZES[2])
        default = np.array(sizes, np.int64)
        s_dims = [2]
        opset = 13 if variant == "split13" else 18
        scope = split_scope("x", element, ("sizes", sizes), 2, name="cut", k="s", local_k=False)
        if variant == "branch-split":
            other = Scope(
                [
                    helper.make_node(
                        "Split", ["x"], ["part0", "part1"], axis=0, num_outputs=2, name="cut"
                    )
                ],
                list(scope.outputs),
            )
            results = outer_outputs(scope, "y_")
            nodes = [if_node("c", (scope, other), results, "if")]
        else:
            nodes, results = scope.nodes, scope.outputs
        overrides += [(f"s={o}", np.array(o, np.int64)) for o in SIZES[2] if o != sizes][:2]
    else:
        opset = rng.choice([11, 13, 18])
        readers = ["at", "len", "concat"]
        if variant == "sequence-chunk":
            chunk = rng.choice([2, 3])
            default, s_dims = np.array(chunk, np.int64), []
            overrides += [(f"s={o}", np.array(o, np.int64)) for o in (1, 2, 3, 4) if o != chunk][:2]
            form: Form = ("chunk", chunk)
        else:
            sizes = rng.choice([[1, 2, 3], [3, 3], [2, 4]])
            default, s_dims = np.array(sizes, np.int64), [None]
            overrides += [
                (f"s={o}", np.array(o, np.int64)) for o in ([6], [4, 1, 1], [3, 3]) if o != sizes
            ][:2]
            form = ("sizes", sizes)
        scope = sequence_scope(
            "x", element, form, readers, name="cut", position=0, k="s", local_k=False
        )
        nodes, results = scope.nodes, scope.outputs
    inputs = [x, info("s", helper.np_dtype_to_tensor_dtype(default.dtype), s_dims)]
    flags = ["c"] if variant == "branch-split" else []
    if flags:
        inputs.append(info("c", BOOL, []))
    model = model_of(
        nodes,
        inputs,
        results,
        opset=opset,
        initializers=[numpy_helper.from_array(default, "s")],
        ir_version=ir_version,
    )
    feeds = list(feeds_for(data, flags))
    if model.ir_version >= 4:  # at IR 4 and later the caller may feed s instead of its default
        feeds += [
            (f"{label},{text}", {**feed, "s": value})
            for label, feed in feeds_for(data, flags)
            for text, value in overrides
        ]
    ir = model.ir_version
    name = f"initializer-input-ir{ir}-opset{opset}-{variant}-{data.text()}"
    return Scoped(f"{name}-{i:02d}", model, tuple(feeds), limits)


def unused_sequences(i: int) -> Scoped:
    rng = random.Random(f"unused-sequence-{i}")
    variant = ("main", "main-only-reader-of-x", "branch", "initializer-input")[i % 4]
    tag = ("f32", "i64")[i // 4 % 2]
    symbolic = rng.random() < 0.5
    opset = rng.choice([11, 13, 18])
    data = Data(tag, symbolic, (6,))
    element = data.element
    chunk = rng.random() < 0.5
    k_value = np.array(rng.choice([2, 3]) if chunk else rng.choice(SIZES[2] + SIZES[3]))
    k_value = k_value.astype(rng.choice([np.int64, np.int32]))
    k = info("k", helper.np_dtype_to_tensor_dtype(k_value.dtype), [] if chunk else [None])
    cut = helper.make_node("SplitToSequence", ["x", "k"], ["seq"], axis=0, name="cut")
    inputs = [info("x", element, data.dims), k]
    extra: dict[str, Any] = {"k": k_value}
    initializers: list[TensorProto] = []
    flags: list[str] = []
    if variant == "main":
        nodes = [cut, helper.make_node("Identity", ["x"], ["y"])]
        results = [info("y", element, data.dims)]
    elif variant == "main-only-reader-of-x":
        nodes = [cut, helper.make_node("Neg", ["z"], ["y"])]
        inputs.append(info("z", element, [3]))
        extra["z"] = np.arange(3).astype(ELEMENTS[tag][1])
        results = [info("y", element, [3])]
    elif variant == "branch":
        y = info("y", element, [None, 2])
        then = Scope([cut, helper.make_node("Identity", ["x"], ["y"])], [y])
        other = Scope([helper.make_node("Neg", ["x"], ["y"])], [y])
        nodes = [
            helper.make_node(
                "If", ["c"], ["out"], then_branch=body(then, "then"), else_branch=body(other, "e")
            )
        ]
        results = [info("out", element, [None, 2])]
        inputs.append(info("c", BOOL, []))
        flags.append("c")
    else:
        nodes = [cut, helper.make_node("Identity", ["x"], ["y"])]
        results = [info("y", element, data.dims)]
        initializers.append(numpy_helper.from_array(k_value, "k"))
        extra = {}
    ir3 = i % 3 == 2
    model = model_of(
        nodes,
        inputs,
        results,
        opset=opset,
        initializers=initializers,
        ir_version=3 if ir3 else None,
    )
    feeds = feeds_for(data, flags, extra)
    if variant == "initializer-input" and not ir3:  # the default, and another value fed
        given = np.array(1 if chunk else [6], k_value.dtype)
        feeds += tuple((f"{label},k={given.tolist()}", {**f, "k": given}) for label, f in feeds)
    form = f"chunk{int(k_value)}" if chunk else f"sizes{k_value.tolist()}"
    name = f"unused-sequence-{variant}-ir{model.ir_version}-opset{opset}-{data.text()}-{form}"
    name = name.replace(" ", "")
    return Scoped(f"{name}-{i:02d}", model, feeds)


FAMILIES: list[tuple[Callable[[int], Scoped], int]] = [
    (if_siblings, 48),
    (loops, 24),
    (nested, 16),
    (functions, 12),
    (overloads, 8),
    (initializer_inputs, 32),
    (unused_sequences, 12),
]
CASES = [make(i) for make, count in FAMILIES for i in range(count)]
BY_NAME = {case.name: case for case in CASES}
#: The overloads of one function and the scopes that share a label, on every target: where
#: identities were labels, one overload's edits landed in the other's body.
EVERY_TARGET = ("overloads-",)
PAIRS = [
    pytest.param(case.name, target, id=f"{case.name}-{target}")
    for case in CASES
    for target in (ALL_TARGETS if case.name.startswith(EVERY_TARGET) else TARGETS)
]


# --- Running ------------------------------------------------------------------------------------


@functools.cache
def oracle(name: str, label: str) -> tuple[np.ndarray[Any, Any], ...]:
    """What the ORIGINAL model computes: the reference engine, Split on splitops (or
    onnxruntime, where the case says so)."""
    case = BY_NAME[name]
    feeds = dict(case.feeds)[label]
    if case.oracle == "onnxruntime":
        return tuple(np.asarray(v) for v in run_on("onnxruntime", case.model, feeds))
    return tuple(np.asarray(v) for v in splitops.backend.run_model(case.model, feeds))


@functools.cache
def lowered(name: str, target: str) -> ModelProto | SplitError:
    try:
        return splitops.lower_model(BY_NAME[name].model, target=target)  # type: ignore[arg-type]
    except SplitError as error:
        return error


def lowered_or_refused(name: str, target: str) -> ModelProto | None:
    """The lowered model, or ``None`` where ``no-sequences`` refuses it with an error that
    names one of the model's SplitToSequence nodes, or a target without control flow and
    functions (onnx2torch) refuses it naming a node that holds a graph or calls a function."""
    found = lowered(name, target)
    if isinstance(found, ModelProto):
        return found
    if not FORMS[target].control_flow:
        holders = {
            n.name
            for n in every_node(BY_NAME[name].model)
            if n.name and (n.domain == LOCAL or n.op_type in ("If", "Loop", "Scan"))
        }
        assert isinstance(found, SplitError), found
        assert any(f"'{h}'" in str(found) for h in holders), found
        return None
    sequences = {
        n.name for n in every_node(BY_NAME[name].model) if n.op_type == "SplitToSequence" and n.name
    }
    named = [s for s in sequences if f"'{s}'" in str(found)]
    assert target == "no-sequences", f"lower_model(target={target!r}) raised: {found}"
    assert named, f"no-sequences refused without naming a SplitToSequence node: {found}"
    return None


def every_node(model: ModelProto) -> list[NodeProto]:
    found: list[NodeProto] = []

    def walk(nodes: Sequence[NodeProto]) -> None:
        for node in nodes:
            found.append(node)
            for attribute in node.attribute:
                for graph in [attribute.g, *attribute.graphs]:
                    walk(graph.node)

    walk(model.graph.node)
    for function in model.functions:
        walk(function.node)
    return found


def session(model: ModelProto) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def run_on(peer: str, model: ModelProto, feeds: dict[str, Any]) -> list[Any]:
    if peer == "onnxruntime":
        return list(session(model).run(None, feeds))
    return list(ReferenceEvaluator(model).run(None, feeds))


@functools.cache
def original_refused(name: str, peer: str, label: str) -> str:
    """Why ``peer`` cannot load or run the ORIGINAL model on these feeds, or ``""``."""
    case = BY_NAME[name]
    try:
        run_on(peer, case.model, dict(case.feeds)[label])
    except Exception as error:  # the peer's own classes
        return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"
    return ""


def assert_same(
    actual: Sequence[Any], expected: Sequence[Any], model: ModelProto, where: str
) -> None:
    """Every output of the original model's, in dtype, shape and every bit."""
    names = [v.name for v in model.graph.output]
    assert len(actual) == len(expected), (
        f"{where}: {len(actual)} outputs; the original model has {len(expected)}"
    )
    for output, value, want in zip(names, actual, expected, strict=True):
        got = np.asarray(value)
        same = (got.dtype, got.shape) == (want.dtype, want.shape) and (
            got.tobytes() == want.tobytes()
        )
        assert same, (
            f"{where}: output {output!r} is {got.dtype}{list(got.shape)} {got.tolist()}; the "
            f"original model computes {want.dtype}{list(want.shape)} {want.tolist()}"
        )
        np.testing.assert_array_equal(got, want, strict=True)


def signature(values: Sequence[onnx.ValueInfoProto]) -> list[tuple[str, bytes]]:
    return [(v.name, v.type.SerializeToString()) for v in values]


def defaults(graph: GraphProto) -> dict[str, bytes]:
    """The graph inputs an initializer fills (a default or, at IR 3, a constant), with the
    initializer's value."""
    listed = {v.name for v in graph.input}
    return {
        t.name: numpy_helper.to_array(t).tobytes() for t in graph.initializer if t.name in listed
    }


# --- Tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_generated_models_are_valid_and_the_oracle_runs_them(name: str) -> None:
    case = BY_NAME[name]
    onnx.checker.check_model(case.model, full_check=True)
    for label, _ in case.feeds:
        assert len(oracle(name, label)) == len(case.model.graph.output)


def test_the_generator_reaches_every_scope_and_element_type() -> None:
    names = list(BY_NAME)
    assert len(names) == len(set(names)) == sum(count for _, count in FAMILIES)
    for part in (
        "if-siblings-SplitToSequence",
        "if-siblings-Split-",
        "loop-SplitToSequence",
        "loop-Split-",
        "nested-",
        "function-",
        "overloads-",
        "-same-label-ifs",
        "initializer-input-ir3-opset1",
        "initializer-input-ir3-opset7",
        "initializer-input-ir4",
        "initializer-input-ir8",
        "initializer-input-ir3-opset13",
        "initializer-input-ir3-opset18",
        "-ir3-",
        "unused-sequence-initializer-input-ir3",
        "unused-sequence-",
        "-f32-",
        "-i64-",
        "-static-",
        "-N-",
        "-num",
        "-equal",
        "-ones",
        "beside-loop",
        "beside-if",
        "beside-outer-split",
        "carry",
        "scan",
    ):
        assert any(part in n for n in names), part
    # Every branch runs: each condition of a model is fed both ways.
    for case in CASES:
        for flag in ("c", "c1", "c2"):
            if any(v.name == flag for v in case.model.graph.input):
                assert {bool(f[flag]) for _, f in case.feeds} == {True, False}, case.name


@pytest.mark.parametrize(("name", "target"), PAIRS)
def test_lowering_keeps_graph_inputs_and_outputs(name: str, target: str) -> None:
    original = BY_NAME[name].model
    model = lowered_or_refused(name, target)
    if model is None:
        return
    before, after = original.graph, model.graph
    assert signature(after.input) == signature(before.input), (
        f"graph inputs changed: {[v.name for v in before.input]} -> {[v.name for v in after.input]}"
    )
    assert signature(after.output) == signature(before.output), (
        f"graph outputs changed: {[v.name for v in before.output]} -> "
        f"{[v.name for v in after.output]}"
    )
    assert defaults(after) == defaults(before), (
        f"the inputs an initializer fills changed: {sorted(defaults(before))} -> "
        f"{sorted(defaults(after))}"
    )
    assert model.ir_version == original.ir_version
    assert list(model.opset_import) == list(original.opset_import)


@pytest.mark.parametrize(("name", "target"), PAIRS)
def test_lowering_keeps_a_model_the_full_check_accepts(name: str, target: str) -> None:
    model = lowered_or_refused(name, target)
    if model is not None:
        onnx.checker.check_model(model, full_check=True)


@pytest.mark.parametrize(("name", "target"), PAIRS)
def test_lowering_keeps_what_each_scope_computes(name: str, target: str) -> None:
    case = BY_NAME[name]
    model = lowered_or_refused(name, target)
    if model is None:
        return
    limits = dict(case.peer_limits)
    skipped = []
    for peer in PEERS if case.oracle == "splitops" else (case.oracle,):
        try:
            runner = session(model) if peer == "onnxruntime" else ReferenceEvaluator(model)
        except Exception as error:  # the peer's own classes
            if peer in limits and original_refused(name, peer, case.feeds[0][0]):
                skipped.append(f"{peer} ({limits[peer]})")
                continue
            raise AssertionError(f"{peer} cannot load the lowered model: {error}") from error
        for label, feeds in case.feeds:
            expected = oracle(name, label)
            try:
                got = runner.run(None, feeds)
            except Exception as error:  # the peer's own classes
                if peer in limits and original_refused(name, peer, label):
                    skipped.append(f"{peer} on {label} ({limits[peer]})")
                    continue
                raise AssertionError(
                    f"{peer} fails on the lowered model with {label}: {error}"
                ) from error
            assert_same(got, expected, case.model, f"{peer}, {label}")
    if limits:  # where the peers cannot run it, the reference engine runs the lowered model
        for label, feeds in case.feeds:
            got = splitops.backend.run_model(model, feeds)
            assert_same(got, oracle(name, label), case.model, f"splitops.backend, {label}")
    if target == "onnxruntime":  # what prepare(engine="onnxruntime") lowers to
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prepared = splitops.backend.prepare(case.model, engine="onnxruntime")
            fed = {v.name for v in case.model.graph.input} - set(defaults(case.model.graph))
            for label, feeds in case.feeds:
                inputs: Any = feeds
                if set(feeds) == fed:  # a list in graph-input order where nothing overrides
                    inputs = [feeds[v.name] for v in case.model.graph.input if v.name in fed]
                got = prepared.run(inputs)
                assert_same(got, oracle(name, label), case.model, f"prepare(onnxruntime), {label}")
        fallbacks = [str(w.message) for w in caught if w.category is EngineFallbackWarning]
        assert not fallbacks or "onnxruntime" in limits, fallbacks
        others = [w for w in caught if w.category is not EngineFallbackWarning]
        assert not others, [str(w.message) for w in others]
    if skipped:
        print(f"{name}: skipped {', '.join(skipped)}")


def test_a_peer_is_skipped_only_where_it_refuses_the_original() -> None:
    """The peers skipped above fail on the original model too; only the opset-1 models
    (Split-1) list such limits."""
    refused = {
        (case.name, peer)
        for case in CASES
        for peer in PEERS
        for label, _ in case.feeds
        if original_refused(case.name, peer, label)
    }
    listed = {(case.name, peer) for case in CASES for peer, _ in case.peer_limits}
    assert refused >= listed, sorted(listed - refused)
    assert {name for name, _ in listed} == {n for n in BY_NAME if "opset1-" in n}
    assert len(listed) <= 8


def test_onnx_reference_runs_one_overload_for_every_call() -> None:
    """Why the ``overloads`` cases take onnxruntime as their oracle and leave onnx.reference
    out: on every such original, onnx.reference's outputs differ from onnxruntime's."""
    cases = [case for case in CASES if case.oracle == "onnxruntime"]
    assert cases
    for case in cases:
        label, feeds = case.feeds[0]
        reference = run_on("onnx.reference", case.model, feeds)
        assert any(
            np.asarray(a).tobytes() != b.tobytes() or np.shape(a) != b.shape
            for a, b in zip(reference, oracle(case.name, label), strict=True)
        ), case.name
