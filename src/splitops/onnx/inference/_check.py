"""Every rule a model's Split and SplitToSequence nodes break, as :class:`Diagnostic` rows.

The checks are those of execution and inference: each node is read by its version's
schema (:func:`~splitops.onnx.model._node.read_node`) and inferred from the types and constants
around it (:func:`~splitops.onnx.inference._engine.infer_split_nodes`), so sizes are checked by
the planner wherever shapes and constants decide them. Each row takes the rule, the message
and the hint from the error that found the problem: they travel on the error as data.

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

from onnx import ModelProto

from ...core import SplitError, opset_rule, require_argument
from ._diagnostics import Diagnostic
from ._engine import SplitNodeInference, infer_split_nodes

__all__ = ["check_model", "check_model_counted"]


def check_model(model: ModelProto) -> list[Diagnostic]:
    """One :class:`Diagnostic` per problem of every Split and SplitToSequence node, in the
    main graph, subgraphs and local functions; ``[]`` for a clean model.

    A node inside a local function is checked at each call site, with the types the call
    gives it.
    """
    require_argument(model, ModelProto, "check_model", "an onnx.ModelProto")
    return check_model_counted(model)[0]


def check_model_counted(model: ModelProto) -> tuple[list[Diagnostic], int]:
    """:func:`check_model`, and how many Split and SplitToSequence nodes it checked (each
    node once, a function's at all its calls together): the count the pass found, with no
    second walk of the model.
    """
    records = infer_split_nodes(model)
    found = [_diagnostic(record, error) for record in records for _, error in record.problems]
    return found, len(records)


def _diagnostic(record: SplitNodeInference, error: SplitError) -> Diagnostic:
    node = record.node
    try:
        opset = opset_rule(node.op_type, record.opset).since_version
    except SplitError:
        opset = record.opset
    return Diagnostic(
        graph=record.graph,
        node=record.label,
        op=node.op_type,
        opset=opset,
        rule=error.rule.id,
        message=error.message.rstrip(".;:"),
        hint=error.hint,
    )
