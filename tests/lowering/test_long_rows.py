"""Loops along rows longer than settings.long_row stay loops (four vectors an iteration) and
the loops around them are not unrolled, nor the loops around a shorter row when row and
loop together hold more than long_row items: LLVM otherwise unrolls them fully once a group is
inlined with constant bounds, and the optimized module grows ~100x for no speed."""
import re

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

from lowering.llvm import emit
from lowering.settings import settings

LONG = settings.long_row + 256


def _optimized_lines(tmp_path, monkeypatch, f, *args):
    monkeypatch.setenv("TRACER_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "cache"))
    out = tracer.jit(f)(*args)
    (opt,) = [p for p in (tmp_path / "dump").glob("*.opt.ll")     # not a library's or the pool's
              if re.search(r'^define [^@]*@"?[sg]\d', p.read_text(), re.M)]
    return len(opt.read_text().splitlines()), out


CASES = {
    "column sum": (lambda x: tnp.sum(x, axis=(0, 1)), (16, 64, LONG),
                   lambda x: x.sum(axis=(0, 1))),
    "broadcast": (lambda y: tnp.broadcast_to(y, (16,) + y.shape) * 2.0, (128, LONG),
                  lambda y: np.broadcast_to(y, (16,) + y.shape) * 2.0),
}


def _conv_weight_gradient(x):
    """The first layer of W15's CNN, differentiated by its weights: rows of 64 items (a
    transpose of x to put its batch last) in a loop of 28."""
    w = np.ones((3, 3, 1, 16), np.float32)
    conv = lambda w: tnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=(
        "NHWC", "HWIO", "NHWC")) ** 2)         # noqa: E731
    return tracer.grad(conv)(w)


def test_loops_around_short_rows_stay_loops_when_the_pair_is_long(tmp_path, monkeypatch):
    """Unrolled, the transpose alone was 1,792 scalar loads and inserts on AVX2: 6,634
    optimized lines (2,040 on AVX-512), 1,125 (1,178) as loops."""
    x = np.random.default_rng(0).standard_normal((64, 28, 28, 1)).astype(np.float32)
    lines, out = _optimized_lines(tmp_path, monkeypatch, _conv_weight_gradient, x)
    assert lines < 1500, lines
    ref = tracer.jit(_conv_weight_gradient, backend="numpy")(x)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("name", CASES)
def test_long_row_nests_stay_loops(tmp_path, monkeypatch, name):
    f, shape, ref = CASES[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    lines, out = _optimized_lines(tmp_path, monkeypatch, f, x)
    assert lines < 400, lines           # unrolled: 1,800-9,000 lines
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-4)


def test_long_rows_carry_the_hints_short_rows_do_not():
    x = np.ones((64, LONG), np.float32)
    text = tracer.jit(lambda x: tnp.sum(x, axis=0)).lower(x).as_text()
    assert '!"llvm.loop.unroll.disable"' in text
    row = f'!"llvm.loop.interleave.count", i32 {emit.INTERLEAVED}'
    assert row in text
    short = tracer.jit(lambda x: tnp.sum(x, axis=0)).lower(x[:, :settings.long_row]).as_text()
    assert row not in short
