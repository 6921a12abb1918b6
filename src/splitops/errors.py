"""The two exceptions splitops raises for every rejected input.

>>> issubclass(SplitError, ValueError), issubclass(SplitTypeError, TypeError)
(True, True)
>>> error = SplitError("Split-13 split sizes [2, 2] sum to 4, ...", rule="split-sum")
>>> error.rule, str(error)
('split-sum', 'Split-13 split sizes [2, 2] sum to 4, ...')
"""

from __future__ import annotations

__all__ = ["ModelLoadError", "OtherOperatorError", "SplitError", "SplitTypeError"]


class SplitError(ValueError):
    """A value that no version of the rules accepts: sizes, axis, counts, opset.

    ``rule`` is the short id of the broken rule ("split-sum", "axis", "dtype", ...) where the
    error is raised, or ``""``; the model checker reports it, so that rewording a message
    never changes it.
    """

    def __init__(self, *args: object, rule: str = "") -> None:
        super().__init__(*args)
        self.rule = rule


class SplitTypeError(SplitError, TypeError):
    """A type that the rules reject: an element dtype outside the opset's set, or split sizes
    that are not integers (bools, non-integral floats, the wrong integer dtype)."""


class ModelLoadError(SplitError):
    """A model file that cannot be read safely: missing, empty, truncated, not ONNX, too
    large, external data outside the model's folder, or a node asking for absurdly many parts."""


class OtherOperatorError(SplitError):
    """An operator other than Split and SplitToSequence stopped a model tool: onnx's version
    converter or shape inference could not handle it, or onnx.reference could not run it."""
