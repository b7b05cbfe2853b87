"""tracer.random against values jax.random gives (JAX 0.10.2, x64 disabled, written here as
literals), eagerly, jitted on both backends and under vmap over keys; JAX's ways of naming
the key implementation (impl=, dtype=, key_impl, clone) and their errors."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.random as tr

BACKENDS = ["numpy", "llvm"]


def everywhere(f, *args):
    """f(*args) eagerly and jitted on both backends."""
    return [f(*args)] + [tracer.jit(f, backend=b)(*args) for b in BACKENDS]


def vmapped(f, keys):
    """vmap of f over keys, eagerly and jitted on both backends."""
    return everywhere(tracer.vmap(f), keys)


# jax.random.uniform(PRNGKey(7), (8,), dtype, -2., 3.) as uint16 bits; under vmap over
# split(PRNGKey(7), 3) with shape (4,) for float16
HALF_UNIFORM = {
    np.float16: [48332, 14176, 48322, 47416, 43840, 15392, 48126, 16468],
    ml_dtypes.bfloat16: [49127, 49152, 16296, 49032, 16160, 15744, 48784, 15744],
}
HALF_UNIFORM_VMAP = [[16886, 15484, 48272, 48632], [14936, 47068, 46748, 47626],
                     [47266, 47946, 16680, 47986]]


@pytest.mark.parametrize("dtype", sorted(HALF_UNIFORM, key=str))
def test_half_uniform_rounds_each_op_as_jax(dtype):
    """XLA rounds float16/bfloat16's u * (max - min) + min after each op (a span that is
    not a power of 2 makes the product inexact)."""
    def f(k):
        return tr.uniform(k, (8,), dtype, -2.0, 3.0)
    for got in everywhere(f, tr.PRNGKey(7)):
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), HALF_UNIFORM[dtype])


def test_half_uniform_under_vmap():
    def f(k):
        return tr.uniform(k, (4,), np.float16, -2.0, 3.0)
    for got in vmapped(f, tr.split(tr.PRNGKey(7), 3)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), HALF_UNIFORM_VMAP)


def test_binomial_draws_in_p_dtype_not_the_result_dtype():
    """JAX draws in p's dtype (float32 for a Python float) and only casts the counts."""
    want = [2, 2, 1, 2, 1, 4, 6, 3, 4, 1, 2, 2]
    for got in everywhere(lambda k: tr.binomial(k, 10.0, 0.3, (12,), np.float16),
                          tr.PRNGKey(0)):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want)
    want = [[3, 6, 1, 1, 2], [5, 4, 2, 5, 4], [3, 1, 3, 2, 3]]
    for got in vmapped(lambda k: tr.binomial(k, 10.0, 0.3, (5,), ml_dtypes.bfloat16),
                       tr.split(tr.PRNGKey(7), 3)):
        assert got.dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(np.asarray(got, np.float32), want)


LOGITS = np.array([[0.1, 0.5, -1.0, 2.0, 0.3], [1.0, 1.0, 1.0, -3.0, 0.2]], np.float32)
ROWS = np.arange(12).reshape(3, 4)


def test_permutation_independent():
    """Each row shuffled on its own: JAX's sorts of x itself by fresh bits per element."""
    for got in everywhere(lambda k: tr.permutation(k, ROWS, 1, independent=True),
                          tr.PRNGKey(5)):
        np.testing.assert_array_equal(got, [[0, 2, 1, 3], [4, 5, 7, 6], [10, 9, 8, 11]])
    want = [[[0, 5, 10, 7], [8, 9, 6, 3], [4, 1, 2, 11]],
            [[4, 5, 10, 3], [8, 9, 2, 7], [0, 1, 6, 11]]]
    for got in vmapped(lambda k: tr.permutation(k, ROWS, independent=True),
                       tr.split(tr.PRNGKey(5), 2)):
        np.testing.assert_array_equal(got, want)


def test_permutation_of_a_0d_integer_array_is_of_its_range():
    for n in (np.array(7, np.int32), 7):
        np.testing.assert_array_equal(tr.permutation(tr.PRNGKey(5), n), [0, 2, 4, 1, 3, 5, 6])


def test_categorical_without_replacement():
    """The leading shape's draws are distinct: the top-k of one Gumbel perturbation."""
    for got in everywhere(lambda k: tr.categorical(k, LOGITS, 1, (3, 2), replace=False),
                          tr.PRNGKey(5)):
        np.testing.assert_array_equal(got, [[1, 0], [4, 4], [3, 2]])
    want = [[[1, 0, 1, 0, 0], [0, 1, 0, 1, 1]], [[1, 1, 1, 0, 0], [0, 0, 0, 1, 1]]]
    for got in vmapped(lambda k: tr.categorical(k, LOGITS, 0, (2, 5), replace=False),
                       tr.split(tr.PRNGKey(5), 2)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"without replacement \(3\) cannot exceed .* \(2\)"):
        tr.categorical(tr.PRNGKey(0), LOGITS, 0, (3, 5), replace=False)


def test_bernoulli_high_mode():
    """mode='high': u2 2**-nmant < p - u1, so p far below float32's spacing near 1 works."""
    p = np.array([1e-7, 0.5, 0.9], np.float32)
    for got in everywhere(lambda k: tr.bernoulli(k, p, (4, 3), mode="high"), tr.PRNGKey(9)):
        np.testing.assert_array_equal(got, [[0, 0, 1], [0, 1, 1], [0, 1, 1], [0, 0, 1]])
    hits = [49, 66, 175, 194, 331, 586, 604, 727, 757, 829, 1186, 1251, 1560, 1868, 1964]
    got = tr.bernoulli(tr.PRNGKey(9), np.float32(1e-2), (2000,), mode="high")
    np.testing.assert_array_equal(np.flatnonzero(got), hits)
    for got in vmapped(lambda k: tr.bernoulli(k, 0.5, (6,), mode="high"),
                       tr.split(tr.PRNGKey(9), 2)):
        np.testing.assert_array_equal(got, [[0, 0, 0, 1, 0, 1], [1, 1, 0, 1, 0, 0]])


GUMBEL = {"high": [3.178866386413574, -1.2321016788482666, 0.6079394817352295,
                   2.2291259765625, 1.3729112148284912, -0.5559096336364746],
          "highest": [3.1788668632507324, -1.2321021556854248, 0.6079390048980713,
                      2.2291259765625, 1.3729113340377808, -0.5559098720550537]}


@pytest.mark.parametrize("mode", sorted(GUMBEL))
def test_gumbel_and_categorical_high_modes(mode):
    """JAX's values to float32 rounding (XLA's log is another polynomial), the same bits
    on every backend; categorical's indices exactly."""
    runs = everywhere(lambda k: tr.gumbel(k, (6,), mode=mode), tr.PRNGKey(9))
    for got in runs:
        np.testing.assert_allclose(got, GUMBEL[mode], rtol=1e-6)
        np.testing.assert_array_equal(got, runs[0])
    for got in everywhere(lambda k: tr.categorical(k, LOGITS, shape=(6, 2), mode=mode),
                          tr.PRNGKey(9)):
        np.testing.assert_array_equal(got, [[3, 2], [3, 0], [4, 2], [0, 0], [3, 4], [3, 2]])
    want = [[[3, 0], [3, 1], [3, 4], [3, 3]], [[3, 1], [3, 4], [1, 1], [3, 0]]]
    for got in vmapped(lambda k: tr.categorical(k, LOGITS, shape=(4, 2), mode=mode),
                       tr.split(tr.PRNGKey(9), 2)):
        np.testing.assert_array_equal(got, want)


# ---- naming the implementation ---------------------------------------------------------
@pytest.mark.parametrize("spec", [dict(impl="threefry2x32"), dict(dtype="threefry2x32"),
                                  dict(dtype=np.uint32)])
def test_key_and_wrap_key_data_take_jax_specs(spec):
    for got in everywhere(lambda s: tr.key(s, **spec), np.int32(42)):
        np.testing.assert_array_equal(got, [0, 42])
    data = tr.split(tr.PRNGKey(1), 3)
    for got in everywhere(lambda d: tr.wrap_key_data(d, **spec), data):
        np.testing.assert_array_equal(got, data)
    for got in vmapped(lambda d: tr.wrap_key_data(d, **spec), data):
        np.testing.assert_array_equal(got, data)


class ArrayLike:
    """A 0-d array of another library (a jax.Array seed): it has only __array__."""
    def __array__(self, dtype=None, copy=None):
        return np.array(-3, np.int32)


def test_seeds_of_other_array_types_and_the_uint32_dtype_as_impl():
    np.testing.assert_array_equal(tr.PRNGKey(ArrayLike()), [0, 2 ** 32 - 3])
    assert tr.key_dtype(np.dtype(np.uint32)) == tr.key_dtype(np.uint32) == np.uint32
    np.testing.assert_array_equal(tr.key(3, impl=tr.key_dtype()), [0, 3])


def test_key_impl_and_clone():
    keys = tr.split(tr.PRNGKey(0), 5)
    assert tr.key_impl(keys) == tr.key_impl(keys[0]) == "threefry2x32"
    np.testing.assert_array_equal(tr.key(42, impl=tr.key_impl(keys)), tr.key(42))
    for got in everywhere(tr.clone, keys) + vmapped(tr.clone, keys):
        np.testing.assert_array_equal(got, keys)
    np.testing.assert_array_equal(tracer.jit(lambda k: tr.uniform(tr.clone(k), (3,)))(keys[1]),
                                  tr.uniform(keys[1], (3,)))


@pytest.mark.parametrize("call, error, words", [
    (lambda: tr.key(0, impl="threefry2x32", dtype=np.uint32), ValueError,
     "key: Cannot specify both `impl` and `dtype`"),
    (lambda: tr.wrap_key_data(np.zeros(2, np.uint32), impl="threefry2x32",
                              dtype="threefry2x32"), ValueError, "Cannot specify both"),
    (lambda: tr.key(0, impl="unlikely name"), ValueError, "unrecognized PRNG implementation"),
    (lambda: tr.key(0, impl=object()), TypeError, "unrecognized type object .* PRNG"),
    (lambda: tr.PRNGKey(0, impl="philox4x32"), ValueError, "'philox4x32' is not available"),
    (lambda: tr.key(0, dtype=np.float32), TypeError, "unrecognized type"),
    (lambda: tr.key_impl(np.zeros(3, np.uint32)), ValueError, "key_impl"),
    (lambda: tr.clone(np.zeros(2, np.int32)), ValueError, "clone"),
    (lambda: tr.PRNGKey(3.5), TypeError, "PRNG key seed must be an integer"),
    (lambda: tr.PRNGKey(np.arange(4)), TypeError, "PRNGKey accepts a scalar seed"),
    (lambda: tr.PRNGKey(tr.PRNGKey(0)), TypeError, "PRNGKey accepts a scalar seed"),
    (lambda: tr.key(np.arange(4)), TypeError, "^key accepts a scalar seed"),
    (lambda: tr.permutation(tr.PRNGKey(0), 10.0), TypeError,
     "x must be an integer or at least 1-dimensional"),
    (lambda: tr.gumbel(tr.PRNGKey(0), mode="higher"), ValueError, "gumbel: mode must be"),
    (lambda: tr.choice(tr.PRNGKey(0), 5, 2), TypeError, "choice: shape must be a sequence"),
    (lambda: tr.bernoulli(tr.PRNGKey(0), mode="highest"), ValueError, "bernoulli: mode must"),
    (lambda: tr.bits(tr.PRNGKey(0), (2,), np.float16), ValueError,
     "dtype argument to `bits` must be an unsigned int dtype"),
])
def test_errors_are_jax_types_and_words(call, error, words):
    with pytest.raises(error, match=words):
        call()
