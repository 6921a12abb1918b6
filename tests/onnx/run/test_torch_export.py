"""Models a real producer writes: small ``nn.Module``s exported by ``torch.onnx.export`` with
both exporters, run on :mod:`splitops.backend` and compared with torch's own outputs.

Each test first checks that the exported model holds the Split or SplitToSequence node it is
about (else it would prove nothing), then that splitops ran it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import onnx
import pytest
from onnx import ModelProto, NodeProto

from splitops import backend

torch = pytest.importorskip("torch")

# The TorchScript exporter is deprecated in favour of the dynamo one; both are tested.
LEGACY_EXPORTER = pytest.mark.filterwarnings(
    "ignore:You are using the legacy TorchScript:DeprecationWarning",
    "ignore:The feature will be removed:DeprecationWarning",
)
# torch.export's own use of a pytree API it deprecates.
DYNAMO_EXPORTER = pytest.mark.filterwarnings(
    "ignore:`isinstance\\(treespec, LeafSpec\\)`:FutureWarning"
)


class SizedParts(torch.nn.Module):
    """Tensor.split with explicit sizes."""

    def forward(self, x: Any) -> Any:
        a, b = x.split([2, 5], dim=-1)
        return a * 2, b


class TensorSplit(torch.nn.Module):
    """torch.tensor_split into 3 parts: sizes 3, 3, 2 on an axis of 8."""

    def forward(self, x: Any) -> Any:
        first, _, last = torch.tensor_split(x, 3, dim=1)
        return first + 1, last


class Unbind(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        a, b, c = x.unbind(1)
        return a - c, b


class ChunkColumns(torch.nn.Module):
    """torch.chunk along a static axis of 9 while the batch axis is dynamic."""

    def forward(self, x: Any) -> Any:
        a, b, c = torch.chunk(x, 3, dim=1)
        return a * c, b


class ChunkUneven(torch.nn.Module):
    """torch.chunk(x, 4) on an axis of 6: torch makes 3 chunks of 2."""

    def forward(self, x: Any) -> Any:
        return torch.chunk(x, 4, dim=1)


class ChunkRows(torch.nn.Module):
    """torch.chunk along the dynamic batch axis."""

    def forward(self, x: Any) -> Any:
        a, b = torch.chunk(x, 2, dim=0)
        return a * 2, b


def torchscript_export(module: Any, x: Any, opset: int, dynamic: bool = True) -> ModelProto:
    buffer = io.BytesIO()
    axes = {"x": {0: "batch"}} if dynamic else None
    torch.onnx.export(
        module.eval(),
        (x,),
        buffer,
        dynamo=False,
        opset_version=opset,
        input_names=["x"],
        dynamic_axes=axes,
    )
    return onnx.load_from_string(buffer.getvalue())


def dynamo_export(module: Any, x: Any, batch: Any, *, optimize: bool = True) -> ModelProto:
    pytest.importorskip("onnxscript")  # the dynamo exporter writes ONNX through onnxscript
    shapes = {"x": {0: batch}}
    program = torch.onnx.export(
        module.eval(),
        (x,),
        dynamo=True,
        input_names=["x"],
        dynamic_shapes=shapes,
        optimize=optimize,
        verbose=False,
    )
    return program.model_proto


def split_nodes(model: ModelProto, op: str) -> list[NodeProto]:
    return [node for node in model.graph.node if node.op_type == op]


def assert_matches_torch(
    model: ModelProto, module: Callable[..., Any], batches: list[Any], calls: mock.MagicMock
) -> None:
    """splitops.backend's outputs equal torch's for every input, and splitops ran."""
    for x in batches:
        calls.reset_mock()
        outputs = backend.run_model(model, [x.numpy()])
        with torch.no_grad():
            expected = [t.numpy() for t in module(x)]
        assert len(outputs) == len(expected)
        for actual, wanted in zip(outputs, expected, strict=True):
            np.testing.assert_array_equal(actual, wanted, strict=True)
        assert calls.call_count > 0


def _rows(*batches: int, width: int) -> list[Any]:
    generator = torch.Generator().manual_seed(width)
    return [torch.randn(b, width, generator=generator) for b in batches]


@pytest.mark.parametrize("opset", [11, 13, 18])
@LEGACY_EXPORTER
def test_torchscript_split_with_sizes(opset: int, splitops_calls: mock.MagicMock) -> None:
    """Split-11 carries the sizes as an attribute, Split-13 and 18 as an input."""
    module = SizedParts()
    model = torchscript_export(module, torch.randn(3, 7), opset)
    (node,) = split_nodes(model, "Split")
    assert ("split" in {a.name for a in node.attribute}) == (opset < 13)
    assert len(node.input) == (1 if opset < 13 else 2)
    assert_matches_torch(model, module, _rows(3, 1, 5, width=7), splitops_calls)


@LEGACY_EXPORTER
def test_torchscript_tensor_split_exports_split_to_sequence(
    splitops_calls: mock.MagicMock,
) -> None:
    module = TensorSplit()
    model = torchscript_export(module, torch.randn(2, 8), 18)
    assert len(split_nodes(model, "SplitToSequence")) == 1
    assert split_nodes(model, "SequenceAt")
    assert_matches_torch(model, module, _rows(2, 4, width=8), splitops_calls)


@pytest.mark.parametrize("opset", [11, 18])
@LEGACY_EXPORTER
def test_torchscript_unbind_exports_split_and_squeeze(
    opset: int, splitops_calls: mock.MagicMock
) -> None:
    module = Unbind()
    model = torchscript_export(module, torch.randn(2, 3, 4), opset)
    (node,) = split_nodes(model, "Split")
    assert len(node.output) == 3
    assert split_nodes(model, "Squeeze")
    batches = [torch.randn(b, 3, 4, generator=torch.Generator().manual_seed(b)) for b in (2, 5)]
    assert_matches_torch(model, module, batches, splitops_calls)


@LEGACY_EXPORTER
def test_torchscript_chunk_with_dynamic_batch_exports_split_to_sequence(
    splitops_calls: mock.MagicMock,
) -> None:
    module = ChunkUneven()
    model = torchscript_export(module, torch.randn(2, 6), 18)
    assert len(split_nodes(model, "SplitToSequence")) == 1
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert_matches_torch(model, module, _rows(1, 4, width=6), splitops_calls)


@DYNAMO_EXPORTER
def test_dynamo_chunk_with_dynamic_batch_exports_num_outputs(
    splitops_calls: mock.MagicMock,
) -> None:
    module = ChunkColumns()
    model = dynamo_export(module, torch.randn(4, 9), torch.export.Dim("batch"))
    (node,) = split_nodes(model, "Split")
    assert {a.name: a.i for a in node.attribute} == {"axis": 1, "num_outputs": 3}
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert_matches_torch(model, module, _rows(2, 7, width=9), splitops_calls)


@DYNAMO_EXPORTER
def test_dynamo_split_with_sizes_exports_a_split_input(splitops_calls: mock.MagicMock) -> None:
    module = SizedParts()
    model = dynamo_export(module, torch.randn(3, 7), torch.export.Dim("batch"))
    (node,) = split_nodes(model, "Split")
    assert len(node.input) == 2
    assert_matches_torch(model, module, _rows(3, 6, width=7), splitops_calls)


@DYNAMO_EXPORTER
def test_dynamo_chunk_along_the_dynamic_batch_exports_split_to_sequence(
    splitops_calls: mock.MagicMock,
) -> None:
    """The chunk length is computed from the batch size at run time. (The exporter's
    optimizer, onnxscript 0.7's constant folding, fails on this SplitToSequence, so the
    model is exported unoptimized.)"""
    module = ChunkRows()
    model = dynamo_export(module, torch.randn(6, 3), torch.export.Dim.DYNAMIC, optimize=False)
    (node,) = split_nodes(model, "SplitToSequence")
    assert len(node.input) == 2
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    assert_matches_torch(model, module, _rows(6, 5, 2, width=3), splitops_calls)
