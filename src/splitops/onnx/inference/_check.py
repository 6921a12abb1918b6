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

from ...core import Rule, SplitError, is_default_split, opset_rule, require_argument
from ..model import ModelView, Node, SplitSite
from ..model.protobuf import operator_schema
from ._diagnostics import Diagnostic
from ._engine import SplitNodeInference, infer_split_nodes

__all__ = ["check_model", "check_model_counted"]


def check_model(model: ModelProto) -> list[Diagnostic]:
    """One :class:`Diagnostic` per problem of every Split and SplitToSequence node, in the
    main graph, subgraphs and local functions, then the warnings (:func:`departures`);
    ``[]`` for a clean model.

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
    return found + departures(model, records), len(records)


def departures(model: ModelProto, records: list[SplitNodeInference]) -> list[Diagnostic]:
    """The warnings: where a valid SplitToSequence, or a SequenceAt reading its sequence,
    departs from the spec's letter in a way runtimes read two ways. Only the scopes of such
    nodes are read (through a view of ``model``)."""
    sequences = [r for r in records if r.op_type == "SplitToSequence" and not r.problems]
    if not sequences:
        return []
    view = ModelView.read(model)
    found = []
    for record in sequences:
        scope = view.scope(record.scope)
        if scope is None or scope.opset is None:
            continue
        node = scope.nodes[record.index]
        site = SplitSite.read(node)
        if site.drops_axis and site.spec.split_input is not None:
            assert is_default_split(site.split_value)
            found.append(
                _warning(
                    node,
                    record.opset,
                    Rule.DEFAULT_SPLIT,
                    f"its split is the scalar 1 with keepdims=0 (torch's unbind): the scalar "
                    f"1 is the default split, so its parts lose axis {site.axis}, as "
                    "onnxruntime and torch read it; onnx.reference and TVM keep the axis",
                )
            )
        sequence = node.output(0)
        for usage in () if sequence is None else sequence.uses:
            reader = usage.node
            position = reader.input_value(1) if reader.is_op("SequenceAt") else None
            value = None if position is None or usage.index else position.constant()
            if value is not None and value.shape == (1,):
                found.append(
                    _warning(
                        reader,
                        reader.scope.opset or 0,
                        Rule.POSITION_SHAPE,
                        f"its position is a constant of shape [1] ({value.tolist()}), where "
                        f"the spec takes a 0-d tensor: onnxruntime and splitops read it as "
                        f"position {int(value[0])}, onnx.reference fails",
                    )
                )
    return found


def _warning(node: Node, opset: int, rule: Rule, message: str) -> Diagnostic:
    schema = operator_schema(node.op_type, opset)
    version = opset if schema is None else schema.since_version
    return Diagnostic(
        graph=node.scope.label,
        node=node.label,
        op=node.op_type,
        opset=version,
        rule=rule.id,
        message=message,
        hint=rule.hint,
        severity="warning",
    )


def _diagnostic(record: SplitNodeInference, error: SplitError) -> Diagnostic:
    op = record.op_type
    try:
        opset = opset_rule(op, record.opset).since_version
    except SplitError:
        opset = record.opset
    return Diagnostic(
        graph=record.graph,
        node=record.label,
        op=op,
        opset=opset,
        rule=error.rule.id,
        message=error.message.rstrip(".;:"),
        hint=error.hint,
    )
