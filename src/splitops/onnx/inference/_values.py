"""The values of the small tensors that exporters compute shapes with, concrete or symbolic.

Exporters rarely write a ``split`` as a constant when it depends on a dynamic axis: they
compute it, ``Shape -> Gather -> Div -> ... -> Concat``. Shape inference follows such values
through the operators below, so that a Split or SplitToSequence fed by them gets sizes that
are expressions of the input's dims (``floor(seq/3)``), and a Reshape, Expand, Range, Tile
or ConstantOfShape fed by them gets its output's dims (:func:`value_shape`).

A :class:`Items` holds the items of one tensor in a numpy array of objects, and its element
type. An item is a number (a Python int, or a float holding the number of its float type
exactly), a sympy expression of dim names, or ``None`` for an item nobody knows (an unknown
dim read by ``Shape``). Each operator computes as the runtimes do in that type
(:mod:`~splitops.onnx.inference._number_types`): an int32 product wraps around, an int64
cast to float16 rounds. Whatever an operator cannot decide exactly gives ``None``, never a
guess:

* Expressions are int64 values only: a symbolic item cast to any other type but bool
  (where its truth is certain) is unknown, since the type may not hold it.
* Integer ``Div`` truncates toward zero, so it is ``floor`` only where the quotient is
  provably >= 0 (or exact); ``Mod`` with ``fmod=1`` only where both sides are >= 0.
* An expression is int64 arithmetic, followed only where it cannot overflow for dims up to
  :data:`DIM_BOUND`.

>>> from onnx import helper
>>> from splitops.onnx.inference._symbolic import dim_symbol
>>> n = dim_symbol("seq")
>>> shape = propagate(helper.make_node("Shape", ["x"], ["s"]), 18, [None], [[2, n, 12]])
>>> length = propagate(helper.make_node("Gather", ["s", "i"], ["g"]), 18, [shape, Items.of(1)])
>>> propagate(helper.make_node("Div", ["g", "k"], ["d"]), 18, [length, Items.of(3)])
Items(floor(seq/3))
>>> wide = Items.of([300, 258])
>>> propagate(helper.make_node("Cast", ["w"], ["c"], to=TensorProto.UINT8), 18, [wide])
Items([44, 2], uint8)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from onnx import NodeProto, TensorProto, helper

from ..model import DEFAULT_DOMAINS, Linked, Node
from ..model.protobuf import SMALL_TENSOR, constant_value
from ._number_types import NumberType, Rounded, number_type
from ._symbolic import sympy

__all__ = [
    "DIM_BOUND",
    "MAX_ITEMS",
    "READS_SHAPES",
    "SHAPE_OPS",
    "VALUE_OPS",
    "Items",
    "from_array",
    "propagate",
    "value_shape",
]

#: The most items a value may have: shape computations are small; a larger tensor (a weight,
#: an embedding table) is never followed, which is what lets inference set weights aside.
MAX_ITEMS = SMALL_TENSOR

_INT64, _BOOL = TensorProto.INT64, TensorProto.BOOL

#: The greatest length a dim name is taken to stand for where splitops decides whether the
#: int64 arithmetic of an expression can overflow (int32's greatest number). An expression
#: that could leave int64 for dims up to it (``S + 2**63 - 200``, a product of three dims)
#: is unknown.
DIM_BOUND = 2**31 - 1
_INT64_LOW, _INT64_HIGH = -(2**63), 2**63 - 1


@dataclass(frozen=True, eq=False)
class Items:
    """The items of a tensor (an object array of its shape) and its element type (a
    ``TensorProto`` code of a type :func:`number_type` knows)."""

    items: np.ndarray[Any, Any]
    elem: int = _INT64

    @classmethod
    def of(cls, items: Any, elem: int = _INT64) -> Items:
        """A value from nested lists (or one item) of numbers, sympy expressions or ``None``.
        The numbers must be ones the type holds."""
        return cls(_objects(items, float_type=elem in _FLOAT_CODES), elem)

    @property
    def number(self) -> NumberType:
        """The element type, as the runtimes compute with it."""
        found = number_type(self.elem)
        if found is None:
            raise ValueError(f"values of element type {self.elem} are not followed")
        return found

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.items.shape)

    def flat(self) -> list[Any]:
        return list(self.items.reshape(-1))

    @cached_property
    def key(self) -> tuple[Any, ...]:
        """What the value is, hashable: its type, shape and items (a rounded float16 item
        apart from the same number unrounded)."""
        items = self.flat()
        if self.elem == TensorProto.FLOAT16:
            items = [("rounded", x) if type(x) is Rounded else x for x in items]
        return (self.elem, self.shape, *items)

    def host(self) -> Any:
        """The items as Python values (nested lists, or one item for a scalar)."""
        return self.items.tolist()

    @property
    def known(self) -> bool:
        """Whether every item is known (a number, or an expression)."""
        return all(item is not None for item in self.flat())

    @property
    def concrete(self) -> bool:
        """Whether every item is a number (no symbol, none unknown)."""
        return all(_is_number(item) for item in self.flat())

    def __repr__(self) -> str:
        inner = self.host()
        if self.elem == _INT64:
            return f"Items({inner})"
        return f"Items({inner}, {helper.tensor_dtype_to_np_dtype(self.elem)})"


_FLOAT_CODES = frozenset(
    code for code in TensorProto.DataType.values() if (t := number_type(code)) and t.is_float
)


def _objects(items: Any, *, float_type: bool = False) -> np.ndarray[Any, Any]:
    """``items`` as an object array of normalized items (sympy integers become ints, the
    numbers of a float type floats)."""
    if isinstance(items, np.ndarray):
        array = items if items.dtype == object else items.astype(object)
    elif isinstance(items, (list, tuple)):
        array = np.array(items, dtype=object)
    else:
        array = np.empty((), dtype=object)
        array[()] = items
    if not array.size:
        return array
    return _map(_normal_float if float_type else _normal, array)


def _map(function: Callable[..., Any], *arrays: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``function`` on the items of ``arrays`` (broadcast), as an object array."""
    # A float that overflows to infinity (an unknown item) raises the FPU's overflow flag,
    # which numpy reads when its loop ends.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        result = np.frompyfunc(function, len(arrays), 1)(*arrays)
    if isinstance(result, np.ndarray):
        return result
    scalar = np.empty((), dtype=object)
    scalar[()] = result
    return scalar


def _is_number(item: Any) -> bool:
    return type(item) is int or type(item) is float


def _normal(item: Any) -> Any:
    """An item in its one form: an int, a finite float, a sympy expression (never a sympy
    number that is an integer), or ``None``."""
    kind = type(item)
    if item is None or kind is int or kind is Rounded:
        return item
    if kind is float:
        return item if math.isfinite(item) else None
    if isinstance(item, (bool, np.bool_, np.integer)):
        return int(item)
    if isinstance(item, (float, np.floating)):
        return _normal(float(item))
    if isinstance(item, sympy.Integer):
        return int(item)
    if isinstance(item, sympy.Expr) and not item.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return item
    return None


def _normal_float(item: Any) -> Any:
    """An item of a float type: a number is a float."""
    found = _normal(item)
    return float(found) if type(found) is int else found


# --- one operator each ------------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    """One node to evaluate: its attributes, the values of its inputs (``None`` where not
    known or absent), and the shapes of its inputs as items (for the operators in
    :data:`READS_SHAPES`; ``None`` where unknown)."""

    node: Node
    opset: int
    inputs: Sequence[Items | None]
    shapes: Sequence[Sequence[Any] | None] = ()

    @property
    def dims(self) -> Sequence[Any] | None:
        """The shape of the first input."""
        return self.shapes[0] if self.shapes else None

    def option(self, name: str, default: Any = None) -> Any:
        """The node's attribute ``name``, or ``default`` (also where it takes a function
        call's attribute, which a node of a function's body is not evaluated with)."""
        value = self.node.attribute(name, default)
        return default if isinstance(value, Linked) else value

    def given(self, index: int) -> bool:
        """Whether the node lists an input at ``index``."""
        names = self.node.input_names
        return index < len(names) and bool(names[index])

    def value(self, index: int) -> Items | None:
        return self.inputs[index] if index < len(self.inputs) else None

    def ints(self, index: int) -> list[int] | None:
        """Input ``index`` as a list of plain ints (a scalar as one), or ``None``."""
        value = self.value(index)
        if value is None or not value.number.is_integer or not value.concrete:
            return None
        return [int(item) for item in value.flat()]

    def alike(self, count: int | None = None) -> list[Items] | None:
        """The first ``count`` inputs (all by default), all known and of one element type
        (as every operator here requires of them), or ``None``."""
        values = list(self.inputs if count is None else self.inputs[:count])
        if not values or any(v is None for v in values):
            return None
        found = [v for v in values if v is not None]
        return found if all(v.elem == found[0].elem for v in found) else None


def _broadcast(values: Sequence[Items], function: Callable[..., Any], elem: int) -> Items | None:
    """``function`` on the items of ``values``, broadcast; a value of element type ``elem``."""
    try:
        shape = np.broadcast_shapes(*(v.shape for v in values))
    except ValueError:
        return None
    if math.prod(shape) > MAX_ITEMS:
        return None
    return Items(_map(function, *(v.items for v in values)), elem)


#: An operator on the numbers of one type, and the same on int64 expressions.
_OnNumbers = Callable[..., Any]
_OnExpressions = Callable[..., Any]


def _elementwise(
    on_numbers: _OnNumbers,
    on_expressions: _OnExpressions | None = None,
    *,
    takes: Callable[[NumberType], bool] = lambda t: t.computes,
    gives_bool: bool = False,
) -> Callable[[_Call], Items | None]:
    """An elementwise operator of inputs of one type: ``on_numbers(type, *numbers)`` where
    all items are numbers, ``on_expressions(*items)`` where some are int64 expressions;
    ``None`` for a type it does not ``take``."""

    def apply(call: _Call) -> Items | None:
        values = call.alike()
        if values is None:
            return None
        number = values[0].number
        if not takes(number):
            return None
        symbolic = on_expressions if number.code == _INT64 else None

        def item(*items: Any) -> Any:
            try:
                if all(_is_number(x) for x in items):
                    return on_numbers(number, *items)
                if symbolic is None or any(x is None for x in items):
                    return None
                return _int64(symbolic(*items))
            except (ArithmeticError, TypeError, ValueError):
                return None

        return _broadcast(values, item, _BOOL if gives_bool else number.code)

    return apply


def _variadic(operator: Callable[[_Call], Items | None]) -> Callable[[_Call], Items | None]:
    """A variadic operator (Min, Max) as its binary one, folded over the inputs."""

    def apply(call: _Call) -> Items | None:
        if not call.inputs:
            return None
        if len(call.inputs) == 1:
            return operator(call)
        result = call.inputs[0]
        for other in call.inputs[1:]:
            result = operator(_Call(call.node, call.opset, [result, other]))
            if result is None:
                return None
        return result

    return apply


def _int64(expr: Any) -> Any:
    """An int64 expression an operator gave, or ``None`` where it may overflow int64: it is
    exact only where it stays in range for every dim up to :data:`DIM_BOUND`."""
    found = _normal(expr)
    if found is None or isinstance(found, int):
        return found if found is None or _INT64_LOW <= found <= _INT64_HIGH else None
    bounds = _bounds(found)
    if bounds is None or bounds[0] < _INT64_LOW or bounds[1] > _INT64_HIGH:
        return None
    return found


@lru_cache(maxsize=4096)
def _bounds(expr: Any) -> tuple[Fraction, Fraction] | None:
    """The least and greatest values of an expression of dim names, each in
    ``[0, DIM_BOUND]`` (``None`` for one of other functions)."""
    if expr.is_Rational:
        value = Fraction(int(expr.p), int(expr.q))
        return value, value
    if expr.is_Symbol:
        return Fraction(0), Fraction(DIM_BOUND)
    parts = [_bounds(arg) for arg in expr.args]
    if any(part is None for part in parts):
        return None
    known = [part for part in parts if part is not None]
    if expr.is_Add:
        return sum((p[0] for p in known), Fraction(0)), sum((p[1] for p in known), Fraction(0))
    if expr.is_Mul:
        low = high = Fraction(1)
        for a, b in known:
            corners = [low * a, low * b, high * a, high * b]
            low, high = min(corners), max(corners)
        return low, high
    if isinstance(expr, (sympy.floor, sympy.ceiling)):
        (low, high), rounding = known[0], math.floor if isinstance(expr, sympy.floor) else math.ceil
        return Fraction(rounding(low)), Fraction(rounding(high))
    if isinstance(expr, sympy.Min):
        return min(p[0] for p in known), min(p[1] for p in known)
    if isinstance(expr, sympy.Max):
        return max(p[0] for p in known), max(p[1] for p in known)
    if isinstance(expr, sympy.Mod):
        low, high = known[1]
        if low > 0:
            return Fraction(0), high
        return (low, Fraction(0)) if high < 0 else None
    if expr.is_Pow and expr.exp == -1 and known[0][0] > 0:
        return 1 / known[0][1], 1 / known[0][0]
    return None


def _truncated(a: Any, b: Any) -> Any:
    """ONNX integer Div of int64 expressions: the quotient truncated toward zero."""
    return None if b == 0 else _toward_zero(sympy.sympify(a) / b)


def _toward_zero(expr: Any) -> Any:
    """``expr`` rounded toward zero, where its sign is known (else ``None``)."""
    if expr.is_integer:
        return expr
    if expr.is_nonnegative:
        return sympy.floor(expr)
    if expr.is_nonpositive:
        return sympy.ceiling(expr)
    return None


def _remainder(a: Any, b: Any, fmod: bool) -> Any:
    if b == 0:
        return None
    if fmod and not (sympy.sympify(a).is_nonnegative and sympy.sympify(b).is_positive):
        return None  # C fmod takes the dividend's sign: decidable only for a >= 0, b > 0
    return sympy.Mod(a, b)


def _mod(call: _Call) -> Items | None:
    fmod = bool(call.option("fmod", 0))
    operator = _elementwise(
        lambda t, a, b: t.mod(a, b, fmod=fmod), lambda a, b: _remainder(a, b, fmod)
    )
    return operator(call)


def _bit_shift(call: _Call) -> Items | None:
    left = call.option("direction", b"") in (b"LEFT", "LEFT")
    operator = _elementwise(
        lambda t, a, b: t.shift(a, b, left=left), takes=lambda t: t.is_integer and not t.signed
    )
    return operator(call)


def _equal(a: Any, b: Any) -> Any:
    """1 where ``a == b`` is certain, 0 where ``a != b`` is, else ``None``."""
    difference = sympy.sympify(a - b)
    return None if difference.is_zero is None else int(bool(difference.is_zero))


def _constant(call: _Call) -> Items | None:
    array = constant_value(call.node.proto)
    return None if array is None else from_array(array)


def from_array(array: np.ndarray[Any, Any]) -> Items | None:
    """A numpy array as a value, or ``None`` for a large one or one of a type whose values
    are not followed (strings, complex numbers, 4-bit types)."""
    if not _small(array.shape):
        return None
    try:
        elem = helper.np_dtype_to_tensor_dtype(array.dtype)
    except (KeyError, TypeError, ValueError):
        return None
    number = number_type(elem)
    if number is None:
        return None
    if number.is_float:
        # float64 holds every number of every float format exactly.
        return Items(_objects(array.astype(np.float64).tolist(), float_type=True), elem)
    return Items(_objects(array.tolist()), elem)


def _shape(call: _Call) -> Items | None:
    if call.dims is None:
        return None
    rank = len(call.dims)
    start, end = call.option("start", 0), call.option("end", rank)
    return Items.of(list(call.dims)[slice(*_clamped(start, end, rank))])


def _clamped(start: int, end: int, rank: int) -> tuple[int, int]:
    def clamp(index: int) -> int:
        return min(max(index + rank if index < 0 else index, 0), rank)

    return clamp(start), clamp(end)


def _size(call: _Call) -> Items | None:
    dims = call.dims
    if dims is None or any(d is None for d in dims):
        return None
    if all(type(d) is int for d in dims):
        return Items.of(math.prod(dims))
    return Items.of(_int64(sympy.Mul(*dims)))


def _identity(call: _Call) -> Items | None:
    return call.value(0)


def _gather(call: _Call) -> Items | None:
    data, indices = call.value(0), call.ints(1)
    index_value = call.value(1)
    if data is None or indices is None or index_value is None or not data.shape:
        return None
    axis = call.option("axis", 0)
    if not -data.items.ndim <= axis < data.items.ndim:
        return None
    length = data.shape[axis]
    if any(not -length <= i < length for i in indices):
        return None
    taken = np.take(data.items, np.reshape(indices, index_value.shape), axis=axis)
    return Items(_objects(taken), data.elem)


def _slice(call: _Call) -> Items | None:
    data = call.value(0)
    if data is None:
        return None
    if call.opset < 10:
        starts, ends = call.option("starts"), call.option("ends")
        axes, steps = call.option("axes"), None
    else:
        starts, ends, axes, steps = call.ints(1), call.ints(2), call.ints(3), call.ints(4)
        if (len(call.inputs) > 3 and call.given(3) and axes is None) or (
            len(call.inputs) > 4 and call.given(4) and steps is None
        ):
            return None
    if starts is None or ends is None:
        return None
    rank = data.items.ndim
    axes = list(range(len(starts))) if axes is None else list(axes)
    steps = [1] * len(starts) if steps is None else list(steps)
    items = data.items
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=False):
        if step == 0 or not -rank <= axis < rank:
            return None
        items = np.take(items, _slice_indices(start, end, step, items.shape[axis]), axis=axis)
    return Items(_objects(items), data.elem)


def _slice_indices(start: int, end: int, step: int, length: int) -> list[int]:
    """The indices ONNX Slice takes along one axis (its clamping, not Python's)."""
    start = start + length if start < 0 else start
    end = end + length if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), length), min(max(end, 0), length)
    else:
        start, end = min(max(start, 0), length - 1), min(max(end, -1), length - 1)
    return list(range(start, end, step))


def _concat(call: _Call) -> Items | None:
    values = call.alike()
    if values is None:
        return None
    axis = call.option("axis", 0)
    try:
        joined = np.concatenate([v.items for v in values], axis=axis)
    except (ValueError, np.exceptions.AxisError):
        return None
    return Items(_objects(joined), values[0].elem)


def _axes(call: _Call) -> list[int] | None:
    """Squeeze's and Unsqueeze's axes: the attribute before opset 13, else the input."""
    if call.opset < 13:
        axes = call.option("axes")
        return None if axes is None else list(axes)
    return call.ints(1) if call.given(1) else None


def _unsqueeze(call: _Call) -> Items | None:
    data, axes = call.value(0), _axes(call)
    if data is None or axes is None:
        return None
    rank = data.items.ndim + len(axes)
    positions = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(positions)) != len(positions) or any(not 0 <= a < rank for a in positions):
        return None
    items = data.items
    for axis in positions:
        items = np.expand_dims(items, axis)
    return Items(items, data.elem)


def _squeeze(call: _Call) -> Items | None:
    data = call.value(0)
    if data is None:
        return None
    given = call.given(1) or call.option("axes")
    axes = _axes(call)
    if given and axes is None:
        return None
    rank = data.items.ndim
    chosen = [a + rank if a < 0 else a for a in axes or []]
    if any(not 0 <= a < rank or data.shape[a] != 1 for a in chosen):
        return None
    squeezed = np.squeeze(data.items, axis=tuple(chosen)) if chosen else np.squeeze(data.items)
    return Items(_objects(squeezed), data.elem)


def _reshape(call: _Call) -> Items | None:
    data, shape = call.value(0), call.ints(1)
    if data is None or shape is None:
        return None
    allow_zero = bool(call.option("allowzero", 0))
    target = [
        data.shape[i] if size == 0 and not allow_zero and i < len(data.shape) else size
        for i, size in enumerate(shape)
    ]
    try:
        return Items(data.items.reshape(target), data.elem)
    except ValueError:
        return None


def _cast(call: _Call) -> Items | None:
    data, to = call.value(0), call.option("to")
    target = None if to is None else number_type(to)
    if data is None or target is None:
        return None
    source = data.number
    if target == source:
        return data
    saturate = bool(call.option("saturate", 1))

    def item(x: Any) -> Any:
        if _is_number(x) or type(x) is Rounded:
            return target.cast(float(x) if source.is_float else x, source, saturate=saturate)
        if x is None or target.kind != "bool":
            return None  # an expression may not fit any type but int64
        zero = sympy.sympify(x).is_zero
        return None if zero is None else int(not zero)

    return Items(_map(item, data.items), target.code)


def _where(call: _Call) -> Items | None:
    condition, chosen, other = (call.value(k) for k in range(3))
    if condition is None or chosen is None or other is None:
        return None
    if condition.elem != _BOOL or chosen.elem != other.elem:
        return None

    def item(c: Any, x: Any, y: Any) -> Any:
        return None if c is None else x if c else y

    return _broadcast([condition, chosen, other], item, chosen.elem)


#: The element types Range takes.
_RANGE_TYPES = frozenset(
    {TensorProto.INT16, TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT, TensorProto.DOUBLE}
)


def _range_scalars(call: _Call) -> tuple[NumberType, list[Any]] | None:
    """Range's start, limit and delta, scalars of one type that it takes, and that type."""
    values = call.alike(3)
    if values is None or len(values) < 3 or any(v.items.size != 1 for v in values):
        return None
    if values[0].elem not in _RANGE_TYPES:
        return None
    return values[0].number, [v.flat()[0] for v in values]


def _range_count(number: NumberType, start: Any, limit: Any, delta: Any) -> Any:
    """How many items Range(start, limit, delta) gives, max(ceil((limit - start) / delta), 0),
    as the runtimes compute it: ``limit - start`` in the type, divided in float64. Where
    that rounds differently from the exact count, ``None``."""
    if delta is None or delta == 0 or start is None or limit is None:
        return None
    if not all(_is_number(x) for x in (start, limit, delta)):
        if number.code != _INT64:
            return None
        return _normal(sympy.Max(sympy.ceiling(sympy.sympify(limit - start) / delta), 0))
    span = Fraction(limit) - Fraction(start)
    if number.exact(limit - start) != span or abs(span) > 2**52:
        return None
    count = max(math.ceil(span / Fraction(delta)), 0)
    return count if max(math.ceil(float(span) / float(delta)), 0) == count else None


def _range(call: _Call) -> Items | None:
    found = _range_scalars(call)
    if found is None:
        return None
    number, (start, limit, delta) = found
    count = _range_count(number, start, limit, delta)
    if not isinstance(count, int) or count > MAX_ITEMS:
        return None
    if number.is_float:
        # Every step is exact in the type (checked here), so the items are plain numbers:
        # they are no dims, and no int64 bound applies to them.
        if not _exact_steps(number, start, delta, count):
            return None
        return Items.of([start + delta * i for i in range(count)], number.code)
    return Items.of([_int64(start + delta * i) for i in range(count)], number.code)


def _exact_steps(number: NumberType, start: float, delta: float, count: int) -> bool:
    """Whether the type holds every ``i * delta`` and ``start + i * delta`` of a float Range
    exactly: onnxruntime adds delta up in the type, numpy multiplies in float64, and both
    then give the same items."""
    for i in range(count):
        step = Fraction(delta) * i
        for exact in (step, Fraction(start) + step):
            if number.nearest(exact) != exact:
                return False
    return True


def _fill(call: _Call) -> Items | None:
    """ConstantOfShape's fill value (float32 0 by default)."""
    attributes = call.node.attributes
    if "value" not in attributes:
        return Items.of(0.0, TensorProto.FLOAT)
    array = attributes["value"]
    if not isinstance(array, np.ndarray) or array.size != 1:
        return None
    return from_array(array.reshape(()))


def _constant_of_shape(call: _Call) -> Items | None:
    shape, fill = call.ints(0), _fill(call)
    if shape is None or fill is None or any(s < 0 for s in shape) or math.prod(shape) > MAX_ITEMS:
        return None
    return Items(np.full(shape, fill.items[()], dtype=object), fill.elem)


def _expand(call: _Call) -> Items | None:
    data, shape = call.value(0), call.ints(1)
    if data is None or shape is None:
        return None
    try:
        target = np.broadcast_shapes(data.shape, tuple(shape))
    except ValueError:
        return None
    if math.prod(target) > MAX_ITEMS:
        return None
    return Items(np.broadcast_to(data.items, target).copy(), data.elem)


def _tile(call: _Call) -> Items | None:
    data, repeats = call.value(0), call.ints(1)
    if (
        data is None
        or repeats is None
        or len(repeats) != data.items.ndim
        or min(repeats, default=0) < 0
    ):
        return None
    if data.items.size * math.prod(repeats) > MAX_ITEMS:
        return None
    return Items(np.tile(data.items, repeats), data.elem)


def _signed_or_float(number: NumberType) -> bool:
    return number.computes and (number.is_float or number.signed)


def _float(number: NumberType) -> bool:
    return number.computes and number.is_float


def _comparable(number: NumberType) -> bool:
    return number.computes or number.kind == "bool"


#: The operators whose value is followed, by op type (ONNX's own domain).
VALUE_OPS: dict[str, Callable[[_Call], Items | None]] = {
    "Constant": _constant,
    "Identity": _identity,
    "Shape": _shape,
    "Size": _size,
    "Gather": _gather,
    "Slice": _slice,
    "Concat": _concat,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Reshape": _reshape,
    "Cast": _cast,
    "Add": _elementwise(lambda t, a, b: t.exact(a + b), lambda a, b: a + b),
    "Sub": _elementwise(lambda t, a, b: t.exact(a - b), lambda a, b: a - b),
    "Mul": _elementwise(lambda t, a, b: t.exact(a * b), lambda a, b: a * b),
    "Div": _elementwise(lambda t, a, b: t.div(a, b), _truncated),
    "Mod": _mod,
    "BitShift": _bit_shift,
    "Neg": _elementwise(lambda t, a: t.exact(-a), lambda a: -a, takes=_signed_or_float),
    "Ceil": _elementwise(lambda t, a: float(math.ceil(a)), takes=_float),
    "Floor": _elementwise(lambda t, a: float(math.floor(a)), takes=_float),
    "Min": _variadic(_elementwise(lambda t, *a: min(a), lambda *a: sympy.Min(*a))),
    "Max": _variadic(_elementwise(lambda t, *a: max(a), lambda *a: sympy.Max(*a))),
    "Equal": _elementwise(lambda t, a, b: int(a == b), _equal, takes=_comparable, gives_bool=True),
    "Not": _elementwise(lambda t, a: int(not a), takes=lambda t: t.kind == "bool", gives_bool=True),
    "Where": _where,
    "Range": _range,
    "ConstantOfShape": _constant_of_shape,
    "Expand": _expand,
    "Tile": _tile,
}


def propagate(
    node: Node | NodeProto,
    opset: int,
    inputs: Sequence[Items | None],
    shapes: Sequence[Sequence[Any] | None] = (),
) -> Items | None:
    """The value of ``node``'s first output (a node of the view, or a protobuf read alone)
    from the values of its inputs (``shapes``: its inputs' shapes as items, for Shape and
    Size), or ``None`` when it is not followed."""
    found = _read(node)
    operator = VALUE_OPS.get(found.op_type) if found.domain in DEFAULT_DOMAINS else None
    if operator is None:
        return None
    value = operator(_Call(found, opset, inputs, shapes))
    return value if value is None or _small(value.shape) else None


def _read(node: Node | NodeProto) -> Node:
    return Node.alone(node) if isinstance(node, NodeProto) else node


def _small(shape: Sequence[int]) -> bool:
    """Whether a value of ``shape`` is small enough to follow: at most :data:`MAX_ITEMS`
    items, and as few nested lists (an empty value of shape ``(10**9, 0)`` holds nothing,
    but its ``tolist()`` is 10**9 lists)."""
    return math.prod(max(d, 1) for d in shape) <= MAX_ITEMS


# --- output shapes that values decide -----------------------------------------------------


def _broadcast_dim(a: Any, b: Any) -> Any:
    """One dim of a valid broadcast of ``a`` against ``b`` (``None`` when undecidable)."""
    if a == 1:
        return b
    if b == 1 or (a is not None and a == b):
        return a
    if isinstance(a, int):
        return a  # b must be a or 1 for the node to run
    if isinstance(b, int):
        return b
    return None


def _reshape_dims(call: _Call) -> list[Any] | None:
    shape = call.value(1)
    if shape is None or shape.items.ndim != 1 or shape.elem != _INT64:
        return None
    allow_zero = bool(call.option("allowzero", 0))
    dims = call.dims
    target: list[Any] = []
    for i, size in enumerate(shape.flat()):
        if size == 0 and not allow_zero:
            size = dims[i] if dims is not None and i < len(dims) else None
        elif size is not None and not isinstance(size, int):
            kept = dims[i] if dims is not None and i < len(dims) else None
            size = size if _plain_size(size, allow_zero, kept) else None
        target.append(size)
    holes = [i for i, size in enumerate(target) if size == -1]
    if len(holes) == 1:
        target[holes[0]] = _inferred_dim(dims, [s for s in target if s != -1])
    return target


def _plain_size(size: Any, allow_zero: bool, kept: Any) -> bool:
    """Whether an expression in a Reshape target is its output dim: it is never -1 (the dim
    to infer), and never 0 unless ``allowzero`` (a 0 keeps the data's dim, ``kept``: the
    same where the expression is that dim). A dim name counts as at least 1 here, as onnx
    and onnxruntime's inference take it: only an input with no elements breaks that."""
    if not size.is_nonnegative:
        return False
    return bool(allow_zero or size == kept or _at_least_one(size).is_positive)


@lru_cache(maxsize=1024)
def _at_least_one(expr: Any) -> Any:
    """``expr`` with each dim name taken to be at least 1."""
    return expr.xreplace(
        {s: sympy.Symbol(s.name, integer=True, positive=True) for s in expr.free_symbols}
    )


def _inferred_dim(dims: Sequence[Any] | None, others: list[Any]) -> Any:
    """Reshape's ``-1``: the input's size over the other output dims. Wherever the node runs
    the quotient is whole (``N/4`` holds for every ``N`` the node takes), so only a quotient
    that can never be whole is no dim."""
    if dims is None or any(d is None for d in (*dims, *others)):
        return None
    quotient = sympy.cancel(sympy.Mul(*dims) / sympy.Mul(*others))
    return None if quotient.is_integer is False else _normal(quotient)


def _expand_dims(call: _Call) -> list[Any] | None:
    """Expand's dims: the input's broadcast with the shape it is given. Where the shape's
    values are not known but its length is, the rank still is: a dim of the input other
    than 1 stays (the shape may only give 1 or the same there), the rest is not known."""
    shape = call.value(1)
    if call.dims is None:
        return None
    if shape is None:
        given = call.shapes[1] if len(call.shapes) > 1 else None
        if given is None or len(given) != 1 or not isinstance(given[0], int):
            return None
        a = list(call.dims)
        rank = max(len(a), given[0])
        a = [1] * (rank - len(a)) + a
        return [None if d == 1 or not isinstance(d, int) else d for d in a]
    if shape.items.ndim != 1 or shape.elem != _INT64:
        return None
    a, b = list(call.dims), shape.flat()
    rank = max(len(a), len(b))
    a, b = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
    return [_broadcast_dim(x, y) for x, y in zip(a, b, strict=True)]


def _constant_of_shape_dims(call: _Call) -> list[Any] | None:
    shape = call.value(0)
    if shape is None or shape.items.ndim != 1 or shape.elem != _INT64:
        return None
    return shape.flat()


def _tile_dims(call: _Call) -> list[Any] | None:
    repeats = call.value(1)
    if repeats is None or repeats.elem != _INT64 or call.dims is None:
        return None
    if repeats.items.size != len(call.dims):
        return None
    return [
        None if d is None or r is None else _normal(d * r)
        for d, r in zip(call.dims, repeats.flat(), strict=True)
    ]


def _range_dims(call: _Call) -> list[Any] | None:
    found = _range_scalars(call)
    if found is None:
        return None
    number, scalars = found
    return [_range_count(number, *scalars)]


def _concat_dims(call: _Call) -> list[Any] | None:
    """Concat's dims: the sum of the inputs' along the axis (``ceiling(N/2) + N -
    ceiling(N/2)`` is ``N``), elsewhere what any input says (they must all be equal)."""
    known_shapes = [s for s in call.shapes if s is not None]
    if not known_shapes:
        return None
    rank = len(known_shapes[0])
    if any(len(s) != rank for s in known_shapes):
        return None
    # An input of unknown shape has the others' rank, and adds a length not known.
    shapes = [s if s is not None else [None] * rank for s in call.shapes]
    axis = call.option("axis", 0)
    if not -rank <= axis < rank:
        return None
    axis %= rank
    dims: list[Any] = []
    for k in range(rank):
        column = [s[k] for s in shapes if s is not None]
        if k == axis:
            if all(isinstance(d, int) for d in column):
                dims.append(sum(column))
            else:
                dims.append(None if None in column else _normal(sympy.Add(*column)))
        else:
            known = [d for d in column if d is not None]
            dims.append(next((d for d in known if isinstance(d, int)), known[0] if known else None))
    return dims


#: The operators whose output shape splitops works out itself: from the values of their
#: inputs, or (Concat) from symbolic dims that onnx does not add up.
SHAPE_OPS: dict[str, Callable[[_Call], list[Any] | None]] = {
    "Reshape": _reshape_dims,
    "Expand": _expand_dims,
    "ConstantOfShape": _constant_of_shape_dims,
    "Tile": _tile_dims,
    "Range": _range_dims,
    "Concat": _concat_dims,
}

#: The operators that read the shapes of their inputs (:class:`_Call` ``shapes``).
READS_SHAPES = frozenset({"Shape", "Size", "Reshape", "Expand", "Tile", "Concat"})


def value_shape(
    node: Node | NodeProto,
    opset: int,
    inputs: Sequence[Items | None],
    shapes: Sequence[Sequence[Any] | None],
) -> list[Any] | None:
    """The dims of ``node``'s first output as items, decided by the values (or shapes) of
    its inputs, or ``None`` when they do not decide them."""
    found = _read(node)
    operator = SHAPE_OPS.get(found.op_type) if found.domain in DEFAULT_DOMAINS else None
    if operator is None:
        return None
    return operator(_Call(found, opset, inputs, shapes))
