"""Reading a model once, as a view that callers ask: its scopes, nodes, values and their uses
(``_view``, over the walk of ``_walk``), their types as frozen values (``_value_type``), a
Split node read by its version and its site (``_node``, ``_site``), the edits a rewrite
plans (``_edits``), and safe loading and saving (``_io``, ``_memory``), with a model file
rewritten with its weights left where they lie (``_weights``). Every other sub-package stands
on this one reading, as onnx-ir's passes stand on one ``Value`` that knows its producer, its
uses and its ``const_value``: no tool keeps a name-keyed table of its own that could disagree
with ONNX's scoping.

This face is the view, the types, the site, the edits and I/O. Two public modules hold the
rest: :mod:`~splitops.onnx.model.protobuf`, the functions that read or write a protobuf
itself (attributes, initializers, declarations, the walk of a model's graphs, element-type
codes, onnx's own inference of a node), for the code that builds nodes and the backends that
run them; and :mod:`~splitops.onnx.model.describe`, text for people. The modules behind them
are private (an import-linter contract checks it)."""

from ._edits import (
    ModelEdits,
    name_nodes,
    renamed_copy,
    route_outputs,
    write_split_sizes,
)
from ._io import (
    MAX_MODEL_BYTES,
    check_model_size,
    check_node_count,
    load_model,
    load_value,
    save_model,
)
from ._memory import (
    copy_model,
    types_only,
)
from ._node import (
    DEFAULT_DOMAINS,
    SPLIT_OPS,
    SplitNode,
    node_error,
    node_label,
    read_node,
)
from ._site import (
    SiteProblem,
    SiteScope,
    SplitSite,
)
from ._value_type import (
    Dim,
    OtherType,
    SequenceType,
    TensorType,
    ValueType,
    value_type,
)
from ._view import (
    Linked,
    ModelView,
    Node,
    Scope,
    ScopePlace,
    Usage,
    Value,
)
from ._walk import (
    FunctionId,
    ScopeKey,
    location,
)
from ._weights import (
    rewrite_file,
)

__all__ = [
    "DEFAULT_DOMAINS",
    "MAX_MODEL_BYTES",
    "SPLIT_OPS",
    "Dim",
    "FunctionId",
    "Linked",
    "ModelEdits",
    "ModelView",
    "Node",
    "OtherType",
    "Scope",
    "ScopeKey",
    "ScopePlace",
    "SequenceType",
    "SiteProblem",
    "SiteScope",
    "SplitNode",
    "SplitSite",
    "TensorType",
    "Usage",
    "Value",
    "ValueType",
    "check_model_size",
    "check_node_count",
    "copy_model",
    "load_model",
    "load_value",
    "location",
    "name_nodes",
    "node_error",
    "node_label",
    "read_node",
    "renamed_copy",
    "rewrite_file",
    "route_outputs",
    "save_model",
    "types_only",
    "value_type",
    "write_split_sizes",
]
