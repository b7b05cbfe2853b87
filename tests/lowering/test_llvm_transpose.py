"""Transposes of the last two axes (lowering/llvm/transpose.py): every dtype, shapes with
and without partial blocks, leading axes, both thread splits, and NaN payloads."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import transpose
from lowering.settings import settings

SHAPES = [(64, 64), (67, 131), (131, 67), (200, 65), (3, 70, 90), (1, 80, 64), (2, 1, 96, 100)]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64, np.int8,
          np.float16, ml_dtypes.bfloat16, np.bool_]


def _swap(x):
    return tnp.swapaxes(x, -1, -2)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_values_match_numpy(shape, dtype):
    x = (np.random.default_rng(0).standard_normal(shape) * 100).astype(dtype)
    np.testing.assert_array_equal(tracer.jit(_swap)(x), np.swapaxes(x, -1, -2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bits_move_unchanged(dtype):
    """NaN payloads and -0.0 survive: items move as integers."""
    ints = np.uint32 if dtype == np.float32 else np.uint64
    bits = np.random.default_rng(1).integers(0, np.iinfo(ints).max, (96, 72), dtype=ints,
                                             endpoint=True)
    got = tracer.jit(_swap)(bits.view(dtype))
    np.testing.assert_array_equal(got.view(ints), bits.T)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_split_across_threads(monkeypatch, threads):
    """Pieces of rows (or of matrices) that start anywhere, not only on a block."""
    monkeypatch.setenv("TRACER_NUM_THREADS", threads)
    monkeypatch.setattr(settings, "parallel_ns", 0)
    for shape in [(1100, 1300), (4, 300, 260), (1, 203, 77)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(tracer.jit(_swap)(x), np.swapaxes(x, -1, -2))


FUSED = {
    "x.T * 2": (lambda x, y: _swap(x) * 2, lambda x, y: np.swapaxes(x, -1, -2) * 2),
    "x.T + y": (lambda x, y: _swap(x) + y, lambda x, y: np.swapaxes(x, -1, -2) + y),
    "x.T - y.T": (lambda x, y: _swap(x) - _swap(y), lambda x, y: np.swapaxes(x - y, -1, -2)),
    "x.T + x[0]": (lambda x, y: _swap(x) + _swap(x)[..., :1, :],     # a read elsewhere
                   lambda x, y: np.swapaxes(x, -1, -2) + np.swapaxes(x, -1, -2)[..., :1, :]),
}


@pytest.mark.parametrize("shape", [(64, 64), (67, 131), (3, 96, 70), (1, 130, 64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16, np.int8],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", FUSED)
def test_fused_transposes_match_numpy(name, dtype, shape):
    """Fused with other work, transposed reads come from per-tile copies (whole tiles)
    or straight from memory (edge tiles, and reads elsewhere than the loop's position)."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    y = (rng.standard_normal(shape[:-2] + shape[:-3:-1]) * 50).astype(dtype)
    if name == "x.T - y.T":
        y = (rng.standard_normal(shape) * 50).astype(dtype)
    f, want = FUSED[name]
    np.testing.assert_array_equal(tracer.jit(f)(x, y), want(x, y))


def test_which_transposes_take_register_blocks():
    x = np.ones((96, 80), np.float32)
    assert "shufflevector" in tracer.jit(_swap).lower(x).as_text()            # alone
    assert "shufflevector" in tracer.jit(lambda x: _swap(x) * 2).lower(x).as_text()  # fused
    halves = x.astype(np.float16)                                             # 2-byte items
    assert "shufflevector" not in tracer.jit(lambda x: _swap(x) * 2).lower(halves).as_text()
    assert transpose.lanes(np.float16) == transpose.lanes(np.bool_) == 0
