"""What splitops raises, and the rules a rejected Split or SplitToSequence breaks.

Every exception splitops raises on purpose is a :class:`SplitopsError`. Each means one thing:

- :class:`SplitError` (a ``ValueError``): a value that the rules of Split or SplitToSequence
  reject; :class:`SplitTypeError` (also a ``TypeError``) when it is a type that they reject.
  Each carries the :class:`Rule` it breaks and a hint, as data.
- :class:`ModelLoadError` (an ``OSError``): a model file that cannot be read safely.
- :class:`ModelInputError` (a ``ValueError``): arrays fed to a model that do not fit the
  inputs it declares.
- :class:`OtherOperatorError`: another operator stopped a model tool.
- :class:`PackError` (an ``OSError``): a folder that is no conformance pack splitops can read.

:class:`ModelCheckWarning` says that ``onnx.checker`` found a problem unrelated to Split in a
model that runs all the same; :func:`warn_caller` gives a warning the caller's line.

>>> error = SplitError("Split-13 split sizes [2, 2] sum to 4, but the axis length is 5.",
...                    rule=Rule.SPLIT_SUM)
>>> error.rule.id, error.hint
('split-sum', 'Make the sizes add up to the axis length')
>>> str(SplitError("Split-18 needs sizes.", rule=Rule.SPLIT_OR_COUNT, hint="Pass split=[2, 3]."))
'Split-18 needs sizes. Pass split=[2, 3].'
>>> issubclass(SplitError, ValueError), issubclass(ModelLoadError, ValueError)
(True, False)
"""

from __future__ import annotations

import os
import sys
import warnings
from enum import Enum
from typing import Any

__all__ = [
    "ModelCheckWarning",
    "ModelInputError",
    "ModelLoadError",
    "OtherOperatorError",
    "PackError",
    "Rule",
    "SplitError",
    "SplitTypeError",
    "SplitopsError",
    "require_argument",
    "warn_caller",
]

_VERSIONS = "Check the node against its version's schema, or convert it to the model's opset"
_SIZES = "Pass explicit sizes"


class Rule(str, Enum):
    """A rule of Split or SplitToSequence: its id (a string, as the checker and ``--json``
    print it) and the hint given when an error carries none of its own."""

    hint: str

    def __new__(cls, rule_id: str, hint: str) -> Rule:
        member = str.__new__(cls, rule_id)
        member._value_ = rule_id
        member.hint = hint
        return member

    @classmethod
    def from_id(cls, rule_id: str) -> Rule:
        """The rule of an id: ``Rule.from_id("split-sum") is Rule.SPLIT_SUM``."""
        return cls(rule_id)  # type: ignore[call-arg]

    @property
    def id(self) -> str:
        """The rule's short name, e.g. ``"split-sum"``."""
        return str(self.value)

    def __str__(self) -> str:
        return self.id

    # Which version applies
    OPSET = ("opset", "Import a later default opset")
    OPERATOR = ("operator", "Give splitops a Split or SplitToSequence node of the default domain")
    # Arguments of the array functions
    ARGUMENT = ("argument", "Pass the argument with its documented type")
    ARRAY = ("array", "Pass an array of an array API library")
    UNKNOWN_LENGTH = ("unknown-length", "Make the length of the split axis known first")
    CONCRETE = ("concrete", "Pass sizes whose values are known on the host")
    OUT = ("out", "Pass one writeable array per part, of its shape and the input's dtype")
    LIMIT = ("limit", "Split in stages, or raise the limit")
    # A node's schema
    ATTRIBUTE = ("attribute", _VERSIONS)
    ATTRIBUTE_TYPE = ("attribute-type", "Give the attribute its type")
    INPUTS = ("inputs", "Give the input tensor first")
    SPLIT_SOURCE = ("split-source", _VERSIONS)
    SPLIT_OR_COUNT = ("split-or-num_outputs", "Give either the split input or num_outputs")
    OUTPUTS = ("outputs", "Fix the outputs")
    OUTPUT_COUNT = ("output-count", "Give one output per part")
    # Input, axis and element type
    RANK = ("rank", "Reshape the input to rank 1 or more")
    AXIS = ("axis", "Pick an axis within the input's rank")
    DIM = ("dim", "Give the length of the split axis as an int >= 0")
    DTYPE = ("dtype", "Use a later opset or cast the input")
    KEEPDIMS = ("keepdims", "Set keepdims to 0 or 1")
    # Sizes
    NUM_OUTPUTS = ("num_outputs", _SIZES)
    EQUAL_PARTS = ("equal-parts", _SIZES)
    SPLIT_CHUNK = ("split-chunk", "Pass a chunk length >= 1")
    SPLIT_NEGATIVE = ("split-negative", "Make every size >= 0")
    SPLIT_SUM = ("split-sum", "Make the sizes add up to the axis length")
    SPLIT_EMPTY = ("split-empty", "Give at least one size")
    SPLIT_SHAPE = ("split-shape", "Give split as a 1-d list")
    SPLIT_TYPE = ("split-type", "Give the sizes as integers")
    SPLIT_DTYPE = ("split-dtype", "Cast the split tensor to the version's type")
    # Whole models
    DECLARED_SHAPE = ("declared-shape", "Fix the output's declared type, or drop it")
    # Departures from the spec's letter that runtimes read two ways (warnings of check)
    DEFAULT_SPLIT = (
        "default-split",
        "Lower the model (splitops lower) so that every runtime drops the axis, or export "
        "it without the split",
    )
    POSITION_SHAPE = (
        "position-shape",
        "Give the position as a 0-d tensor, or lower the model (splitops lower)",
    )
    CONVERSION = ("conversion", "Keep the node's opset, or give its sizes statically")


class SplitopsError(Exception):
    """The base of every exception splitops raises on purpose."""


class SplitError(SplitopsError, ValueError):
    """A value that the rules of Split or SplitToSequence reject: sizes, axis, counts, opset.

    ``rule`` is the :class:`Rule` it breaks; ``hint`` says what to do (the rule's own hint
    when the raise site gave none). ``str(error)`` is the message followed by the hint the
    raise site gave.
    """

    def __init__(self, message: str, *, rule: Rule, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self._hint = hint

    @property
    def hint(self) -> str:
        """What to do, without a final period."""
        return (self._hint or self.rule.hint).rstrip(".")

    def __str__(self) -> str:
        return f"{self.message} {self._hint}" if self._hint else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.rule.id, self._hint))

    def in_context(self, prefix: str) -> SplitError:
        """The same error (class, rule, hint) with ``prefix`` before the message, once.

        >>> SplitError("Split-18 axis 3 is out of range.", rule=Rule.AXIS).in_context("node 's': ")
        SplitError("node 's': Split-18 axis 3 is out of range.")
        """
        if self.message.startswith(prefix):
            return self
        return type(self)(prefix + self.message, rule=self.rule, hint=self._hint)


class SplitTypeError(SplitError, TypeError):
    """A type that the rules reject: an element type outside the version's set, or sizes that
    are not integers (bools, non-integral floats, a split tensor of the wrong dtype)."""


class ModelLoadError(SplitopsError, OSError):
    """A model file that cannot be read safely: missing, empty, truncated, not ONNX, too large,
    external data outside the model's folder, or a node asking for absurdly many parts."""


class ModelInputError(SplitopsError, ValueError):
    """Arrays fed to a model that do not fit its graph inputs: a missing or unknown input, or
    an element type, rank or static dim other than declared, or one symbolic dim given two
    lengths."""


class ModelCheckWarning(UserWarning):
    """``onnx.checker`` found a problem unrelated to Split in a model that runs all the same
    (onnxruntime and onnx.reference run it too), such as a graph output declared without a
    shape."""


class OtherOperatorError(SplitopsError):
    """An operator other than Split and SplitToSequence stopped a model tool: onnx's version
    converter or shape inference could not handle it, or onnx.reference could not run it."""


class PackError(SplitopsError, OSError):
    """A folder that is no conformance pack splitops can read: missing, not a folder, or
    without a ``cases.json`` that lists its cases and the case folders it names."""


def _rebuild(kind: type[SplitError], message: str, rule: str, hint: str) -> SplitError:
    return kind(message, rule=Rule.from_id(rule), hint=hint)


# Tracebacks and reprs name the classes where users import them from.
for _exported in (
    SplitopsError,
    SplitError,
    SplitTypeError,
    ModelLoadError,
    ModelInputError,
    ModelCheckWarning,
    OtherOperatorError,
    PackError,
):
    _exported.__module__ = "splitops"


def require_argument(
    value: object, kind: type | tuple[type, ...], function: str, what: str
) -> None:
    """A ``TypeError`` naming what ``function`` takes unless ``value`` is a ``kind``: the
    public functions say so at once, not with an ``AttributeError`` from deep inside.

    >>> require_argument(1, str, "check_model", "an onnx.ModelProto")
    Traceback (most recent call last):
    ...
    TypeError: check_model takes an onnx.ModelProto, not int.
    """
    if not isinstance(value, kind):
        raise TypeError(f"{function} takes {what}, not {type(value).__name__}.")


#: The folder of the splitops package: a frame in it is not a caller's.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)``, attributed to the line outside splitops that
    led here (the caller's own), however deep inside splitops the warning arose: a warning
    that names ``backend.py`` tells the caller nothing."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
