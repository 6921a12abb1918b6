"""Move a model's Split and SplitToSequence nodes to another opset version, up or down.

Each node is rewritten for the target version's rules: ``split`` moves between attribute
(Split-1/2/11) and input (Split-13/18, an int64 initializer, or a Constant node inside a
function); Split-18's ``num_outputs`` becomes explicit sizes (or equal parts by output count)
when the axis length is static, and equal parts by output count become ``num_outputs`` going
up. The sizes always come from the planner, through :meth:`SplitNode.part_sizes`. A node the
target cannot express stops the conversion with a :class:`~splitops.SplitError` naming it.

Other operators are left to ``onnx.version_converter``, and only when their schema differs
between the two opsets; when it fails, :class:`~splitops.OtherOperatorError` says so.

>>> from onnx import TensorProto, helper
>>> def model(x_shape):
...     node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3, name="s")
...     x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
...     outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, None]) for n in "abc"]
...     graph = helper.make_graph([node], "g", [x], outputs)
...     return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> old = convert_model(model([2, 7]), 11)
>>> helper.get_attribute_value(old.graph.node[0].attribute[1])
[3, 3, 1]
>>> convert_model(model([2, "N"]), 11)
Traceback (most recent call last):
...
splitops.SplitError: main: node 's' (Split): Split-18 num_outputs=3 cuts an axis whose ...
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import onnx
from onnx import ModelProto, NodeProto, helper

from ...core import (
    UNKNOWN_LENGTH,
    ModelCheckWarning,
    OtherOperatorError,
    PartCount,
    Rule,
    SplitError,
    SplitSource,
    SplitTypeError,
    check_element_type,
    check_split_input_type,
    opset_rule,
    plan_sequence_parts,
    require_argument,
    split_sizes,
    warn_caller,
)
from ..inference import infer_model_and_nodes
from ..model import (
    DEFAULT_DOMAINS,
    ModelEdits,
    ModelView,
    Scope,
    SplitNode,
    SplitSite,
    TensorType,
    ValueType,
    node_error,
    read_node,
    types_only,
    write_split_sizes,
)
from ..model.protobuf import (
    copy_over,
    element_of_code,
    has_attribute,
    keep_attributes,
    model_graphs,
    operator_schema,
    remove_where,
    rewrite_body,
    set_attributes,
    set_default_opset,
    split_nodes,
)
from ._contract import check_fully, check_rewrite
from ._rewrite import Rewrite

__all__ = ["convert_model"]

#: The domain that stands in for Split nodes while onnx.version_converter handles the rest.
_PENDING_DOMAIN = "splitops.pending"


def convert_model(model: ModelProto, opset: int) -> ModelProto:
    """A copy of ``model`` for ``opset``, every Split and SplitToSequence node rewritten.

    >>> from onnx import TensorProto, helper
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Split", ["x"], ["a", "b"], split=[1, 3])], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    ...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None]) for n in "ab"])
    >>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    >>> new = convert_model(model, 13)
    >>> list(new.graph.node[0].input), onnx.numpy_helper.to_array(new.graph.initializer[0])
    (['x', 'a_split'], array([1, 3]))
    """
    require_argument(model, ModelProto, "convert_model", "an onnx.ModelProto")
    target = _check_target(opset)
    if ModelView.read(model).main.opset is None:
        raise SplitError(
            "the model imports no opset of the default ONNX domain, so the version its Split "
            "nodes follow is unknown.",
            rule=Rule.OPSET,
            hint="Add an opset import for the domain ''.",
        )
    return _Convert(target)(model)


class _Convert(Rewrite):
    """The conversion to opset ``target`` as a
    :class:`~splitops.onnx.rewrite._rewrite.Rewrite`."""

    what = "conversion"

    def __init__(self, target: int) -> None:
        self.target = target

    def requires(self, model: ModelProto) -> None:
        super().requires(model)
        # Every node is read at its own opset before onnx's inference sees the model: onnx
        # 1.23 aborts the process on a Split-18 listing more outputs than num_outputs.
        for scope, node in split_nodes(model):
            _read_source(scope, node)

    def types(self, model: ModelProto) -> ModelProto:
        return _infer_types(model)

    def plan(self, view: ModelView, edits: ModelEdits) -> None:
        for node in view.split_nodes():
            nodes, dropped_input = _rewrite(SplitSite.read(node), self.target, edits)
            edits.replace(node, nodes)
            if dropped_input is not None:
                edits.drop(node.scope.value(dropped_input))

    def finish(self, model: ModelProto) -> None:
        _convert_other_ops(model, self.target)
        for _, node in split_nodes(model):
            read_node(node, self.target)

    def ensures(
        self, original: ModelProto, result: ModelProto, view: ModelView, edits: ModelEdits
    ) -> None:
        _check_converted(original, result, self.target)
        check_rewrite(original, result, self.what, before=view, edits=edits, full_check=False)


def _check_converted(model: ModelProto, converted: ModelProto, target: int) -> None:
    """OtherOperatorError unless ``converted`` passes onnx.checker's full check (shape
    inference included): onnx.version_converter sometimes writes a node the target does not
    accept (ReduceMean-18's ``noop_with_empty_axes`` kept on ReduceMean-13, in onnx 1.23).

    A problem the model had before conversion (a graph output declared without a shape, say)
    is a :class:`~splitops.ModelCheckWarning`, not a refusal: onnxruntime and onnx.reference
    run such models, and so does :mod:`splitops.backend`; the conversion did not cause it.
    """
    problem = check_fully(converted)
    if problem is None:
        return
    if check_fully(model) == problem:
        warn_caller(
            f"onnx.checker (full check) finds this before and after conversion: {problem}",
            ModelCheckWarning,
        )
        return
    found = re.search(r"OpType: (\S+)|op_type:(\w+)", problem)
    op = (found[1] or found[2]) if found else None
    if op in ("Split", "SplitToSequence"):
        # splitops wrote this node by the spec; onnx's inference reads it otherwise (onnx
        # 1.23 reads a Split's axis length as a 32-bit number, so that 2^32 + 1 is 1).
        raise OtherOperatorError(
            f"onnx.checker's full check refuses the {op} node that opset {target} needs here, "
            "though it says what the original does: onnx's shape inference reads the node "
            "otherwise than the spec (onnx 1.23 reads an axis of 2^31 or more as a 32-bit "
            f"number), so the converted model is not written: {problem}."
        )
    culprit = f"a {op} node" if op else "a node"
    raise OtherOperatorError(
        f"onnx.version_converter left {culprit} that opset {target} does not accept (a defect "
        f"of onnx's converter), so the converted model is not written: {problem}."
    )


#: A node's new form: the nodes in its place, and the former split input it no longer reads.
_Rewrite = tuple[list[NodeProto], "str | None"]


def _infer_types(model: ModelProto) -> ModelProto:
    """``model`` typed by splitops' inference, the one that lowering, the checker and the
    portability probes read (onnx's own pass misreads some models: at IR 3 it ignores an
    initializer that is not listed as an input); ``model``'s own types where another
    operator fails that inference, for conversion leaves other operators as they are."""
    light = types_only(model)
    try:
        return infer_model_and_nodes(light)[0]
    except OtherOperatorError:
        return light


def _equal_parts_give(sizes: tuple[int, ...], dim: int, outputs: int, target: int) -> bool:
    """Whether the target's equal parts by output count (no sizes) cut exactly ``sizes``."""
    try:
        return split_sizes(dim, num_outputs=outputs, opset=min(target, 17)) == sizes
    except SplitError:
        return False


def _check_target(opset: object) -> int:
    newest = onnx.defs.onnx_opset_version()
    if isinstance(opset, bool) or not isinstance(opset, int):
        raise SplitTypeError(
            f"the target opset must be an int; {opset!r} was given.", rule=Rule.OPSET
        )
    if not 1 <= opset <= newest:
        raise SplitError(
            f"the target opset must be an int from 1 to {newest} (the newest this onnx "
            f"knows); {opset!r} was given.",
            rule=Rule.OPSET,
        )
    return opset


@contextmanager
def _at(scope: Scope, node: NodeProto) -> Iterator[None]:
    """A SplitError raised inside, told as one of ``node`` in ``scope``."""
    try:
        yield
    except SplitError as error:
        raise node_error(node, error).in_context(f"{scope.label}: ") from error


def _read_source(scope: Scope, node: NodeProto) -> SplitNode:
    """``node`` read at the opset of its scope, or the SplitError of what is wrong with it."""
    if scope.opset is None:
        raise SplitError(
            f"{scope.label} imports no opset of the default ONNX domain.", rule=Rule.OPSET
        )
    with _at(scope, node):
        return read_node(node, scope.opset)


def _rewrite(site: SplitSite[Scope], target: int, edits: ModelEdits) -> _Rewrite:
    try:
        element = site.element
        if site.spec.op == "SplitToSequence":
            rule = opset_rule("SplitToSequence", target)
            if element is not None:
                check_element_type(element_of_code(element), rule)
            # The split's type, whether or not the axis length is known.
            if site.split_element is not None:
                check_split_input_type(element_of_code(site.split_element), None, site.spec.rule)
            if site.length is not None:
                site.part_sizes()  # a SplitError where the spec rejects them
            else:
                _check_sequence_split(site)
            return [site.proto], None
        return _rewrite_split(site, target, edits, element)
    except SplitError as error:
        raise site.error(error) from error


def _check_sequence_split(site: SplitSite[Scope]) -> None:
    """A SplitToSequence's constant split on an axis of unknown length, checked as execution
    would check it: a node broken at its own opset stops the conversion, as a chunk length
    of 0, which kills onnxruntime 1.31, must. (On a static axis, its part sizes check it.)"""
    plan_sequence_parts(None, site.split_value, site.spec.rule, UNKNOWN_LENGTH)


def _rewrite_split(
    site: SplitSite[Scope], target: int, edits: ModelEdits, element: int | None
) -> _Rewrite:
    rule = opset_rule("Split", target)
    if element is not None:
        check_element_type(element_of_code(element), rule)
    scope, node, spec = site.scope, site.proto, site.spec
    axis, dim, sizes = site.axis, site.length, site.given_sizes
    outputs = list(spec.outputs)
    # The node's own sizes, checked at its own version: a node broken there stops the
    # conversion (equal parts of 4 into 3 at Split-13 must not become 2, 2, 0 at Split-18).
    planned = site.part_sizes()

    new = NodeProto()
    new.CopyFrom(node)
    del new.input[1:]
    keep_attributes(new, ())
    del new.output[:]
    if has_attribute(node, "axis") or axis != spec.axis:
        # Split-1 and 2 document axis >= 0: a negative axis is written from the front there.
        set_attributes(new, axis=axis if target < 11 else spec.axis)

    if not spec.has_sizes and spec.rule.part_count is rule.part_count:
        # Equal parts by output count (before 18), or num_outputs (18 and later): unchanged.
        if spec.num_outputs is not None:
            set_attributes(new, num_outputs=spec.num_outputs)
        new.output.extend(outputs)
        return [new], None
    if not spec.has_sizes and rule.part_count is PartCount.NUM_OUTPUTS:
        set_attributes(new, num_outputs=len(outputs))
        new.output.extend(outputs)
        return [new], None
    if not spec.has_sizes:
        # Split-18's num_outputs going below 18: the sizes must be known to be written down.
        if dim is None or planned is None:
            raise SplitError(
                f"{spec.rule.name} num_outputs={spec.num_outputs} cuts an axis whose length is "
                f"{_dim_text(scope.type_of(site.data), axis)}, not a static number, "
                f"so the part sizes cannot be known; {rule.name} needs explicit sizes or equal "
                "parts by output count.",
                rule=Rule.CONVERSION,
                hint="Give that axis a static length, or keep opset >= 18.",
            )
        sizes = planned
        if _equal_parts_give(sizes, dim, len(outputs), target):
            new.output.extend(outputs)
            return [new], None
        outputs += [edits.view.fresh_name(f"{spec.label}_unused") for _ in sizes[len(outputs) :]]
    new.output.extend(outputs)
    return _write_sizes(new, scope, spec, target, sizes, edits)


def _write_sizes(
    new: NodeProto,
    scope: Scope,
    spec: SplitNode,
    target: int,
    sizes: tuple[int, ...] | None,
    edits: ModelEdits,
) -> _Rewrite:
    rule = opset_rule("Split", target)
    if SplitSource.ATTRIBUTE not in rule.split_sources and (
        spec.split_input is not None and spec.rule.split_input_types is not None
    ):
        # Already an int64 input (Split-13 or 18): the node keeps reading it.
        new.input.append(spec.split_input)
        return [new], None
    if sizes is None:
        if SplitSource.ATTRIBUTE in rule.split_sources:
            raise SplitError(
                f"{rule.name} takes split as an attribute, and the split input "
                f"{spec.split_input!r} is not a constant (an initializer or a Constant node), "
                "so its values cannot move into the attribute.",
                rule=Rule.CONVERSION,
                hint="Keep opset >= 13, or make the sizes a constant.",
            )
        raise SplitError(
            f"{rule.name} takes split as an int64 input, and the split input "
            f"{spec.split_input!r} (typed like the data at {spec.rule.name}) is not a constant "
            "whose values could be rewritten as int64.",
            rule=Rule.CONVERSION,
            hint="Make the sizes a constant.",
        )
    constants = write_split_sizes(new, scope, target, sizes, edits, spec.label)
    return [*constants, new], spec.split_input


def _dim_text(found: ValueType | None, axis: int) -> str:
    if not isinstance(found, TensorType) or found.dims is None:
        return "unknown (the input's shape is not known)"
    dim = found.dims[axis]
    return f"the symbol {dim!r}" if isinstance(dim, str) else "unknown"


def _convert_other_ops(model: ModelProto, target: int) -> None:
    """The operators other than Split in ``model`` converted to opset ``target`` by
    onnx.version_converter, in each function body and the main graph where one of their
    nodes (or one in a graph below) has another schema there; the opsets set to
    ``target``. The main graph keeps its functions and its declared interface."""
    view = ModelView.read(model)
    changed = {scope.key[0] for scope in view.scopes if _changes_schema(scope, target)}
    for scope in view.scopes:
        if scope.is_function and scope.key[0] in changed:
            where = f" in {scope.label}"
            rewrite_body(scope, partial(_convert_with_parked_splits, target=target, where=where))
    if None in changed:
        copy_over(model, _convert_with_parked_splits(model, target))
    set_default_opset(model, target)


def _changes_schema(scope: Scope, target: int) -> bool:
    """Whether a default-domain node of ``scope``, other than Split, has another schema at
    ``target``."""
    opset = scope.opset
    return any(
        opset is None or _schema(node.op_type, opset) != _schema(node.op_type, target)
        for node in scope.nodes
        if node.domain in DEFAULT_DOMAINS and not node.is_split
    )


def _schema(op_type: str, opset: int) -> int | None:
    schema = operator_schema(op_type, opset)
    return None if schema is None else int(schema.since_version)


def _convert_with_parked_splits(model: ModelProto, target: int, where: str = "") -> ModelProto:
    """onnx.version_converter's conversion of ``model``, with the (already rewritten) Split
    nodes parked in a private domain meanwhile so that it leaves them alone: in ``model``
    itself (onnx reads a serialized copy), put back as they were once onnx has read it."""
    originals = []
    parked = []
    for index, (_, node) in enumerate(split_nodes(model)):
        original = NodeProto()
        original.CopyFrom(node)
        originals.append(original)
        parked.append(node)
        node.domain = _PENDING_DOMAIN
        node.name = f"{_PENDING_DOMAIN}.{index}"
    model.opset_import.append(helper.make_opsetid(_PENDING_DOMAIN, 1))
    try:
        result = onnx.version_converter.convert_version(model, target)
    except MemoryError:
        raise
    except Exception as error:
        raise OtherOperatorError(
            "onnx.version_converter could not convert the operators other than Split and "
            f"SplitToSequence{where} to opset {target}: {' '.join(str(error).split())}"
        ) from error
    finally:
        for node, original in zip(parked, originals, strict=True):
            node.CopyFrom(original)
        del model.opset_import[-1]
    for node in (node for proto in model_graphs(result) for node in proto.node):
        if node.domain == _PENDING_DOMAIN:
            node.CopyFrom(originals[int(node.name.rsplit(".", 1)[1])])
    remove_where(result.opset_import, lambda entry: entry.domain == _PENDING_DOMAIN)
    return result
