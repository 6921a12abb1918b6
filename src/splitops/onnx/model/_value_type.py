"""The type of a value as a frozen object: what it says, how it refines another type of the
same value, and where two types of one value contradict each other.

A ``TypeProto`` is a mutable message; a rule about types written against it copies and
compares field by field, and each tool that needs the rule writes it again. Here a type is
read once into a :class:`TensorType` or a :class:`SequenceType` (any other kind, a map or an
optional, is an :class:`OtherType` that only knows its kind), and the rules are their
methods: :meth:`~TensorType.refine`, :meth:`~TensorType.conflicts`,
:meth:`~TensorType.union` and :meth:`~TensorType.says_more`. The model layer's functions of
``TypeProto`` (:func:`~splitops.onnx.model.refined_type`, ``conflicts``, ``union_type``,
``says_more``) read their types into these and ask them.

A dim is an int (its length), a str (a name; onnx's own placeholders ``unk__3`` are names
that say nothing), or ``None`` (unknown). That is the one dim rule (:func:`read_dim`): a
negative ``dim_value``, which no tensor has, is unknown, as is a dim that gives neither.

>>> from onnx import helper
>>> ours = value_type(helper.make_tensor_type_proto(1, ["N", None, "unk__1"]))
>>> ours.refine(value_type(helper.make_tensor_type_proto(1, [4, 3, "M"])))
TensorType(element=1, dims=(4, 3, 'M'))
>>> list(TensorType(1, (2, "N")).conflicts(TensorType(1, (3, "N"))))
['dim 0 is declared 2 and inferred 3']
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from onnx import TensorShapeProto, TypeProto, helper

__all__ = [
    "Dim",
    "OtherType",
    "SequenceType",
    "TensorType",
    "ValueType",
    "named_placeholders",
    "read_dim",
    "renamed",
    "unnamed_placeholders",
    "value_type",
]

#: A dim: its length, its name, or ``None`` where nothing is known of it.
Dim = int | str | None

#: onnx's shape inference names the dims it cannot know ``unk__0``, ``unk__1``, ...: fresh
#: symbols that say nothing about the value, so a declaration holding one declares nothing.
_PLACEHOLDER = "unk__"

#: How two types are told apart in words: a declaration against an inference by default.
_SAID = ("declared {}", "inferred {}")


def says(dim: Dim) -> int:
    """What a dim says: 3 a length, 2 a name, 1 onnx's placeholder, 0 nothing (a negative
    length, which no tensor has, says nothing either).

    >>> [says(d) for d in (4, "N", "unk__2", None, -1)]
    [3, 2, 1, 0, 0]
    """
    if isinstance(dim, int):
        return 3 if dim >= 0 else 0
    if not dim:
        return 0
    return 1 if dim.startswith(_PLACEHOLDER) and dim[len(_PLACEHOLDER) :].isdigit() else 2


@dataclass(frozen=True)
class TensorType:
    """A tensor's type: its element type (a ``TensorProto`` code, 0 where unknown) and its
    dims (``None`` where its rank is unknown)."""

    element: int
    dims: tuple[Dim, ...] | None

    @property
    def known(self) -> bool:
        """Whether it says what the value is (its element type)."""
        return bool(self.element)

    @property
    def rank(self) -> int | None:
        """Its number of axes, or ``None`` where that is unknown."""
        return None if self.dims is None else len(self.dims)

    @property
    def static_dims(self) -> tuple[int | None, ...] | None:
        """The length of each axis where it is a number (``None`` for a named or unknown
        one), or ``None`` where the rank is unknown.

        >>> TensorType(1, (2, "N", None)).static_dims
        (2, None, None)
        """
        if self.dims is None:
            return None
        return tuple(d if isinstance(d, int) else None for d in self.dims)

    def proto(self) -> TypeProto:
        return helper.make_tensor_type_proto(
            self.element, None if self.dims is None else list(self.dims)
        )

    def refine(self, other: ValueType | None) -> ValueType:
        """This type, with what ``other`` (a type of the same value, found from less
        precise inputs) knows and this one does not: per dim the one that says more (a
        length, then a name, then onnx's placeholder), this one's where both say as much,
        or where both give a length and they differ."""
        if not self.known:
            return other if other is not None else self
        if not isinstance(other, TensorType) or not other.known:
            return self
        element = self.element or other.element
        dims = self.dims
        if dims is None:
            dims = other.dims
        elif other.dims is not None and len(dims) == len(other.dims):
            pairs = zip(dims, other.dims, strict=True)
            dims = tuple(theirs if says(theirs) > says(mine) else mine for mine, theirs in pairs)
        found = TensorType(element, dims)
        return self if found == self else found

    def says_more(self, ours: ValueType | None) -> bool:
        """Whether this type says something of a value that ``ours`` does not: an element
        type, a rank, or a dim's length or name where ours has none (onnx's placeholders
        say nothing)."""
        if not self.known:
            return False
        if not isinstance(ours, TensorType) or not ours.known:
            return True
        if self.dims is None:
            return False
        if ours.dims is None or len(ours.dims) != len(self.dims):
            return True
        return any(says(a) >= 2 and says(b) <= 1 for a, b in zip(self.dims, ours.dims, strict=True))

    def conflicts(self, other: ValueType, said: tuple[str, str] = _SAID) -> Iterator[str]:
        """Where ``other``, a type of the same value, contradicts this one, in words: the
        kind, the element type, the rank, or two lengths of a dim. ``said`` words what each
        type says (a template for its value)."""
        first, second = said
        if not isinstance(other, TensorType):
            yield from _kinds(self, other, said)
        elif self.element and other.element and self.element != other.element:
            a, b = _element_name(self.element), _element_name(other.element)
            yield f"its element type is {first.format(a)} and {second.format(b)}"
        elif self.dims is None or other.dims is None:
            return
        elif len(self.dims) != len(other.dims):
            yield f"its rank is {first.format(len(self.dims))} and {second.format(len(other.dims))}"
        else:
            for axis, (c, d) in enumerate(zip(self.dims, other.dims, strict=True)):
                if says(c) == says(d) == 3 and c != d:
                    yield f"dim {axis} is {first.format(c)} and {second.format(d)}"

    def union(self, other: ValueType) -> ValueType | None:
        """What both types say (the outputs of an If's two branches, a function's value at
        two call sites): the dims they agree on; ``None`` where they disagree on the kind or
        the element type."""
        if not isinstance(other, TensorType) or other.element != self.element:
            return None
        if self.dims is None or other.dims is None or len(self.dims) != len(other.dims):
            return TensorType(self.element, None)
        pairs = zip(self.dims, other.dims, strict=True)
        return TensorType(self.element, tuple(a if a == b and says(a) else None for a, b in pairs))

    def text(self) -> str | None:
        """``tensor(float)``, or ``None`` where its element type is unknown."""
        return f"tensor({_element_name(self.element)})" if self.element else None

    def shape_text(self) -> str | None:
        """``[N, ?, 2]`` (``?`` for an unknown dim), or ``None`` where the rank is unknown.

        >>> TensorType(1, ("N", None, 2)).shape_text()
        '[N, ?, 2]'
        """
        if self.dims is None:
            return None
        return f"[{', '.join('?' if d is None else str(d) for d in self.dims)}]"


@dataclass(frozen=True)
class SequenceType:
    """A sequence's type: the type of its items."""

    element: ValueType

    @property
    def known(self) -> bool:
        return True

    def proto(self) -> TypeProto:
        return helper.make_sequence_type_proto(self.element.proto())

    def refine(self, other: ValueType | None) -> ValueType:
        if not isinstance(other, SequenceType):
            return self
        inner = self.element.refine(other.element)
        return self if inner is self.element else SequenceType(inner)

    def says_more(self, ours: ValueType | None) -> bool:
        if not isinstance(ours, SequenceType):
            return True
        return self.element.says_more(ours.element)

    def conflicts(self, other: ValueType, said: tuple[str, str] = _SAID) -> Iterator[str]:
        if not isinstance(other, SequenceType):
            yield from _kinds(self, other, said)
        else:
            yield from self.element.conflicts(other.element, said)

    def union(self, other: ValueType) -> ValueType | None:
        if not isinstance(other, SequenceType):
            return None
        inner = self.element.union(other.element)
        return None if inner is None else SequenceType(inner)

    def text(self) -> str | None:
        inner = self.element.text()
        return None if inner is None else f"seq({inner})"

    def shape_text(self) -> str | None:
        """Its items' shape (see :meth:`TensorType.shape_text`)."""
        return self.element.shape_text()


@dataclass(frozen=True)
class OtherType:
    """A type of another kind (a map, an optional): read as it is, it only knows its kind."""

    kind: str
    message: TypeProto

    def __hash__(self) -> int:
        # A message is no hashable value; its bytes are.
        return hash((self.kind, self.message.SerializeToString(deterministic=True)))

    @property
    def known(self) -> bool:
        return True

    def proto(self) -> TypeProto:
        return self.message

    def refine(self, other: ValueType | None) -> ValueType:
        return self

    def says_more(self, ours: ValueType | None) -> bool:
        return not isinstance(ours, OtherType) or ours.kind != self.kind

    def conflicts(self, other: ValueType, said: tuple[str, str] = _SAID) -> Iterator[str]:
        if not isinstance(other, OtherType) or other.kind != self.kind:
            yield from _kinds(self, other, said)

    def union(self, other: ValueType) -> ValueType | None:
        return self if other == self else None

    def text(self) -> str | None:
        return None

    def shape_text(self) -> str | None:
        return None


ValueType = TensorType | SequenceType | OtherType


def value_type(message: TypeProto | None, *, as_written: bool = False) -> ValueType | None:
    """``message`` read as a frozen type, or ``None`` where it gives no kind.

    With ``as_written``, a negative length stays as the message writes it rather than
    reading as unknown (:func:`read_dim`): for a check that names it, as no tensor has one.

    >>> from onnx import helper
    >>> message = helper.make_tensor_type_proto(1, [-1, "N"])
    >>> value_type(message), value_type(message, as_written=True)
    (TensorType(element=1, dims=(None, 'N')), TensorType(element=1, dims=(-1, 'N')))
    """
    if message is None:
        return None
    kind = message.WhichOneof("value")
    if kind == "tensor_type":
        tensor = message.tensor_type
        read = _written_dim if as_written else read_dim
        dims = tuple(map(read, tensor.shape.dim)) if tensor.HasField("shape") else None
        return TensorType(tensor.elem_type, dims)
    if kind == "sequence_type":
        inner = value_type(message.sequence_type.elem_type, as_written=as_written)
        return SequenceType(inner if inner is not None else TensorType(0, None))
    return None if kind is None else OtherType(kind, message)


def renamed(found: ValueType, names: Mapping[str, Dim]) -> ValueType:
    """``found`` with each of onnx's placeholders that ``names`` holds replaced by what it
    stands for (``found`` itself where it holds none), a sequence's items included.

    >>> renamed(TensorType(1, ("unk__3", 4)), {"unk__3": "ceiling(N/2)"})
    TensorType(element=1, dims=('ceiling(N/2)', 4))
    """
    if not names:
        return found
    if isinstance(found, SequenceType):
        inner = renamed(found.element, names)
        return found if inner is found.element else SequenceType(inner)
    if not isinstance(found, TensorType) or found.dims is None:
        return found
    dims = found.dims
    for dim in dims:  # a loop, not any() of a generator: asked of every value inferred
        if type(dim) is str and dim in names:
            break
    else:
        return found
    return TensorType(found.element, tuple(names.get(d, d) if type(d) is str else d for d in dims))


def named_placeholders(base: ValueType, ours: ValueType) -> Iterator[tuple[str, Dim]]:
    """Each of onnx's placeholders in ``base`` where ``ours``, a type of the same value, has a
    length or a name: what the placeholder stands for, wherever onnx wrote it.

    >>> list(named_placeholders(TensorType(1, ("unk__3", 4)), TensorType(1, ("ceiling(N/2)", 4))))
    [('unk__3', 'ceiling(N/2)')]
    """
    if type(base) is not type(ours):
        return
    theirs, mine = _item_dims(base), _item_dims(ours)
    if len(theirs) != len(mine):
        return
    for a, b in zip(theirs, mine, strict=True):
        if says(a) == 1 and says(b) >= 2:
            assert isinstance(a, str)
            yield a, b


def unnamed_placeholders(found: ValueType, names: Collection[str]) -> bool:
    """Whether ``found`` holds one of onnx's placeholders that ``names`` does not.

    >>> unnamed_placeholders(TensorType(1, ("unk__3", "N")), {"unk__3"})
    False
    """
    return any(says(d) == 1 and d not in names for d in _item_dims(found))


def _item_dims(found: ValueType) -> tuple[Dim, ...]:
    """The dims of a tensor type, or of a sequence's items (none for other types)."""
    if isinstance(found, SequenceType):
        return _item_dims(found.element)
    if isinstance(found, TensorType) and found.dims is not None:
        return found.dims
    return ()


def read_dim(dim: TensorShapeProto.Dimension) -> Dim:
    """A dim of a ``TypeProto`` as a Python value: its length, its name, or ``None`` (unknown,
    or a negative length, which no tensor has). Every reader of a dim asks this.

    >>> from onnx import TensorShapeProto
    >>> [read_dim(TensorShapeProto.Dimension(**d)) for d in
    ...  ({"dim_value": 3}, {"dim_param": "N"}, {"dim_value": -1}, {})]
    [3, 'N', None, None]
    """
    if dim.HasField("dim_value"):
        return int(dim.dim_value) if dim.dim_value >= 0 else None
    return str(dim.dim_param) if dim.dim_param else None


def _written_dim(dim: TensorShapeProto.Dimension) -> Dim:
    """A dim as :func:`read_dim` reads it, a negative length kept as written."""
    if dim.HasField("dim_value"):
        return int(dim.dim_value)
    return read_dim(dim)


def _kinds(a: ValueType, b: ValueType, said: tuple[str, str]) -> Iterator[str]:
    first, second = said
    yield f"it is {first.format(a.text())}, {second.format(b.text())}"


def _element_name(code: int) -> str:
    from ._types import element_name

    return element_name(code)
