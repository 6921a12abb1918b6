"""A Split or SplitToSequence node read once in its context: the one place where the node's
version rule, its data's dims, its axis counted from the front, the axis length, its
constant sizes and the checks of its inputs' types are found, for every tool that infers,
rewrites, probes or converts it.

Each tool once re-assembled these by itself (the dims of the data input, the axis
normalized against them, the length, the sizes read from an attribute or a constant), and
the same invalid axis read differently depending on which one raised it. A site is read in
a :class:`SiteScope`: the view's :class:`~splitops.onnx.model.Scope`, where the rewrites and
the probes read it, or inference's overlay on a graph, which gives the types it inferred so
far; what is read, and how each problem is worded, is the same.

>>> from onnx import TensorProto, helper
>>> from splitops.onnx.model import ModelView
>>> node = helper.make_node("Split", ["x"], ["a", "b"], axis=-1, num_outputs=2, name="halves")
>>> graph = helper.make_graph([node], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "ab"])
>>> view = ModelView.read(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
>>> site = SplitSite.read(next(view.split_nodes()))
>>> site.where, site.spec.rule.name, site.axis, site.length, site.part_sizes()
('main/halves', 'Split-18', 1, 5, (3, 2))
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from onnx import NodeProto

from ...core import (
    Rule,
    SplitError,
    check_element_type,
    check_split_input_type,
    check_split_rank,
    drops_axis,
    normalize_axis,
    read_sizes,
)
from ._node import SplitNode, node_error, node_label, read_node
from ._types import element_of_code
from ._value_type import TensorType, ValueType
from ._view import Node, Scope
from ._walk import ScopeKey, location

__all__ = ["SiteProblem", "SiteScope", "SplitSite", "parts_drop_axis"]


class SiteScope(Protocol):
    """Where a site is read: a scope's label, identity and opset, the type each name has
    there, and the constant value a name has there (``None`` where it has none)."""

    @property
    def label(self) -> str: ...

    @property
    def key(self) -> ScopeKey: ...

    @property
    def opset(self) -> int | None: ...

    def type_of(self, name: str) -> ValueType | None: ...

    def constant(self, name: str) -> np.ndarray[Any, Any] | None: ...


S = TypeVar("S", bound=SiteScope)

#: One check a node fails, as (check, error): the check is "schema", "dtype", "split-dtype",
#: "split-shape", "axis" or "sizes"; the error names neither the node nor its scope (see
#: :meth:`SplitSite.error`).
SiteProblem = tuple[str, SplitError]


@dataclass(frozen=True, eq=False)
class SplitSite(Generic[S]):
    """One Split or SplitToSequence node, read at its scope's opset, with what its scope
    tells of its inputs (see the module's documentation)."""

    #: The scope it lies in.
    scope: S
    #: The node's index there.
    index: int
    proto: NodeProto
    #: The node read by the schema of its version.
    spec: SplitNode
    #: The static length of each axis of the data (``None`` for one symbolic or unknown), or
    #: ``None`` where the data's rank is unknown.
    dims: tuple[int | None, ...] | None
    #: The split axis, counted from the front where the rank is known, else as given.
    axis: int

    @staticmethod
    def read(node: Node) -> SplitSite[Scope]:
        """The site of a view's ``node``; its scope must import the default opset. A
        :class:`~splitops.SplitError` naming the node where its version forbids it, or
        its axis lies outside its data's rank."""
        scope = node.scope
        if scope.opset is None:
            raise SplitError(
                f"{scope.label} imports no opset of the default ONNX domain.", rule=Rule.OPSET
            )
        site, problems = SplitSite.checked(scope, node.index, node.proto, types=False)
        if site is None:
            error = problems[0][1]
            raise worded(scope.label, node.proto, error) from error
        return site

    @staticmethod
    def checked(
        scope: S, index: int, proto: NodeProto, *, types: bool = True
    ) -> tuple[SplitSite[S] | None, tuple[SiteProblem, ...]]:
        """The site of the node ``proto``, at ``index`` of ``scope``, and every check it
        fails, in order: its schema at its version; with ``types``, its data's element type,
        its split input's element type and its split input's rank; its axis against its
        data's rank. A failed schema, split input or axis gives no site (the values of a
        split of the wrong type are not read, as execution does not read them); a wrong
        element type of the data does not stop the checks after it."""
        try:
            spec = read_node(proto, scope.opset or 0)
        except SplitError as error:
            cause = error.__cause__  # read_node names the node; its cause does not
            return None, (("schema", cause if isinstance(cause, SplitError) else error),)
        problems: list[SiteProblem] = []
        elem, dims = _tensor(scope, proto.input[0])
        if types:
            rule, split = spec.rule, spec.split_input
            try:
                if elem:
                    check_element_type(element_of_code(elem), rule)
            except SplitError as error:
                problems.append(("dtype", error))
            split_elem, split_dims = _tensor(scope, split or "")
            try:
                if split_elem and (elem or rule.split_input_types is not None):
                    input_element = element_of_code(elem) if elem else None
                    check_split_input_type(element_of_code(split_elem), input_element, rule)
            except SplitError as error:
                return None, (*problems, ("split-dtype", error))
            try:
                if split_dims is not None and (split is None or scope.constant(split) is None):
                    # A constant is checked with its sizes.
                    check_split_rank(list(split_dims), rule)
            except SplitError as error:
                return None, (*problems, ("split-shape", error))
        static = None if dims is None else tuple(map(_static, dims))
        axis = spec.axis
        try:
            if static is not None:
                axis = normalize_axis(spec.axis, len(static), spec.rule.name)
        except SplitError as error:
            return None, (*problems, ("axis", error))
        return SplitSite(scope, index, proto, spec, static, axis), tuple(problems)

    @property
    def node(self: SplitSite[Scope]) -> Node:
        """The view's node, for a site read in a view."""
        return self.scope.nodes[self.index]

    @property
    def label(self) -> str:
        """The node's name, or its first output's name where it has none."""
        return node_label(self.proto)

    @property
    def where(self) -> str:
        """Where the node is, as every command prints it (``main/loop_1.body/split_3``)."""
        return location(self.scope.label, self.label)

    @property
    def data(self) -> str:
        """The name of the tensor it splits."""
        return str(self.proto.input[0])

    @property
    def rank(self) -> int | None:
        return None if self.dims is None else len(self.dims)

    @property
    def length(self) -> int | None:
        """The static length of the split axis, or ``None``."""
        return None if self.dims is None else self.dims[self.axis]

    @property
    def element(self) -> int | None:
        """The data's ``TensorProto`` element type, or ``None`` when unknown."""
        return _tensor(self.scope, self.data)[0] or None

    @cached_property
    def split_value(self) -> np.ndarray[Any, Any] | None:
        """The split input's value where it is a constant, else ``None``."""
        name = self.spec.split_input
        return None if name is None else self.scope.constant(name)

    @property
    def split_dims(self) -> list[int | None] | None:
        """The static dims of the split input (``None`` where it has none, or its rank is
        unknown)."""
        name = self.spec.split_input
        if name is None:
            return None
        _, dims = _tensor(self.scope, name)
        return None if dims is None else [_static(d) for d in dims]

    @property
    def split_rank(self) -> int | None:
        """The rank of the split input (a constant's, else its type's), or ``None``."""
        value = self.split_value
        if value is not None:
            return value.ndim
        dims = self.split_dims
        return None if dims is None else len(dims)

    @property
    def split_length(self) -> int | None:
        """The static length of a 1-d split input (the number of sizes), or ``None``."""
        dims = self.split_dims
        return dims[0] if dims is not None and len(dims) == 1 else None

    @property
    def chunk(self) -> int | None:
        """A SplitToSequence's chunk length where its parts are chunks of a constant length:
        1 without a split, the constant scalar split; else ``None``."""
        if self.spec.split_input is None:
            return 1
        value = self.split_value
        return int(value) if value is not None and value.ndim == 0 else None

    @property
    def drops_axis(self) -> bool | None:
        """Whether a SplitToSequence's parts lose the split axis (see :func:`parts_drop_axis`),
        by the split's constant value; ``None`` where that is known only at run time."""
        return parts_drop_axis(self.spec, self.split_value, self.split_rank)

    @property
    def split_element(self) -> int | None:
        name = self.spec.split_input
        return None if name is None else _tensor(self.scope, name)[0] or None

    @cached_property
    def given_sizes(self) -> tuple[int, ...] | None:
        """A Split's explicit sizes as ints, or ``None`` where it has none or they are not
        constant (an initializer or a Constant node)."""
        spec = self.spec
        if spec.split_attribute is not None:
            return spec.split_attribute
        value = self.split_value
        if value is None:
            return None
        sizes = read_sizes(value, spec.rule, allow_scalar=False)
        return sizes if isinstance(sizes, tuple) else None

    def part_sizes(self) -> tuple[int, ...] | None:
        """The size of every part where the planner can tell them now (a static axis, and
        sizes that are constant where the node has any), else ``None``. A
        :class:`~splitops.SplitError` where the spec rejects them."""
        length = self.length
        if length is None:
            return None
        if self.spec.op == "Split":
            if self.spec.has_sizes and self.given_sizes is None:
                return None
            return self.spec.part_sizes(length, self.given_sizes)
        if self.spec.split_input is not None and self.split_value is None:
            return None
        return self.spec.part_sizes(length, self.split_value)

    def error(self, error: SplitError) -> SplitError:
        """``error`` as the one wording every tool gives: the scope, the node, its op."""
        return worded(self.scope.label, self.proto, error)


def parts_drop_axis(spec: SplitNode, split: object, split_rank: int | None) -> bool | None:
    """Whether the parts of the node ``spec`` lose the split axis: a SplitToSequence with
    ``keepdims=0`` and the default split (none, or the scalar 1: see
    :func:`~splitops.core.is_default_split`). ``split`` is the split's value where it is
    known (``None`` where not), ``split_rank`` its rank where known; ``None`` where the
    answer waits for a 0-d split given at run time.
    """
    if spec.op != "SplitToSequence" or spec.keepdims:
        return False
    if spec.split_input is None:
        return True
    if split is not None:
        return drops_axis(split, keepdims=False)
    return False if split_rank is not None and split_rank != 0 else None


def worded(label: str, node: NodeProto, error: SplitError) -> SplitError:
    """``error`` of ``node`` in the scope ``label``, as every tool tells it: the scope, then
    the node and its op."""
    return node_error(node, error).in_context(f"{label}: ")


def _tensor(scope: SiteScope, name: str) -> tuple[int, tuple[int | str | None, ...] | None]:
    """The element type (0 where unknown) and dims (``None`` where the rank is unknown) that
    ``name`` has in ``scope`` where it is a tensor."""
    found = scope.type_of(name) if name else None
    if not isinstance(found, TensorType):
        return 0, None
    return found.element, found.dims


def _static(dim: int | str | None) -> int | None:
    return dim if isinstance(dim, int) else None
