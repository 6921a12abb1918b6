"""torch: tensors on the input's device, views of its storage, autograd, compile and trace.

``torch.compile`` runs with the CPU-only ``eager`` and ``aot_eager`` backends and
``fullgraph=True``, so a graph break fails the test; pytest turns every warning (dynamo's
``lru_cache`` warning among them) into an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from splitops import SplitError, SplitTypeError, split, split_to_sequence  # noqa: E402

BACKENDS = ["eager", "aot_eager"]


@pytest.fixture(autouse=True)
def fresh_dynamo() -> None:
    """Forget earlier compilations: each test starts below dynamo's recompile limit.

    Some torch releases warn a DeprecationWarning from inside the reset itself (2.11 with
    CUDA); that is torch's own code calling torch, so it is ignored there and nowhere else.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch._dynamo.reset()


def _storage(tensor: Any) -> int:
    return int(tensor.untyped_storage().data_ptr())


def _weighted_sum(parts: Any) -> Any:
    return sum((i + 1) * part.sum() for i, part in enumerate(parts))


def test_parts_are_views_of_the_input_storage() -> None:
    x = torch.arange(24.0).reshape(4, 6).t()
    parts = [
        *split(x, [1, 0, 5], axis=0),
        *split(x, num_outputs=6, axis=0),
        *split_to_sequence(x, axis=1, keepdims=0),
    ]
    assert all(part._base is x or part._base is x._base for part in parts)
    assert {_storage(part) for part in parts} == {_storage(x)}
    assert torch.equal(parts[1], x[1:1])


def test_copy_true_gives_contiguous_tensors_in_their_own_storage() -> None:
    x = torch.arange(24.0).reshape(4, 6).t()
    parts = [*split(x, [2, 2], axis=1, copy=True), *split_to_sequence(x, axis=1, copy=True)]
    for part in parts:
        assert part.is_contiguous()
        assert _storage(part) != _storage(x)
    assert torch.equal(parts[0], x[:, :2])


@pytest.mark.parametrize(
    ("shape", "axis", "sizes"),
    [
        ((4, 6), 0, [1, 3]),
        ((4, 6), 1, [2, 2, 2]),
        ((4, 7), 1, [3, 3, 1]),
        ((2, 9, 3), 1, [4, 0, 5]),
    ],
    ids=["first_axis", "equal_run", "run_and_rest", "uneven"],
)
def test_copies_are_one_new_storage_whose_parts_share_no_bytes(
    shape: tuple[int, ...], axis: int, sizes: list[int]
) -> None:
    x = torch.arange(float(np.prod(shape))).reshape(shape)
    parts = split(x, sizes, axis=axis, copy=True)
    assert {_storage(part) for part in parts} == {_storage(parts[0])} != {_storage(x)}
    assert parts[0].untyped_storage().nbytes() == x.untyped_storage().nbytes()  # one allocation
    for i, part in enumerate(parts):
        assert part.is_contiguous()
        part.fill_(-1.0 - i)  # writing into one part leaves every other one alone
    for i, (part, size) in enumerate(zip(parts, sizes, strict=True)):
        assert torch.equal(part, torch.full(part.shape, -1.0 - i))
        assert part.shape[axis] == size
    assert torch.equal(x, torch.arange(float(np.prod(shape))).reshape(shape))


def test_parts_of_a_meta_tensor_stay_on_the_meta_device() -> None:
    x = torch.empty(3, 5, device="meta")
    parts = [*split(x, [2, 3], axis=1), *split_to_sequence(x, axis=0, keepdims=0, copy=True)]
    assert [part.device.type for part in parts] == ["meta"] * 5
    assert [tuple(part.shape) for part in parts[:3]] == [(3, 2), (3, 3), (5,)]


@pytest.mark.parametrize("copy", [False, True])
def test_gradient_flows_back_through_every_part(copy: bool) -> None:
    x = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
    parts = split(x, num_outputs=3, axis=1, copy=copy)
    (grad,) = torch.autograd.grad(_weighted_sum(parts), x)
    weights = torch.tensor([1.0, 1, 1, 2, 2, 2, 3], dtype=torch.float64)
    direct = x * weights
    (expected,) = torch.autograd.grad(direct.sum(), x)
    assert torch.equal(grad, expected)


def test_gradient_flows_back_through_a_keepdims0_sequence() -> None:
    x = torch.randn(2, 3, requires_grad=True)
    parts = split_to_sequence(x, axis=1, keepdims=0)
    (grad,) = torch.autograd.grad(_weighted_sum(parts), x)
    assert torch.equal(grad, torch.tensor([[1.0, 2, 3], [1, 2, 3]]))


def _model(x: Any, count: int) -> Any:
    halves = split(x, num_outputs=count, axis=-1)
    rows = split_to_sequence(x, axis=0, keepdims=0)
    chunks = split_to_sequence(x, 2, axis=1, copy=True)
    head = split(x, (1, x.shape[0] - 1), opset=13, copy=True)  # sizes from a (symbolic) dim
    return _weighted_sum(halves) + _weighted_sum(rows) + _weighted_sum(chunks) + _weighted_sum(head)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_compiles_to_one_graph_for_changing_shapes(backend: str, dynamic: bool | None) -> None:
    compiled = torch.compile(_model, backend=backend, fullgraph=True, dynamic=dynamic)
    for shape, count in [((3, 4), 2), ((3, 6), 3), ((5, 6), 3), ((2, 8), 4), ((3, 4), 2)]:
        x = torch.randn(shape, dtype=torch.float64)
        torch.testing.assert_close(compiled(x, count), _model(x, count), rtol=0, atol=1e-12)


def test_dynamo_explains_no_graph_break() -> None:
    explanation = torch._dynamo.explain(_model)(torch.randn(3, 4), 2)
    assert explanation.graph_break_count == 0
    assert explanation.graph_count == 1


def test_compiled_gradient_equals_the_eager_gradient() -> None:
    compiled = torch.compile(_model, backend="aot_eager", fullgraph=True)
    x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    (grad,) = torch.autograd.grad(compiled(x, 3), x)
    (eager,) = torch.autograd.grad(_model(x, 3), x)
    torch.testing.assert_close(grad, eager, rtol=0, atol=1e-12)


REJECTED = {
    "split_sizes_must_sum_to_the_axis_length": (
        lambda x: split(x, [1, 2]),
        SplitError,
        r"sum to 3, but the axis length is 4",
    ),
    "split11_num_outputs_must_divide_the_axis": (
        lambda x: split(x, num_outputs=3, opset=11),
        SplitError,
        r"does not divide into 3",
    ),
    "split18_num_outputs_must_be_positive": (
        lambda x: split(x, num_outputs=0),
        SplitError,
        r"num_outputs must lie in \[1, 2147483647\]; 0 was given",
    ),
    "axis_must_lie_within_the_rank": (
        lambda x: split(x, [2, 2], axis=3),
        SplitError,
        r"axis 3 is out of range",
    ),
    "sizes_array_must_be_integer_even_when_empty": (
        lambda x: split(x, np.array([], dtype=np.float32)),
        SplitTypeError,
        r"split must be an integer array; an array of dtype float32",
    ),
    "sizes_array_must_be_integer_even_when_whole": (
        lambda x: split(x, np.array([3.0, 3.0])),
        SplitTypeError,
        r"split must be an integer array; an array of dtype float64",
    ),
    "sizes_tensor_must_be_integer": (
        lambda x: split(x, torch.tensor([2.0, 2.0])),
        SplitTypeError,
        r"split must be an integer array; an array of dtype torch.float32",
    ),
    "split1_input_must_be_a_float": (
        lambda x: split(x.bool(), [2, 2], opset=1),
        SplitTypeError,
        r"Split-1 does not accept bool inputs",
    ),
    "copy_must_be_a_bool": (
        lambda x: split(x, [2, 2], copy=1),
        SplitTypeError,
        r"copy must be True or False",
    ),
    "opset_must_be_an_int": (
        lambda x: split(x, [2, 2], opset="18"),
        SplitTypeError,
        r"opset must be an int",
    ),
    "keepdims_must_be_0_or_1": (
        lambda x: split_to_sequence(x, keepdims=2),
        SplitError,
        r"keepdims must be 0 or 1",
    ),
    "sequence_chunk_must_be_positive": (
        lambda x: split_to_sequence(x, 0),
        SplitError,
        r"chunk length\) must be >= 1; 0 was given",
    ),
    "sequence_sizes_array_must_be_integer": (
        lambda x: split_to_sequence(x, np.array([2.0, 2.0]), axis=-1),
        SplitTypeError,
        r"SplitToSequence-24 split must be an integer array",
    ),
    "sequence_axis_must_lie_within_the_rank": (
        lambda x: split_to_sequence(x, axis=-2, keepdims=0),
        SplitError,
        r"axis -2 is out of range",
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("function", "kind", "message"), REJECTED.values(), ids=REJECTED)
def test_compiled_code_rejects_an_input_as_eager_mode_does(
    function: Callable[[Any], Any], kind: type[Exception], message: str, backend: str
) -> None:
    x = torch.ones(4)
    with pytest.raises(kind, match=message) as eager:
        function(x)
    compiled = torch.compile(function, backend=backend, fullgraph=True)
    with pytest.raises(SplitError) as traced:
        compiled(x)
    assert type(traced.value) is type(eager.value)
    assert str(traced.value) == str(eager.value)
    assert traced.value.rule == eager.value.rule


def _unpacks_the_parts(x: Any) -> Any:
    first, second = split(x, [1, 2])
    return first * 2 + second


def _drops_the_parts(x: Any) -> Any:
    split_to_sequence(x, np.array([1.5, 2.5]))
    return x + 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("function", [_unpacks_the_parts, _drops_the_parts])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_compiled_code_rejects_an_input_whatever_the_caller_does_with_the_parts(
    function: Callable[[Any], Any], backend: str, requires_grad: bool
) -> None:
    x = torch.ones(4, requires_grad=requires_grad)
    with pytest.raises(SplitError) as eager:
        function(x)
    compiled = torch.compile(function, backend=backend, fullgraph=True)
    for _ in range(2):  # the second call runs the cached graph, which raises again
        with pytest.raises(SplitError) as traced:
            compiled(x)
        assert type(traced.value) is type(eager.value)
        assert str(traced.value) == str(eager.value)
        assert traced.value.rule == eager.value.rule


SIZES = np.array([2, 2])


@pytest.mark.parametrize(
    "function",
    [
        lambda x: split(x, torch.tensor([2, 2])),
        lambda x: split(x, SIZES),
        lambda x: split_to_sequence(x, np.full(2, 2)),
        lambda x: split(x, [torch.tensor(2), 2]),
    ],
    ids=["tensor", "numpy_array", "numpy_array_computed", "list_holding_a_tensor"],
)
def test_compiled_sizes_must_be_python_values_not_arrays(function: Callable[[Any], Any]) -> None:
    compiled = torch.compile(function, backend="eager", fullgraph=True)
    with pytest.raises(SplitError) as traced:
        compiled(torch.ones(4))
    assert type(traced.value) is SplitError
    assert "under torch.compile needs its split sizes while tracing" in str(traced.value)
    assert "Pass Python ints" in str(traced.value)


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")
def test_jit_trace_records_the_split_and_replays_it() -> None:
    def parts(x: Any) -> tuple[Any, ...]:
        return split(x, [1, 3], axis=1)

    traced = torch.jit.trace(parts, torch.zeros(2, 4))
    x = torch.arange(8.0).reshape(2, 4)
    assert all(torch.equal(a, b) for a, b in zip(traced(x), parts(x), strict=True))
    assert "split_with_sizes" in str(traced.graph)


def test_split_sizes_may_be_a_tensor_in_eager_mode() -> None:
    parts = split(torch.arange(6), torch.tensor([2, 4]))
    assert [part.tolist() for part in parts] == [[0, 1], [2, 3, 4, 5]]


def test_torch_export_records_the_split_as_graph_ops() -> None:
    class Heads(torch.nn.Module):
        def forward(self, x: Any) -> tuple[Any, ...]:
            return split(x, num_outputs=3, axis=1)

    exported = torch.export.export(Heads(), (torch.zeros(2, 7),))
    x = torch.arange(14.0).reshape(2, 7)
    got = exported.module()(x)
    assert [tuple(part.shape) for part in got] == [(2, 3), (2, 3), (2, 1)]
    assert torch.equal(got[2], x[:, 6:])
    assert "split_with_sizes" in str(exported.graph)


def test_views_are_torch_s_own_split_and_unbind() -> None:
    x = torch.arange(12.0, requires_grad=True).reshape(3, 4)
    assert {type(p.grad_fn).__name__ for p in split(x, [1, 3], axis=1)} == {
        "SplitWithSizesBackward0"
    }
    rows = split_to_sequence(x, axis=0, keepdims=0)
    assert {type(p.grad_fn).__name__ for p in rows} == {"UnbindBackward0"}
