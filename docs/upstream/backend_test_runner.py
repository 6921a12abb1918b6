# Copyright (c) ONNX Project Contributors
#
# SPDX-License-Identifier: Apache-2.0
"""The runner's comparison of outputs, fixed for sequences of 1-d string tensors. Written by
splitops for the proposal of its node tests: it replaces ``Runner.assert_similar_outputs`` in
``onnx/backend/test/runner/__init__.py`` (onnx 1.23), where one line changes.

onnx compares a sequence output by calling itself on each pair of its tensors as if each
were a list of outputs: it walks a tensor's rows, and a row of a 1-d tensor is a scalar. A
numpy number has a shape, so numeric sequences pass; a string is a Python ``str``, and a
sequence of 1-d string tensors fails with ``'str' object has no attribute 'shape'``, whatever
the backend returns (a sequence of 0-d tensors fails too: they have no rows). Calling itself
on the two sequences, as lists of outputs, compares their lengths, then each tensor whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


@classmethod  # type: ignore[misc]
def assert_similar_outputs(
    cls: Any,
    ref_outputs: Sequence[Any],
    outputs: Sequence[Any],
    rtol: float,
    atol: float,
    model_dir: str | None = None,
) -> None:
    try:
        np.testing.assert_equal(len(outputs), len(ref_outputs))
    except TypeError as e:
        raise TypeError(
            f"Unable to compare expected type {type(ref_outputs)} "
            f"and runtime type {type(outputs)} (known test={model_dir or '?'!r})"
        ) from e
    for i in range(len(outputs)):
        if isinstance(outputs[i], (list, tuple)):
            if not isinstance(ref_outputs[i], (list, tuple)):
                raise AssertionError(
                    f"Unexpected type {type(outputs[i])} for outputs[{i}]. Expected "
                    f"type is {type(ref_outputs[i])} (known test={model_dir or '?'!r})."
                )
            # The fix: the two sequences compared as lists of outputs (their lengths, then
            # each tensor whole), not each tensor's rows as if they were outputs.
            cls.assert_similar_outputs(
                ref_outputs[i],
                outputs[i],
                rtol,
                atol,
                model_dir=model_dir,
            )
        else:
            np.testing.assert_array_equal(
                outputs[i].shape,
                ref_outputs[i].shape,
                err_msg=f"Output {i} has incorrect shape",
            )
            if ref_outputs[i].dtype == object:
                # Strings
                np.testing.assert_array_equal(outputs[i], ref_outputs[i])
            else:
                np.testing.assert_equal(outputs[i].dtype, ref_outputs[i].dtype)
                out = outputs[i]
                ref = ref_outputs[i]
                # np.testing.assert_allclose uses np.isclose which calls
                # result_type(y, 1.) internally.  This fails for dtypes
                # that NumPy cannot promote with Python float, such as
                # bfloat16 from ml_dtypes. Cast to float32 to work around
                # and use a tolerance appropriate for bfloat16 precision.
                output_rtol = rtol
                if out.dtype.name == "bfloat16":
                    output_rtol = max(rtol, 2**-6)  # Two bfloat16 ULPs.
                    out = out.astype(np.float32)
                    ref = ref.astype(np.float32)
                np.testing.assert_allclose(out, ref, rtol=output_rtol, atol=atol)
