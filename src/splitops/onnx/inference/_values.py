"""The values of the small tensors that exporters compute shapes with, concrete or symbolic.

Exporters rarely write a ``split`` as a constant when it depends on a dynamic axis: they
compute it, ``Shape -> Gather -> Div -> ... -> Concat``. Shape inference follows such values
through the operators below, so that a Split or SplitToSequence fed by them gets sizes that
are expressions of the input's dims (``floor(seq/3)``), and a Reshape, Expand, Range, Tile
or ConstantOfShape fed by them gets its output's dims (:func:`value_shape`).

A :class:`Value` holds the items of one tensor in a numpy array of objects: ints, sympy
expressions of dim names (:mod:`splitops.onnx.inference._symbolic`), or ``None`` for an item nobody
knows (an unknown dim read by ``Shape``). Whatever an operator here cannot decide exactly
gives ``None``, never a guess: integer ``Div`` truncates toward zero, so it is ``floor`` only
where the quotient is provably >= 0 (or exact); ``Mod`` with ``fmod=1`` only where both sides
are >= 0. Values of a floating type are exact rationals: an exporter casts a dim to float to
divide it and take ``Ceil`` or ``Floor``, which is exact for dims below 2**24 (float32) or
2**53 (float64), the only lengths a tensor of that many elements per slice can have.

>>> from onnx import helper
>>> from splitops.onnx.inference._symbolic import dim_symbol
>>> n = dim_symbol("seq")
>>> shape = propagate(helper.make_node("Shape", ["x"], ["s"]), 18, [None], [[2, n, 12]])
>>> length = propagate(helper.make_node("Gather", ["s", "i"], ["g"]), 18, [shape, Value.of(1)])
>>> propagate(helper.make_node("Div", ["g", "k"], ["d"]), 18, [length, Value.of(3)])
Value(floor(seq/3))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import NodeProto, TensorProto, helper

from ..model._node import DEFAULT_DOMAINS
from ..model._walk import SMALL_TENSOR, constant_value
from ._symbolic import sympy

__all__ = [
    "MAX_ITEMS",
    "READS_SHAPES",
    "SHAPE_OPS",
    "VALUE_OPS",
    "Value",
    "propagate",
    "value_shape",
]

#: The most items a value may have: shape computations are small; a larger tensor (a weight,
#: an embedding table) is never followed, which is what lets inference set weights aside.
MAX_ITEMS = SMALL_TENSOR

_INTEGER_TYPES = frozenset(
    {
        TensorProto.INT8,
        TensorProto.INT16,
        TensorProto.INT32,
        TensorProto.INT64,
        TensorProto.UINT8,
        TensorProto.UINT16,
        TensorProto.UINT32,
        TensorProto.UINT64,
    }
)
_FLOAT_TYPES = frozenset(
    {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16}
)


@dataclass(frozen=True, eq=False)
class Value:
    """The items of a tensor (an object array of its shape) and whether it holds integers
    (else a floating type)."""

    items: np.ndarray[Any, Any]
    integer: bool = True

    @classmethod
    def of(cls, items: Any, *, integer: bool = True) -> Value:
        """A value from nested lists (or one item) of ints, sympy expressions or ``None``."""
        return cls(_objects(items), integer)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.items.shape)

    def flat(self) -> list[Any]:
        return list(self.items.reshape(-1))

    def host(self) -> Any:
        """The items as Python values (nested lists, or one item for a scalar); the numbers
        of a floating value as floats."""
        if self.integer:
            return self.items.tolist()
        return _map(_as_float, self.items).tolist()

    @property
    def known(self) -> bool:
        """Whether every item is known (an int, or an expression)."""
        return all(item is not None for item in self.flat())

    @property
    def concrete(self) -> bool:
        """Whether every item is a number (no symbol, none unknown)."""
        return all(_is_number(item) for item in self.flat())

    def __repr__(self) -> str:
        inner = self.host()
        return f"Value({inner})" if self.integer else f"Value({inner}, float)"


def _objects(items: Any) -> np.ndarray[Any, Any]:
    """``items`` as an object array of normalized items (sympy integers become ints)."""
    if isinstance(items, np.ndarray):
        array = items if items.dtype == object else items.astype(object)
    elif isinstance(items, (list, tuple)):
        array = np.array(items, dtype=object)
    else:
        array = np.empty((), dtype=object)
        array[()] = items
    return _map(_normal, array) if array.size else array


def _map(function: Callable[..., Any], *arrays: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``function`` on the items of ``arrays`` (broadcast), as an object array."""
    result = np.frompyfunc(function, len(arrays), 1)(*arrays)
    if isinstance(result, np.ndarray):
        return result
    scalar = np.empty((), dtype=object)
    scalar[()] = result
    return scalar


def _is_number(item: Any) -> bool:
    return isinstance(item, int) or (isinstance(item, sympy.Rational) and item.is_finite is True)


def _as_float(item: Any) -> Any:
    return float(item) if _is_number(item) else item


def _normal(item: Any) -> Any:
    if item is None or type(item) is int:
        return item
    if isinstance(item, (bool, np.bool_)):
        return int(item)
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, (float, np.floating)):
        value = float(item)
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() else sympy.Rational(value)
    if isinstance(item, sympy.Integer):
        return int(item)
    if isinstance(item, sympy.Expr) and not item.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return item
    return None


# --- one operator each ------------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    """One node to evaluate: its attributes, the values of its inputs (``None`` where not
    known or absent), and the shapes of its inputs as items (for the operators in
    :data:`READS_SHAPES`; ``None`` where unknown)."""

    node: NodeProto
    opset: int
    inputs: Sequence[Value | None]
    shapes: Sequence[Sequence[Any] | None] = ()

    @property
    def dims(self) -> Sequence[Any] | None:
        """The shape of the first input."""
        return self.shapes[0] if self.shapes else None

    def attribute(self, name: str, default: Any = None) -> Any:
        for attribute in self.node.attribute:
            if attribute.name == name:
                return helper.get_attribute_value(attribute)
        return default

    def value(self, index: int) -> Value | None:
        return self.inputs[index] if index < len(self.inputs) else None

    def ints(self, index: int) -> list[int] | None:
        """Input ``index`` as a list of plain ints (a scalar as one), or ``None``."""
        value = self.value(index)
        if value is None or not value.integer or not value.concrete:
            return None
        return [int(item) for item in value.flat()]


def _lift(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` on items, ``None`` when any item is unknown or it cannot decide."""

    def lifted(*items: Any) -> Any:
        if any(item is None for item in items):
            return None
        try:
            return _normal(function(*items))
        except (ArithmeticError, TypeError, ValueError):
            return None

    return lifted


def _elementwise(call: _Call, function: Callable[..., Any], *, integer: bool) -> Value | None:
    values = list(call.inputs)
    if not values or any(v is None for v in values):
        return None
    known = [v for v in values if v is not None]
    try:
        shape = np.broadcast_shapes(*(v.shape for v in known))
    except ValueError:
        return None
    if math.prod(shape) > MAX_ITEMS:
        return None
    return Value(_map(_lift(function), *(v.items for v in known)), integer)


def _integer_result(call: _Call) -> bool:
    return all(v is not None and v.integer for v in call.inputs)


def _truncated(a: Any, b: Any) -> Any:
    """ONNX integer Div: the quotient truncated toward zero."""
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b > 0) else -quotient
    return None if b == 0 else _toward_zero(sympy.sympify(a) / b)


def _div(call: _Call) -> Value | None:
    if _integer_result(call):
        return _elementwise(call, _truncated, integer=True)
    return _elementwise(
        call, lambda a, b: None if b == 0 else sympy.Rational(1, 1) * a / b, integer=False
    )


def _remainder(a: Any, b: Any, fmod: bool) -> Any:
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return int(math.fmod(a, b)) if fmod else a % b
    if fmod and not (sympy.sympify(a).is_nonnegative and sympy.sympify(b).is_positive):
        return None  # C fmod takes the dividend's sign: decidable only for a >= 0, b > 0
    return sympy.Mod(a, b)


def _mod(call: _Call) -> Value | None:
    fmod = bool(call.attribute("fmod", 0))
    return _elementwise(call, lambda a, b: _remainder(a, b, fmod), integer=_integer_result(call))


def _rounded(function: Callable[[Any], Any]) -> Callable[[_Call], Value | None]:
    def apply(call: _Call) -> Value | None:
        value = call.value(0)
        if value is None or value.integer:
            return value
        return _elementwise(call, function, integer=False)

    return apply


def _arithmetic(function: Callable[..., Any]) -> Callable[[_Call], Value | None]:
    return lambda call: _elementwise(call, function, integer=_integer_result(call))


def _variadic(function: Callable[..., Any]) -> Callable[[_Call], Value | None]:
    def apply(call: _Call) -> Value | None:
        if not call.inputs or any(v is None for v in call.inputs):
            return None
        result = call.inputs[0]
        for other in call.inputs[1:]:
            pair = _Call(call.node, call.opset, [result, other])
            result = _elementwise(pair, function, integer=_integer_result(pair))
            if result is None:
                return None
        return result

    return apply


def _constant(call: _Call) -> Value | None:
    array = constant_value(call.node)
    return None if array is None else from_array(array)


def from_array(array: np.ndarray[Any, Any]) -> Value | None:
    """A numpy array as a value, or ``None`` for a large one or one of no number type."""
    if not _small(array.shape) or array.dtype.kind not in "iubf":
        return None
    return Value(_objects(array), array.dtype.kind != "f")


def _shape(call: _Call) -> Value | None:
    if call.dims is None:
        return None
    rank = len(call.dims)
    start, end = call.attribute("start", 0), call.attribute("end", rank)
    return Value.of(list(call.dims)[slice(*_clamped(start, end, rank))])


def _clamped(start: int, end: int, rank: int) -> tuple[int, int]:
    def clamp(index: int) -> int:
        return min(max(index + rank if index < 0 else index, 0), rank)

    return clamp(start), clamp(end)


def _size(call: _Call) -> Value | None:
    if call.dims is None or any(d is None for d in call.dims):
        return None
    return Value.of(_normal(sympy.Mul(*call.dims)) if call.dims else 1)


def _identity(call: _Call) -> Value | None:
    return call.value(0)


def _gather(call: _Call) -> Value | None:
    data, indices = call.value(0), call.ints(1)
    index_value = call.value(1)
    if data is None or indices is None or index_value is None or not data.shape:
        return None
    axis = call.attribute("axis", 0)
    if not -data.items.ndim <= axis < data.items.ndim:
        return None
    length = data.shape[axis]
    if any(not -length <= i < length for i in indices):
        return None
    taken = np.take(data.items, np.reshape(indices, index_value.shape), axis=axis)
    return Value(_objects(taken), data.integer)


def _slice(call: _Call) -> Value | None:
    data = call.value(0)
    if data is None:
        return None
    if call.opset < 10:
        starts, ends = call.attribute("starts"), call.attribute("ends")
        axes, steps = call.attribute("axes"), None
    else:
        starts, ends, axes, steps = call.ints(1), call.ints(2), call.ints(3), call.ints(4)
        if (len(call.inputs) > 3 and call.node.input[3] and axes is None) or (
            len(call.inputs) > 4 and call.node.input[4] and steps is None
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
    return Value(_objects(items), data.integer)


def _slice_indices(start: int, end: int, step: int, length: int) -> list[int]:
    """The indices ONNX Slice takes along one axis (its clamping, not Python's)."""
    start = start + length if start < 0 else start
    end = end + length if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), length), min(max(end, 0), length)
    else:
        start, end = min(max(start, 0), length - 1), min(max(end, -1), length - 1)
    return list(range(start, end, step))


def _concat(call: _Call) -> Value | None:
    if not call.inputs or any(v is None for v in call.inputs):
        return None
    values = [v for v in call.inputs if v is not None]
    axis = call.attribute("axis", 0)
    try:
        joined = np.concatenate([v.items for v in values], axis=axis)
    except (ValueError, np.exceptions.AxisError):
        return None
    return Value(_objects(joined), all(v.integer for v in values))


def _axes(call: _Call) -> list[int] | None:
    """Squeeze's and Unsqueeze's axes: the attribute before opset 13, else the input."""
    if call.opset < 13:
        axes = call.attribute("axes")
        return None if axes is None else list(axes)
    return call.ints(1) if len(call.node.input) > 1 and call.node.input[1] else None


def _unsqueeze(call: _Call) -> Value | None:
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
    return Value(items, data.integer)


def _squeeze(call: _Call) -> Value | None:
    data = call.value(0)
    if data is None:
        return None
    given = (len(call.node.input) > 1 and call.node.input[1]) or call.attribute("axes")
    axes = _axes(call)
    if given and axes is None:
        return None
    rank = data.items.ndim
    chosen = [a + rank if a < 0 else a for a in axes or []]
    if any(not 0 <= a < rank or data.shape[a] != 1 for a in chosen):
        return None
    squeezed = np.squeeze(data.items, axis=tuple(chosen)) if chosen else np.squeeze(data.items)
    return Value(_objects(squeezed), data.integer)


def _reshape(call: _Call) -> Value | None:
    data, shape = call.value(0), call.ints(1)
    if data is None or shape is None:
        return None
    allow_zero = bool(call.attribute("allowzero", 0))
    target = [
        data.shape[i] if size == 0 and not allow_zero and i < len(data.shape) else size
        for i, size in enumerate(shape)
    ]
    try:
        return Value(data.items.reshape(target), data.integer)
    except ValueError:
        return None


def _cast(call: _Call) -> Value | None:
    data, to = call.value(0), call.attribute("to")
    if data is None:
        return None
    if to in _FLOAT_TYPES:
        return Value(data.items, integer=False)
    if to not in _INTEGER_TYPES:
        return None
    if data.integer:
        return data
    # Float to integer rounds toward zero.
    return Value(_map(_lift(_toward_zero), data.items), integer=True)


def _toward_zero(item: Any) -> Any:
    """``item`` rounded toward zero, where its sign is known (else ``None``)."""
    if isinstance(item, int):
        return item
    expr = sympy.sympify(item)
    if expr.is_integer:
        return expr
    if expr.is_nonnegative:
        return sympy.floor(expr)
    if expr.is_nonpositive:
        return sympy.ceiling(expr)
    return None


def _equal(a: Any, b: Any) -> Any:
    """1 where ``a == b`` is certain, 0 where ``a != b`` is, else ``None``."""
    difference = sympy.sympify(a - b)
    return None if difference.is_zero is None else int(bool(difference.is_zero))


def _where(call: _Call) -> Value | None:
    condition, chosen, other = (call.value(k) for k in range(3))
    if condition is None or chosen is None or other is None:
        return None
    pair = _Call(call.node, call.opset, [condition, chosen, other])
    return _elementwise(
        pair, lambda c, x, y: x if c else y, integer=chosen.integer and other.integer
    )


def _range_count(start: Any, limit: Any, delta: Any) -> Any:
    """How many items Range(start, limit, delta) gives: max(ceil((limit - start) / delta), 0)."""
    if delta is None or delta == 0 or start is None or limit is None:
        return None
    return _normal(sympy.Max(sympy.ceiling(sympy.sympify(limit - start) / delta), 0))


def _scalars(call: _Call, count: int) -> list[Any] | None:
    found = []
    for index in range(count):
        value = call.value(index)
        if value is None or value.items.size != 1:
            return None
        found.append(value.flat()[0])
    return found


def _range(call: _Call) -> Value | None:
    given = _scalars(call, 3)
    if given is None:
        return None
    start, limit, delta = given
    count = _range_count(start, limit, delta)
    if not isinstance(count, int) or count > MAX_ITEMS:
        return None
    integer = all(v is not None and v.integer for v in call.inputs[:3])
    return Value.of([_normal(start + delta * i) for i in range(count)], integer=integer)


def _fill(call: _Call) -> tuple[Any, bool]:
    """ConstantOfShape's fill value and whether it is an integer (float 0 by default)."""
    tensor = call.attribute("value")
    if tensor is None:
        return 0, False
    array = constant_value(tensor)
    if array is None or array.size != 1:
        return None, False
    return _normal(array.reshape(-1)[0]), array.dtype.kind in "iub"


def _constant_of_shape(call: _Call) -> Value | None:
    shape = call.ints(0)
    fill, integer = _fill(call)
    if shape is None or fill is None or any(s < 0 for s in shape) or math.prod(shape) > MAX_ITEMS:
        return None
    return Value.of(np.full(shape, fill, dtype=object), integer=integer)


def _expand(call: _Call) -> Value | None:
    data, shape = call.value(0), call.ints(1)
    if data is None or shape is None:
        return None
    try:
        target = np.broadcast_shapes(data.shape, tuple(shape))
    except ValueError:
        return None
    if math.prod(target) > MAX_ITEMS:
        return None
    return Value(np.broadcast_to(data.items, target).copy(), data.integer)


def _tile(call: _Call) -> Value | None:
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
    return Value(np.tile(data.items, repeats), data.integer)


#: The operators whose value is followed, by op type (ONNX's own domain).
VALUE_OPS: dict[str, Callable[[_Call], Value | None]] = {
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
    "Add": _arithmetic(lambda a, b: a + b),
    "Sub": _arithmetic(lambda a, b: a - b),
    "Mul": _arithmetic(lambda a, b: a * b),
    "Div": _div,
    "Mod": _mod,
    "Neg": _arithmetic(lambda a: -a),
    "Ceil": _rounded(lambda a: sympy.ceiling(a)),
    "Floor": _rounded(lambda a: sympy.floor(a)),
    "Min": _variadic(lambda a, b: sympy.Min(a, b)),
    "Equal": lambda call: _elementwise(call, _equal, integer=True),
    "Not": lambda call: _elementwise(call, lambda a: int(not a), integer=True),
    "Where": _where,
    "Max": _variadic(lambda a, b: sympy.Max(a, b)),
    "Range": _range,
    "ConstantOfShape": _constant_of_shape,
    "Expand": _expand,
    "Tile": _tile,
}


def propagate(
    node: NodeProto,
    opset: int,
    inputs: Sequence[Value | None],
    shapes: Sequence[Sequence[Any] | None] = (),
) -> Value | None:
    """The value of ``node``'s first output from the values of its inputs (``shapes``: its
    inputs' shapes as items, for Shape and Size), or ``None`` when it is not followed."""
    operator = VALUE_OPS.get(node.op_type) if node.domain in DEFAULT_DOMAINS else None
    if operator is None:
        return None
    value = operator(_Call(node, opset, inputs, shapes))
    return value if value is None or _small(value.shape) else None


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
    if shape is None or shape.items.ndim != 1:
        return None
    allow_zero = bool(call.attribute("allowzero", 0))
    dims = call.dims
    target: list[Any] = []
    for i, size in enumerate(shape.flat()):
        if size == 0 and not allow_zero:
            size = dims[i] if dims is not None and i < len(dims) else None
        target.append(size)
    holes = [i for i, size in enumerate(target) if size == -1]
    if len(holes) == 1:
        target[holes[0]] = _inferred_dim(dims, [s for s in target if s != -1])
    return target


def _inferred_dim(dims: Sequence[Any] | None, others: list[Any]) -> Any:
    """Reshape's ``-1``: the input's size over the other output dims. Wherever the node runs
    the quotient is whole (``N/4`` holds for every ``N`` the node takes), so only a quotient
    that can never be whole is no dim."""
    if dims is None or any(d is None for d in (*dims, *others)):
        return None
    quotient = sympy.cancel(sympy.Mul(*dims) / sympy.Mul(*others))
    return None if quotient.is_integer is False else _normal(quotient)


def _expand_dims(call: _Call) -> list[Any] | None:
    shape = call.value(1)
    if shape is None or shape.items.ndim != 1 or call.dims is None:
        return None
    a, b = list(call.dims), shape.flat()
    rank = max(len(a), len(b))
    a, b = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
    return [_broadcast_dim(x, y) for x, y in zip(a, b, strict=True)]


def _constant_of_shape_dims(call: _Call) -> list[Any] | None:
    shape = call.value(0)
    return None if shape is None or shape.items.ndim != 1 else shape.flat()


def _tile_dims(call: _Call) -> list[Any] | None:
    repeats = call.value(1)
    if repeats is None or call.dims is None or repeats.items.size != len(call.dims):
        return None
    return [_lift(lambda d, r: d * r)(d, r) for d, r in zip(call.dims, repeats.flat(), strict=True)]


def _range_dims(call: _Call) -> list[Any] | None:
    given = _scalars(call, 3)
    return None if given is None else [_range_count(*given)]


def _concat_dims(call: _Call) -> list[Any] | None:
    """Concat's dims: the sum of the inputs' along the axis (``ceiling(N/2) + N -
    ceiling(N/2)`` is ``N``), elsewhere what any input says (they must all be equal)."""
    shapes = list(call.shapes)
    if not shapes or any(s is None for s in shapes):
        return None
    rank = len(shapes[0] or ())
    if any(len(s or ()) != rank for s in shapes):
        return None
    axis = call.attribute("axis", 0)
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
    node: NodeProto,
    opset: int,
    inputs: Sequence[Value | None],
    shapes: Sequence[Sequence[Any] | None],
) -> list[Any] | None:
    """The dims of ``node``'s first output as items, decided by the values (or shapes) of
    its inputs, or ``None`` when they do not decide them."""
    operator = SHAPE_OPS.get(node.op_type) if node.domain in DEFAULT_DOMAINS else None
    if operator is None:
        return None
    return operator(_Call(node, opset, inputs, shapes))
