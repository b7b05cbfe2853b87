"""lax.ragged_dot and lax.ragged_dot_general against a loop over the groups (JAX's reference
semantics: consecutive slices of the ragged dimension form the groups, positions past the
last group give 0), eagerly, under jit on both backends, grad and vmap; and jax.lax's
complex-number names, which raise a TypeError naming the op (tracer has no complex dtypes).
"""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(0)
LHS = RNG.standard_normal((11, 5)).astype(np.float32)
RHS = RNG.standard_normal((3, 5, 7)).astype(np.float32)
SIZES = np.array([3, 4, 2], np.int32)                # 9 of 11 rows: the last two give 0


def reference(lhs, rhs, sizes):
    out, start = np.zeros((lhs.shape[0], rhs.shape[2]), lhs.dtype), 0
    for group, size in enumerate(sizes):
        out[start:start + size] = lhs[start:start + size] @ rhs[group]
        start += size
    return out


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_ragged_dot(backend):
    run = lax.ragged_dot if backend is None else tracer.jit(lax.ragged_dot, backend=backend)
    np.testing.assert_allclose(run(LHS, RHS, SIZES), reference(LHS, RHS, SIZES), atol=1e-5)


def test_ragged_dot_grad_and_vmap():
    cot = RNG.standard_normal((11, 7)).astype(np.float32)
    g_lhs, g_rhs = tracer.grad(lambda a, b: (lax.ragged_dot(a, b, SIZES) * cot).sum(),
                               argnums=(0, 1))(LHS, RHS)
    want_lhs, want_rhs, start = np.zeros_like(LHS), np.zeros_like(RHS), 0
    for group, size in enumerate(SIZES):
        rows = slice(start, start + size)
        want_lhs[rows] = cot[rows] @ RHS[group].T
        want_rhs[group] = LHS[rows].T @ cot[rows]
        start += size
    np.testing.assert_allclose(g_lhs, want_lhs, atol=1e-5)
    np.testing.assert_allclose(g_rhs, want_rhs, atol=1e-5)
    sizes = np.array([[3, 4, 2], [0, 11, 0]], np.int32)
    out = tracer.vmap(lax.ragged_dot, in_axes=(None, None, 0))(LHS, RHS, sizes)
    for i in range(2):
        np.testing.assert_allclose(out[i], reference(LHS, RHS, sizes[i]), atol=1e-5)


def test_ragged_contracting_dimension_with_batch_sizes():
    """Ragged k with per-batch group sizes: one (b, m, n) product per group."""
    lhs = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    rhs = RNG.standard_normal((2, 6, 3)).astype(np.float32)
    sizes = np.array([[1, 5], [4, 0]], np.int32)
    dn = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [2], [])
    out = tracer.jit(lambda a, b, s: lax.ragged_dot_general(a, b, s, dn), backend="llvm")(
        lhs, rhs, sizes)
    assert out.shape == (2, 2, 4, 3)
    for b in range(2):
        start = 0
        for group, size in enumerate(sizes[b]):
            k = slice(start, start + size)
            np.testing.assert_allclose(out[group, b], lhs[b][:, k] @ rhs[b][k], atol=1e-5)
            start += size


@pytest.mark.parametrize("ragged, groups, message", [
    ([0, 1], [0], "exactly one lhs ragged dimension"),
    ([0], [1], "distinct from contracting and batch"),
    ([1], [0], "zero group dimensions in the rhs"),
    ([0], [], "exactly one rhs group dimension"),
])
def test_bad_dimension_numbers_are_type_errors(ragged, groups, message):
    dn = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), ragged, groups)
    with pytest.raises(TypeError, match=message):
        lax.ragged_dot_general(LHS, RHS, SIZES, dn)


def test_bad_group_sizes_are_type_errors():
    with pytest.raises(TypeError, match=r"group_sizes to have shape \(3,\), got \(2, 3\)"):
        lax.ragged_dot(LHS, RHS, np.ones((2, 3), np.int32))
    with pytest.raises(TypeError, match="rhs group dimension size to be 2, got 3"):
        lax.ragged_dot(LHS, RHS, np.ones(2, np.int32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(LHS, RHS, SIZES, group_offset=np.zeros(1, np.int32))


@pytest.mark.parametrize("name, nargs, says", [
    ("real", 1, "takes a complex array"), ("imag", 1, "takes a complex array"),
    ("conj", 1, "returns a complex array"), ("complex", 2, "returns a complex array")])
def test_complex_names_raise_type_error(name, nargs, says):
    with pytest.raises(TypeError, match=f"lax.{name} {says}.*float32"):
        getattr(lax, name)(*[np.float32(1.5)] * nargs)
