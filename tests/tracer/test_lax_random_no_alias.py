"""Eager results of tracer.lax and tracer.random never alias their arguments (the
library's rule for every op: results are the caller's own NumPy arrays), also where an op
returns its input's value unchanged: integer_pow(x, 1), a scan along an axis of one
element, select_n of one case, broadcast_to_rank to a rank x has, psum/pmax over no axis,
JAX's raw-key helpers (key_data, wrap_key_data, clone) and an independent permutation of
one element. Writing into the result must leave the argument as it was."""
import numpy as np
import pytest

import tracer
import tracer.random as tr
from tracer import lax

X = np.array([[1.5], [-2.0]])
KEYS = tr.split(tr.PRNGKey(3), 2)

CASES = {
    "integer_pow": (lambda x: lax.integer_pow(x, 1), X),
    "associative_scan": (lambda x: lax.associative_scan(lax.add, x, axis=1), X),
    "associative_scan_reverse": (lambda x: lax.associative_scan(lax.add, x, True, 1), X),
    "cummax": (lambda x: lax.cummax(x, axis=1), X),
    "cummin": (lambda x: lax.cummin(x, axis=1), X),
    "cumlogsumexp": (lambda x: lax.cumlogsumexp(x, axis=1), X),
    "select_n": (lambda x: lax.select_n(np.int32(0), x), X),
    "broadcast_to_rank": (lambda x: lax.broadcast_to_rank(x, 2), X),
    "psum_over_no_axis": (lambda x: lax.psum(x, ()), X),
    "pmax_over_no_axis": (lambda x: lax.pmax(x, ()), X),
    "key_data": (tr.key_data, KEYS),
    "wrap_key_data": (tr.wrap_key_data, KEYS),
    "clone": (tr.clone, KEYS),
    "permutation_independent": (lambda x: tr.permutation(tr.PRNGKey(0), x, 1,
                                                         independent=True), X[:1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_result_is_a_new_array(name):
    f, arg = CASES[name]
    arg = np.array(arg)
    before = arg.copy()
    out = f(arg)
    np.testing.assert_array_equal(out, before)
    assert not np.shares_memory(out, arg)
    out[...] = 0
    np.testing.assert_array_equal(arg, before)


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_results_are_unchanged(name):
    f, arg = CASES[name]
    for backend in ("numpy", "llvm"):
        np.testing.assert_array_equal(tracer.jit(f, backend=backend)(arg), arg)
    np.testing.assert_array_equal(tracer.vmap(f)(np.stack([arg, arg])), np.stack([arg, arg]))


def test_gradients_through_the_copies():
    g = tracer.grad(lambda x: (lax.integer_pow(x, 1) * lax.cummax(x, axis=1)).sum())(X)
    np.testing.assert_array_equal(g, 2 * X)
