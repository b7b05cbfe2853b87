"""tracer.nn's activations against NumPy formulas in float64 (their values were also
checked against jax.nn 0.10.2's: within 2 float32 ulps, gradients too), eagerly, under jit
on both backends and under grad, with jax.nn's gradients at ties and dtypes kept."""
import math

import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import nn

X = np.concatenate([np.linspace(-7, 7, 29), [0.0, 6.0, -1.0, 1.0, 1e-3]]).astype(np.float32)


def sig(x):
    return 1 / (1 + np.exp(-x))


def softplus(x):
    return np.logaddexp(x, 0)


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
REF = {
    "identity": lambda x: x,
    "relu6": lambda x: np.clip(x, 0, 6),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0))),
    "softplus": softplus,
    "log_sigmoid": lambda x: -softplus(-x),
    "silu": lambda x: x * sig(x), "swish": lambda x: x * sig(x),
    "mish": lambda x: x * np.tanh(softplus(x)),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: 0.5 * np.clip(x + 1, 0, 2),
    "tanh": np.tanh,
}
KINKS = {"relu6": (0, 6), "leaky_relu": (0,), "hard_tanh": (-1, 1), "hard_sigmoid": (-3, 3),
         "hard_silu": (-3, 3), "hard_swish": (-3, 3), "sparse_plus": (-1, 1),
         "sparse_sigmoid": (-1, 1), "elu": (0,), "celu": (0,), "selu": (0,)}


@pytest.mark.parametrize("name", sorted(REF))
def test_values_on_every_path_and_gradients(name):
    f, want = getattr(nn, name), REF[name](X.astype(np.float64))
    for run in (f, tracer.jit(f), tracer.jit(f, backend="numpy")):
        out = run(X)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, want, rtol=2e-6, atol=2e-6)
    smooth = np.array([x for x in X[:29] if all(abs(x - k) > 0.3 for k in KINKS.get(name, ()))])
    tracer.check_grads(f, (smooth.astype(np.float64),), order=1)
    assert nn.__dict__[name](X.astype(ml_dtypes.bfloat16)).dtype == ml_dtypes.bfloat16


def test_gradients_at_ties_are_jax_s():
    """relu6's is 0 at 0 and 6 (JAX's custom jvp), leaky_relu's 1 at 0, elu's alpha at 0."""
    g = tracer.grad(lambda x: tnp.sum(nn.relu6(x)))(np.array([0.0, 3.0, 6.0]))
    np.testing.assert_array_equal(g, [0, 1, 0])
    assert tracer.grad(nn.leaky_relu)(0.0) == 1.0
    assert tracer.grad(nn.elu)(0.0) == 1.0
    assert tracer.grad(nn.elu)(50.0) == 1.0          # no inf from the negative side's expm1
    assert np.isnan(nn.relu6(np.nan)) and np.isnan(nn.leaky_relu(np.nan))


def test_log1mexp_glu_logmeanexp_standardize():
    x = np.linspace(0.01, 6, 25)
    np.testing.assert_allclose(nn.log1mexp(x), np.log(-np.expm1(-x)), rtol=1e-12)
    tracer.check_grads(nn.log1mexp, (x,), order=2)
    m = np.random.default_rng(0).standard_normal((3, 4))
    np.testing.assert_allclose(nn.glu(m), m[:, :2] * (1 / (1 + np.exp(-m[:, 2:]))))
    np.testing.assert_allclose(nn.glu(m.T, axis=0), m.T[:2] * (1 / (1 + np.exp(-m.T[2:]))))
    lme = lambda a, **k: np.log(np.mean(np.exp(a), **k))
    np.testing.assert_allclose(nn.logmeanexp(m, axis=1), lme(m, axis=1))
    np.testing.assert_allclose(nn.logmeanexp(m), lme(m))
    w = m > 0
    np.testing.assert_allclose(nn.logmeanexp(m, axis=1, where=w, keepdims=True),
                               [[math.log(np.mean(np.exp(r[r > 0])))] for r in m])
    s = nn.standardize(m, axis=-1, epsilon=0.0)
    np.testing.assert_allclose(s, (m - m.mean(-1, keepdims=True)) / m.std(-1, keepdims=True))
    tracer.check_grads(lambda a: nn.standardize(a), (m,), order=1)
    np.testing.assert_allclose(tracer.vmap(nn.standardize)(m), nn.standardize(m), rtol=1e-12)
