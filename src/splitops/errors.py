"""The two exceptions splitops raises for every rejected input.

>>> issubclass(SplitError, ValueError), issubclass(SplitTypeError, TypeError)
(True, True)
"""

from __future__ import annotations

__all__ = ["SplitError", "SplitTypeError"]


class SplitError(ValueError):
    """A value that no version of the rules accepts: sizes, axis, counts, opset."""


class SplitTypeError(SplitError, TypeError):
    """A type that the rules reject: an element dtype outside the opset's set, or split sizes
    that are not integers (bools, non-integral floats, the wrong integer dtype)."""
