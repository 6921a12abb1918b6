"""Split and SplitToSequence on arrays: numpy, torch, cupy and jax natively, any other array API
library through the standard.

Applies the plans of :mod:`splitops.core`; imports nothing of the ONNX layer above it (an
import-linter contract checks it). Its modules:

- ``_api``: the public ``split`` and ``split_to_sequence``, which hand a plan to the kernel of
  the input's library (``_protocol.Kernel``);
- the kernels: ``_numpy`` (numpy, and cupy through ``_cupy``), ``_torch``, ``_jax``, and
  ``_generic`` (the array API standard, for every other library); ``_torch_compile``: the
  path ``torch.compile`` traces;
- copies and ``out=`` for strided memory, written once: ``_layout`` (where the copies lie in
  one buffer: integers), ``_strided`` (the copies and writes, made of a library's
  primitives), ``_out`` (the checks of ``out=``);
- ``_dtypes``: element types of dtypes; ``_values``: ``split`` read on the host, ``copy``;
  ``_libraries``: jax tracers, lazy arrays, ``torch.compile``.
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
