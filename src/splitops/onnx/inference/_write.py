"""Writing the types back: what inference found, in the typed copy it returns.

Types that differ from onnx's are written into ``value_info``, or merged into a graph output
or a ``value_info`` entry that the model declares, as onnx merges them (an unknown dim or
onnx's ``unk__`` placeholder takes the inferred dim, a declared name stays unless a value is
inferred); onnx's placeholders that splitops named are named in every scope walked. A local
function's ``value_info`` receives the types on which all its call sites agree. The
protobufs themselves are written by the model layer
(:func:`~splitops.onnx.model.write_types`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import Dim, ModelView, Scope, ValueType
from ..model.protobuf import write_types
from ._split import Inferred, merge

__all__ = ["write_functions", "write_place"]


def write_place(
    scope: Scope, types: Mapping[str, ValueType | None], names: Mapping[str, Dim]
) -> None:
    """Write splitops' ``types`` of the values of ``scope``, and the placeholders ``names``
    named."""
    if types or names:
        write_types(scope, types, names)


def write_functions(inferred: Inferred, view: ModelView) -> None:
    """Give each function's ``value_info`` the types on which all its call sites agree."""
    for key, places in inferred.functions.items():
        for (where, _), outcomes in places.items():
            scope = view.scope((key, where))
            if scope is not None:
                write_place(scope, dict(merge(list(outcomes.values())).outputs), {})
