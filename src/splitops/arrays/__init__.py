"""Split and SplitToSequence on arrays: numpy and torch natively, any other array API library
through the standard.

Applies the plans of :mod:`splitops.core`; imports nothing of the ONNX layer above it (an
import-linter contract checks it). Its modules:

- ``_api``: the public ``split`` and ``split_to_sequence``;
- ``_numpy``, ``_torch``: the native paths; ``_torch_compile``: the path ``torch.compile``
  traces; ``_generic``: the array API standard, for every other library;
- ``_dtypes``: element types of dtypes; ``_values``: ``split`` read on the host, ``copy``;
  ``_libraries``: jax tracers, lazy arrays, torch detection; ``_out``: the ``out=`` argument.
"""

from ._api import split, split_to_sequence
from ._dtypes import element_of, numpy_dtype
from ._protocol import Array, ArrayT
from ._values import host_sizes

__all__ = [
    "Array",
    "ArrayT",
    "element_of",
    "host_sizes",
    "numpy_dtype",
    "split",
    "split_to_sequence",
]
