"""The two exceptions splitops raises for every rejected input.

>>> issubclass(SplitError, ValueError), issubclass(SplitTypeError, TypeError)
(True, True)
"""

from __future__ import annotations

__all__ = ["ModelLoadError", "OtherOperatorError", "SplitError", "SplitTypeError"]


class SplitError(ValueError):
    """A value that no version of the rules accepts: sizes, axis, counts, opset."""


class SplitTypeError(SplitError, TypeError):
    """A type that the rules reject: an element dtype outside the opset's set, or split sizes
    that are not integers (bools, non-integral floats, the wrong integer dtype)."""


class ModelLoadError(SplitError):
    """A model file that cannot be read safely: missing, empty, truncated, not ONNX, too
    large, external data outside the model's folder, or a node asking for absurdly many parts."""


class OtherOperatorError(SplitError):
    """An operator other than Split and SplitToSequence stopped a model tool: onnx's version
    converter or shape inference could not handle it, or onnx.reference could not run it."""
