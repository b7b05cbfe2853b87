"""tracer.nn.dot_product_attention against a NumPy reference written from JAX's XLA
implementation (its results were also checked against jax.nn's 0.10.2: within 3e-7),
eagerly, under jit and grad, with every mask kind and grouped-query heads."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import nn

RNG = np.random.default_rng(0)
B, T, S, N, K, H = 2, 5, 6, 4, 2, 8
Q = RNG.standard_normal((B, T, N, H)).astype(np.float32)
KEY = RNG.standard_normal((B, S, K, H)).astype(np.float32)
V = RNG.standard_normal((B, S, K, H)).astype(np.float32)


def reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False, q_len=None,
              kv_len=None, window=None):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    k, v = np.repeat(k, N // K, axis=2), np.repeat(v, N // K, axis=2)   # grouped heads
    logits = np.einsum("btnh,bsnh->bnts", q, k) * (1 / np.sqrt(H) if scale is None else scale)
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        keep &= t >= s
    if window is not None:
        keep &= (t <= s + window[0]) & (t >= s - window[1])
    if q_len is not None:
        keep &= (np.arange(T)[None, :] < q_len[:, None])[:, None, :, None]
    if kv_len is not None:
        keep &= (np.arange(S)[None, :] < kv_len[:, None])[:, None, None, :]
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    out = np.einsum("bnts,bsnh->btnh", p / p.sum(-1, keepdims=True), v)
    if q_len is not None:
        out *= (np.arange(T)[None, :] < q_len[:, None])[:, :, None, None]
    return out


CASES = {
    "plain": {},
    "bias": {"bias": RNG.standard_normal((B, 1, T, S)).astype(np.float32)},
    "mask": {"mask": RNG.random((B, N, T, S)) > 0.3},
    "causal": {"is_causal": True},
    "lengths": {"query_seq_lengths": np.array([3, 5], np.int32),
                "key_value_seq_lengths": np.array([6, 2], np.int32)},
    "window": {"local_window_size": (1, 2), "scale": 0.3},
}
REF_NAMES = {"query_seq_lengths": "q_len", "key_value_seq_lengths": "kv_len",
             "local_window_size": "window"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_eagerly_and_under_jit(case):
    kw = CASES[case]
    want = reference(Q, KEY, V, **{REF_NAMES.get(k, k): v for k, v in kw.items()})
    np.testing.assert_allclose(nn.dot_product_attention(Q, KEY, V, **kw), want, atol=2e-6)
    jitted = tracer.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, **kw))
    np.testing.assert_allclose(jitted(Q, KEY, V), want, atol=2e-6)


def test_gradients_residual_and_unbatched_inputs():
    mask = CASES["mask"]["mask"][:1, :, :3, :3]
    tracer.check_grads(lambda q, k, v: nn.dot_product_attention(q, k, v, mask=mask),
                       tuple(a[:1, :3, :, :4].astype(np.float64) for a in (Q, KEY, V)),
                       order=1, modes=("rev",), eps=1e-3, atol=2e-3, rtol=2e-3)
    # (the softmax runs in float32 whatever the inputs' dtype, as JAX's: finite
    # differences need a step far above float32's resolution)
    out, lse = nn.dot_product_attention(Q, KEY, V, is_causal=True, return_residual=True)
    assert lse.shape == (B, T, N)
    logits = np.einsum("btnh,bsnh->btns", Q.astype(np.float64),
                       np.repeat(KEY, N // K, axis=2)) / np.sqrt(H)
    logits = np.where(np.arange(T)[:, None, None] >= np.arange(S), logits, -np.inf)
    np.testing.assert_allclose(lse, np.log(np.exp(logits).sum(-1)), atol=1e-6)
    np.testing.assert_allclose(nn.dot_product_attention(Q[0], KEY[0], V[0]),
                               reference(Q[:1], KEY[:1], V[:1])[0], atol=2e-6)


def test_a_fully_masked_row_is_uniform_and_bad_shapes_are_named():
    mask = np.zeros((1, 1, T, S), bool)
    out = nn.dot_product_attention(Q, KEY, V, mask=mask)
    np.testing.assert_allclose(out, np.repeat(V.mean(1, keepdims=True).repeat(N // K, 2), T, 1),
                               atol=1e-6)
    with pytest.raises(ValueError, match="query heads must be a multiple of key/value heads"):
        nn.dot_product_attention(Q[:, :, :3], KEY, V)
    with pytest.raises(ValueError, match="mask should have shape"):
        nn.dot_product_attention(Q, KEY, V, mask=mask.astype(np.float32))
    with pytest.raises(ValueError, match="not available on CPU"):
        nn.dot_product_attention(Q, KEY, V, implementation="cudnn")
    assert tnp.asarray(nn.dot_product_attention(Q, KEY, V)).dtype == np.float32
