"""``splitops.check_model``: one Diagnostic per broken rule, with where, which version, the
offending values and a hint; nodes found in subgraphs and local functions."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from onnx import ModelProto, NodeProto, TensorProto, helper

import splitops
from splitops import Diagnostic, Rule, SplitError, SplitTypeError, check_model
from splitops.onnx.inference._engine import infer_split_nodes
from splitops.onnx.model._node import read_node

F = TensorProto.FLOAT
MakeModel = Callable[..., ModelProto]


@dataclass(frozen=True)
class RuleCase:
    """A node named "s" breaking one rule, and what its Diagnostic must say."""

    rule: str
    node: NodeProto
    opset: int
    #: The input's element type and dims.
    x: tuple[int, Sequence[int | str] | None] = (F, [5, 3])
    constants: dict[str, Any] = field(default_factory=dict)
    #: The version the Diagnostic names (since_version).
    version: int = 0
    #: Texts the message must contain: the offending values.
    says: tuple[str, ...] = ()
    #: The shape the model declares for the first output (a float tensor), if any.
    declared: Sequence[int | str | None] | None = None


def _split(inputs: Sequence[str], outputs: int = 2, **attributes: Any) -> NodeProto:
    names = [f"o{i}" for i in range(outputs)]
    return helper.make_node("Split", list(inputs), names, name="s", **attributes)


def _sequence(inputs: Sequence[str], outputs: int = 1, **attributes: Any) -> NodeProto:
    names = [f"o{i}" for i in range(outputs)]
    return helper.make_node("SplitToSequence", list(inputs), names, name="s", **attributes)


def _int64(*values: int) -> np.ndarray[Any, Any]:
    return np.array(values, dtype=np.int64)


CASES = [
    RuleCase("opset", _sequence(["x"]), 10, version=10, says=("before opset 11",)),
    RuleCase("attribute", _split(["x"], split=[2, 3]), 13, version=13, says=("'split'",)),
    RuleCase("attribute-type", _split(["x"], axis=0.5), 11, version=11, says=("'axis'", "FLOAT")),
    RuleCase("keepdims", _sequence(["x"], keepdims=2), 11, version=11, says=("2",)),
    RuleCase("inputs", _split(["x", "a", "b"]), 13, version=13, says=("'a'", "'b'")),
    RuleCase("split-source", _split(["x", "sp"]), 2, version=2, says=("'sp'",)),
    RuleCase(
        "split-source",
        _split(["x", "sp"], split=[2, 3]),
        1,
        constants={"sp": np.array([2.0, 3.0], np.float32)},
        version=1,
        says=("[2, 3]", "'sp'"),
    ),
    RuleCase(
        "split-or-num_outputs",
        _split(["x", "sp"], num_outputs=2),
        18,
        constants={"sp": _int64(2, 3)},
        version=18,
        says=("'sp'", "num_outputs=2"),
    ),
    RuleCase("split-or-num_outputs", _split(["x"]), 18, version=18, says=("neither",)),
    RuleCase("outputs", _sequence(["x"], outputs=2), 11, version=11, says=("2",)),
    RuleCase("rank", _split(["x"], num_outputs=2), 18, x=(F, []), version=18, says=("rank-0",)),
    RuleCase("axis", _split(["x"], axis=2), 11, version=11, says=("axis 2", "rank 2")),
    RuleCase("axis", _sequence(["x"], axis=-3), 24, version=24, says=("axis -3", "[-2, 1]")),
    RuleCase(
        "num_outputs", _split(["x"], 4, num_outputs=4), 18, version=18, says=("dim of 5", "4")
    ),
    RuleCase("num_outputs", _split(["x"], 1, num_outputs=0), 18, version=18, says=("0",)),
    RuleCase("equal-parts", _split(["x"], 3), 11, version=11, says=("dim of 5", "3")),
    RuleCase(
        "output-count",
        _split(["x", "sp"], 3),
        13,
        constants={"sp": _int64(2, 3)},
        version=13,
        says=("3 outputs", "[2, 3]"),
    ),
    RuleCase(
        "output-count", _split(["x"], 3, num_outputs=2), 18, version=18, says=("3 outputs", "2")
    ),
    RuleCase(
        "split-chunk",
        _sequence(["x", "sp"]),
        11,
        constants={"sp": np.array(0, np.int64)},
        version=11,
        says=("0",),
    ),
    RuleCase(
        "split-negative",
        _split(["x", "sp"]),
        13,
        constants={"sp": _int64(-1, 6)},
        version=13,
        says=("[-1, 6]", "-1"),
    ),
    RuleCase("split-sum", _split(["x"], split=[2, 2]), 2, version=2, says=("[2, 2]", "4", "5")),
    RuleCase(
        "split-sum",
        _split(["x", "sp"]),
        18,
        constants={"sp": _int64(2, 2)},
        version=18,
        says=("sum to 4", "5"),
    ),
    RuleCase("split-empty", _split(["x", "sp"], 1), 13, constants={"sp": _int64()}, version=13),
    RuleCase(
        "split-shape",
        _split(["x", "sp"], 1),
        13,
        constants={"sp": np.array(5, np.int64)},
        version=13,
        says=("scalar 5",),
    ),
    RuleCase(
        "split-shape",
        _sequence(["x", "sp"]),
        11,
        constants={"sp": np.array([[2, 3]], np.int64)},
        version=11,
        says=("nested",),
    ),
    RuleCase(
        "split-type",
        _split(["x", "sp"]),
        1,
        constants={"sp": np.array([1.5, 3.5], np.float32)},
        version=1,
        says=("1.5",),
    ),
    RuleCase("dtype", _split(["x"]), 1, x=(TensorProto.INT32, [4]), version=1, says=("int32",)),
    RuleCase(
        "dtype", _sequence(["x"]), 11, x=(TensorProto.BFLOAT16, [4]), version=11, says=("bfloat16",)
    ),
    RuleCase(
        "split-dtype",
        _split(["x", "sp"]),
        13,
        constants={"sp": np.array([2, 3], np.int32)},
        version=13,
        says=("int32", "int64"),
    ),
    RuleCase(
        "split-dtype",
        _sequence(["x", "sp"]),
        24,
        constants={"sp": np.array([2.0, 3.0], np.float32)},
        version=24,
        says=("float",),
    ),
    RuleCase(
        "declared-shape",
        _split(["x"], num_outputs=2),
        18,
        declared=["N", 4],
        version=18,
        says=("'o0'", "[N, 4]", "[3, 3]", "dim 1 is declared 4 and inferred 3"),
    ),
]


def _case_model(case: RuleCase, make_model: MakeModel) -> ModelProto:
    model = make_model([case.node], {"x": case.x}, opset=case.opset, constants=case.constants)
    if case.declared is not None:
        model.graph.output[0].type.CopyFrom(helper.make_tensor_type_proto(F, case.declared))
    return model


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.rule}-{c.node.op_type}{c.opset}")
def test_each_rule_gives_one_diagnostic_naming_it(case: RuleCase, make_model: MakeModel) -> None:
    (diagnostic,) = check_model(_case_model(case, make_model))
    assert diagnostic.rule == case.rule
    assert (diagnostic.graph, diagnostic.node, diagnostic.op) == ("main", "s", case.node.op_type)
    assert diagnostic.opset == case.version
    for text in case.says:
        assert text in diagnostic.message, (text, diagnostic.message)
    assert diagnostic.hint
    assert not diagnostic.message.startswith("node ")
    assert str(diagnostic).startswith(f"main/s ({case.node.op_type}-{case.version}) [{case.rule}]")
    assert diagnostic.as_dict()["rule"] == case.rule


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.rule}-{c.node.op_type}{c.opset}")
def test_each_rule_is_named_by_the_error_where_it_is_raised(
    case: RuleCase, make_model: MakeModel
) -> None:
    model = _case_model(case, make_model)
    ((_, error),) = [problem for record in infer_split_nodes(model) for problem in record.problems]
    assert error.rule == case.rule


def test_a_negative_axis_length_is_no_negative_split_size() -> None:
    # Both messages say "must be >= 0": the rule comes from where each error is raised.
    with pytest.raises(SplitError) as dim:
        splitops.split_sizes(-1, num_outputs=2)
    with pytest.raises(SplitError) as size:
        splitops.split_sizes(5, [-1, 6], opset=13)
    assert "must be >= 0" in str(dim.value)
    assert "must be >= 0" in str(size.value)
    assert (dim.value.rule, size.value.rule) == ("dim", "split-negative")


def test_the_node_prefix_keeps_the_error_class_and_rule() -> None:
    node = _split(["x"], axis=0.5)
    with pytest.raises(SplitError, match=r"^node 's' \(Split\): Split-11 attribute 'axis'") as info:
        read_node(node, 11)
    assert type(info.value) is SplitTypeError
    assert info.value.rule == "attribute-type"


def test_strict_inference_keeps_the_rule_of_the_node_error(make_model: MakeModel) -> None:
    model = make_model([_split(["x"], split=[2, 2])], {"x": (F, [5])}, opset=2)
    with pytest.raises(SplitError, match=r"^main: node 's'") as info:
        splitops.infer_shapes(model)
    assert info.value.rule == "split-sum"


def test_the_rule_and_hint_survive_pickling() -> None:
    raised = SplitTypeError("Split-13 sizes.", rule=Rule.SPLIT_TYPE, hint="Pass ints.")
    error = pickle.loads(pickle.dumps(raised))
    assert (type(error), str(error), error.rule, error.hint) == (
        SplitTypeError,
        "Split-13 sizes. Pass ints.",
        Rule.SPLIT_TYPE,
        "Pass ints",
    )


#: Rules that no node of a model can break: they are about the array functions' arguments, a
#: whole model's inputs, or a conversion's target.
NOT_NODE_RULES = {
    Rule.ARGUMENT, Rule.ARRAY, Rule.UNKNOWN_LENGTH, Rule.CONCRETE, Rule.OUT, Rule.LIMIT,
    Rule.OPERATOR, Rule.DIM, Rule.CONVERSION,
}  # fmt: skip


#: The departures from the spec's letter that run, but that runtimes read two ways: check
#: warns of them (its exit status stays 0).
WARNING_RULES = {Rule.DEFAULT_SPLIT, Rule.POSITION_SHAPE}


def test_every_rule_a_node_can_break_has_a_case() -> None:
    assert {c.rule for c in CASES} == {rule.id for rule in Rule} - NOT_NODE_RULES - WARNING_RULES


def test_departures_are_warnings_each_naming_its_node(make_model: MakeModel) -> None:
    """torch's unbind (a scalar split 1 with keepdims=0) and a position of shape [1]: each a
    warning on its own node, the model otherwise clean."""
    nodes = [
        helper.make_node("SplitToSequence", ["x", "one"], ["seq"], axis=1, keepdims=0, name="u"),
        helper.make_node("SequenceAt", ["seq", "at"], ["y"], name="at"),
    ]
    constants = {"one": np.array(1, np.int64), "at": np.array([2], np.int64)}
    model = make_model(nodes, {"x": (F, ["N", 3])}, opset=13, constants=constants)
    found = [(d.node, d.op, d.opset, d.rule, d.severity) for d in check_model(model)]
    assert found == [
        ("u", "SplitToSequence", 11, "default-split", "warning"),
        ("at", "SequenceAt", 11, "position-shape", "warning"),
    ]
    assert all(not d.is_error for d in check_model(model))
    assert "warning: its split is the scalar 1 with keepdims=0" in str(check_model(model)[0])


def test_each_diagnostic_takes_rule_and_hint_from_the_error_as_data(
    make_model: MakeModel,
) -> None:
    model = make_model([_split(["x"], num_outputs=4)], {"x": (F, [5])}, opset=18)
    ((_, error),) = [problem for record in infer_split_nodes(model) for problem in record.problems]
    (diagnostic,) = check_model(model)
    assert error.rule is Rule.NUM_OUTPUTS
    assert diagnostic.hint == error.hint == "Pass explicit sizes, e.g. split=[2, 1, 1, 1]"
    assert diagnostic.message == error.message.rstrip(".")


def test_a_clean_model_gives_no_diagnostics(make_model: MakeModel) -> None:
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2),
        helper.make_node("SplitToSequence", ["a", "c"], ["seq"], axis=0),
    ]
    constants = {"c": np.array(2, np.int64)}
    model = make_model(nodes, {"x": (F, ["N", 3])}, opset=18, constants=constants)
    assert check_model(model) == []


def test_independent_problems_of_one_node_each_give_a_diagnostic(make_model: MakeModel) -> None:
    node = _split(["x"], split=[2, 2])
    model = make_model([node], {"x": (TensorProto.INT8, [5])}, opset=1)
    assert [d.rule for d in check_model(model)] == ["dtype", "split-sum"]


def test_sizes_are_checked_against_a_symbolic_dim_where_they_decide(make_model: MakeModel) -> None:
    node = _split(["x", "sp"])
    model = make_model([node], {"x": (F, ["N"])}, opset=18, constants={"sp": _int64(3, -1)})
    assert [d.rule for d in check_model(model)] == ["split-negative"]


def test_a_node_inside_an_if_branch_is_found(if_model: MakeModel) -> None:
    inner = helper.make_node("Split", ["x"], list("abcd"), axis=0, num_outputs=4, name="inner")
    (diagnostic,) = check_model(if_model(inner, [5], opset=18))
    assert (diagnostic.graph, diagnostic.node, diagnostic.rule) == (
        "main/if.then_branch",
        "inner",
        "num_outputs",
    )


def _quarters() -> Any:
    body = [helper.make_node("Split", ["x"], list("abcd"), axis=0, num_outputs=4, name="f")]
    return helper.make_function(
        "local", "Quarters", ["x"], ["a"], body, opset_imports=[helper.make_opsetid("", 18)]
    )


def test_a_node_in_a_local_function_is_checked_at_its_call_site(make_model: MakeModel) -> None:
    calls = [
        helper.make_node("Quarters", ["x"], ["y"], domain="local"),
        helper.make_node("Quarters", ["z"], ["w"], domain="local"),
    ]
    model = make_model(
        calls, {"x": (F, [8]), "z": (F, [5])}, opset=18, outputs=["y", "w"], functions=[_quarters()]
    )
    (diagnostic,) = check_model(model)
    assert (diagnostic.graph, diagnostic.node, diagnostic.op, diagnostic.opset) == (
        "function:local.Quarters",
        "f",
        "Split",
        18,
    )
    assert diagnostic.rule == "num_outputs"
    assert "dim of 5" in diagnostic.message


def test_a_node_in_an_uncalled_function_is_checked_as_far_as_it_can_be(
    make_model: MakeModel,
) -> None:
    body = [helper.make_node("Split", ["x"], ["a"], axis=0, num_outputs=1, name="f")]
    function = helper.make_function(
        "local", "Unused", ["x"], ["a"], body, opset_imports=[helper.make_opsetid("", 13)]
    )
    node = helper.make_node("Relu", ["x"], ["y"])
    model = make_model([node], {"x": (F, [3])}, opset=13, functions=[function])
    (diagnostic,) = check_model(model)
    assert (diagnostic.graph, diagnostic.rule, diagnostic.opset) == (
        "function:local.Unused",
        "attribute",
        13,
    )


def test_diagnostics_are_the_shared_record() -> None:
    assert check_model.__module__ == "splitops.onnx.inference._check"
    assert Diagnostic.__dataclass_fields__.keys() >= {"graph", "node", "rule", "hint"}


def test_the_count_check_gives_is_every_split_node_of_the_model() -> None:
    """``splitops check`` counts the nodes inference checked, not by a second walk: the
    count is that of every Split and SplitToSequence node in the main graph, its subgraphs
    at any depth and every local function (called, uncalled, of two overloads)."""
    from tests.onnx.rewrite.test_scoped_lowering import CASES

    from splitops.onnx import split_nodes
    from splitops.onnx.inference import check_model_counted

    counts = [
        (case.name, check_model_counted(case.model)[1], sum(1 for _ in split_nodes(case.model)))
        for case in CASES
    ]
    assert [c for c in counts if c[1] != c[2]] == []
    assert max(c[2] for c in counts) >= 4
