"""Every rule a model's Split and SplitToSequence nodes break, as :class:`Diagnostic` rows.

The checks are those of execution and inference: each node is read by its version's
schema (:func:`~splitops.onnx_node.read_node`) and inferred from the types and constants
around it (:func:`~splitops.shape_inference.infer_split_nodes`), so sizes are checked by
the planner wherever shapes and constants decide them. This module only names the broken
rule and separates the hint from the message.

>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Split", ["x"], ["a", "b", "c", "d"], num_outputs=4, name="s")], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abcd"])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> for diagnostic in check_model(model):
...     print(diagnostic)
main/s (Split-18) [num_outputs]: Split-18 cannot split a dim of 5 into 4 parts: ... Hint: Pass ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from onnx import ModelProto

from .diagnostics import Diagnostic
from .errors import SplitError
from .opset_rules import opset_rule
from .shape_inference import SplitNodeInference, infer_split_nodes

__all__ = ["RULE_IDS", "check_model"]


@dataclass(frozen=True)
class _Rule:
    #: The short id a Diagnostic carries.
    id: str
    #: The check of shape inference that finds it.
    stage: str
    #: What the error's message says when this rule is broken.
    pattern: re.Pattern[str]
    #: The hint when the message carries none.
    hint: str


def _rule(id_: str, stage: str, pattern: str, hint: str) -> _Rule:
    return _Rule(id_, stage, re.compile(pattern), hint)


_VERSIONS = "Check the node against its version's schema, or convert it to the model's opset"

#: The rules, in the order they are tried; the first whose stage and pattern match names
#: the problem. A problem no pattern matches keeps its stage as its rule.
_RULES = (
    _rule("opset", "schema", r"does not exist before opset", "Import a later default opset"),
    _rule("attribute", "schema", r"has no attribute|refers to the function attribute", _VERSIONS),
    _rule("attribute-type", "schema", r"attribute '\w+' must be", "Give the attribute its type"),
    _rule("keepdims", "schema", r"keepdims must be", "Set keepdims to 0 or 1"),
    _rule("inputs", "schema", r"optional split input", "Give the input tensor first"),
    _rule(
        "split-source",
        "schema",
        r"takes split as an attribute|takes split from the attribute",
        _VERSIONS,
    ),
    _rule(
        "split-or-num_outputs",
        r"schema|sizes",
        r"num_outputs attribute, not both|neither was given",
        "Give either the split input or num_outputs",
    ),
    _rule("outputs", "schema", r"one output, a sequence|at most \d+ outputs", "Fix the outputs"),
    _rule("rank", "axis", r"rank >= 1", "Reshape the input to rank 1 or more"),
    _rule("axis", "axis", r"", "Pick an axis within the input's rank"),
    _rule(
        "num_outputs", "sizes", r"num_outputs must lie|cannot split a dim", "Pass explicit sizes"
    ),
    _rule("equal-parts", "sizes", r"cuts equal parts", "Pass explicit sizes"),
    _rule(
        "output-count",
        "sizes",
        r"outputs but|at least one output|needs the number of outputs",
        "Give one output per part",
    ),
    _rule("split-chunk", "sizes", r"chunk length\) must be", "Pass a chunk length >= 1"),
    _rule("split-negative", "sizes", r"must be >= 0", "Make every size >= 0"),
    _rule("split-sum", "sizes", r"sum to", "Make the sizes add up to the axis length"),
    _rule("split-empty", "sizes", r"at least one size", "Give at least one size"),
    _rule("split-shape", "sizes", r"1-d list of sizes|scalar or 1-d", "Give split as a 1-d list"),
    _rule(
        "split-type",
        "sizes",
        r"must be integers|whole numbers|sequence of ints",
        "Give the sizes as integers",
    ),
    _rule("dtype", "dtype", r"", "Use a later opset or cast the input"),
    _rule("split-dtype", "split-dtype", r"", "Cast the split tensor to the version's type"),
)

#: Every rule id a Diagnostic may carry (the stages are the ids of unmatched problems).
RULE_IDS = frozenset({rule.id for rule in _RULES} | {"schema", "sizes"})

#: A hint inside an error message: a sentence in the imperative after the description.
_HINT = re.compile(
    r"^(?P<message>.*?[.;:])\s+(?P<hint>(?:Pass|Use|Cast|Give|Drop|Raise|Reshape|Resolve|"
    r"Flatten|Convert|Import|Remove|Make|Set)\b.*)$",
    re.DOTALL,
)


def check_model(model: ModelProto) -> list[Diagnostic]:
    """One :class:`Diagnostic` per problem of every Split and SplitToSequence node, in the
    main graph, subgraphs and local functions; ``[]`` for a clean model.

    A node inside a local function is checked at each call site, with the types the call
    gives it.
    """
    return [
        _diagnostic(record, stage, error)
        for record in infer_split_nodes(model)
        for stage, error in record.problems
    ]


def _diagnostic(record: SplitNodeInference, stage: str, error: SplitError) -> Diagnostic:
    node = record.node
    try:
        opset = opset_rule(node.op_type, record.opset).since_version
    except SplitError:
        opset = record.opset
    text = str(error)
    rule = next(
        (r for r in _RULES if re.fullmatch(r.stage, stage) and r.pattern.search(text)), None
    )
    found = _HINT.match(text)
    message, hint = (found["message"], found["hint"]) if found else (text, "")
    return Diagnostic(
        graph=record.graph,
        node=record.label,
        op=node.op_type,
        opset=opset,
        rule=stage if rule is None else rule.id,
        message=message.rstrip(".;:"),
        hint=(hint or ("" if rule is None else rule.hint)).rstrip("."),
    )
