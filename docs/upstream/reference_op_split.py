# Copyright (c) ONNX Project Contributors
#
# SPDX-License-Identifier: Apache-2.0
"""Split-1 for onnx.reference, which has Split-2, 11, 13 and 18 only: without it, the Split-1
node tests of ``split.py`` fail there ("No implementation for operator 'Split' domain '' and
version 1"). Written by splitops for the proposal of its node tests: add the class to
``onnx/reference/ops/op_split.py``, and import it in ``onnx/reference/ops/_op_list.py``
beside the others (``from onnx.reference.ops.op_split import Split_1, Split_2, ...``).
"""

from __future__ import annotations

from onnx.reference.ops.op_split import CommonSplit


class Split_1(CommonSplit):  # noqa: N801 (onnx.reference names a version's class so)
    def _run(self, mat, sizes=None, axis=None, split=None):  # type: ignore
        # Split-1 takes the sizes as its split attribute or as a second input, typed like
        # the input (float16, float or double).
        if split is None and sizes is not None:
            split = [int(size) for size in sizes]
        return self.common_run(mat, split, axis=axis, num_outputs=None)
