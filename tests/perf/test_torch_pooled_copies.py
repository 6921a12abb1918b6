"""``copy=True`` on large CPU tensors: copies on the buffer pool, outside autograd and tracing.

The copies keep clone's promise (contiguous, same dtype and values, no memory shared with the
input or with each other); the pool is used only where torch would not notice the difference.
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import Iterator
from typing import Any

import pytest

import splitops
from splitops import buffers, recipes
from splitops.buffers import BufferPool

torch = pytest.importorskip("torch")

MiB = 1 << 20


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[BufferPool]:
    """A fresh pool in place of the one copy=True uses, so that its counters are this test's."""
    fresh = BufferPool(min_bytes=MiB, max_idle_bytes=64 * MiB)
    monkeypatch.setattr(buffers, "buffer_pool", fresh)
    monkeypatch.setattr(recipes, "buffer_pool", fresh)
    yield fresh
    gc.collect()
    fresh.clear()


def _spans(tensors: Any) -> list[tuple[int, int]]:
    return [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in tensors]


def _disjoint(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[1] <= b[0] or b[1] <= a[0]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex64", "bool", "int64"])
def test_large_tensor_copies_come_from_the_pool_with_clones_values(
    pool: BufferPool, dtype: str
) -> None:
    x = (torch.rand(2048, 1024) * 100).to(getattr(torch, dtype))  # 2 to 16 MiB
    parts = splitops.split(x, [100, 1948], copy=True)
    expected = [x[:100].clone(), x[100:].clone()]
    for part, want in zip(parts, expected, strict=True):
        assert part.dtype == want.dtype
        assert part.is_contiguous()
        assert not part.requires_grad
        assert torch.equal(part, want)
    spans = _spans([*parts, x])
    assert _disjoint(spans[0], spans[1])
    assert _disjoint(spans[0], spans[2])
    assert _disjoint(spans[1], spans[2])
    assert (pool.hits, pool.misses) == (0, 1)


def test_a_tensor_view_of_a_pooled_part_keeps_its_block(pool: BufferPool) -> None:
    parts = splitops.split(torch.rand(1024, 1024), num_outputs=2, copy=True)
    view = parts[0][3:, ::2]
    before = view.clone()
    del parts
    gc.collect()
    assert pool.idle_bytes == 0
    splitops.split(torch.full((1024, 1024), 7.0), num_outputs=2, copy=True)
    assert torch.equal(view, before)
    assert pool.misses == 2


def test_copies_that_need_gradients_are_clones_and_pass_them_back(pool: BufferPool) -> None:
    x = torch.rand(1024, 1024, requires_grad=True)
    first, second = splitops.split(x, num_outputs=2, copy=True)
    assert first.grad_fn is not None
    (first.sum() * 2 + second.sum() * 3).backward()
    assert x.grad is not None
    assert torch.equal(x.grad[:512], torch.full((512, 1024), 2.0))
    assert torch.equal(x.grad[512:], torch.full((512, 1024), 3.0))
    assert (pool.hits, pool.misses) == (0, 0)


def test_copies_under_vmap_are_the_rows_copies(pool: BufferPool) -> None:
    x = torch.rand(2, 1 << 19)
    firsts = torch.func.vmap(lambda t: splitops.split(t, num_outputs=2, copy=True)[0])(x)
    assert torch.equal(firsts, x[:, : 1 << 18])


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")
def test_a_traced_copy_gives_new_memory_on_every_run(pool: BufferPool) -> None:
    def copies(t: Any) -> Any:
        return splitops.split(t, num_outputs=2, copy=True)

    traced = torch.jit.trace(copies, (torch.rand(1 << 19),), check_trace=False)
    a, b = torch.rand(1 << 19), torch.rand(1 << 19)
    from_a = traced(a)
    from_b = traced(b)
    assert torch.equal(torch.cat(from_a), a)
    assert torch.equal(torch.cat(from_b), b)
    assert pool.misses == 0


def test_compiled_copies_match_eager_ones(pool: BufferPool) -> None:
    compiled = torch.compile(
        lambda t: splitops.split(t, num_outputs=2, copy=True), fullgraph=True, backend="eager"
    )
    x = torch.rand(1 << 19)
    parts = compiled(x)
    assert torch.equal(torch.cat(parts), x)
    assert all(_disjoint(span, _spans([x])[0]) for span in _spans(parts))
    assert pool.misses == 0


def test_an_empty_pooled_part_resized_by_out_leaves_the_other_parts_alone(
    pool: BufferPool,
) -> None:
    empty, full = splitops.split(torch.rand(1024, 1024), [0, 1024], copy=True)
    before = full.clone()
    torch.add(torch.zeros(1024), 5.0, out=empty)  # torch resizes an empty out= silently
    assert torch.equal(empty, torch.full((1024,), 5.0))
    assert torch.equal(full, before)
    assert pool.misses == 1


def test_a_pooled_part_cannot_grow_into_the_next_one(pool: BufferPool) -> None:
    first, second = splitops.split(torch.rand(1024, 1024), num_outputs=2, copy=True)
    before = second.clone()
    with pytest.raises(RuntimeError, match="not resizable"):
        first.resize_(1024, 1024)
    assert torch.equal(second, before)


def test_a_pooled_part_pickles_only_its_own_bytes(pool: BufferPool) -> None:
    first, _ = splitops.split(torch.rand(1024, 1024), num_outputs=2, copy=True)
    assert first.untyped_storage().nbytes() == first.nbytes
    assert len(pickle.dumps(first)) < first.nbytes + 4096


def test_an_in_place_change_of_one_pooled_part_leaves_the_gradients_of_another_alone(
    pool: BufferPool,
) -> None:
    first, second = splitops.split(torch.rand(1024, 1024), num_outputs=2, copy=True)
    weights = torch.rand(512, 1024, requires_grad=True)
    loss = (second * weights).sum()
    first.add_(1)  # with clone, each part counts its own versions
    loss.backward()
    assert weights.grad is not None
    assert torch.equal(weights.grad, second)


def test_a_graph_recorded_by_make_fx_clones_instead_of_keeping_pool_memory(
    pool: BufferPool,
) -> None:
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(lambda t: splitops.split(t, num_outputs=2, copy=True))(torch.rand(1 << 19))
    assert "_tensor_constant" not in graph.code
    assert pool.misses == 0
    x = torch.rand(1 << 19)
    assert torch.equal(torch.cat(graph(x)), x)


def test_parts_under_min_bytes_on_average_are_clones_which_cost_less_per_part(
    pool: BufferPool,
) -> None:
    x = torch.rand(1 << 16, 16)  # 4 MiB in parts of 64 bytes
    parts = splitops.split_to_sequence(x, axis=0, copy=True)
    assert pool.misses == 0
    assert len(parts) == 1 << 16
    assert all(torch.equal(part, row) for part, row in zip(parts, x.split(1), strict=True))


def test_copies_made_under_no_grad_can_be_changed_in_place_with_grad_mode_on(
    pool: BufferPool,
) -> None:
    x = torch.rand(1 << 20, requires_grad=True)
    with torch.no_grad():
        first, _ = splitops.split(x, num_outputs=2, copy=True)
    weights = torch.rand(1 << 19, requires_grad=True)
    first.mul_(weights).sum().backward()  # autograd forbids this on views made under no_grad
    assert weights.grad is not None
    assert torch.equal(weights.grad, x.detach()[: 1 << 19])
    assert pool.misses == 1


class _Halves(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return splitops.split(x, num_outputs=2, copy=True)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return torch.cat(grads)


def test_copies_returned_by_a_custom_autograd_function_can_be_changed_in_place(
    pool: BufferPool,
) -> None:
    x = torch.rand(1 << 20, requires_grad=True)
    first, second = _Halves.apply(x)  # forward runs with grad mode off: the pool's copies
    first.mul_(2)  # autograd forbids this on views that a function returns
    (first.sum() + second.sum()).backward()
    assert x.grad is not None
    assert torch.equal(x.grad, torch.cat([torch.full((1 << 19,), 2.0), torch.ones(1 << 19)]))
    assert pool.misses == 1


@pytest.mark.parametrize("captured", [False, True], ids=["argument", "captured"])
def test_copies_under_functionalize_are_clones(pool: BufferPool, captured: bool) -> None:
    x = torch.rand(1 << 20)

    def halves(t: Any) -> Any:  # a captured tensor is no functional tensor, torch.empty is
        return [part * 1 for part in splitops.split(x if captured else t, num_outputs=2, copy=True)]

    first, second = torch.func.functionalize(halves)(x)
    assert torch.equal(torch.cat([first, second]), x)
    assert pool.misses == 0


def test_copies_stay_on_the_cpu_whatever_the_default_device(pool: BufferPool) -> None:
    x = torch.rand(1 << 20)
    with torch.device("meta"):  # the default device of new tensors, as set_default_device sets
        parts = splitops.split(x, num_outputs=2, copy=True)
    assert [part.device.type for part in parts] == ["cpu", "cpu"]
    assert torch.equal(torch.cat(parts), x)
    assert pool.misses == 1
