# Copyright (c) ONNX Project Contributors
#
# SPDX-License-Identifier: Apache-2.0
"""SplitToSequence node tests written by splitops (``python -m splitops.conformance``) from its
conformance cases; each function's comment says the wrong rule it catches. To propose them,
copy the functions into the class of onnx's ``onnx/backend/test/case/node/splittosequence.py``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import onnx
from onnx.backend.test.case.base import Base
from onnx.backend.test.case.node import expect


class SplitToSequence(Base):
    @staticmethod
    def export_scalar_uneven_7_by_3_opset11() -> None:
        # a scalar split is a chunk length: 7 by 3 is chunks 3, 3 and a smaller last one, 1.
        node_input = np.array(
            [
                [1.0, 2.0],
                [3.0, 4.0],
                [5.0, 6.0],
                [7.0, 8.0],
                [9.0, 10.0],
                [11.0, 12.0],
                [13.0, 14.0],
            ],
            dtype=np.float32,
        )
        split = np.array(3, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [
                np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32),
                np.array([[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]], dtype=np.float32),
                np.array([[13.0, 14.0]], dtype=np.float32),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_scalar_uneven_7_by_3_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_scalar_larger_than_dim_opset11() -> None:
        # a chunk length larger than the dim is one chunk holding it all.
        node_input = np.array([1, 2, 3, 4, 5], dtype=np.int32)
        split = np.array(8, dtype=np.int32)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [[np.array([1, 2, 3, 4, 5], dtype=np.int32)]]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_scalar_larger_than_dim_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_scalar_2_keepdims_0_ignored_opset11() -> None:
        # keepdims is ignored when split is given ('If input split is specified, this
        # attribute is ignored'): chunks of 2 keep the axis, (2, 2), (2, 2), (2, 1).
        node_input = np.array(
            [[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]], dtype=np.float32
        )
        split = np.array(2, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence",
            inputs=["input", "split"],
            outputs=["output_sequence"],
            axis=1,
            keepdims=0,
        )

        expected_outputs = [
            [
                np.array([[1.0, 2.0], [6.0, 7.0]], dtype=np.float32),
                np.array([[3.0, 4.0], [8.0, 9.0]], dtype=np.float32),
                np.array([[5.0], [10.0]], dtype=np.float32),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_scalar_2_keepdims_0_ignored_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_sizes_keepdims_0_ignored_opset11() -> None:
        # keepdims=0 with 1-d sizes of 1 is ignored too: each part keeps the axis, (1, 2).
        node_input = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int64)
        split = np.array([1, 1, 1], dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"], keepdims=0
        )

        expected_outputs = [
            [
                np.array([[1, 2]], dtype=np.int64),
                np.array([[3, 4]], dtype=np.int64),
                np.array([[5, 6]], dtype=np.int64),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_sizes_keepdims_0_ignored_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_default_keepdims_0_opset11() -> None:
        # without split the parts are of length 1, and keepdims=0 drops the axis: (2,) each.
        node_input = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.uint8)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input"], outputs=["output_sequence"], keepdims=0
        )

        expected_outputs = [
            [
                np.array([1, 2], dtype=np.uint8),
                np.array([3, 4], dtype=np.uint8),
                np.array([5, 6], dtype=np.uint8),
            ]
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_to_sequence_default_keepdims_0_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_default_keepdims_1_opset11() -> None:
        # without split and keepdims, parts of length 1 that keep the axis: (2, 1) each.
        node_input = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input"], outputs=["output_sequence"], axis=1
        )

        expected_outputs = [
            [
                np.array([[1], [4]], dtype=np.int8),
                np.array([[2], [5]], dtype=np.int8),
                np.array([[3], [6]], dtype=np.int8),
            ]
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_to_sequence_default_keepdims_1_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_int16_sizes_opset11() -> None:
        # int16 with 1-d sizes 3, 2 along axis 1.
        node_input = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], dtype=np.int16)
        split = np.array([3, 2], dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"], axis=1
        )

        expected_outputs = [
            [
                np.array([[1, 2, 3], [6, 7, 8]], dtype=np.int16),
                np.array([[4, 5], [9, 10]], dtype=np.int16),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_int16_sizes_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_sizes_without_zero_opset11() -> None:
        # sizes 2, 1, 2 of a float input: the node of the case of a size of 0, without it (a
        # runtime that refuses both refuses that node for another reason than the 0).
        node_input = np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32)
        split = np.array([2, 1, 2], dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [
                np.array([1.0, 2.0], dtype=np.float32),
                np.array([3.0], dtype=np.float32),
                np.array([4.0, 5.0], dtype=np.float32),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_sizes_without_zero_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_negative_axis_opset11() -> None:
        # axis=-1 with a chunk length of 4: chunks 4 and 2 of the last axis.
        node_input = np.array([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]], dtype=np.uint16)
        split = np.array(4, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"], axis=-1
        )

        expected_outputs = [
            [
                np.array([[1, 2, 3, 4], [7, 8, 9, 10]], dtype=np.uint16),
                np.array([[5, 6], [11, 12]], dtype=np.uint16),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_negative_axis_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_empty_input_opset11() -> None:
        # an axis of length 0 cut in chunks of 2 is an empty sequence.
        node_input = np.array([], dtype=np.float32).reshape((0, 3))
        split = np.array(2, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [[]]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_empty_input_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
            output_type_protos=[
                onnx.helper.make_sequence_type_proto(
                    onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None)
                )
            ],
        )

    @staticmethod
    def export_string_opset11() -> None:
        # strings in chunks of 2: 2, 2, 1.
        node_input = np.array(["s1", "s2", "s3", "s4", "s5"], dtype=object)
        split = np.array(2, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [
                np.array(["s1", "s2"], dtype=object),
                np.array(["s3", "s4"], dtype=object),
                np.array(["s5"], dtype=object),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_string_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_bool_int32_sizes_opset11() -> None:
        # split may be int32: sizes 1, 2 of a bool input.
        node_input = np.array([False, False, True], dtype=bool)
        split = np.array([1, 2], dtype=np.int32)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [[np.array([False], dtype=bool), np.array([False, True], dtype=bool)]]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_bool_int32_sizes_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_complex64_opset11() -> None:
        # complex64 in chunks of 3: 3, 1.
        node_input = np.array([(1 - 1j), (2 - 2j), (3 - 3j), (4 - 4j)], dtype=np.complex64)
        split = np.array(3, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [
                np.array([(1 - 1j), (2 - 2j), (3 - 3j)], dtype=np.complex64),
                np.array([(4 - 4j)], dtype=np.complex64),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_complex64_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_complex128_keepdims_0_opset11() -> None:
        # complex128 without split, keepdims=0 along axis 1: two parts of shape (2,).
        node_input = np.array([[(1 - 1j), (2 - 2j)], [(3 - 3j), (4 - 4j)]], dtype=np.complex128)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input"], outputs=["output_sequence"], axis=1, keepdims=0
        )

        expected_outputs = [
            [
                np.array([(1 - 1j), (3 - 3j)], dtype=np.complex128),
                np.array([(2 - 2j), (4 - 4j)], dtype=np.complex128),
            ]
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_to_sequence_complex128_keepdims_0_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_uint64_opset11() -> None:
        # uint64 in chunks of 2: 2, 2.
        node_input = np.array([1, 2, 3, 4], dtype=np.uint64)
        split = np.array(2, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [[np.array([1, 2], dtype=np.uint64), np.array([3, 4], dtype=np.uint64)]]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_uint64_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_float16_sizes_opset11() -> None:
        # float16 with sizes 2, 1 along axis 1.
        node_input = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float16)
        split = np.array([2, 1], dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"], axis=1
        )

        expected_outputs = [
            [
                np.array([[1.0, 2.0], [4.0, 5.0]], dtype=np.float16),
                np.array([[3.0], [6.0]], dtype=np.float16),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_float16_sizes_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_double_opset11() -> None:
        # double in chunks of 2: 2, 1.
        node_input = np.array([1.0, 2.0, 3.0], dtype=np.float64)
        split = np.array(2, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [np.array([1.0, 2.0], dtype=np.float64), np.array([3.0], dtype=np.float64)]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_double_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_uint32_opset11() -> None:
        # uint32 in chunks of 1 given as a scalar: 1, 1, 1, keeping the axis.
        node_input = np.array([1, 2, 3], dtype=np.uint32)
        split = np.array(1, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [
                np.array([1], dtype=np.uint32),
                np.array([2], dtype=np.uint32),
                np.array([3], dtype=np.uint32),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_uint32_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_bfloat16_opset24() -> None:
        # bfloat16 is a SplitToSequence type since opset 24; chunks of 2: 2, 1.
        node_input = np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16)
        split = np.array(2, dtype=np.int64)

        node = onnx.helper.make_node(
            "SplitToSequence", inputs=["input", "split"], outputs=["output_sequence"]
        )

        expected_outputs = [
            [
                np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16),
                np.array([3.0], dtype=ml_dtypes.bfloat16),
            ]
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_to_sequence_bfloat16_opset24",
            opset_imports=[onnx.helper.make_opsetid("", 24)],
        )
