"""ONNX Split (opsets 1, 2, 11, 13, 18) and SplitToSequence (11, 24), exactly as specified,
zero-copy on any array API library.

>>> import numpy as np, splitops
>>> splitops.split_sizes(7, num_outputs=4)
(2, 2, 2, 1)
>>> [p.shape for p in splitops.split(np.zeros((2, 7)), num_outputs=4, axis=1)]
[(2, 2), (2, 2), (2, 2), (2, 1)]
"""

from __future__ import annotations

from .errors import SplitError, SplitTypeError
from .kernels import split, split_to_sequence
from .opset_rules import OPSET_RULES, OpsetRule, opset_rule
from .planner import sequence_sizes, split_sizes

__all__ = [
    "OPSET_RULES",
    "OpsetRule",
    "SplitError",
    "SplitTypeError",
    "opset_rule",
    "sequence_sizes",
    "split",
    "split_sizes",
    "split_to_sequence",
]

__version__ = "0.1.0"
