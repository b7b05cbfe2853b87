"""Splitting a call across threads (lowering/llvm/program.py): pieces cover every work
item once, come in equal shares per thread, and a split row-fused softmax or elementwise
loop gives exactly the single-thread result; only arithmetic-heavy groups are split."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tracer
import tracer.numpy as tnp
from lowering.llvm import program
from lowering.settings import settings as tracer_settings


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 100_000), threads=st.integers(1, 5))
def test_pieces_cover_items_once(n, threads):
    b = program._pieces(n, threads)
    assert b[0] == 0 and b[-1] == n and all(x < y for x, y in zip(b, b[1:]))
    assert all(x % program.GRAIN == 0 for x in b[:-1])
    k = len(b) - 1
    if n >= program.GRAIN * program.CHUNKS * threads:
        assert k == program.CHUNKS * threads
        sizes = np.diff(b)
        assert sizes.max() - sizes.min() <= 2 * program.GRAIN


@pytest.mark.parametrize("threads", ["1", "3"])
def test_split_matches_single_thread(monkeypatch, threads):
    monkeypatch.setattr(tracer_settings, "parallel_ns", 0)
    monkeypatch.setenv("TRACER_NUM_THREADS", threads)

    def f(x):
        e = tnp.exp(x - tnp.max(x, axis=-1, keepdims=True))
        return e / tnp.sum(e, axis=-1, keepdims=True), tnp.tanh(x) * (1 / (1 + tnp.exp(-x)))
    x = np.random.default_rng(4).standard_normal((97, 50)).astype(np.float32)
    prog = tracer.jit(f).lower(x)
    assert ("parallel" in prog.steps) == (threads != "1")
    got = tracer.jit(f)(x)
    monkeypatch.setenv("TRACER_NUM_THREADS", "1")
    want = tracer.jit(f)(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_only_arithmetic_heavy_groups_split(monkeypatch):
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    x = np.ones((2048, 1024), np.float32)
    assert tracer.jit(lambda x: tnp.sum(x, axis=0)).lower(x).steps == ["segment"]
    assert tracer.jit(lambda x: tnp.tanh(x) * 2).lower(x).steps == ["parallel"]
