"""Transposes of the last two axes (lowering/llvm/transpose.py): every dtype, shapes with
and without partial blocks, leading axes, both thread splits, and NaN payloads."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import schedule, transpose

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
    monkeypatch.setattr(schedule, "PARALLEL_NS", 0)
    for shape in [(1100, 1300), (4, 300, 260), (1, 203, 77)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(tracer.jit(_swap)(x), np.swapaxes(x, -1, -2))


def test_only_a_lone_transpose_of_a_value_in_memory_takes_blocks():
    x = np.ones((96, 80), np.float32)
    assert "shufflevector" in tracer.jit(_swap).lower(x).as_text()
    fused = tracer.jit(lambda x: _swap(x) * 2.0)
    assert "shufflevector" not in fused.lower(x).as_text()
    np.testing.assert_array_equal(fused(x), x.T * 2)
    assert transpose.lanes(np.float16) == transpose.lanes(np.bool_) == 0
