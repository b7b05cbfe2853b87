"""jax.nn.dot_product_attention as tracer.numpy einsums: grouped-query heads, bias, boolean
masks, causal and local-window masks and padding lengths as JAX's XLA implementation
(masked logits get a large finite negative, so a fully masked row is uniform, not NaN;
the softmax is in float32 whatever the inputs' dtype)."""
import numpy as np

from ir.errors import ArgumentValueError
from tracer import lax
from tracer import numpy as tnp
from tracer.nn.activations import logsumexp, softmax


def _four_d(t):
    t = tnp.asarray(t)
    return tnp.reshape(t, (1,) * (4 - t.ndim) + t.shape) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape) or dtype is not None and t.dtype != dtype or any(
            s != -1 and d != s for d, s in zip(t.shape, shape)):
        want = [("*" if s == -1 else s) for s in shape]
        raise ArgumentValueError(f"dot_product_attention: {name} should have shape {want}"
                                 f"{'' if dtype is None else f' and dtype {dtype}'}, got "
                                 f"{t.shape} {t.dtype}")


def _grouped(t, k, g):
    """A (B, N or 1, T, S) bias or mask as (B, K or 1, G or 1, T, S)."""
    if t is None:
        return None
    b, n, tt, s = t.shape
    return tnp.reshape(t, (b, 1, 1, tt, s) if n == 1 else (b, k, g, tt, s))


def _mask(T, S, mask, is_causal, q_len, kv_len, window):
    """The combined keep-mask, broadcastable to (B, K, G, T, S), or None."""
    keep = [] if mask is None else [mask]
    q, s = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        keep.append(q >= s)
    if window is not None:
        left, right = window
        keep.append((q <= s + left) & (q >= s - right))
    if q_len is not None:
        keep.append(tnp.reshape(tnp.less(np.arange(T), q_len[:, None]), (-1, 1, 1, T, 1)))
    if kv_len is not None:
        keep.append(tnp.reshape(tnp.less(np.arange(S), kv_len[:, None]), (-1, 1, 1, 1, S)))
    out = None
    for m in keep:
        out = m if out is None else tnp.logical_and(out, m)
    return out


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(Q K^T * scale + bias, masked) V per head; query (B, T, N, H) (or without
    its leading dims), key and value (B, S, K, H) with N a multiple of K (grouped-query
    attention); mask is boolean, True to keep; with return_residual, also the softmax's
    log-sum-exp (B, T, N)."""
    if implementation not in (None, "xla"):
        raise ArgumentValueError(f"dot_product_attention: implementation "
                                 f"{implementation!r} is not available on CPU; pass None "
                                 f"or 'xla'")
    out_shape = tnp.shape(query)
    q, k, v = _four_d(query), _four_d(key), _four_d(value)
    bias = None if bias is None else _four_d(bias)
    mask = None if mask is None else _four_d(mask)
    q_len = None if query_seq_lengths is None else tnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else tnp.asarray(key_value_seq_lengths)
    B, S, K, H = k.shape
    _check(v, [B, S, K, H], k.dtype, "value")
    _check(q, [B, -1, -1, H], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [B], np.dtype(np.int32), "query_seq_lengths")
    _check(kv_len, [B], np.dtype(np.int32), "key_value_seq_lengths")
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise ArgumentValueError(f"dot_product_attention: the number of query heads must "
                                 f"be a multiple of key/value heads, but got {N} vs {K}")
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    G = N // K
    logits_dtype = np.promote_types(q.dtype, np.float32)
    logits = tnp.einsum("BTKGH,BSKH->BKGTS", tnp.reshape(q, (B, T, K, G, H)), k,
                        preferred_element_type=logits_dtype)
    logits = logits * tnp.asarray(1 / np.sqrt(H) if scale is None else scale, logits_dtype)
    if bias is not None:
        logits = tnp.astype(logits + _grouped(bias, K, G), logits_dtype)
    keep = _mask(T, S, _grouped(mask, K, G), is_causal, q_len, kv_len, local_window_size)
    if keep is not None:
        big = -0.7 * min(float(np.finfo(logits_dtype).max), float(np.finfo(np.float32).max))
        logits = tnp.where(keep, logits, tnp.asarray(big, logits_dtype))
    logits = tnp.astype(logits, np.float32)
    probs = tnp.astype(softmax(logits, axis=-1), k.dtype)
    out = tnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    if q_len is not None:
        out = out * tnp.astype(tnp.reshape(tnp.less(np.arange(T), q_len[:, None]),
                                           (B, T, 1, 1, 1)), out.dtype)
    out = tnp.reshape(out, out_shape)
    if not return_residual:
        return out
    lse = tnp.astype(logsumexp(logits, axis=-1), k.dtype)          # (B, K, G, T)
    lse = tnp.reshape(tnp.transpose(lse, (0, 3, 1, 2)), out_shape[:-1])
    return out, lax.stop_gradient(lse)
