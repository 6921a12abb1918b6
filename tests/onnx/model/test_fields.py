"""The model layer is the only reader and writer of a model's attributes, initializers and
declared types: the rule, checked on the source, and what its functions do."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

import splitops
from splitops.onnx.model.protobuf import (
    attribute_value,
    attribute_values,
    declared_types,
    drop_attributes,
    function_defaults,
    keep_attributes,
    links_attributes,
    links_only,
    resolve_linked,
    set_attributes,
)

SOURCE = Path(splitops.__file__).resolve().parent
MODEL_LAYER = SOURCE / "onnx" / "model"

#: The protobuf fields and methods that no class of splitops defines but as a method (the
#: view's ``Node.attribute(name)``): every use of one that is not a call is a use of
#: protobuf, whatever it is used on.
PROTOBUF_ONLY = frozenset(
    {
        "input", "opset_import", "tensor_type", "sequence_type", "elem_type", "dim",
        "dim_value", "dim_param", "attribute", "attribute_proto", "value_info",
        "sparse_initializer", "ref_attr_name", "overload", "HasField", "CopyFrom",
        "MergeFrom", "ClearField", "WhichOneof", "ListFields", "SerializeToString",
    }
)  # fmt: skip
#: The protobuf fields whose names splitops' own classes use too (the view's ``Node`` has an
#: ``op_type`` and a ``domain``, numpy arrays a ``shape``): a use counts where it is made on
#: a protobuf (:class:`_Counter` says which expressions are).
PROTOBUF_SHARED = frozenset(
    {
        "output", "op_type", "domain", "node", "graph", "functions", "initializer", "shape",
        "name", "type", "dims", "data_type",
    }
)  # fmt: skip
FIELDS = PROTOBUF_ONLY | PROTOBUF_SHARED
#: The methods that change the repeated field they are called on.
_MUTATORS = frozenset({"append", "extend", "add", "insert", "remove", "pop", "sort", "clear"})
_WRITERS = frozenset({"CopyFrom", "MergeFrom", "ClearField"})

#: The most uses of protobuf fields each area outside the model layer may make. The model
#: layer reads and writes models; every other area asks its view, and stands at its count
#: once it did, to fall only. Inference uses none. What rewriting keeps is node building (34
#: writes of the nodes it places, 2 reads); what running, the pack and the command keep
#: serializes a model or a value (``SerializeToString``) for a file or a runtime.
CEILINGS = {
    "onnx/inference": 0,
    "onnx/rewrite": 36,
    "onnx/run": 4,
    "conformance": 4,
    "other": 1,
}
TOTAL_CEILING = sum(CEILINGS.values())


def _is_proto_annotation(annotation: ast.expr | None) -> bool:
    """Whether an annotation names a protobuf message (``NodeProto``, ``TypeProto | None``)."""
    if annotation is None:
        return False
    return any(
        isinstance(n, (ast.Name, ast.Attribute))
        and (getattr(n, "id", None) or n.attr).endswith("Proto")
        if isinstance(n, (ast.Name, ast.Attribute))
        else isinstance(n, ast.Constant) and isinstance(n.value, str) and "Proto" in n.value
        for n in ast.walk(annotation)
    )


class _Counter(ast.NodeVisitor):
    """The uses of protobuf fields in one module, as (line, field, "read" or "write").

    A name of :data:`PROTOBUF_ONLY` counts wherever it is used. One of
    :data:`PROTOBUF_SHARED` counts where it is used on a protobuf: ``x.proto`` (the view's
    protobuf of a node or scope), a field use or an item of one (``model.graph.node[0]``), a
    call of a message's constructor, of ``helper.make_*`` or of a function of the module
    whose return annotation names a message, an attribute a class of the module annotates
    with a message, and a name its function binds to one of these (a parameter or variable
    annotated with a message, an assignment, a ``for`` or a comprehension over one). It
    follows names, not types: a message kept in a dict and read back is not seen.

    A write is an assignment or deletion of a field (or of an item of it), a call of a
    method that changes it (``append``, ``extend``, ``add``, ...), or ``CopyFrom``,
    ``MergeFrom`` and ``ClearField``; every other use is a read.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.found: list[tuple[int, str, str]] = []
        self.proto_functions: set[str] = set()
        self.proto_attributes: set[str] = {"proto"}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if _is_proto_annotation(node.returns):
                    self.proto_functions.add(node.name)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (
                        isinstance(item, ast.AnnAssign)
                        and isinstance(item.target, ast.Name)
                        and _is_proto_annotation(item.annotation)
                    ):
                        self.proto_attributes.add(item.target.id)
        self.names: list[set[str]] = [set()]
        self.parents: dict[ast.AST, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    # -- which expressions are protobufs --

    def is_proto(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.names[-1]
        if isinstance(node, ast.Attribute):
            return node.attr in self.proto_attributes or self.counts(node)
        if isinstance(node, ast.Subscript):
            return self.is_proto(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name.endswith("Proto") or name in self.proto_functions or name == "add":
                return name != "add" or self.is_proto(getattr(func, "value", func))
            return (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "helper"
                and name.startswith("make_")
            )
        return False

    def counts(self, node: ast.Attribute) -> bool:
        called = isinstance(self.parents.get(node), ast.Call) and self.parents[node].func is node
        if node.attr in PROTOBUF_ONLY:
            return not called or node.attr in _WRITERS or node.attr[0].isupper()
        return node.attr in PROTOBUF_SHARED and not called and self.is_proto(node.value)

    def bind(self, target: ast.expr, proto: bool) -> None:
        names = self.names[-1]
        if isinstance(target, ast.Name):
            if proto:
                names.add(target.id)
            else:
                names.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind(element, False)

    # -- scopes and bindings --

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        self.names.append({a.arg for a in every if _is_proto_annotation(a.annotation)})
        self.generic_visit(node)
        self.names.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.names.append(set(self.names[-1]))
        self.generic_visit(node)
        self.names.pop()

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        proto = self.is_proto(node.value)
        for target in node.targets:
            self.bind(target, proto)
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        proto = _is_proto_annotation(node.annotation) or (
            node.value is not None and self.is_proto(node.value)
        )
        self.bind(node.target, proto)
        self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.bind(node.target, self.is_proto(node.value))

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self.bind(node.target, self.is_proto(node.iter))
        for statement in [*node.body, *node.orelse]:
            self.visit(statement)

    def _comprehension(self, node: ast.AST, parts: list[ast.expr]) -> None:
        self.names.append(set(self.names[-1]))
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        for generator in generators:
            self.visit(generator.iter)
            self.bind(generator.target, self.is_proto(generator.iter))
            for condition in generator.ifs:
                self.visit(condition)
        for part in parts:
            self.visit(part)
        self.names.pop()

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_ListComp  # noqa: N815
    visit_GeneratorExp = visit_ListComp  # noqa: N815

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    # -- the uses --

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.counts(node):
            self.found.append((node.lineno, node.attr, self.kind(node)))
        self.generic_visit(node)

    def kind(self, node: ast.Attribute) -> str:
        if node.attr in _WRITERS or isinstance(node.ctx, (ast.Store, ast.Del)):
            return "write"
        parent = self.parents.get(node)
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, (ast.Store, ast.Del)):
            return "write"
        if isinstance(parent, ast.Attribute) and parent.attr in _MUTATORS:
            return "write"
        return "read"


def field_uses(source: str) -> list[tuple[int, str, str]]:
    """The uses of protobuf fields in a module's ``source`` (see :class:`_Counter`)."""
    tree = ast.parse(source)
    counter = _Counter(tree)
    counter.visit(tree)
    return sorted(counter.found)


def _area(path: Path) -> str:
    parts = path.relative_to(SOURCE).parts
    if parts[0] == "onnx" and len(parts) > 2:
        return f"onnx/{parts[1]}"
    return "conformance" if parts[0] == "conformance" else "other"


def _outside_modules() -> list[Path]:
    return [p for p in sorted(SOURCE.rglob("*.py")) if MODEL_LAYER not in p.parents]


def test_protobuf_fields_outside_the_model_layer_stay_under_each_area_s_ceiling() -> None:
    """Outside the model layer, each area uses at most its ceiling of protobuf fields; the
    count per module is printed (``pytest -s``) for whoever lowers a ceiling."""
    outside = _outside_modules()
    assert len(outside) > 40
    per_area: dict[str, dict[str, int]] = {area: {} for area in CEILINGS}
    rows = []
    for path in outside:
        found = field_uses(path.read_text())
        if not found:
            continue
        writes = sum(kind == "write" for _, _, kind in found)
        rows.append(f"{path.relative_to(SOURCE)}: {len(found) - writes} reads, {writes} writes")
        area = per_area.setdefault(_area(path), {})
        area[str(path.relative_to(SOURCE))] = len(found)
    counts = {area: sum(modules.values()) for area, modules in per_area.items()}
    print("\n".join([*rows, *(f"{area}: {count}" for area, count in counts.items())]))
    assert set(counts) == set(CEILINGS), "an area without a ceiling"
    over = {area: count for area, count in counts.items() if count > CEILINGS[area]}
    assert over == {}, per_area
    assert sum(counts.values()) <= TOTAL_CEILING


def test_protobuf_only_names_are_defined_by_no_class_of_splitops() -> None:
    """The names counted wherever they are used are protobuf's alone: no class of splitops
    (the model layer's included) defines an attribute or property of that name, and a
    method of that name (whose uses are calls, never counted) only where protobuf's is a
    field, never called."""
    defined = set()
    methods = set()
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        plain = not any(
                            getattr(d, "id", getattr(d, "attr", ""))
                            in ("property", "cached_property")
                            for d in item.decorator_list
                        )
                        (methods if plain else defined).add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        defined.add(item.target.id)
                    elif isinstance(item, ast.Assign):
                        defined.update(t.id for t in item.targets if isinstance(t, ast.Name))
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                defined.add(node.attr)
    assert defined & PROTOBUF_ONLY == set()
    assert methods & PROTOBUF_ONLY == {"attribute", "tensor_type"}  # fields of protobuf
    assert {"op_type", "domain", "shape"} <= defined  # why those are shared
    assert "output" in methods


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(n: NodeProto):\n    return n.op_type, n.input[0]",
         [(2, "op_type", "read"), (2, "input", "read")]),
        ("def f(m: ModelProto):\n    for node in m.graph.node:\n        node.domain = ''",
         [(2, "graph", "read"), (2, "node", "read"), (3, "domain", "write")]),
        ("def f(g):\n    g.proto.output.append(x)\n    del g.proto.value_info[:]",
         [(2, "output", "write"), (3, "value_info", "write")]),
        ("def f(t):\n    u = TypeProto()\n    u.CopyFrom(t)\n    return u.tensor_type.shape.dim",
         [(3, "CopyFrom", "write"), (4, "dim", "read"), (4, "shape", "read"),
          (4, "tensor_type", "read")]),
        ("def f(node, array):\n    return node.op_type, node.domain, array.shape, node.output(0)",
         []),
        ("def f(n: Node):\n    return [v.name for v in n.inputs if v]", []),
        ("def f(n: NodeProto):\n    return [e.name for e in n.attribute if e.HasField('g')]",
         [(2, "HasField", "read"), (2, "attribute", "read"), (2, "name", "read")]),
    ],
)  # fmt: skip
def test_the_counter_sees_field_uses_where_they_are_and_none_elsewhere(
    source: str, expected: list[tuple[int, str, str]]
) -> None:
    assert field_uses(source) == sorted(expected)


def test_the_counter_sees_the_model_layer_s_own_field_uses() -> None:
    """The model layer reads and writes the fields: the counter finds them there, reads and
    writes both, in every module that reads a protobuf."""
    for name in ("_fields.py", "_walk.py", "_value_type.py", "_view.py", "_edits.py"):
        found = field_uses((MODEL_LAYER / name).read_text())
        assert {kind for _, _, kind in found} >= {"read"}, name
    assert any(
        kind == "write" for _, _, kind in field_uses((MODEL_LAYER / "_fields.py").read_text())
    )


def test_attributes_read_as_python_values_and_written_in_place() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=-1, split=[1, 2], keepdims=0)
    assert attribute_values(node) == {"axis": -1, "split": [1, 2], "keepdims": 0}
    assert attribute_value(node, "num_outputs", 7) == 7
    set_attributes(node, axis=0, num_outputs=2)
    assert attribute_values(node) == {"split": [1, 2], "keepdims": 0, "axis": 0, "num_outputs": 2}
    drop_attributes(node, {"keepdims"})
    keep_attributes(node, {"axis", "split"})
    assert list(attribute_values(node)) == ["split", "axis"]


def test_a_linked_attribute_takes_the_call_s_value_or_is_left_out() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"])
    for name, ref in (("axis", "a"), ("split", "s")):
        linked = AttributeProto(name=name, ref_attr_name=ref)
        linked.type = AttributeProto.INT if name == "axis" else AttributeProto.INTS
        node.attribute.append(linked)
    assert links_attributes(node)
    assert links_only(node, {"a", "s"})
    assert not links_only(node, {"a"})
    resolved = resolve_linked(node, {"a": 1})
    assert attribute_values(resolved) == {"axis": 1}
    assert not links_attributes(resolved)
    assert links_attributes(node)  # the body's node is left as it was


def test_function_defaults_plain_as_onnx_reference_passes_them() -> None:
    function = helper.make_function("d", "F", ["x"], ["y"], [], [helper.make_opsetid("", 18)])
    function.attribute_proto.extend(
        [
            helper.make_attribute("mode", "edge"),
            helper.make_attribute("k", numpy_helper.from_array(np.array([3], np.int64))),
        ]
    )
    assert function_defaults(function)["mode"] == b"edge"
    plain = function_defaults(function, plain=True)
    assert plain["mode"] == "edge"
    np.testing.assert_array_equal(plain["k"], [3])


@pytest.mark.parametrize(
    ("inputs", "untyped", "names"),
    [
        (True, False, ["w", "x", "y"]),
        (True, True, ["w", "x", "v", "y"]),
        (False, False, ["y"]),
        (False, True, ["v", "y"]),
    ],
)
def test_one_reader_of_declared_types(inputs: bool, untyped: bool, names: list[str]) -> None:
    """The one reader of what a graph declares: with or without its inputs and weights,
    with or without the entries that give no type."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["v"]), helper.make_node("Relu", ["v"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.zeros(3, np.float32), "w")],
        value_info=[helper.make_empty_tensor_value_info("v")],
    )
    assert list(declared_types(graph, inputs=inputs, untyped=untyped)) == names


def test_graphs_at_finds_every_body_by_identity_as_the_walk_does() -> None:
    """Every body the walk yields is found at its key, the same protobuf object, and a key
    whose graph the model lacks gives ``None``."""
    from tests.onnx.rewrite.test_scoped_lowering import CASES

    from splitops.onnx.model import ModelView
    from splitops.onnx.model.protobuf import GraphsAt

    checked = 0
    for case in CASES:
        graphs_at = GraphsAt(case.model)
        view = ModelView.read(case.model)
        for scope in view.scopes:
            assert graphs_at(scope.key) is scope.proto
            checked += 1
        assert graphs_at((None, ((10_000, "then_branch", -1),))) is None
        assert graphs_at((("nowhere", "F", ""), ())) is None
    assert checked > 2 * len(CASES)
