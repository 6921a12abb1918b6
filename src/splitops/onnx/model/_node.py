"""Split and SplitToSequence nodes, read from ``NodeProto`` exactly as each version's schema says.

:func:`read_node` turns a node into a :class:`SplitNode` without looking at any array: which
attributes it has, where its sizes come from, how many outputs it lists. Execution
(:func:`run_node`), shape inference and the model checker all start from it, and all ask
:meth:`SplitNode.part_sizes` (which asks the planner) for the sizes.

>>> import numpy as np
>>> from onnx import helper
>>> node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3, name="s")
>>> [p.tolist() for p in run_node(node, [np.arange(7)], opset=18)]
[[0, 1, 2], [3, 4, 5], [6]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import array_api_compat
from onnx import AttributeProto, NodeProto, helper

from ...arrays import element_of, host_sizes, split, split_to_sequence
from ...core import (
    INT_ARITHMETIC,
    MAX_PARTS,
    DimArithmetic,
    ElementType,
    OpsetRule,
    PartCount,
    Rule,
    SplitError,
    SplitSource,
    SplitTypeError,
    check_output_count,
    check_split_arguments,
    check_split_input_type,
    normalize_axis,
    opset_rule,
    read_keepdims,
    read_sizes,
    sequence_sizes,
    split_sizes,
)

__all__ = [
    "DEFAULT_DOMAINS",
    "SPLIT_OPS",
    "SplitNode",
    "is_split_node",
    "node_error",
    "node_label",
    "read_node",
    "run_node",
    "run_read_node",
]

#: A dim of the arithmetic a node is planned in (an int, or a symbolic one).
D = TypeVar("D")

#: The names of ONNX's own operator domain.
DEFAULT_DOMAINS = frozenset({"", "ai.onnx"})
#: The operators splitops implements, in the default ONNX domain.
SPLIT_OPS = frozenset({"Split", "SplitToSequence"})
_ATTRIBUTE_TYPES = {
    "axis": AttributeProto.INT,
    "split": AttributeProto.INTS,
    "num_outputs": AttributeProto.INT,
    "keepdims": AttributeProto.INT,
}


@dataclass(frozen=True)
class SplitNode:
    """A Split or SplitToSequence node as its version reads it."""

    label: str
    rule: OpsetRule
    axis: int
    #: Sizes from the ``split`` attribute (Split-1, 2, 11), already read as ints.
    split_attribute: tuple[int, ...] | None
    #: The name of the ``split`` input, when the node has one.
    split_input: str | None
    #: Split-18's ``num_outputs`` attribute.
    num_outputs: int | None
    keepdims: bool
    #: The outputs the node lists (Split: one per part, trailing ones may be omitted at 18).
    outputs: tuple[str, ...]

    @property
    def op(self) -> str:
        return self.rule.op

    @property
    def has_sizes(self) -> bool:
        """Whether the node gives explicit sizes (attribute or input)."""
        return self.split_attribute is not None or self.split_input is not None

    @overload
    def part_sizes(self, dim: int, split_values: object = None) -> tuple[int, ...]: ...

    @overload
    def part_sizes(
        self, dim: D, split_values: object = None, *, arithmetic: DimArithmetic[D]
    ) -> tuple[D | int, ...]: ...

    def part_sizes(
        self, dim: Any, split_values: object = None, *, arithmetic: DimArithmetic[Any] | None = None
    ) -> tuple[Any, ...]:
        """The size of every part for an axis of length ``dim``, output counts checked.

        ``split_values`` is the value of the ``split`` input (host values or an array) when
        the node has one; the attribute is used otherwise. With an ``arithmetic`` (Split only),
        ``dim`` may be a symbol; SplitToSequence's symbolic sizes come from
        :func:`~splitops.core.plan_sequence_parts`, as their number may be unknown.
        """
        opset = self.rule.since_version
        if self.op == "SplitToSequence":
            return sequence_sizes(dim, host_sizes(split_values, self.op, opset), opset=opset)
        listed = len(self.outputs)
        dims = arithmetic or INT_ARITHMETIC
        if self.has_sizes:
            given = self.split_attribute if self.split_input is None else split_values
            sizes = host_sizes(given, self.op, opset)
            return split_sizes(dim, sizes, opset=opset, arithmetic=dims, outputs=listed)
        by_attribute = self.rule.part_count is PartCount.NUM_OUTPUTS
        count = self.num_outputs if by_attribute else listed
        return split_sizes(dim, num_outputs=count, opset=opset, arithmetic=dims, outputs=listed)


def read_node(node: NodeProto, opset: int) -> SplitNode:
    """Read ``node`` by the rules of its version in a model importing ``opset``.

    Raises SplitError (with the node's name and op) for anything the schema forbids:
    unknown attributes, attributes of the wrong type, ``split`` in the wrong place, both
    ``split`` and ``num_outputs``, a wrong number of inputs or outputs.
    """
    try:
        return _read_node(node, opset)
    except SplitError as error:
        raise node_error(node, error) from error


def run_node(node: NodeProto, inputs: Sequence[Any | None], *, opset: int) -> list[Any]:
    """Execute one Split or SplitToSequence node on arrays of any array API library.

    ``inputs`` follow ``node.input``; an input named ``""`` or given as ``None`` is absent.
    Split returns one array per listed output; SplitToSequence returns ``[list_of_arrays]``.

    >>> import numpy as np
    >>> from onnx import helper
    >>> node = helper.make_node("SplitToSequence", ["x", "s"], ["seq"], axis=1)
    >>> [p.shape for p in run_node(node, [np.zeros((2, 5)), np.array(2)], opset=11)[0]]
    [(2, 2), (2, 2), (2, 1)]
    """
    if not isinstance(node, NodeProto):
        raise SplitTypeError(
            f"run_node needs an onnx.NodeProto; {type(node).__name__} was given.",
            rule=Rule.OPERATOR,
        )
    if not isinstance(inputs, (list, tuple)):
        raise SplitTypeError(
            f"run_node takes its inputs as a list or tuple that follows node.input; "
            f"{type(inputs).__name__} was given.",
            rule=Rule.INPUTS,
        )
    return run_read_node(node, read_node(node, opset), inputs)


def run_read_node(node: NodeProto, spec: SplitNode, inputs: Sequence[Any | None]) -> list[Any]:
    """:func:`run_node` for a node already read: ``spec`` is ``read_node(node, opset)``.

    Callers that run one node many times (the body of a Loop) read it once.
    """
    try:
        return _run(spec, inputs)
    except SplitError as error:
        raise node_error(node, error) from error


def is_split_node(node: NodeProto) -> bool:
    """Whether ``node`` is a Split or SplitToSequence of ONNX's own domain."""
    return node.op_type in SPLIT_OPS and node.domain in DEFAULT_DOMAINS


def node_label(node: NodeProto) -> str:
    """A node's name, or its first output's name when it has none, or ``<unnamed>``.

    >>> from onnx import helper
    >>> node_label(helper.make_node("Split", ["x"], ["a", "b"])), node_label(NodeProto())
    ('a', '<unnamed>')
    """
    return node.name or (node.output[0] if node.output else "<unnamed>")


def node_error(node: NodeProto, error: SplitError) -> SplitError:
    """``error`` again, of the same class, rule and hint, with the node's name and op in front."""
    return error.in_context(f"node {node_label(node)!r} ({node.op_type}): ")


def _run(spec: SplitNode, inputs: Sequence[Any | None]) -> list[Any]:
    if not inputs or inputs[0] is None:
        raise SplitError(
            f"{spec.rule.name} needs its input tensor; none was given.", rule=Rule.INPUTS
        )
    x = inputs[0]
    for role, value in (("input tensor", x), ("split input", _at(inputs, 1))):
        if value is not None and not array_api_compat.is_array_api_obj(value):
            raise SplitTypeError(
                f"{spec.rule.name} takes its {role} as an array (numpy, torch, ...); "
                f"{type(value).__name__} was given.",
                rule=Rule.INPUTS,
            )
    split_value = None
    if spec.split_input is not None:
        split_value = inputs[1] if len(inputs) > 1 else None
        if split_value is None:
            raise SplitError(
                f"{spec.rule.name} names the split input {spec.split_input!r} but no value "
                "was given for it.",
                rule=Rule.INPUTS,
            )
        input_element = element_of(getattr(x, "dtype", None))
        check_split_input_type(
            element_of(getattr(split_value, "dtype", None)),
            input_element if isinstance(input_element, ElementType) else None,
            spec.rule,
        )
    opset = spec.rule.since_version
    if spec.op == "SplitToSequence":
        return [
            split_to_sequence(x, split_value, axis=spec.axis, keepdims=spec.keepdims, opset=opset)
        ]
    axis = normalize_axis(spec.axis, len(getattr(x, "shape", ())), spec.rule.name)
    sizes = spec.part_sizes(x.shape[axis], split_value)
    parts = split(x, sizes, axis=axis, opset=opset)
    return list(parts[: len(spec.outputs)])


def _at(inputs: Sequence[Any | None], index: int) -> Any | None:
    return inputs[index] if len(inputs) > index else None


def _attribute(node: NodeProto, rule: OpsetRule) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for attribute in node.attribute:
        name = attribute.name
        if name in values:
            # Protobuf would keep both and helpers would read the last: one meaning only.
            raise SplitError(
                f"{rule.name} node gives the attribute {name!r} twice.",
                rule=Rule.ATTRIBUTE,
                hint="Keep one of them.",
            )
        if name not in rule.attributes:
            raise SplitError(
                f"{rule.name} has no attribute {name!r}; it takes "
                f"{', '.join(sorted(rule.attributes))}.",
                rule=Rule.ATTRIBUTE,
            )
        if attribute.ref_attr_name:
            raise SplitError(
                f"{rule.name} attribute {name!r} refers to the function attribute "
                f"{attribute.ref_attr_name!r}.",
                rule=Rule.ATTRIBUTE,
                hint="Resolve it before reading the node.",
            )
        if attribute.type != _ATTRIBUTE_TYPES[name]:
            raise SplitTypeError(
                f"{rule.name} attribute {name!r} must be "
                f"{AttributeProto.AttributeType.Name(_ATTRIBUTE_TYPES[name])}; "
                f"{AttributeProto.AttributeType.Name(attribute.type)} was given.",
                rule=Rule.ATTRIBUTE_TYPE,
            )
        values[name] = helper.get_attribute_value(attribute)
    return values


def _read_node(node: NodeProto, opset: int) -> SplitNode:
    if not is_split_node(node):
        raise SplitError(
            f"splitops runs Split and SplitToSequence of the default domain; "
            f"{node.domain or 'ai.onnx'}.{node.op_type} was given.",
            rule=Rule.OPERATOR,
        )
    rule = opset_rule(node.op_type, opset)
    attributes = _attribute(node, rule)
    if not 1 <= len(node.input) <= 2 or node.input[0] == "":
        raise SplitError(
            f"{rule.name} takes the input tensor and an optional split input; the node has "
            f"inputs {list(node.input)}.",
            rule=Rule.INPUTS,
        )
    split_input = node.input[1] if len(node.input) == 2 and node.input[1] else None
    if split_input is not None and SplitSource.INPUT not in rule.split_sources:
        raise SplitError(
            f"{rule.name} takes split as an attribute, not as an input; the node has the split "
            f"input {split_input!r}.",
            rule=Rule.SPLIT_SOURCE,
            hint="Use the attribute, or convert the node to opset 13.",
        )
    split_attribute = None
    if "split" in attributes:
        if split_input is not None:
            raise SplitError(
                f"{rule.name} takes split from the attribute or from the second input, not both; "
                f"the node has split={list(attributes['split'])} and the input {split_input!r}.",
                rule=Rule.SPLIT_SOURCE,
            )
        sizes = read_sizes(attributes["split"], rule, allow_scalar=False)
        split_attribute = sizes if isinstance(sizes, tuple) else None
    given = None if split_input is None else f"the split input {split_input!r}"
    check_split_arguments(rule, given, attributes.get("num_outputs"))
    outputs = tuple(node.output)
    if rule.op == "SplitToSequence" and len(outputs) != 1:
        raise SplitError(
            f"{rule.name} has one output, a sequence; the node lists {len(outputs)}.",
            rule=Rule.OUTPUTS,
        )
    if len(outputs) > MAX_PARTS:
        raise SplitError(f"{rule.name} allows at most {MAX_PARTS} outputs.", rule=Rule.OUTPUTS)
    num_outputs = attributes.get("num_outputs")
    if rule.part_count is PartCount.NUM_OUTPUTS and num_outputs is not None and num_outputs >= 1:
        # More outputs than num_outputs is known before the axis length: every tool refuses
        # such a node before onnx sees it (onnx 1.23's shape inference aborts the process on
        # it). num_outputs below 1 is the planner's to refuse.
        check_output_count(range(num_outputs), len(outputs), rule, by_num_outputs=True)
    return SplitNode(
        label=node_label(node),
        rule=rule,
        axis=int(attributes.get("axis", 0)),
        split_attribute=split_attribute,
        split_input=split_input,
        num_outputs=num_outputs,
        keepdims=read_keepdims(attributes.get("keepdims", 1)),
        outputs=outputs,
    )
