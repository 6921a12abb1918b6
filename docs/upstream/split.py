# Copyright (c) ONNX Project Contributors
#
# SPDX-License-Identifier: Apache-2.0
"""Split node tests written by splitops (``python -m splitops.conformance``) from its
conformance cases; each function's comment says the wrong rule it catches. To propose them,
copy the functions into the class of onnx's ``onnx/backend/test/case/node/split.py``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import onnx
from onnx.backend.test.case.base import Base
from onnx.backend.test.case.node import expect


class Split(Base):
    @staticmethod
    def export_num_outputs_uneven_10_into_4_opset18() -> None:
        # a balanced split (numpy's array_split: the remainder spread over the first parts)
        # gives 3, 3, 2, 2; the spec takes parts of ceil(10/4)=3 and leaves the last smaller:
        # 3, 3, 3, 1. ONNX's 7-into-4 and 8-into-3 tests cannot tell the two apart.
        node_input = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], dtype=np.float32)

        node = onnx.helper.make_node(
            "Split",
            inputs=["input"],
            outputs=["output_1", "output_2", "output_3", "output_4"],
            num_outputs=4,
        )

        expected_outputs = [
            np.array([1.0, 2.0, 3.0], dtype=np.float32),
            np.array([4.0, 5.0, 6.0], dtype=np.float32),
            np.array([7.0, 8.0, 9.0], dtype=np.float32),
            np.array([10.0], dtype=np.float32),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_uneven_10_into_4_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_uneven_13_into_5_opset18() -> None:
        # a balanced split (numpy's array_split: the remainder spread over the first parts)
        # gives 3, 3, 3, 2, 2; the spec gives 3, 3, 3, 3, 1.
        node_input = np.array(
            [
                [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
                [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26],
            ],
            dtype=np.int32,
        )

        node = onnx.helper.make_node(
            "Split",
            inputs=["input"],
            outputs=["output_1", "output_2", "output_3", "output_4", "output_5"],
            axis=1,
            num_outputs=5,
        )

        expected_outputs = [
            np.array([[1, 2, 3], [14, 15, 16]], dtype=np.int32),
            np.array([[4, 5, 6], [17, 18, 19]], dtype=np.int32),
            np.array([[7, 8, 9], [20, 21, 22]], dtype=np.int32),
            np.array([[10, 11, 12], [23, 24, 25]], dtype=np.int32),
            np.array([[13], [26]], dtype=np.int32),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_uneven_13_into_5_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_empty_last_9_into_4_opset18() -> None:
        # parts of ceil(9/4)=3 leave 0 for the last part: 3, 3, 3, 0. A runtime that refuses
        # an empty part (onnxruntime before 1.32) fails, and so does a balanced split (numpy's
        # array_split: the remainder spread over the first parts): 3, 2, 2, 2.
        node_input = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=np.int16)

        node = onnx.helper.make_node(
            "Split",
            inputs=["input"],
            outputs=["output_1", "output_2", "output_3", "output_4"],
            num_outputs=4,
        )

        expected_outputs = [
            np.array([1, 2, 3], dtype=np.int16),
            np.array([4, 5, 6], dtype=np.int16),
            np.array([7, 8, 9], dtype=np.int16),
            np.array([], dtype=np.int16),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_empty_last_9_into_4_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_even_6_into_3_opset18() -> None:
        # a 'floor + 1' part length (6 // 3 + 1 = 3) gives 3, 3, 0 where the dim divides; the
        # spec gives equal parts 2, 2, 2.
        node_input = np.array([1, 2, 3, 4, 5, 6], dtype=np.uint8)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2", "output_3"], num_outputs=3
        )

        expected_outputs = [
            np.array([1, 2], dtype=np.uint8),
            np.array([3, 4], dtype=np.uint8),
            np.array([5, 6], dtype=np.uint8),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_even_6_into_3_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_one_opset18() -> None:
        # num_outputs=1 is one part holding the whole input, not an error.
        node_input = np.array([1, 2, 3, 4, 5], dtype=np.int64)

        node = onnx.helper.make_node("Split", inputs=["input"], outputs=["output_1"], num_outputs=1)

        expected_outputs = [np.array([1, 2, 3, 4, 5], dtype=np.int64)]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_one_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_one_empty_axis_opset18() -> None:
        # num_outputs=1 on an axis of length 0 is one empty part (onnxruntime 1.31 refused
        # it).
        node_input = np.array([], dtype=np.float32)

        node = onnx.helper.make_node("Split", inputs=["input"], outputs=["output_1"], num_outputs=1)

        expected_outputs = [np.array([], dtype=np.float32)]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_one_empty_axis_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_empty_input_opset18() -> None:
        # an empty input cut into 3 is three empty parts: ceil(0/3)=0, nothing is left over.
        node_input = np.array([[], []], dtype=bool)

        node = onnx.helper.make_node(
            "Split",
            inputs=["input"],
            outputs=["output_1", "output_2", "output_3"],
            axis=1,
            num_outputs=3,
        )

        expected_outputs = [
            np.array([[], []], dtype=bool),
            np.array([[], []], dtype=bool),
            np.array([[], []], dtype=bool),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_empty_input_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_fewer_outputs_listed_opset18() -> None:
        # a node may list fewer outputs than num_outputs: the listed ones are the first parts
        # of 8 into 4, i.e. 2, 2. onnxruntime 1.32 refuses the node; 1.31 cut as many parts as
        # listed (4, 4).
        node_input = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], dtype=np.float32)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], num_outputs=4
        )

        expected_outputs = [
            np.array([1.0, 2.0], dtype=np.float32),
            np.array([3.0, 4.0], dtype=np.float32),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_fewer_outputs_listed_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_fewer_outputs_listed_uneven_opset18() -> None:
        # the listed outputs are the first 2 of 7 into 3 parts, of ceil(7/3)=3: 3, 3. Cutting
        # as many parts as listed gives 4, 3, and a balanced split (numpy's array_split: the
        # remainder spread over the first parts) 3, 2.
        node_input = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.uint16)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], num_outputs=3
        )

        expected_outputs = [
            np.array([1, 2, 3], dtype=np.uint16),
            np.array([4, 5, 6], dtype=np.uint16),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_fewer_outputs_listed_uneven_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_negative_axis_opset18() -> None:
        # axis=-1 counts from the back: the last axis, 7 into 3 as 3, 3, 1.
        node_input = np.array(
            [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0]],
            dtype=np.float16,
        )

        node = onnx.helper.make_node(
            "Split",
            inputs=["input"],
            outputs=["output_1", "output_2", "output_3"],
            axis=-1,
            num_outputs=3,
        )

        expected_outputs = [
            np.array([[1.0, 2.0, 3.0], [8.0, 9.0, 10.0]], dtype=np.float16),
            np.array([[4.0, 5.0, 6.0], [11.0, 12.0, 13.0]], dtype=np.float16),
            np.array([[7.0], [14.0]], dtype=np.float16),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_negative_axis_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_axis_minus_rank_opset18() -> None:
        # axis=-rank is the first axis (the accepted range is [-rank, rank-1]).
        node_input = np.array(
            [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [10.0, 11.0, 12.0]],
            dtype=np.float64,
        )

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=-2, num_outputs=2
        )

        expected_outputs = [
            np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float64),
            np.array([[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]], dtype=np.float64),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_axis_minus_rank_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_middle_axis_opset18() -> None:
        # a middle axis of a rank-3 input, 5 into 2 as 3, 2: the parts are not contiguous in
        # memory.
        node_input = np.array(
            [
                [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15]],
                [[16, 17, 18], [19, 20, 21], [22, 23, 24], [25, 26, 27], [28, 29, 30]],
            ],
            dtype=np.uint64,
        )

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=1, num_outputs=2
        )

        expected_outputs = [
            np.array(
                [[[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[16, 17, 18], [19, 20, 21], [22, 23, 24]]],
                dtype=np.uint64,
            ),
            np.array([[[10, 11, 12], [13, 14, 15]], [[25, 26, 27], [28, 29, 30]]], dtype=np.uint64),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_middle_axis_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_bfloat16_opset18() -> None:
        # bfloat16 is a Split type since opset 13; 5 into 2 as 3, 2.
        node_input = np.array(
            [[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]], dtype=ml_dtypes.bfloat16
        )

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=1, num_outputs=2
        )

        expected_outputs = [
            np.array([[1.0, 2.0, 3.0], [6.0, 7.0, 8.0]], dtype=ml_dtypes.bfloat16),
            np.array([[4.0, 5.0], [9.0, 10.0]], dtype=ml_dtypes.bfloat16),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_bfloat16_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_string_opset18() -> None:
        # string tensors split like any other: 7 into 3 as 3, 3, 1.
        node_input = np.array(["s1", "s2", "s3", "s4", "s5", "s6", "s7"], dtype=object)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2", "output_3"], num_outputs=3
        )

        expected_outputs = [
            np.array(["s1", "s2", "s3"], dtype=object),
            np.array(["s4", "s5", "s6"], dtype=object),
            np.array(["s7"], dtype=object),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_string_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_complex64_opset18() -> None:
        # complex64 is a Split type; 3 into 2 as 2, 1.
        node_input = np.array(
            [[(1 - 1j), (2 - 2j)], [(3 - 3j), (4 - 4j)], [(5 - 5j), (6 - 6j)]], dtype=np.complex64
        )

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], num_outputs=2
        )

        expected_outputs = [
            np.array([[(1 - 1j), (2 - 2j)], [(3 - 3j), (4 - 4j)]], dtype=np.complex64),
            np.array([[(5 - 5j), (6 - 6j)]], dtype=np.complex64),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_complex64_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_num_outputs_uneven_11_into_4_opset18() -> None:
        # 11 into 4 as 3, 3, 3, 2: the last part is smaller but not empty.
        node_input = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], dtype=np.int8)

        node = onnx.helper.make_node(
            "Split",
            inputs=["input"],
            outputs=["output_1", "output_2", "output_3", "output_4"],
            num_outputs=4,
        )

        expected_outputs = [
            np.array([1, 2, 3], dtype=np.int8),
            np.array([4, 5, 6], dtype=np.int8),
            np.array([7, 8, 9], dtype=np.int8),
            np.array([10, 11], dtype=np.int8),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_num_outputs_uneven_11_into_4_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_sizes_with_zeros_opset18() -> None:
        # split values may be 0 ('Values should be >= 0'): empty parts between others.
        node_input = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.int8)
        split = np.array([0, 3, 0, 4], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split",
            inputs=["input", "split"],
            outputs=["output_1", "output_2", "output_3", "output_4"],
        )

        expected_outputs = [
            np.array([], dtype=np.int8),
            np.array([1, 2, 3], dtype=np.int8),
            np.array([], dtype=np.int8),
            np.array([4, 5, 6, 7], dtype=np.int8),
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_with_zeros_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_sizes_empty_input_opset18() -> None:
        # an empty input split by sizes [0, 0] is two empty parts.
        node_input = np.array([], dtype=object)
        split = np.array([0, 0], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2"]
        )

        expected_outputs = [np.array([], dtype=object), np.array([], dtype=object)]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_empty_input_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_sizes_single_part_opset18() -> None:
        # a split of one size is one part holding the whole input.
        node_input = np.array([1, 2, 3, 4, 5], dtype=np.uint16)
        split = np.array([5], dtype=np.int64)

        node = onnx.helper.make_node("Split", inputs=["input", "split"], outputs=["output_1"])

        expected_outputs = [np.array([1, 2, 3, 4, 5], dtype=np.uint16)]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_single_part_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_sizes_complex128_opset18() -> None:
        # complex128 is a Split type; sizes 1, 3 along axis 1.
        node_input = np.array(
            [[(1 - 1j), (2 - 2j), (3 - 3j), (4 - 4j)], [(5 - 5j), (6 - 6j), (7 - 7j), (8 - 8j)]],
            dtype=np.complex128,
        )
        split = np.array([1, 3], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2"], axis=1
        )

        expected_outputs = [
            np.array([[(1 - 1j)], [(5 - 5j)]], dtype=np.complex128),
            np.array(
                [[(2 - 2j), (3 - 3j), (4 - 4j)], [(6 - 6j), (7 - 7j), (8 - 8j)]],
                dtype=np.complex128,
            ),
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_complex128_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_sizes_uint32_opset18() -> None:
        # uint32 is a Split type; sizes 2, 2.
        node_input = np.array([1, 2, 3, 4], dtype=np.uint32)
        split = np.array([2, 2], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2"]
        )

        expected_outputs = [np.array([1, 2], dtype=np.uint32), np.array([3, 4], dtype=np.uint32)]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_uint32_opset18",
            opset_imports=[onnx.helper.make_opsetid("", 18)],
        )

    @staticmethod
    def export_equal_parts_by_outputs_opset13() -> None:
        # without split, Split-13 cuts equal parts, one per listed output: 2, 2, 2.
        node_input = np.array([1, 2, 3, 4, 5, 6], dtype=np.int16)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2", "output_3"]
        )

        expected_outputs = [
            np.array([1, 2], dtype=np.int16),
            np.array([3, 4], dtype=np.int16),
            np.array([5, 6], dtype=np.int16),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_equal_parts_by_outputs_opset13",
            opset_imports=[onnx.helper.make_opsetid("", 13)],
        )

    @staticmethod
    def export_sizes_with_zeros_opset13() -> None:
        # split values may be 0 at Split-13 too: 2, 0, 4.
        node_input = np.array([1, 2, 3, 4, 5, 6], dtype=np.uint32)
        split = np.array([2, 0, 4], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2", "output_3"]
        )

        expected_outputs = [
            np.array([1, 2], dtype=np.uint32),
            np.array([], dtype=np.uint32),
            np.array([3, 4, 5, 6], dtype=np.uint32),
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_with_zeros_opset13",
            opset_imports=[onnx.helper.make_opsetid("", 13)],
        )

    @staticmethod
    def export_negative_axis_opset13() -> None:
        # a negative axis with a split input: axis=-1, sizes 1, 5.
        node_input = np.array(
            [[False, False, True, False, False, True], [False, False, True, False, False, True]],
            dtype=bool,
        )
        split = np.array([1, 5], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2"], axis=-1
        )

        expected_outputs = [
            np.array([[False], [False]], dtype=bool),
            np.array(
                [[False, True, False, False, True], [False, True, False, False, True]], dtype=bool
            ),
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_negative_axis_opset13",
            opset_imports=[onnx.helper.make_opsetid("", 13)],
        )

    @staticmethod
    def export_one_output_opset13() -> None:
        # one listed output without split is the whole input.
        node_input = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)

        node = onnx.helper.make_node("Split", inputs=["input"], outputs=["output_1"])

        expected_outputs = [np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_one_output_opset13",
            opset_imports=[onnx.helper.make_opsetid("", 13)],
        )

    @staticmethod
    def export_bfloat16_opset13() -> None:
        # bfloat16 first became a Split type at opset 13; sizes 1, 2.
        node_input = np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16)
        split = np.array([1, 2], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2"]
        )

        expected_outputs = [
            np.array([1.0], dtype=ml_dtypes.bfloat16),
            np.array([2.0, 3.0], dtype=ml_dtypes.bfloat16),
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_bfloat16_opset13",
            opset_imports=[onnx.helper.make_opsetid("", 13)],
        )

    @staticmethod
    def export_attribute_sizes_opset11() -> None:
        # before opset 13 the sizes are the split attribute, not an input: 2, 5 along axis 1.
        node_input = np.array([[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14]], dtype=np.int32)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=1, split=[2, 5]
        )

        expected_outputs = [
            np.array([[1, 2], [8, 9]], dtype=np.int32),
            np.array([[3, 4, 5, 6, 7], [10, 11, 12, 13, 14]], dtype=np.int32),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_attribute_sizes_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_attribute_zero_sizes_opset11() -> None:
        # the split attribute may hold zeros (Split-11: 'Values should be >= 0'): 0, 3, 0.
        node_input = np.array([1.0, 2.0, 3.0], dtype=np.float32)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2", "output_3"], split=[0, 3, 0]
        )

        expected_outputs = [
            np.array([], dtype=np.float32),
            np.array([1.0, 2.0, 3.0], dtype=np.float32),
            np.array([], dtype=np.float32),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_attribute_zero_sizes_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_negative_axis_opset11() -> None:
        # Split-11 is the first to document negative axes: axis=-1, equal parts 2, 2.
        node_input = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], dtype=np.int64)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=-1
        )

        expected_outputs = [
            np.array([[1, 2], [5, 6], [9, 10]], dtype=np.int64),
            np.array([[3, 4], [7, 8], [11, 12]], dtype=np.int64),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_negative_axis_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_equal_parts_by_outputs_opset11() -> None:
        # without the split attribute, equal parts by output count: 3, 3, 3.
        node_input = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=np.uint8)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2", "output_3"]
        )

        expected_outputs = [
            np.array([1, 2, 3], dtype=np.uint8),
            np.array([4, 5, 6], dtype=np.uint8),
            np.array([7, 8, 9], dtype=np.uint8),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_equal_parts_by_outputs_opset11",
            opset_imports=[onnx.helper.make_opsetid("", 11)],
        )

    @staticmethod
    def export_attribute_sizes_opset2() -> None:
        # Split-2 reads sizes from the split attribute only: 1, 3.
        node_input = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float64)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], split=[1, 3]
        )

        expected_outputs = [
            np.array([1.0], dtype=np.float64),
            np.array([2.0, 3.0, 4.0], dtype=np.float64),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_attribute_sizes_opset2",
            opset_imports=[onnx.helper.make_opsetid("", 2)],
            ir_version=3,
        )

    @staticmethod
    def export_equal_parts_opset2() -> None:
        # Split-2 without sizes: equal parts by output count along axis 1, 2 and 2.
        node_input = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.int8)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=1
        )

        expected_outputs = [
            np.array([[1, 2], [5, 6]], dtype=np.int8),
            np.array([[3, 4], [7, 8]], dtype=np.int8),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_equal_parts_opset2",
            opset_imports=[onnx.helper.make_opsetid("", 2)],
            ir_version=3,
        )

    @staticmethod
    def export_attribute_sizes_opset1() -> None:
        # Split-1 takes sizes as the split attribute: 2, 4.
        node_input = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=np.float32)

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=0, split=[2, 4]
        )

        expected_outputs = [
            np.array([1.0, 2.0], dtype=np.float32),
            np.array([3.0, 4.0, 5.0, 6.0], dtype=np.float32),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_attribute_sizes_opset1",
            opset_imports=[onnx.helper.make_opsetid("", 1)],
            ir_version=3,
        )

    @staticmethod
    def export_sizes_second_input_opset1() -> None:
        # Split-1 also takes sizes as a second input, typed like the input (float16 here): 4,
        # 2.
        node_input = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=np.float16)
        split = np.array([4.0, 2.0], dtype=np.float16)

        node = onnx.helper.make_node(
            "Split", inputs=["input", "split"], outputs=["output_1", "output_2"], axis=0
        )

        expected_outputs = [
            np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float16),
            np.array([5.0, 6.0], dtype=np.float16),
        ]
        expect(
            node,
            inputs=[node_input, split],
            outputs=expected_outputs,
            name="test_split_sizes_second_input_opset1",
            opset_imports=[onnx.helper.make_opsetid("", 1)],
            ir_version=3,
        )

    @staticmethod
    def export_equal_parts_opset1() -> None:
        # Split-1 without sizes: equal parts by output count, 3 and 3 along axis 1.
        node_input = np.array(
            [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]], dtype=np.float64
        )

        node = onnx.helper.make_node(
            "Split", inputs=["input"], outputs=["output_1", "output_2"], axis=1
        )

        expected_outputs = [
            np.array([[1.0, 2.0, 3.0], [7.0, 8.0, 9.0]], dtype=np.float64),
            np.array([[4.0, 5.0, 6.0], [10.0, 11.0, 12.0]], dtype=np.float64),
        ]
        expect(
            node,
            inputs=[node_input],
            outputs=expected_outputs,
            name="test_split_equal_parts_opset1",
            opset_imports=[onnx.helper.make_opsetid("", 1)],
            ir_version=3,
        )
