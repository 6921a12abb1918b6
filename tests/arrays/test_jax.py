"""jax: static sizes work under jax.jit, traced ones are a SplitError, and gradients flow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from splitops import SplitError, split, split_to_sequence  # noqa: E402

X = np.arange(21, dtype=np.float32).reshape(3, 7)
CONCRETE_SIZES = jnp.asarray([2, 5])


def _parts_equal(parts: Any, expected: list[np.ndarray]) -> None:
    assert len(parts) == len(expected)
    for part, want in zip(parts, expected, strict=True):
        assert isinstance(part, jax.Array)
        np.testing.assert_array_equal(np.asarray(part), want, strict=True)


@pytest.mark.parametrize(
    ("function", "static", "expected"),
    [
        (lambda x: split(x, [2, 5], axis=1), (), [X[:, :2], X[:, 2:]]),
        (lambda x: split(x, CONCRETE_SIZES, axis=1), (), [X[:, :2], X[:, 2:]]),
        (lambda x, n: split(x, num_outputs=n, axis=1), (3,), [X[:, :3], X[:, 3:6], X[:, 6:]]),
        (lambda x, s: split(x, s, axis=1), ((2, 5),), [X[:, :2], X[:, 2:]]),
        (lambda x, s: split_to_sequence(x, s, axis=1), (3,), [X[:, :3], X[:, 3:6], X[:, 6:]]),
        (lambda x: split_to_sequence(x, axis=0, keepdims=0), (), list(X)),
    ],
    ids=["literal", "closed_over_array", "static_count", "static_sizes", "sequence", "unstack"],
)
def test_jit_with_static_sizes_gives_numpy_values(
    function: Callable[..., Any], static: tuple[Any, ...], expected: list[np.ndarray]
) -> None:
    jitted = jax.jit(function, static_argnums=tuple(range(1, 1 + len(static))))
    _parts_equal(jitted(jnp.asarray(X), *static), expected)


@pytest.mark.parametrize(
    ("function", "argument", "what"),
    [
        (lambda x, s: split(x, s, axis=1), np.array([2, 5]), "Split-18 split sizes"),
        (lambda x, s: split(x, [s, 7 - s], axis=1), 2, "Split-18 split sizes"),
        (lambda x, n: split(x, num_outputs=n, axis=1), 3, "Split-18 num_outputs"),
        (lambda x, s: split_to_sequence(x, s, axis=1), 2, "SplitToSequence-24 split sizes"),
    ],
    ids=["array", "list_of_scalars", "count", "sequence_chunk"],
)
def test_jit_with_traced_sizes_is_a_split_error_naming_static_argnums(
    function: Callable[..., Any], argument: Any, what: str
) -> None:
    with pytest.raises(
        SplitError,
        match=rf"^{what} must be concrete, but .*, a value traced by jax, .*static_argnums",
    ):
        jax.jit(function)(jnp.asarray(X), argument)


@pytest.mark.parametrize("copy", [False, True])
def test_grad_flows_back_through_every_part(copy: bool) -> None:
    def weighted(x: Any) -> Any:
        parts = split(x, num_outputs=3, axis=1, copy=copy)
        return sum((i + 1) * part.sum() for i, part in enumerate(parts))

    weights = np.array([1, 1, 1, 2, 2, 2, 3], dtype=np.float32)
    direct = jax.grad(lambda x: (x * weights).sum())(jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(jax.grad(weighted)(jnp.asarray(X))), direct)
    jitted = jax.jit(jax.grad(weighted))(jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(jitted), direct)


def test_grad_flows_back_through_a_keepdims0_sequence() -> None:
    def weighted(x: Any) -> Any:
        rows = split_to_sequence(x, axis=0, keepdims=0)
        return sum((i + 1) * row.sum() for i, row in enumerate(rows))

    expected = np.repeat(np.array([[1.0], [2.0], [3.0]], dtype=np.float32), 7, axis=1)
    np.testing.assert_array_equal(np.asarray(jax.grad(weighted)(jnp.asarray(X))), expected)


def test_parts_come_from_one_split_primitive_not_a_slice_each() -> None:
    jaxpr = str(jax.make_jaxpr(lambda x: split(x, [1, 2, 4], axis=1))(jnp.asarray(X)))
    assert jaxpr.count("split[") == 1
    assert "slice" not in jaxpr


@pytest.mark.parametrize(
    "function",
    [lambda x: split(x, [7], axis=1, copy=True), lambda x: split_to_sequence(x, axis=0, copy=True)],
    ids=["whole", "rows"],
)
def test_copy_true_parts_hold_buffers_of_their_own(function: Callable[[Any], Any]) -> None:
    x = jnp.asarray(X)
    pointers = [part.unsafe_buffer_pointer() for part in function(x)]
    assert x.unsafe_buffer_pointer() not in pointers
    assert len(set(pointers)) == len(pointers)
