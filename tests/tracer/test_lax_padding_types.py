"""jax.lax's padding types: 'SAME_LOWER' puts the odd padding before (SAME after), in
conv and reduce_window as in padtype_to_pads, eagerly, jitted on both backends, under
grad and vmap; an unknown type is a RuntimeError (as JAX's) and a ValueError naming the op."""
import numpy as np
import pytest

import tracer
from tracer import lax

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3, 8, 7)).astype(np.float32)
W = RNG.standard_normal((4, 3, 3, 2)).astype(np.float32)
# out = ceil(in / stride) = (4, 7): total padding 1 along H (odd: before), 1 along W
LOWER = [(1, 0), (1, 0)]


def test_padtype_to_pads_puts_the_odd_padding_first():
    assert lax.padtype_to_pads((8, 7), (3, 2), (2, 1), "SAME_LOWER") == LOWER
    assert lax.padtype_to_pads((8, 7), (3, 2), (2, 1), "SAME") == [(0, 1), (0, 1)]


@pytest.mark.parametrize("backend", [None, "numpy", "llvm"])
def test_conv_same_lower_is_its_explicit_padding(backend):
    f = lambda x, w: lax.conv(x, w, (2, 1), "SAME_LOWER")
    run = f if backend is None else tracer.jit(f, backend=backend)
    np.testing.assert_allclose(run(X, W), lax.conv(X, W, (2, 1), LOWER), rtol=1e-6)


def test_reduce_window_grad_and_vmap_with_same_lower():
    pool = lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 1), "SAME_LOWER")
    explicit = lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 1), LOWER)
    x = X[0, 0].astype(np.float64)
    np.testing.assert_array_equal(pool(x), explicit(x))
    np.testing.assert_array_equal(tracer.grad(lambda x: (pool(x) ** 2).sum())(x),
                                  tracer.grad(lambda x: (explicit(x) ** 2).sum())(x))
    np.testing.assert_array_equal(tracer.vmap(pool)(X[:, 0]), np.stack(
        [explicit(v) for v in X[:, 0]]))


def test_unknown_padding_type():
    """A RuntimeError, as jax.lax's 'Unrecognized padding type' (still a ValueError)."""
    with pytest.raises(ValueError, match="conv_general_dilated: padding must be"):
        lax.conv(X, W, (1, 1), "FULL")
    for call, op in [(lambda: lax.conv(X, W, (1, 1), "FULL"), "conv_general_dilated"),
                     (lambda: lax.padtype_to_pads((8,), (3,), (1,), "full"), "padtype_to_pads"),
                     (lambda: lax.reduce_window(X[0, 0], 0.0, lax.add, (2, 2), (1, 1), "FULL"),
                      "reduce_window")]:
        with pytest.raises(RuntimeError, match=f"{op}: padding must be"):
            call()


@pytest.mark.parametrize("padding", [[(1.5, 1), (0, 0)], [(1, 1, 1), (0, 0)], [(1,), (0, 0)],
                                     [(1, 1)]])
def test_malformed_explicit_padding_is_a_value_error_naming_the_op(padding):
    """Not (lo, hi) integer pairs, one per spatial dim: a ValueError (jax's type), where a
    1.5 was truncated to 1 and a triple failed unpacking without naming the op."""
    with pytest.raises(ValueError, match="conv_general_dilated: padding"):
        lax.conv(X, W, (1, 1), padding)
    with pytest.raises(ValueError, match="reduce_window: padding"):
        lax.reduce_window(X[0, 0], 0.0, lax.add, (2, 2), (1, 1), padding)


def test_integer_like_padding_is_taken():
    pads = np.array([[1, 0], [0, 1]])
    np.testing.assert_array_equal(lax.conv(X, W, (1, 1), pads),
                                  lax.conv(X, W, (1, 1), [(1, 0), (0, 1)]))
