"""Part sizes computed inside an ONNX graph, for axes whose length is known only at run time.

:class:`GraphArithmetic` is a :class:`~splitops.core.DimArithmetic` whose values are the
names of int64 tensors of shape ``[1]`` in a graph: the planner's own
:func:`~splitops.core.split_part_sizes`, evaluated over it, writes the planner's formula as
standard operators (``ceil(d / n)`` is ``Div(Add(d, n - 1), n)``, the last part
``Sub(d, Mul(c, n - 1))``), so the lowered graph computes at every axis length the sizes that
:func:`~splitops.split_sizes` gives.

Where the spec rejects the split (a last part below 0, an axis that equal parts do not
divide), the graph fails at run time on every runtime: each such size goes through a
*runtime check*, ``Reshape(size, [1 + bad])``, which is the size itself when ``bad`` is 0
and a reshape of one element into two, which every runtime refuses, when it is 1. The check
lies on the path from the axis length to the Split, so no runtime can prune it, and its node
is named after the rule it checks, which is what a runtime's error message quotes.

>>> from onnx import TensorProto, helper
>>> from splitops.core import opset_rule, split_part_sizes
>>> from splitops.onnx.model._edits import ModelEdits
>>> from splitops.onnx.model._view import ModelView
>>> graph = helper.make_graph([], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])], [])
>>> model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
>>> view = ModelView.read(model)
>>> build = GraphBuilder(view.main, ModelEdits(view), "s")
>>> dims = GraphArithmetic(build)
>>> d = build.axis_length("x", 0)
>>> sizes = split_part_sizes(d, None, 4, opset_rule("Split", 18), dims)
>>> build.sizes(sizes)
's_sizes'
>>> [node.op_type for node in build.nodes]  # doctest: +NORMALIZE_WHITESPACE
['Shape', 'Gather', 'Add', 'Div', 'Mul', 'Sub', 'Less', 'Cast', 'Add', 'Reshape',
 'Expand', 'Concat']
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any, Literal

import numpy as np
from onnx import NodeProto, TensorProto, helper, numpy_helper

from ..model import ModelEdits, Node, Scope, renamed_copy

__all__ = ["CHECK_FORMS", "PART_CHECK_TYPES", "CheckForm", "GraphArithmetic", "GraphBuilder"]

#: How a run-time check fails where the spec rejects a size: ``reshape`` (of one element
#: into two), ``expand`` (to a shape of -1), ``expand-gather`` (the same, then a Gather that
#: gives the value a static length, which TVM needs of a Slice's bounds), ``part`` (the
#: values that must not be negative the shape of a ConstantOfShape, which fails where one
#: is, put on the path of a part, not of its bounds: :meth:`GraphBuilder.on_part`), or
#: ``none`` (no check). Which runtime loads and runs which was measured, runtime by
#: runtime: see docs/portability.md.
CheckForm = Literal["reshape", "expand", "expand-gather", "part", "none"]
CHECK_FORMS: tuple[CheckForm, ...] = ("reshape", "expand", "expand-gather", "part", "none")

#: The element types the ``part`` check form takes a part of: those of onnxruntime's Where
#: (1.32; it has none for bool, int16, uint16, uint64 or bfloat16). A part of another type
#: is not checked.
PART_CHECK_TYPES = frozenset(
    {
        TensorProto.FLOAT,
        TensorProto.DOUBLE,
        TensorProto.FLOAT16,
        TensorProto.INT8,
        TensorProto.INT32,
        TensorProto.INT64,
        TensorProto.UINT8,
        TensorProto.UINT32,
        TensorProto.STRING,
    }
)


class GraphBuilder:
    """Nodes computing int64 values in one scope, at its opset, named after ``label``.

    The nodes gather in :attr:`nodes`, in the order they must run; constants become
    initializers (or Constant nodes in a function, placed in :attr:`nodes` too).

    With ``scalars``, the sizes it computes are 0-d tensors, and a Slice's bounds their
    Unsqueeze (:meth:`bound`): TVM's importer follows 0-d shape arithmetic as symbolic
    expressions, so that each part keeps a shape it knows (a Shape of the part, a Concat or
    an Add of parts then load), where from ``[1]`` tensors it cuts parts of unknown shape.

    Without ``reduce_min18`` (a runtime that has no ReduceMin from opset 18 on, where its
    axes became an input: onnx2torch), :meth:`any_negative` counts with ReduceSum instead.
    """

    def __init__(
        self,
        scope: Scope,
        edits: ModelEdits,
        label: str,
        check: CheckForm = "reshape",
        *,
        scalars: bool = False,
        reduce_min18: bool = True,
    ) -> None:
        self.scope = scope
        self.scalars = scalars
        self.reduce_min18 = reduce_min18
        self.opset = scope.opset or 0
        self.edits = edits
        self.check = check
        self.label = label
        self.nodes: list[NodeProto] = []
        self._constants: dict[tuple[int, ...] | int, str] = {}
        #: The values the ``part`` check form has yet to check not to be negative, with the
        #: rule each checks and whether it is 0-d (:meth:`on_part`).
        self.pending: list[tuple[str, str, bool]] = []

    def name(self, what: str) -> str:
        """A fresh value name: ``<label>_<what>``."""
        return self.edits.view.fresh_name(f"{self.label}_{what}")

    def add(
        self, op: str, inputs: Sequence[str], what: str, *, output: str | None = None, **attrs: Any
    ) -> str:
        """One node of ``op``; returns its output's name (``output``, or a fresh one)."""
        result = output or self.name(what)
        self.nodes.append(helper.make_node(op, list(inputs), [result], **attrs))
        return result

    def ints(self, values: Sequence[int]) -> str:
        """A constant 1-d int64 tensor."""
        key = tuple(values)
        if key not in self._constants:
            name = self.name("const")
            self.nodes += self.edits.int64_constant(self.scope, name, key)
            self._constants[key] = name
        return self._constants[key]

    def scalar(self, value: int) -> str:
        """A constant 0-d int64 tensor."""
        if value not in self._constants:
            name = self.name("const")
            tensor = numpy_helper.from_array(np.array(value, dtype=np.int64), name)
            self.nodes += self.edits.tensor_constant(self.scope, tensor)
            self._constants[value] = name
        return self._constants[value]

    def number(self, value: int) -> str:
        """A constant size: 0-d with :attr:`scalars`, else of shape ``[1]``."""
        return self.scalar(value) if self.scalars else self.ints([value])

    def axis_length(self, x: str, axis: int) -> str:
        """The length of ``x`` along ``axis`` (negative counts from the back), shape ``[1]``
        (0-d with :attr:`scalars`)."""
        shape = self.add("Shape", [x], "shape")
        where = self.scalar(axis) if self.scalars else self.ints([axis])
        return self.add("Gather", [shape, where], "length", axis=0)

    def bound(self, value: str) -> str:
        """A size as a Slice's bound (shape ``[1]``)."""
        return self.unsqueeze(value, 0) if self.scalars else value

    def checked(self, value: str, bad: str, rule: str) -> str:
        """``value`` (one element) when the bool ``bad`` is false; a run-time failure, in the
        node named ``<label>/<rule>``, when it is true, in the builder's :data:`CheckForm`
        (``"none"``, and ``"part"``, which checks no flag: ``value`` itself, unchecked)."""
        if self.check in ("none", "part"):
            return value
        flag = self.add("Cast", [bad], "bad", to=TensorProto.INT64)
        if self.check == "reshape":
            wanted = self.add("Add", [flag, self.ints([1])], "shape")
            result = self.add("Reshape", [value, wanted], "checked")
        else:
            twice = self.add("Mul", [flag, self.ints([2])], "twice")
            wanted = self.add("Sub", [self.ints([1]), twice], "shape")
            result = self.add("Expand", [value, wanted], "checked")
        self.nodes[-1].name = self.edits.view.fresh_name(f"{self.label}/{rule}")
        if self.check == "expand-gather":
            result = self.add("Gather", [result, self.ints([0])], "checked", axis=0)
        return result

    def any_negative(self, values: str) -> str:
        """Whether any of the 1-d int64 ``values`` lies below 0, as a ``[1]`` bool: their
        ReduceMin below 0, or (without :attr:`reduce_min18`, from opset 18 on) the count of
        those below 0, by ReduceSum (at version 13 there), above 0."""
        if self.reduce_min18 or self.opset < 18:
            least = self.add("ReduceMin", [values], "least", keepdims=1)
            return self.add("Less", [least, self.ints([0])], "negative")
        below = self.add("Less", [values, self.ints([0])], "below")
        flags = self.add("Cast", [below], "below", to=TensorProto.INT64)
        count = self.add("ReduceSum", [flags], "negatives", keepdims=1)
        return self.add("Less", [self.ints([0]), count], "negative")

    def must_not_be_negative(self, value: str, rule: str, *, scalar: bool | None = None) -> None:
        """With the ``part`` check form, ``value`` (a size: 0-d where ``scalar``, by default
        with :attr:`scalars`, else of shape ``[1]``) is checked not to be negative where
        :meth:`on_part` puts the checks."""
        self.pending.append((value, rule, self.scalars if scalar is None else scalar))

    def on_part(self, slices: list[NodeProto]) -> list[NodeProto]:
        """``slices`` (the Slices cutting the parts), the last one's part taken through the
        ``part`` checks made so far: a ConstantOfShape whose shape is the checked values,
        which fails where one is negative (in the node named after the rules), its ReduceSum
        (0) as a bool picking the part from a Where of the part and itself. Before opset 9
        (no ConstantOfShape), unchecked.

        The check lies on the data's path, so that OpenVINO keeps it (it folds a Shape of a
        ConstantOfShape away), and off the bounds', so that TVM and tract keep the parts'
        shapes (from bounds that data computes, they cut parts of unknown shape, or none).
        Its zeros are as many as the checked values multiply to: 0 for every check but that
        of the last part's size (the last part's length, in int64); a shape with a 0 added
        would hold none, but TVM then allocates nothing and fails nothing."""
        pending, self.pending = self.pending, []
        if not pending or not slices or self.opset < 9:
            return slices
        # From 0-d values, which TVM follows as symbolic sizes, the shape is one it knows.
        values = [self.unsqueeze(value, 0) if scalar else value for value, _, scalar in pending]
        shape = values[0]
        if len(values) > 1:
            shape = self.add("Concat", values, "check_shape", axis=0)
        zero = numpy_helper.from_array(np.zeros(1, np.int64))
        empty = self.add("ConstantOfShape", [shape], "checked", value=zero)
        rules = "+".join(dict.fromkeys(rule for _, rule, _ in pending))
        self.nodes[-1].name = self.edits.view.fresh_name(f"{self.label}/{rules}")
        total = self.add("ReduceSum", [empty], "nothing", keepdims=0)
        false = self.add("Cast", [total], "false", to=TensorProto.BOOL)
        *before, last = slices
        part, unchecked = Node.alone(last).output_names[0], self.name("unchecked")
        picked = helper.make_node("Where", [false, unchecked, unchecked], [part])
        return [*before, renamed_copy(last, {}, {part: unchecked}), picked]

    def as_int64(self, value: str, element: int | None) -> str:
        """``value`` cast to int64 unless it is int64 already."""
        if element == TensorProto.INT64:
            return value
        return self.add("Cast", [value], "int64", to=TensorProto.INT64)

    def squeeze(self, x: str, axis: int, output: str | None = None) -> str:
        """``x`` without its axis ``axis`` (of length 1)."""
        if self.opset >= 13:
            return self.add("Squeeze", [x, self.ints([axis])], "part", output=output)
        return self.add("Squeeze", [x], "part", output=output, axes=[axis])

    def unsqueeze(self, x: str, axis: int) -> str:
        """``x`` with a new axis of length 1 at ``axis``."""
        if self.opset >= 13:
            return self.add("Unsqueeze", [x, self.ints([axis])], "part")
        return self.add("Unsqueeze", [x], "part", axes=[axis])

    def sizes(self, sizes: Sequence[str | int]) -> str:
        """The 1-d int64 tensor of ``sizes``: each a ``[1]`` value of this graph or an int.
        A run of equal values becomes one Expand, so a node of a million equal parts costs
        a few nodes."""
        pieces = []
        for value, run in groupby(sizes):
            count = len(list(run))
            single = self.ints([value]) if isinstance(value, int) else value
            pieces.append(
                single if count == 1 else self.add("Expand", [single, self.ints([count])], "run")
            )
        if len(pieces) == 1:
            return pieces[0]
        return self.add("Concat", pieces, "", output=self.name("sizes"), axis=0)


class GraphArithmetic:
    """:class:`~splitops.core.DimArithmetic` over ``[1]``-shaped int64 values of a graph.

    Every value is a size, and no size may be negative: :meth:`minus` (the planner's last
    part) and :meth:`exact_div` (equal parts, where the rules require the count to divide
    the length) return their result through a run-time check of that rule.
    """

    def __init__(self, build: GraphBuilder) -> None:
        self.build = build
        #: The values that are ``ceil(d / n)`` of some length ``d``.
        self._ceilings: set[str] = set()

    def known(self, dim: str | int) -> int | None:
        return dim if isinstance(dim, int) else None

    def is_size(self, value: object) -> bool:
        return False  # explicit sizes reach lowering as constants, never as graph values

    def exact_div(self, dim: str, count: int) -> str:
        build = self.build
        quotient = build.add("Div", [dim, build.number(count)], "part")
        if build.check == "none":
            return quotient
        whole = build.add("Mul", [quotient, build.number(count)], "whole")
        if build.check == "part":
            short = build.add("Sub", [whole, dim], "short")  # 0 where count divides dim
            build.must_not_be_negative(short, "equal_parts_must_divide_the_axis")
            return quotient
        rest = build.add("Less", [whole, dim], "remainder")
        return build.checked(quotient, rest, "equal_parts_must_divide_the_axis")

    def ceil_div(self, dim: str, count: int) -> str:
        build = self.build
        raised = build.add("Add", [dim, build.number(count - 1)], "raised")
        chunk = build.add("Div", [raised, build.number(count)], "chunk")
        self._ceilings.add(chunk)
        return chunk

    def minus(self, dim: str, part: str | int, times: int) -> str:
        build = self.build
        factor = build.number(part) if isinstance(part, int) else part
        taken = build.add("Mul", [factor, build.number(times)], "taken")
        rest = build.add("Sub", [dim, taken], "last")
        if times <= 1 and part in self._ceilings:
            return rest  # d - ceil(d / n) >= 0 for every d >= 0: no check can fire
        if build.check == "part":
            build.must_not_be_negative(rest, "last_part_must_not_be_negative")
            return rest
        if build.check == "none":
            # No node for a check not made: TVM fails on a Less of a size it follows as a
            # symbolic value, even one that nothing reads.
            return rest
        negative = build.add("Less", [rest, build.number(0)], "negative")
        return build.checked(rest, negative, "last_part_must_not_be_negative")
