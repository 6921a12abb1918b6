"""convert_model: every node form moved up and down between opsets keeps its meaning.

Each form is converted to a set of target opsets chosen at the version boundaries. Where the
target can express the node, the converted model must pass onnx's checker at the target,
give outputs identical to the source on splitops.backend, and (from opset 7, where
onnxruntime runs models) identical on onnxruntime too; converting back must give the same
outputs again. Where the spec's version table says the target cannot express the node, the
conversion must stop with a SplitError naming the node, leaving the input model untouched.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import ModelProto, TensorProto, helper, numpy_helper
from tests.malformed_models import _node_with_group
from tests.model_building import with_inferred_outputs

from splitops import ModelCheckWarning, OtherOperatorError, SplitError, backend
from splitops.onnx.model.protobuf import default_opset, split_nodes
from splitops.onnx.rewrite._convert import convert_model

F = TensorProto.FLOAT
TARGETS = [1, 2, 10, 11, 12, 13, 17, 18, 23, 24]


@dataclass(frozen=True)
class Form:
    """A node form: a model at its source opset, inputs for it, and what the spec forbids."""

    name: str
    model: ModelProto
    feeds: dict[str, Any]
    #: target opset -> a phrase the refusal must contain, for targets that cannot express it.
    refused: dict[int, str] = field(default_factory=dict)
    #: whether onnxruntime is an oracle for it: it has no CPU kernels for bfloat16 Split.
    onnxruntime: bool = True
    #: the first target opset where onnxruntime reads the node differently (see the form).
    onnxruntime_differs_from: int = 99


def below(limit: int, phrase: str) -> dict[int, str]:
    return {t: phrase for t in TARGETS if t < limit}


def model_of(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, list[Any]]],
    outputs: list[str],
    opset: int,
    initializers: dict[str, Any] | None = None,
    functions: list[onnx.FunctionProto] | None = None,
    extra: list[tuple[str, int]] | None = None,
) -> ModelProto:
    element, shape = inputs["x"]
    unknown = [None] * len(shape)

    def output(name: str) -> onnx.ValueInfoProto:
        if name.startswith("seq"):
            return helper.make_tensor_sequence_value_info(name, element, unknown)
        return helper.make_tensor_value_info(name, element, unknown)

    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [output(n) for n in outputs],
        initializer=[
            numpy_helper.from_array(np.asarray(v), n) for n, v in (initializers or {}).items()
        ],
    )
    imports = [helper.make_opsetid("", opset)]
    imports += [helper.make_opsetid(d, v) for d, v in extra or []]
    model = helper.make_model(graph, opset_imports=imports, functions=functions or [])
    model.ir_version = 8
    return with_inferred_outputs(model)


def split(inputs: list[str], outputs: list[str], **attributes: Any) -> onnx.NodeProto:
    return helper.make_node("Split", inputs, outputs, name="s", **attributes)


def floats(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def build_forms() -> list[Form]:
    abc = ["a", "b", "c"]
    x26 = {"x": (F, [2, 6])}
    sizes_constant = helper.make_node(
        "Constant", [], ["sizes"], value=numpy_helper.from_array(np.array([1, 2, 3]), "v")
    )
    function = helper.make_function(
        "local",
        "Thirds",
        ["t"],
        ["p", "q"],
        [
            helper.make_node(
                "Constant", [], ["k"], value=numpy_helper.from_array(np.array([2, 4]), "k")
            ),
            helper.make_node("Split", ["t", "k"], ["p", "q"], axis=1, name="inner"),
        ],
        opset_imports=[helper.make_opsetid("", 13)],
    )
    bf16 = np.arange(4, dtype=np.float32).astype(ml_dtypes.bfloat16)
    return [
        Form(
            "split18-num_outputs-even",
            model_of([split(["x"], abc, axis=1, num_outputs=3)], x26, abc, 18),
            {"x": floats(2, 6)},
        ),
        Form(
            "split18-num_outputs-uneven",
            model_of(
                [split(["x"], ["a", "b", "c", "d"], axis=1, num_outputs=4)],
                {"x": (F, [2, 7])},
                ["a", "b", "c", "d"],
                18,
            ),
            {"x": floats(2, 7)},
        ),
        Form(
            "split18-trailing-outputs-omitted",
            model_of([split(["x"], ["a", "b"], num_outputs=4)], {"x": (F, [7])}, ["a", "b"], 18),
            {"x": floats(7)},
            # onnxruntime cuts by the outputs listed (2 parts of 4, 3), not by num_outputs=4
            # as the planner reads the spec; below 18 the node lists all 4 parts and it agrees.
            onnxruntime_differs_from=18,
        ),
        Form(
            "split18-symbolic-batch-static-axis",
            model_of([split(["x"], abc, axis=-1, num_outputs=3)], {"x": (F, ["N", 6])}, abc, 18),
            {"x": floats(3, 6)},
        ),
        Form(
            "split18-symbolic-axis",
            model_of([split(["x"], abc, num_outputs=3)], {"x": (F, ["N"])}, abc, 18),
            {"x": floats(6)},
            below(18, "cannot be known"),
        ),
        Form(
            "split18-sizes-initializer-int32",
            model_of(
                [split(["x", "sizes"], abc, axis=-1)],
                {"x": (TensorProto.INT32, [2, 6])},
                abc,
                18,
                {"sizes": np.array([1, 2, 3])},
            ),
            {"x": np.arange(12, dtype=np.int32).reshape(2, 6)},
            below(2, "does not accept int32"),
        ),
        Form(
            "split13-sizes-constant-node",
            model_of([sizes_constant, split(["x", "sizes"], abc, axis=1)], x26, abc, 13),
            {"x": floats(2, 6)},
        ),
        Form(
            "split13-sizes-graph-input",
            model_of(
                [split(["x", "sizes"], abc, axis=1)],
                {"x": (F, [2, 6]), "sizes": (TensorProto.INT64, [3])},
                abc,
                13,
            ),
            {"x": floats(2, 6), "sizes": np.array([3, 0, 3])},
            below(13, "is not a constant"),
        ),
        Form(
            "split11-attribute-negative-axis",
            model_of([split(["x"], abc, axis=-1, split=[4, 1, 1])], x26, abc, 11),
            {"x": floats(2, 6)},
        ),
        Form(
            "split11-equal-by-outputs-double",
            model_of(
                [helper.make_node("Split", ["x"], abc, name="s")],
                {"x": (TensorProto.DOUBLE, [6, 2])},
                abc,
                11,
            ),
            {"x": np.arange(12, dtype=np.float64).reshape(6, 2)},
        ),
        Form(
            "split2-attribute-float16",
            model_of(
                [split(["x"], ["a", "b"], split=[2, 3])],
                {"x": (TensorProto.FLOAT16, [5])},
                ["a", "b"],
                2,
            ),
            {"x": np.arange(5, dtype=np.float16)},
        ),
        Form(
            "split1-equal",
            model_of([split(["x"], ["a", "b"])], {"x": (F, [4])}, ["a", "b"], 1),
            {"x": floats(4)},
        ),
        Form(
            "split13-strings",
            model_of(
                [split(["x", "sizes"], ["a", "b"])],
                {"x": (TensorProto.STRING, [4])},
                ["a", "b"],
                13,
                {"sizes": np.array([1, 3])},
            ),
            {"x": np.array(["w", "x", "y", "z"], dtype=object)},
            below(2, "does not accept string"),
        ),
        Form(
            "split18-bfloat16",
            model_of(
                [split(["x"], ["a", "b"], num_outputs=2)],
                {"x": (TensorProto.BFLOAT16, [4])},
                ["a", "b"],
                18,
            ),
            {"x": bf16},
            below(13, "does not accept bfloat16"),
            onnxruntime=False,
        ),
        Form(
            "split13-in-function",
            model_of(
                [helper.make_node("Thirds", ["x"], ["p", "q"], domain="local")],
                x26,
                ["p", "q"],
                13,
                functions=[function],
                extra=[("local", 1)],
            ),
            {"x": floats(2, 6)},
        ),
        Form(
            "sequence11-chunk",
            model_of(
                [helper.make_node("SplitToSequence", ["x", "k"], ["seq"], axis=1, name="s")],
                {"x": (F, [2, 5])},
                ["seq"],
                11,
                {"k": np.array(2)},
            ),
            {"x": floats(2, 5)},
            below(11, "does not exist before opset 11"),
        ),
        Form(
            "sequence11-unit-parts-no-keepdims",
            model_of(
                [helper.make_node("SplitToSequence", ["x"], ["seq"], keepdims=0, name="s")],
                {"x": (TensorProto.INT64, [3, 2])},
                ["seq"],
                11,
            ),
            {"x": np.arange(6).reshape(3, 2)},
            below(11, "does not exist before opset 11"),
        ),
        Form(
            "sequence24-bfloat16",
            model_of(
                [helper.make_node("SplitToSequence", ["x"], ["seq"], name="s")],
                {"x": (TensorProto.BFLOAT16, [3])},
                ["seq"],
                24,
            ),
            {"x": bf16[:3]},
            {**below(24, "does not accept bfloat16"), **below(11, "before opset 11")},
            onnxruntime=False,
        ),
    ]


FORMS = build_forms()
EACH_FORM_AND_TARGET = pytest.mark.parametrize(
    ("form", "target"),
    [
        pytest.param(form, target, id=f"{form.name}-to-{target}")
        for form in FORMS
        for target in TARGETS
    ],
)


def run(model: ModelProto, feeds: dict[str, Any]) -> list[Any]:
    return list(backend.prepare(model).run(feeds))


def run_onnxruntime(model: ModelProto, feeds: dict[str, Any]) -> list[Any]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options)
    return list(session.run(None, feeds))


def assert_same(got: list[Any], expected: list[Any]) -> None:
    assert len(got) == len(expected)
    for value, wanted in zip(got, expected, strict=True):
        if isinstance(wanted, list):
            assert_same(list(value), wanted)
            continue
        assert np.asarray(value).dtype == np.asarray(wanted).dtype
        np.testing.assert_array_equal(np.asarray(value), np.asarray(wanted))


@EACH_FORM_AND_TARGET
def test_conversion_keeps_outputs_or_names_what_the_target_cannot_express(
    form: Form, target: int
) -> None:
    source = default_opset(form.model.opset_import)
    assert source is not None
    before = form.model.SerializeToString()
    expected = run(form.model, form.feeds)
    if target in form.refused:
        with pytest.raises(SplitError, match=form.refused[target]) as raised:
            convert_model(form.model, target)
        assert "node 's'" in str(raised.value)
        assert form.model.SerializeToString() == before
        return
    converted = convert_model(form.model, target)
    assert form.model.SerializeToString() == before
    assert default_opset(converted.opset_import) == target
    onnx.checker.check_model(converted)
    assert_same(run(converted, form.feeds), expected)
    if form.onnxruntime and 7 <= target < form.onnxruntime_differs_from:
        assert_same(run_onnxruntime(converted, form.feeds), expected)
    back = convert_model(converted, source)
    assert_same(run(back, form.feeds), expected)


def test_split18_num_outputs_becomes_the_planned_sizes_below_18() -> None:
    form = next(f for f in FORMS if f.name == "split18-num_outputs-uneven")
    node = convert_model(form.model, 11).graph.node[0]
    assert helper.get_attribute_value(node.attribute[1]) == [2, 2, 2, 1]


def test_omitted_trailing_outputs_are_listed_again_below_18() -> None:
    form = next(f for f in FORMS if f.name == "split18-trailing-outputs-omitted")
    node = convert_model(form.model, 13).graph.node[0]
    assert len(node.output) == 4
    assert list(node.output[:2]) == ["a", "b"]


def test_equal_parts_by_output_count_become_num_outputs_at_18_and_back() -> None:
    form = next(f for f in FORMS if f.name == "split11-equal-by-outputs-double")
    up = convert_model(form.model, 18)
    assert [(a.name, a.i) for a in up.graph.node[0].attribute] == [("num_outputs", 3)]
    down = convert_model(up, 11)
    assert list(down.graph.node[0].attribute) == []


def test_a_split_attribute_becomes_an_int64_initializer_and_back() -> None:
    form = next(f for f in FORMS if f.name == "split11-attribute-negative-axis")
    up = convert_model(form.model, 13)
    assert up.graph.node[0].input[1] == "s_split"
    sizes = numpy_helper.to_array(up.graph.initializer[0])
    assert sizes.dtype == np.int64
    assert sizes.tolist() == [4, 1, 1]
    down = convert_model(up, 11)
    assert len(down.graph.node[0].input) == 1
    assert list(down.graph.initializer) == []


def test_a_negative_axis_is_written_from_the_front_below_11() -> None:
    form = next(f for f in FORMS if f.name == "split11-attribute-negative-axis")
    axis = next(a for a in convert_model(form.model, 2).graph.node[0].attribute if a.name == "axis")
    assert axis.i == 1


def test_a_function_body_gets_its_sizes_from_a_constant_node() -> None:
    form = next(f for f in FORMS if f.name == "split13-in-function")
    down = convert_model(form.model, 11)
    body = down.functions[0]
    assert [n.op_type for n in body.node] == ["Split"]
    assert default_opset(body.opset_import) == 11
    up = convert_model(down, 18)
    assert [n.op_type for n in up.functions[0].node] == ["Constant", "Split"]


def if_model(opset: int) -> ModelProto:
    """Split-11 nodes in both branches of an If: sizes by attribute, and equal parts."""
    then = helper.make_graph(
        [split(["x"], ["t1", "t2", "t3"], axis=1, split=[1, 2, 3])],
        "then",
        [],
        [helper.make_tensor_value_info(n, F, [None, None]) for n in ("t1", "t2", "t3")],
    )
    other = helper.make_graph(
        [helper.make_node("Split", ["x"], ["e1", "e2", "e3"], axis=1, name="e")],
        "else",
        [],
        [helper.make_tensor_value_info(n, F, [None, None]) for n in ("e1", "e2", "e3")],
    )
    branch = helper.make_node(
        "If", ["c"], ["o1", "o2", "o3"], then_branch=then, else_branch=other, name="if_1"
    )
    inputs = {"x": (F, [2, 6]), "c": (TensorProto.BOOL, [])}
    return model_of([branch], inputs, ["o1", "o2", "o3"], opset)


@pytest.mark.parametrize("target", [13, 18, 24])
def test_split_nodes_in_subgraphs_are_converted_up(target: int) -> None:
    model = if_model(11)
    converted = convert_model(model, target)
    onnx.checker.check_model(converted)
    nodes = {body.label: node for body, node in split_nodes(converted)}
    assert set(nodes) == {"main/if_1.then_branch", "main/if_1.else_branch"}
    assert len(nodes["main/if_1.then_branch"].input) == 2
    for flag in (True, False):
        feeds = {"x": floats(2, 6), "c": np.array(flag)}
        expected = run(model, feeds)
        assert_same(run(converted, feeds), expected)
        assert_same(run_onnxruntime(converted, feeds), expected)


def test_converting_if_down_stops_where_version_converter_has_no_adapter() -> None:
    # onnx.version_converter has no adapter taking If below the version it is at: the
    # conversion must either be right or stop saying so, never write a half-converted model.
    converted = convert_model(if_model(11), 13)
    feeds = {"x": floats(2, 6), "c": np.array(True)}
    try:
        back = convert_model(converted, 11)
    except OtherOperatorError as error:
        message = str(error)
    else:
        assert_same(run(back, feeds), run(converted, feeds))
        return
    assert "onnx.version_converter could not convert" in message


def test_the_target_opset_must_be_one_onnx_knows() -> None:
    form = FORMS[0]
    for bad in (0, onnx.defs.onnx_opset_version() + 1, True):
        with pytest.raises(SplitError, match="target opset must be an int"):
            convert_model(form.model, bad)


def test_a_broken_node_stops_the_conversion_with_its_name() -> None:
    model = model_of([split(["x"], ["a", "b"], split=[1, 2])], {"x": (F, [4])}, ["a", "b"], 11)
    with pytest.raises(SplitError, match=r"node 's' \(Split\).*sum to 3, but the axis length is 4"):
        convert_model(model, 13)


@pytest.mark.parametrize("target", [11, 13, 18])
def test_equal_parts_broken_at_their_own_version_stop_the_conversion(target: int) -> None:
    # Split-13 cannot cut 4 into 3 equal parts; Split-18's num_outputs=3 would cut 2, 2, 0.
    model = model_of([split(["x"], ["a", "b", "c"])], {"x": (F, [4])}, ["a", "b", "c"], 13)
    with pytest.raises(SplitError, match=r"node 's' \(Split\).*a dim of 4 does not divide into 3"):
        convert_model(model, target)


def test_more_outputs_than_num_outputs_stop_the_conversion_before_onnx_sees_them() -> None:
    # onnx 1.23's shape inference aborts the process on this node: no exception to catch.
    graph = helper.make_graph(
        [split(["x"], ["a", "b", "c"], num_outputs=2)],
        "g",
        [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info(n, F, None) for n in "abc"],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(SplitError, match="has 3 outputs but num_outputs is 2"):
        convert_model(model, 13)


def abs_then_split(opset: int, op: str = "Abs") -> ModelProto:
    parts = {"num_outputs": 2} if opset >= 18 else {}
    return model_of(
        [helper.make_node(op, ["x"], ["y"]), split(["y"], ["a", "b"], **parts)],
        {"x": (F, [4])},
        ["a", "b"],
        opset,
    )


def test_other_operators_whose_schema_is_unchanged_keep_their_nodes() -> None:
    model = abs_then_split(13)
    converted = convert_model(model, 18)
    assert converted.graph.node[0] == model.graph.node[0]
    assert_same(run(converted, {"x": floats(4)}), run(model, {"x": floats(4)}))


def test_other_operators_that_changed_go_through_version_converter() -> None:
    # Add is Add-7 at opset 11 and Add-13 at 13: onnx.version_converter moves it.
    model = abs_then_split(11, "Add")
    model.graph.node[0].input.append("x")
    converted = convert_model(model, 13)
    assert default_opset(converted.opset_import) == 13
    assert [n.domain for n in converted.graph.node] == ["", ""]
    assert_same(run(converted, {"x": floats(4)}), run(model, {"x": floats(4)}))


def test_an_operator_missing_at_the_target_is_reported_as_another_operator() -> None:
    # Mish arrived at opset 18: no converter can take it to 17.
    with pytest.raises(OtherOperatorError, match=r"onnx\.version_converter could not convert"):
        convert_model(abs_then_split(18, "Mish"), 17)


def function_model(op: str, opset: int) -> ModelProto:
    inputs = ["t", "t"] if op == "Add" else ["t"]
    function = helper.make_function(
        "local",
        "F",
        ["t"],
        ["u"],
        [helper.make_node(op, inputs, ["u"])],
        opset_imports=[helper.make_opsetid("", opset)],
    )
    parts = {"num_outputs": 2} if opset >= 18 else {}
    return model_of(
        [helper.make_node("F", ["x"], ["y"], domain="local"), split(["y"], ["a", "b"], **parts)],
        {"x": (F, [4])},
        ["a", "b"],
        opset,
        functions=[function],
        extra=[("local", 1)],
    )


def test_changed_operators_inside_functions_are_converted_too() -> None:
    # version_converter drops model-local functions; their bodies go through it one by one.
    model = function_model("Add", 11)
    converted = convert_model(model, 13)
    assert default_opset(converted.functions[0].opset_import) == 13
    assert_same(run(converted, {"x": floats(4)}), run(model, {"x": floats(4)}))


def test_an_operator_a_function_cannot_keep_is_reported_with_the_function() -> None:
    with pytest.raises(OtherOperatorError, match=r"in function:local\.F to opset 17"):
        convert_model(function_model("Mish", 18), 17)


def test_the_ir_version_is_raised_when_the_target_needs_it() -> None:
    model = abs_then_split(13)
    model.ir_version = 7
    assert convert_model(model, 21).ir_version >= 10


# What onnx.version_converter does with the same forms and targets, as recorded with onnx 1.23.2
# (docs/cli.md has the table). Where it converts at all, its outputs match; it fails
# wherever the target cannot express the node (as splitops refuses), and also for nodes
# splitops converts: it has no adapter taking Split-18 below 18, any Split below Split-11, or
# Split-1 up; and it returns models without their model-local functions, which cannot run.
RECORDED_WITH = "1.23.2"


def recorded_version_converter_outcome(form: Form, source: int, target: int) -> str:
    if target in form.refused:
        return "fails"
    if form.model.functions:
        return "drops functions"
    if (target < source and (target < 11 or source >= 18)) or (source == 1 < target):
        return "fails"
    return "same outputs"


def version_converter_outcome(form: Form, target: int) -> str:
    try:
        theirs = onnx.version_converter.convert_version(form.model, target)
    except Exception:
        return "fails"
    if len(theirs.functions) < len(form.model.functions):
        return "drops functions"
    try:
        assert_same(run(theirs, form.feeds), run(form.model, form.feeds))
    except AssertionError:
        return "different outputs"
    return "same outputs"


@EACH_FORM_AND_TARGET
def test_version_converter_findings_recorded_in_the_docs_still_hold(
    form: Form, target: int
) -> None:
    source = default_opset(form.model.opset_import)
    assert source is not None
    recorded = recorded_version_converter_outcome(form, source, target)
    observed = version_converter_outcome(form, target)
    assert observed == recorded, (
        f"onnx {onnx.__version__} version_converter {observed} on {form.name} {source}->"
        f"{target}; recorded with onnx {RECORDED_WITH}: {recorded}. Update docs/cli.md."
    )


def test_a_split_of_a_large_weight_still_knows_its_axis_length() -> None:
    # Shape inference runs with large initializers as typed inputs: their dims stay known.
    weight = np.arange(2000, dtype=np.float32).reshape(2, 1000)
    model = model_of(
        [helper.make_node("Abs", ["x"], ["y"]), split(["w"], abc3, axis=1, num_outputs=3)],
        {"x": (F, [1])},
        [*abc3, "y"],
        18,
        {"w": weight},
    )
    converted = convert_model(model, 13)
    assert_same(run(converted, {"x": floats(1)}), run(model, {"x": floats(1)}))


abc3 = ["a", "b", "c"]


def test_a_model_onnx_cannot_parse_in_cpp_converts_with_a_warning_not_a_crash() -> None:
    # Python's protobuf keeps an unknown group that onnx's C++ parser refuses; load_model
    # refuses such files, and convert_model given one in memory says what onnx found.
    with pytest.warns(ModelCheckWarning, match="Unable to parse proto"):
        converted = convert_model(_node_with_group(), 13)
    assert [node.op_type for node in converted.graph.node] == ["Split"]


@pytest.mark.parametrize("dim", [5, "N", None], ids=["static", "symbolic", "unknown"])
@pytest.mark.parametrize("split_type", [TensorProto.INT16, TensorProto.FLOAT, TensorProto.UINT8])
@pytest.mark.parametrize("constant", [True, False], ids=["initializer", "graph-input"])
def test_a_sequence_split_of_a_type_the_version_refuses_stops_the_conversion_at_any_length(
    dim: int | str | None, split_type: int, constant: bool
) -> None:
    """SplitToSequence takes its split as int32 or int64, whether or not the axis is known."""
    node = helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=0, name="chunks")
    split = helper.make_tensor_value_info("s", split_type, [2])
    values = np.array([2, 3], dtype=helper.tensor_dtype_to_np_dtype(split_type))
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [dim]), split],
        [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(values, "s")] if constant else [],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with pytest.raises(
        SplitError, match="SplitToSequence-11 takes its split input as int32 or int64"
    ):
        convert_model(model, 11)


def _split18_beside_an_if(declared: list[Any] | None) -> ModelProto:
    """A Split-18 beside an If that holds no Split, every graph output declared as
    ``declared`` (``None``: no shape)."""
    x = helper.make_tensor_value_info("x", F, [4])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    branch = [
        helper.make_graph(
            [helper.make_node(op, ["x"], [name])],
            name,
            [],
            [helper.make_tensor_value_info(name, F, None)],
        )
        for op, name in (("Identity", "t"), ("Neg", "e"))
    ]
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2),
        helper.make_node("If", ["c"], ["y"], then_branch=branch[0], else_branch=branch[1]),
    ]
    outputs = [helper.make_tensor_value_info(name, F, declared) for name in "aby"]
    graph = helper.make_graph(nodes, "g", [x, c], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("target", [19, 21, 24])
def test_version_converter_filling_in_the_outputs_shapes_changes_no_declared_type(
    target: int,
) -> None:
    """onnx's version converter writes the shapes its inference finds into graph outputs
    declared without one; the converted model keeps the author's declarations."""
    model = _split18_beside_an_if(None)
    feeds = {"x": np.arange(4, dtype=np.float32), "c": np.array(False)}
    with warnings.catch_warnings():
        # no shape declared: onnx.checker's complaint, before and after
        warnings.simplefilter("ignore", ModelCheckWarning)
        converted = convert_model(model, target)
        expected = backend.run_model(model, feeds)
        got = backend.run_model(converted, feeds)
    assert [o.SerializeToString() for o in converted.graph.output] == [
        o.SerializeToString() for o in model.graph.output
    ]
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_array_equal(value, want)


def _halves_of(length: int, declared: list[Any] | None) -> ModelProto:
    x = helper.make_tensor_value_info("x", F, [length])
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    outputs = [helper.make_tensor_value_info(name, F, declared) for name in "ab"]
    graph = helper.make_graph([node], "g", [x], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("target", [11, 13, 17, 18, 19, 24])
@pytest.mark.parametrize("length", [2**32, 2**32 + 1])
def test_a_split_on_an_axis_of_2_to_the_32_converts_or_names_onnx_reading(
    target: int, length: int
) -> None:
    """onnx 1.23 reads a Split's axis as 32 bits (2^32 is 0 to it): the contract compares
    splitops' types with onnx's reading of the result only where onnx reads the original
    otherwise, and a Split that onnx's full check refuses for its reading is said to be
    onnx's, not the converter's."""
    model = _halves_of(length, [None])
    if length % 2 and target < 18:  # sizes onnx reads as 32 bits: 2^31 + 1 and 2^31 in 1
        with pytest.raises(OtherOperatorError) as refused:
            convert_model(model, target)
        assert str(refused.value).startswith("onnx.checker's full check refuses the Split node")
        assert "version_converter" not in str(refused.value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelCheckWarning)
        converted = convert_model(model, target)
    (node,) = converted.graph.node
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if target >= 18:
        assert attributes["num_outputs"] == 2
        return
    assert "num_outputs" not in attributes  # equal parts by output count, or the sizes
    sizes = [length - length // 2, length // 2]
    written = [
        *(numpy_helper.to_array(i).tolist() for i in converted.graph.initializer),
        *([attributes["split"]] if "split" in attributes else []),
    ]
    assert written == ([] if length % 2 == 0 else [sizes])
