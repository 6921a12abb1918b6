"""The model layer's functions on the protobuf itself: attributes and initializers read as
Python values and written in place (``_fields``), the walk of a model's graphs and functions
(``_walk``), element-type codes and ``TypeProto`` rules (``_types``), onnx's own inference of
a node or a call (``_typed``), and the view's helpers that take a proto.

Callers that can ask the view (:mod:`splitops.onnx.model`) do; these serve the code that
builds nodes (``rewrite/``), the backends that hand protos to a runtime (``run/``), and
inference's pass of onnx. Importing from here is the visible mark of touching a protobuf."""

from ._edits import (
    remove_where,
    rewrite_body,
    set_default_opset,
)
from ._fields import (
    add_initializers,
    attribute_key,
    attribute_values,
    copy_attributes,
    declarations_of,
    drop_attributes,
    drop_declared_shapes,
    function_defaults,
    has_attribute,
    initializers,
    keep_attributes,
    links_attributes,
    links_only,
    resolve_linked,
    set_attributes,
    set_declared_type,
)
from ._memory import (
    copy_over,
    reserve_memory,
    weight_bytes,
)
from ._node import (
    run_node,
    run_read_node,
)
from ._site import (
    parts_drop_axis,
)
from ._typed import (
    InputFacts,
    call_model,
    call_output,
    infer_call_outputs,
    infer_node,
    inline_call,
    onnx_output_types,
    onnx_takes,
    typed_copy,
    with_functions,
    write_types,
)
from ._types import (
    code_of_array,
    conflicts,
    declared_type,
    dtype_of_code,
    element_name,
    element_of_code,
    numpy_dtype,
    widened,
)
from ._value_type import (
    named_placeholders,
    renamed,
    unnamed_placeholders,
)
from ._view import (
    defined_names,
    input_types,
    interface_entries,
    interface_types,
    model_nodes,
    output_types,
    split_nodes,
)
from ._walk import (
    SMALL_TENSOR,
    GraphsAt,
    constant_value,
    declared_types,
    default_opset,
    function_id,
    is_large_weight,
    model_graphs,
    operator_schema,
)

__all__ = [
    "SMALL_TENSOR",
    "GraphsAt",
    "InputFacts",
    "add_initializers",
    "attribute_key",
    "attribute_values",
    "call_model",
    "call_output",
    "code_of_array",
    "conflicts",
    "constant_value",
    "copy_attributes",
    "copy_over",
    "declarations_of",
    "declared_type",
    "declared_types",
    "default_opset",
    "defined_names",
    "drop_attributes",
    "drop_declared_shapes",
    "dtype_of_code",
    "element_name",
    "element_of_code",
    "function_defaults",
    "function_id",
    "has_attribute",
    "infer_call_outputs",
    "infer_node",
    "initializers",
    "inline_call",
    "input_types",
    "interface_entries",
    "interface_types",
    "is_large_weight",
    "keep_attributes",
    "links_attributes",
    "links_only",
    "model_graphs",
    "model_nodes",
    "named_placeholders",
    "numpy_dtype",
    "onnx_output_types",
    "onnx_takes",
    "operator_schema",
    "output_types",
    "parts_drop_axis",
    "remove_where",
    "renamed",
    "reserve_memory",
    "resolve_linked",
    "rewrite_body",
    "run_node",
    "run_read_node",
    "set_attributes",
    "set_declared_type",
    "set_default_opset",
    "split_nodes",
    "typed_copy",
    "unnamed_placeholders",
    "weight_bytes",
    "widened",
    "with_functions",
    "write_types",
]
