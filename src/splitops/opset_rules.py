"""Every version of Split and SplitToSequence, as data.

One row per ``(operator, since_version)``: where ``split`` may come from, which attributes
the node may carry, which dtypes ``split`` may have as an input, how parts are counted when
no sizes are given, and the element types the version accepts. An opset number resolves to
the newest row at or below it, so opset 12 runs Split-11 and opset 24 runs Split-18.

>>> opset_rule("Split", 12).since_version
11
>>> "bfloat16" in opset_rule("SplitToSequence", 23).dtypes
False
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache

from .errors import SplitError, SplitTypeError

__all__ = [
    "ALL_ELEMENT_TYPES",
    "OPSET_RULES",
    "OpsetRule",
    "PartCount",
    "SplitSource",
    "opset_rule",
]

#: The 16 ONNX tensor element types the operators know, by their ONNX names.
ALL_ELEMENT_TYPES: frozenset[str] = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "bfloat16",
        "float",
        "double",
        "complex64",
        "complex128",
        "string",
    }
)
_WITHOUT_BFLOAT16 = ALL_ELEMENT_TYPES - {"bfloat16"}
_FLOATS_ONLY = frozenset({"float16", "float", "double"})


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
    #: ONNX element types allowed for the ``split`` input; ``None`` means "the same as T",
    #: an empty set that the version has no ``split`` input.
    split_input_types: frozenset[str] | None
    attributes: frozenset[str]
    part_count: PartCount
    dtypes: frozenset[str]

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
_INT64 = frozenset({"int64"})

_SPLIT_1 = OpsetRule(
    "Split",
    1,
    _ATTR | _INPUT,
    None,
    frozenset({"axis", "split"}),
    PartCount.OUTPUTS,
    _FLOATS_ONLY,
)
#: Split-2 and Split-11 read sizes from an ``ints`` attribute only: no split input, no floats.
_SPLIT_2 = OpsetRule(
    "Split",
    2,
    _ATTR,
    frozenset(),
    frozenset({"axis", "split"}),
    PartCount.OUTPUTS,
    _WITHOUT_BFLOAT16,
)
_SPLIT_13 = OpsetRule(
    "Split", 13, _INPUT, _INT64, frozenset({"axis"}), PartCount.OUTPUTS, ALL_ELEMENT_TYPES
)
_SEQUENCE_11 = OpsetRule(
    "SplitToSequence",
    11,
    _INPUT,
    frozenset({"int32", "int64"}),
    frozenset({"axis", "keepdims"}),
    PartCount.UNIT_CHUNKS,
    _WITHOUT_BFLOAT16,
)

#: Every version, keyed by ``(op, since_version)``. Split-11 changed only the documented axis
#: range (negative axes), which splitops applies at every version, so it reuses Split-2's row.
OPSET_RULES: dict[tuple[str, int], OpsetRule] = {
    ("Split", 1): _SPLIT_1,
    ("Split", 2): _SPLIT_2,
    ("Split", 11): replace(_SPLIT_2, since_version=11),
    ("Split", 13): _SPLIT_13,
    ("Split", 18): OpsetRule(
        "Split",
        18,
        _INPUT,
        _INT64,
        frozenset({"axis", "num_outputs"}),
        PartCount.NUM_OUTPUTS,
        ALL_ELEMENT_TYPES,
    ),
    ("SplitToSequence", 11): _SEQUENCE_11,
    ("SplitToSequence", 24): replace(_SEQUENCE_11, since_version=24, dtypes=ALL_ELEMENT_TYPES),
}


def opset_rule(op: str, opset: int) -> OpsetRule:
    """The rules of ``op`` in a model that imports the default domain at ``opset``.

    >>> opset_rule("Split", 17).name
    'Split-13'
    >>> opset_rule("SplitToSequence", 10)
    Traceback (most recent call last):
    ...
    splitops.errors.SplitError: SplitToSequence does not exist before opset 11; opset 10 was given.
    """
    # Checked before the cache, which would take 13.0 or True for the int they equal.
    try:
        if isinstance(opset, bool):
            raise TypeError
        number = operator.index(opset)
    except TypeError:
        raise SplitTypeError(f"opset must be an int; {opset!r} was given.", rule="opset") from None
    return _opset_rule(op, number)


@cache
def _opset_rule(op: str, opset: int) -> OpsetRule:
    versions = sorted(v for (name, v) in OPSET_RULES if name == op)
    if not versions:
        known = sorted({name for name, _ in OPSET_RULES})
        raise SplitError(f"Unknown operator {op!r}; splitops implements {known}.")
    eligible = [v for v in versions if v <= opset]
    if not eligible:
        raise SplitError(
            f"{op} does not exist before opset {versions[0]}; opset {opset} was given.",
            rule="opset",
        )
    return OPSET_RULES[(op, eligible[-1])]
