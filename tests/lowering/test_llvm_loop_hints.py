"""How the llvm backend shapes loops for LLVM: float32 sums bound by memory keep two
accumulators (lowering/llvm/reductions.py), long loops of costly elements run four vector
iterations side by side (codegen.LONG_LOOP), max/min of long rows run as several chains
(settings.reduce_splits, AVX-512); results stay right on every tail."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

from lowering.llvm import codegen
from lowering.settings import settings


def _hinted(f, *args, count=2):
    return f'!"llvm.loop.interleave.count", i32 {count}' in tracer.jit(f).lower(*args).as_text()


def test_cheap_sums_of_memory_keep_two_accumulators():
    x = np.ones(1 << 16, np.float32)
    assert _hinted(lambda x: tnp.sum(x), x)
    assert _hinted(lambda x: tnp.sum(x * x), x)
    assert _hinted(lambda x: tnp.mean(x.reshape(64, -1) ** 2, axis=-1), x)


def test_costly_elements_and_row_local_inputs_keep_llvms_choice():
    x = np.ones((64, 1024), np.float32)
    assert not _hinted(lambda x: tnp.sum(tnp.exp(x)), x)

    def softmax(x):     # the sum reads exp's row-local buffer (rows.py), in L1
        e = tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))
        return e / tnp.sum(e, axis=-1, keepdims=True)
    assert not _hinted(softmax, x)
    assert not _hinted(lambda x: tnp.sum(x), x.astype(np.float64))   # not the float32 loop


@pytest.mark.parametrize("n", [1, 31, 4096, 4097, 3 * 4096 + 5])
def test_memory_bound_sums_match_numpy(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    got = tracer.jit(lambda x: (tnp.sum(x * x), tnp.sum(x.reshape(1, -1), axis=-1)))(x)
    exact = x.astype(np.float64)
    np.testing.assert_allclose(got[0], np.sum(exact ** 2), rtol=2e-6)
    # a sum that cancels: its error is relative to the sum of magnitudes
    np.testing.assert_allclose(got[1], [np.sum(exact)], rtol=0, atol=1e-6 * np.abs(exact).sum())


def test_long_loops_of_costly_elements_interleave_four_iterations():
    n = codegen.LONG_LOOP
    x, short = np.ones(n, np.float32), np.ones(n - 1, np.float32)
    assert _hinted(lambda x: tnp.tanh(x) * 2.0, x, count=4)
    assert _hinted(lambda x: tnp.exp(x) + tnp.sin(x), x.astype(np.float64), count=4)
    assert not _hinted(lambda x: tnp.tanh(x) * 2.0, short, count=4)     # compile time
    assert not _hinted(lambda x: x * 2.0 + 1.0, x, count=4)           # bound by memory


@pytest.mark.parametrize("n", [codegen.LONG_LOOP, codegen.LONG_LOOP * 3 + 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interleaved_loops_match_numpy(n, dtype):
    x = np.random.default_rng(n).uniform(-4, 4, n).astype(dtype)
    got = tracer.jit(lambda x: tnp.tanh(x) * tnp.exp(-x))(x)
    np.testing.assert_allclose(got, np.tanh(x) * np.exp(-x), rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("n", [63, 64, 67, 1024 + 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8])
def test_split_max_min_match_numpy_at_every_length(monkeypatch, n, dtype):
    monkeypatch.setattr(settings, "reduce_splits", 4)        # whatever the host's ISA
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((3, n)) * 50).astype(dtype)
    f = tracer.jit(lambda x: (tnp.max(x, axis=-1), tnp.min(x * 2, axis=-1), tnp.max(x)))
    for got, want in zip(f(x), (x.max(-1), (x * 2).min(-1), x.max())):
        np.testing.assert_array_equal(got, want)


def test_split_max_keeps_nans_and_signed_zeros(monkeypatch):
    monkeypatch.setattr(settings, "reduce_splits", 4)
    x = np.zeros((5, 130), np.float32)
    x[0, ::2], x[1, :], x[1, 77] = -0.0, -0.0, 0.0      # zeros of both signs, as NumPy does
    x[2, 100], x[3, 129], x[4, :] = np.nan, np.nan, -np.inf
    got = tracer.jit(lambda x: (tnp.max(x, axis=-1), tnp.min(x, axis=-1)))(x)
    for g, want in zip(got, (x.max(-1), x.min(-1))):
        np.testing.assert_array_equal(g, want)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(want))
