"""Arguments an attacker passes to the API: every one is refused with a SplitError (or a
SplitTypeError) before anything is allocated, and ``out=`` never writes over what it reads."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from onnx import helper

import splitops
from splitops import SplitError, SplitTypeError

HUGE: dict[str, Callable[[], Any]] = {
    "sequence_sizes of 10**100": lambda: splitops.sequence_sizes(10**100),
    "split of an empty axis into 2**31-1": lambda: splitops.split(
        np.empty(0), num_outputs=2**31 - 1
    ),
    "sequence of a broadcast 10**12": lambda: splitops.split_to_sequence(
        np.broadcast_to(0.0, (10**12,))
    ),
    "split_sizes into 10**9": lambda: splitops.split_sizes(10**9, num_outputs=10**9),
}


@pytest.mark.parametrize("call", HUGE.values(), ids=HUGE)
def test_a_count_over_the_limit_is_refused_before_anything_is_allocated(
    call: Callable[[], Any],
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(SplitError, match="the max_parts limit") as caught:
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.rule == "limit"
    assert "splitops.limits(max_parts=N)" in str(caught.value)
    assert peak < 2**20


def _empty_sizes(library: str) -> Any:
    """Sizes of shape (10**4, 10**4, 0): nothing in them, but 10**8 lists in their tolist()."""
    if library == "torch":
        torch = pytest.importorskip("torch")
        return torch.empty((10**4, 10**4, 0), dtype=torch.int64)
    return np.empty((10**4, 10**4, 0), dtype=np.int64)


@pytest.mark.parametrize("library", ["numpy", "torch"])
@pytest.mark.parametrize("op", ["split", "split_to_sequence"])
def test_sizes_of_rank_three_are_refused_by_their_shape_not_their_values(
    library: str, op: str
) -> None:
    sizes = _empty_sizes(library)
    x = np.arange(4) if library == "numpy" else pytest.importorskip("torch").arange(4)
    tracemalloc.start()
    try:
        with pytest.raises(SplitError, match=r"1-d; one of shape \(10000, 10000, 0\)") as caught:
            getattr(splitops, op)(x, sizes)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.rule == "split-shape"
    assert peak < 1 << 20


def test_the_limit_is_raised_for_a_block_and_only_there() -> None:
    with splitops.limits(max_parts=2**21):
        assert len(splitops.sequence_sizes(2**21)) == 2**21
    with pytest.raises(SplitError, match="would make 2097152 parts"):
        splitops.sequence_sizes(2**21)


def test_a_limit_below_the_plan_cache_or_of_another_type_is_refused() -> None:
    with pytest.raises(SplitError, match=r"max_parts must lie in \[1024, "):
        splitops.limits(max_parts=100)
    with pytest.raises(SplitError, match="max_external_bytes must lie"):
        splitops.limits(max_external_bytes=-1)


def test_out_overlapping_the_input_is_refused_before_any_write() -> None:
    x = np.arange(4)
    with pytest.raises(SplitError, match=r"out\[0\] shares memory with the input"):
        splitops.split(x, [2, 2], out=[x[2:], x[:2]])
    assert x.tolist() == [0, 1, 2, 3]


def test_the_same_out_array_twice_is_refused_before_any_write() -> None:
    target = np.full(2, -1)
    with pytest.raises(SplitError, match=r"out\[0\] and out\[1\] share memory"):
        splitops.split(np.arange(4), [2, 2], out=[target, target])
    assert target.tolist() == [-1, -1]


def test_out_rejected_at_its_second_array_leaves_the_first_untouched() -> None:
    first, second = np.full(2, -1), np.full(3, -1)
    with pytest.raises(SplitError, match=r"out\[1\] must have shape \(2,\)"):
        splitops.split(np.arange(4), [2, 2], out=[first, second])
    assert first.tolist() == [-1, -1]


TORCH_OUT: dict[str, tuple[Callable[[Any], Any], str]] = {
    "overlapping the input": (lambda torch: None, "shares memory with the input"),
    "a leaf requiring grad": (
        lambda torch: torch.zeros(2, requires_grad=True),
        "a leaf tensor that requires grad",
    ),
    "expanded": (lambda torch: torch.zeros(1).expand(2), "expanded"),
    "an inference tensor": (lambda torch: _inference_zeros(torch), "an inference tensor"),
    "on another device": (lambda torch: torch.zeros(2, device="meta"), "is on meta"),
}


def _inference_zeros(torch: Any) -> Any:
    with torch.inference_mode():
        return torch.zeros(2)


@pytest.mark.parametrize(("make", "says"), TORCH_OUT.values(), ids=TORCH_OUT)
def test_a_torch_out_torch_refuses_is_a_split_error_before_any_write(
    make: Callable[[Any], Any], says: str
) -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(4.0)
    first = make(torch)
    first = x[2:] if first is None else first
    second = torch.full((2,), -1.0)
    with pytest.raises(SplitError, match=says):
        splitops.split(x, [2, 2], out=[second, first])
    assert second.tolist() == [-1.0, -1.0]
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda torch: torch.eye(4).to_sparse(), "a sparse_coo tensor was given"),
        (lambda torch: torch.eye(4).to_sparse_csr(), "a sparse_csr tensor was given"),
    ],
    ids=["sparse", "sparse csr"],
)
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")
def test_a_tensor_without_strides_is_a_split_type_error(
    make: Callable[[Any], Any], says: str
) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(SplitTypeError, match=says):
        splitops.split(make(torch), num_outputs=2)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors is in prototype stage")
def test_a_nested_tensor_is_a_split_type_error() -> None:
    torch = pytest.importorskip("torch")
    nested = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])
    with pytest.raises(SplitTypeError, match="a nested tensor was given"):
        splitops.split_to_sequence(nested)


def test_sizes_given_as_a_meta_tensor_are_a_split_error() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(SplitError, match="holds no values there"):
        splitops.split(torch.zeros(4), torch.tensor([2, 2], device="meta"))


NODE = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2, name="halves")


@pytest.mark.parametrize(
    "inputs",
    [{"x": np.zeros(4)}, (value for value in [np.zeros(4)])],
    ids=["dict", "generator"],
)
def test_run_node_inputs_other_than_a_list_are_a_split_type_error(inputs: Any) -> None:
    with pytest.raises(SplitTypeError, match="takes its inputs as a list or tuple"):
        splitops.run_node(NODE, inputs, opset=18)


def test_backend_run_node_refuses_a_fractional_opset() -> None:
    with pytest.raises(SplitTypeError, match=r"opset must be an int; 18\.7 was given"):
        splitops.backend.run_node(NODE, [np.zeros(4)], opset_version=18.7)


def test_an_attribute_given_twice_is_refused_rather_than_read_as_the_last() -> None:
    node = helper.make_node("Split", ["x"], ["a", "b"], num_outputs=2)
    node.attribute.append(helper.make_attribute("num_outputs", 3))
    with pytest.raises(SplitError, match="gives the attribute 'num_outputs' twice") as caught:
        splitops.run_node(node, [np.zeros(4)], opset=18)
    assert caught.value.rule == "attribute"
