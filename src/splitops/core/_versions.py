"""Every version of Split and SplitToSequence, as data.

One row per ``(operator, since_version)``: where ``split`` may come from, which attributes
the node may carry, which element types ``split`` may have as an input, and how parts are
counted when no sizes are given. The element types each version accepts come from
:class:`~splitops.core.ElementType`'s first versions. An opset number resolves to the newest
row at or below it, so opset 12 runs Split-11 and opset 24 runs Split-18.

>>> opset_rule("Split", 12).since_version
11
>>> ElementType.BFLOAT16 in opset_rule("SplitToSequence", 23).dtypes
False
"""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass, field, replace
from enum import Enum

from ._elements import ElementType
from ._errors import Rule, SplitError, SplitTypeError

__all__ = [
    "OPSET_RULES",
    "OpsetRule",
    "PartCount",
    "SplitSource",
    "check_element_type",
    "check_split_element",
    "check_split_input_type",
    "opset_rule",
]


class SplitSource(Enum):
    """Where a version reads explicit part sizes from."""

    ATTRIBUTE = "attribute"
    INPUT = "input"


class PartCount(Enum):
    """What decides the number of parts when no sizes are given."""

    #: Before Split-18: the node's number of outputs, always equal parts.
    OUTPUTS = "the number of outputs"
    #: Split-18: the ``num_outputs`` attribute; the last part may be smaller.
    NUM_OUTPUTS = "the num_outputs attribute"
    #: SplitToSequence: parts of length 1 (the spec's default scalar split of 1).
    UNIT_CHUNKS = "chunks of length 1"


@dataclass(frozen=True)
class OpsetRule:
    """The rules of one operator version."""

    op: str
    since_version: int
    split_sources: frozenset[SplitSource]
    #: Element types allowed for the ``split`` input; ``None`` means "the same as T", an
    #: empty set that the version has no ``split`` input.
    split_input_types: frozenset[ElementType] | None
    attributes: frozenset[str]
    part_count: PartCount
    #: The element types of the input the version accepts (from ElementType's table).
    dtypes: frozenset[ElementType] = field(init=False)

    def __post_init__(self) -> None:
        accepted = frozenset(
            e for e in ElementType if e.first_version(self.op) <= self.since_version
        )
        object.__setattr__(self, "dtypes", accepted)

    @property
    def name(self) -> str:
        """``"Split-18"``, as the rules are quoted in messages."""
        return f"{self.op}-{self.since_version}"

    @property
    def split_may_be_float(self) -> bool:
        """Split-1 types its ``split`` input as T, so whole-number floats are sizes there."""
        return self.split_input_types is None


_ATTR = frozenset({SplitSource.ATTRIBUTE})
_INPUT = frozenset({SplitSource.INPUT})
_INT64 = frozenset({ElementType.INT64})

#: Split-2 and Split-11 read sizes from an ``ints`` attribute only: no split input, no floats.
_SPLIT_2 = OpsetRule(
    "Split", 2, _ATTR, frozenset(), frozenset({"axis", "split"}), PartCount.OUTPUTS
)
_SPLIT_13 = OpsetRule("Split", 13, _INPUT, _INT64, frozenset({"axis"}), PartCount.OUTPUTS)
_SEQUENCE_11 = OpsetRule(
    "SplitToSequence",
    11,
    _INPUT,
    frozenset({ElementType.INT32, ElementType.INT64}),
    frozenset({"axis", "keepdims"}),
    PartCount.UNIT_CHUNKS,
)

#: Every version, keyed by ``(op, since_version)``. A version that changed nothing splitops
#: checks reuses the earlier row: Split-11 changed only the documented axis range (negative
#: axes, which splitops applies at every version), SplitToSequence-24 only the element types.
OPSET_RULES: dict[tuple[str, int], OpsetRule] = {
    ("Split", 1): OpsetRule(
        "Split", 1, _ATTR | _INPUT, None, frozenset({"axis", "split"}), PartCount.OUTPUTS
    ),
    ("Split", 2): _SPLIT_2,
    ("Split", 11): replace(_SPLIT_2, since_version=11),
    ("Split", 13): _SPLIT_13,
    ("Split", 18): OpsetRule(
        "Split", 18, _INPUT, _INT64, frozenset({"axis", "num_outputs"}), PartCount.NUM_OUTPUTS
    ),
    ("SplitToSequence", 11): _SEQUENCE_11,
    ("SplitToSequence", 24): replace(_SEQUENCE_11, since_version=24),
}


def opset_rule(op: str, opset: int) -> OpsetRule:
    """The rules of ``op`` in a model that imports the default domain at ``opset``.

    >>> opset_rule("Split", 17).name
    'Split-13'
    >>> opset_rule("SplitToSequence", 10)
    Traceback (most recent call last):
    ...
    splitops.SplitError: SplitToSequence does not exist before opset 11; opset 10 was given.
    """
    # Checked before the cache, which would take 13.0 or True for the int they equal.
    try:
        if isinstance(opset, bool):
            raise TypeError
        number = operator.index(opset)
    except TypeError:
        raise SplitTypeError(
            f"opset must be an int; {opset!r} was given.", rule=Rule.OPSET
        ) from None
    versions = _VERSIONS.get(op)
    if versions is None:
        raise SplitError(
            f"Unknown operator {op!r}; splitops implements {sorted(_VERSIONS)}.",
            rule=Rule.OPERATOR,
        )
    newest = bisect.bisect_right(versions, number)
    if not newest:
        raise SplitError(
            f"{op} does not exist before opset {versions[0]}; opset {number} was given.",
            rule=Rule.OPSET,
        )
    return OPSET_RULES[(op, versions[newest - 1])]


#: The since_versions of each operator, in order.
_VERSIONS: dict[str, list[int]] = {}
for _op, _version in sorted(OPSET_RULES):
    _VERSIONS.setdefault(_op, []).append(_version)


def check_element_type(
    element: ElementType | str, rule: OpsetRule, opset: int | None = None
) -> None:
    """SplitTypeError unless ``rule``'s version accepts inputs of ``element``.

    ``element`` is the input's element type, or the text of a dtype that has none. ``opset``
    is the opset asked for, named in the message when it differs from the version.

    >>> check_element_type(ElementType.INT32, opset_rule("Split", 1))
    Traceback (most recent call last):
    ...
    splitops.SplitTypeError: Split-1 does not accept int32 inputs; ... Use opset 2 or later...
    """
    if isinstance(element, ElementType) and element in rule.dtypes:
        return
    where = rule.name if opset in (None, rule.since_version) else f"{rule.name} (opset {opset})"
    accepted = ", ".join(sorted(e.onnx_name for e in rule.dtypes))
    if not isinstance(element, ElementType):
        raise SplitTypeError(
            f"{where} does not accept dtype {element}: it is none of the {len(ElementType)} "
            f"element types Split and SplitToSequence know. It takes {accepted}.",
            rule=Rule.DTYPE,
            hint="Cast the input.",
        )
    first = element.first_version(rule.op)
    hint = f"Use opset {first} or later, or cast the input." if first > rule.since_version else ""
    raise SplitTypeError(
        f"{where} does not accept {element.onnx_name} inputs; it takes {accepted}.",
        rule=Rule.DTYPE,
        hint=hint or "Cast the input.",
    )


def check_split_element(element: ElementType | str, rule: OpsetRule, dtype: object = None) -> None:
    """SplitTypeError unless an array of ``element`` may hold sizes for ``rule``.

    Integers always may; floats only where the version types ``split`` like its input
    (Split-1). The type decides even when the array is empty. ``dtype``, the array's own
    dtype, is what the message names.

    >>> check_split_element(ElementType.FLOAT, opset_rule("SplitToSequence", 24))
    Traceback (most recent call last):
    ...
    splitops.SplitTypeError: SplitToSequence-24 split must be an integer array; ...
    """
    if isinstance(element, ElementType) and (
        element.is_integer or (rule.split_may_be_float and element.is_float)
    ):
        return
    allowed = "an integer or float array" if rule.split_may_be_float else "an integer array"
    raise SplitTypeError(
        f"{rule.name} split must be {allowed}; an array of dtype {dtype or element} was given.",
        rule=Rule.SPLIT_DTYPE,
        hint="Cast the sizes to int64.",
    )


def check_split_input_type(
    split_element: ElementType | str, input_element: ElementType | None, rule: OpsetRule
) -> None:
    """Check the element type of a node's ``split`` input against the version's schema.

    Split-13 and 18 take int64 only; SplitToSequence takes int32 or int64; Split-1 types
    ``split`` as T, so it must have the input's own element type (``input_element``).

    >>> check_split_input_type(ElementType.INT32, ElementType.FLOAT, opset_rule("Split", 13))
    Traceback (most recent call last):
    ...
    splitops.SplitTypeError: Split-13 takes its split input as int64; int32 was given. ...
    """
    if rule.split_input_types is None:
        allowed = frozenset() if input_element is None else frozenset({input_element})
    else:
        allowed = rule.split_input_types
    if not allowed and rule.split_input_types is not None:
        raise SplitError(
            f"{rule.name} has no split input.",
            rule=Rule.SPLIT_SOURCE,
            hint="Give the sizes as the split attribute.",
        )
    if not allowed or split_element in allowed:
        return
    names = sorted(e.onnx_name for e in allowed)
    why = " (the input's type T)" if rule.split_input_types is None else ""
    given = split_element.onnx_name if isinstance(split_element, ElementType) else split_element
    raise SplitTypeError(
        f"{rule.name} takes its split input as {' or '.join(names)}{why}; {given} was given.",
        rule=Rule.SPLIT_DTYPE,
        hint=f"Cast the split tensor to {names[-1]}.",
    )
