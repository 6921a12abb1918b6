"""A Split or SplitToSequence node read once in its context: the one place where the node's
version rule, its data's dims, its axis counted from the front, the axis length and its
constant sizes are found, for every tool that rewrites, probes or converts it.

Each tool once re-assembled these from the view by itself (the dims of the data input, the
axis normalized against them, the length, the sizes read from an attribute or a constant),
and the same invalid axis read differently depending on which one raised it.

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
from typing import Any

import numpy as np
from onnx import NodeProto

from ...core import Rule, SplitError, normalize_axis, read_sizes
from ._node import SplitNode, node_error, node_label, read_node
from ._view import Node, Scope
from ._walk import location

__all__ = ["SplitSite"]


@dataclass(frozen=True, eq=False)
class SplitSite:
    """One Split or SplitToSequence node of a view, read at its scope's opset, with what its
    scope tells of its inputs (see the module's documentation)."""

    #: The view's node: its scope, its index there and its protobuf.
    node: Node
    #: The node read by the schema of its version.
    spec: SplitNode
    #: The static length of each axis of the data (``None`` for one symbolic or unknown), or
    #: ``None`` where the data's rank is unknown.
    dims: tuple[int | None, ...] | None
    #: The split axis, counted from the front where the rank is known, else as given.
    axis: int

    @classmethod
    def read(cls, node: Node) -> SplitSite:
        """The site of ``node``; its scope must import the default opset. A
        :class:`~splitops.SplitError` naming the node where its version forbids it, or
        its axis lies outside its data's rank."""
        scope = node.scope
        if scope.opset is None:
            raise SplitError(
                f"{scope.label} imports no opset of the default ONNX domain.", rule=Rule.OPSET
            )
        try:
            spec = read_node(node.proto, scope.opset)
            found = scope.dims(node.proto.input[0])
            dims = None if found is None else tuple(found)
            axis = spec.axis
            if dims is not None:
                axis = normalize_axis(spec.axis, len(dims), spec.rule.name)
        except SplitError as error:
            raise node_error(node.proto, error).in_context(f"{scope.label}: ") from error
        return cls(node, spec, dims, axis)

    @property
    def scope(self) -> Scope:
        return self.node.scope

    @property
    def proto(self) -> NodeProto:
        return self.node.proto

    @property
    def label(self) -> str:
        """The node's name, or its first output's name where it has none."""
        return node_label(self.node.proto)

    @property
    def where(self) -> str:
        """Where the node is, as every command prints it (``main/loop_1.body/split_3``)."""
        return location(self.scope.label, self.label)

    @property
    def data(self) -> str:
        """The name of the tensor it splits."""
        return str(self.node.proto.input[0])

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
        return self.scope.element(self.data)

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
        return None if name is None else self.scope.dims(name)

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
    def split_element(self) -> int | None:
        name = self.spec.split_input
        return None if name is None else self.scope.element(name)

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
        return node_error(self.proto, error).in_context(f"{self.scope.label}: ")
