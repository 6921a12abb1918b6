"""Every rule a model's Split and SplitToSequence nodes break, as :class:`Diagnostic` rows.

The checks are those of execution and inference: each node is read by its version's
schema (:func:`~splitops.onnx_node.read_node`) and inferred from the types and constants
around it (:func:`~splitops.shape_inference.infer_split_nodes`), so sizes are checked by
the planner wherever shapes and constants decide them. This module only names the broken
rule (the one each error carries) and separates the hint from the message.

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

from onnx import ModelProto

from .diagnostics import Diagnostic
from .errors import SplitError
from .opset_rules import opset_rule
from .shape_inference import SplitNodeInference, infer_split_nodes

__all__ = ["RULE_IDS", "check_model"]


_VERSIONS = "Check the node against its version's schema, or convert it to the model's opset"

#: The hint for each rule a Diagnostic may name, when the error's message carries none. The
#: rule is the one the error names where it is raised (:attr:`SplitError.rule`).
_HINTS = {
    "opset": "Import a later default opset",
    "attribute": _VERSIONS,
    "attribute-type": "Give the attribute its type",
    "keepdims": "Set keepdims to 0 or 1",
    "inputs": "Give the input tensor first",
    "split-source": _VERSIONS,
    "split-or-num_outputs": "Give either the split input or num_outputs",
    "outputs": "Fix the outputs",
    "rank": "Reshape the input to rank 1 or more",
    "axis": "Pick an axis within the input's rank",
    "num_outputs": "Pass explicit sizes",
    "equal-parts": "Pass explicit sizes",
    "output-count": "Give one output per part",
    "split-chunk": "Pass a chunk length >= 1",
    "split-negative": "Make every size >= 0",
    "split-sum": "Make the sizes add up to the axis length",
    "split-empty": "Give at least one size",
    "split-shape": "Give split as a 1-d list",
    "split-type": "Give the sizes as integers",
    "dtype": "Use a later opset or cast the input",
    "split-dtype": "Cast the split tensor to the version's type",
}

#: Every rule id a Diagnostic may carry: an error naming no rule of :data:`_HINTS` is
#: named by the check that found it ("schema", "sizes", ...).
RULE_IDS = frozenset(_HINTS) | {"schema", "sizes"}

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
    rule = error.rule if error.rule in _HINTS else stage
    found = _HINT.match(text)
    message, hint = (found["message"], found["hint"]) if found else (text, "")
    return Diagnostic(
        graph=record.graph,
        node=record.label,
        op=node.op_type,
        opset=opset,
        rule=rule,
        message=message.rstrip(".;:"),
        hint=(hint or _HINTS.get(rule, "")).rstrip("."),
    )
