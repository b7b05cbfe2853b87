"""A reshape that merges axes, read at coordinates, maps them run by run of axes
(lowering.llvm.shapes): a multiply-add, where the whole flat index was divided back into
the input's coordinates. A reshape that splits an axis keeps the flat index. Values are
NumPy's."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

X = np.random.default_rng(0).standard_normal((4, 6, 48)).astype(np.float32)


def heads(x):           # attention's split of a projection into heads
    return tnp.transpose(x[:, :, 16:32].reshape(4, 6, 2, 8), (0, 2, 1, 3)) * 2.0


def merge(x):           # and back: (2, 6, 8) -> (96,) splits, its (4, 6, 16) -> (4, 6, 2, 8) merges
    y = tnp.transpose(x[:, :, :16].reshape(4, 6, 2, 8), (0, 2, 1, 3))
    return y.reshape(4, 96)[:, ::2] + 1.0


def ones(x):            # axes of extent 1 on either side
    return tnp.transpose(x.reshape(1, 4, 6, 1, 48)[:, 1:, :, :, 40:], (4, 1, 2, 3, 0)) - 1.0


CASES = [
    (heads, lambda x: np.transpose(x[:, :, 16:32].reshape(4, 6, 2, 8), (0, 2, 1, 3)) * 2, 0),
    (merge, lambda x: np.transpose(x[:, :, :16].reshape(4, 6, 2, 8),
                                   (0, 2, 1, 3)).reshape(4, 96)[:, ::2] + 1, 3),
    (ones, lambda x: np.transpose(x.reshape(1, 4, 6, 1, 48)[:, 1:, :, :, 40:],
                                  (4, 1, 2, 3, 0)) - 1, 0),
]


@pytest.mark.parametrize("f,want,divisions", CASES, ids=[c[0].__name__ for c in CASES])
def test_divisions_only_where_a_reshape_splits_an_axis(f, want, divisions):
    jitted = tracer.jit(f, backend="llvm")
    text = jitted.lower(X).as_text()
    assert text.count("udiv") == divisions, text
    np.testing.assert_array_equal(np.asarray(jitted(X)), want(X))


def test_a_flat_loop_keeps_the_flat_index():
    jitted = tracer.jit(lambda x: x.reshape(24, 8, 6) * 3.0, backend="llvm")
    text = jitted.lower(X).as_text()
    assert "udiv" not in text and "urem" not in text
    np.testing.assert_array_equal(np.asarray(jitted(X)), X.reshape(24, 8, 6) * 3)
