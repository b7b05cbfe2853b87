"""lax.gather's and the scatters' dimension-number checks: JAX's messages, as TypeErrors,
before anything runs (eagerly and under jit); valid batched calls still pass them."""
import numpy as np
import pytest

import tracer
from tracer import lax

OPERAND, INDICES = np.ones((10, 9, 8, 7, 6), np.float32), np.ones((5, 4, 3, 2, 5), np.int32)
G = lax.GatherDimensionNumbers


@pytest.mark.parametrize("dn, sizes, message", [
    (G((4, 5, 6, 7, 8), (), (0, 1, 2, 3)), (10, 9, 8, 7, 6),
     "Gather op has 4 elements in start_index_map and the bound of dimension "
     "index_vector_dim=4 of indices is 5"),
    (G((4, 5, 6, 7, 8), (0, 1, 2, 3, 3), (0, 1, 2, 3, 4)), (10, 9, 8, 7, 6),
     r"collapsed_slice_dims in gather op must not repeat"),
    (G((4, 5, 6, 7), (1,), (0, 1, 2, 3, 4)), (10, 9, 8, 7, 6),
     r"can only collapse slice dims with bound 1, but bound is 9 for index 1 at position 0"),
    (G((4, 5, 6), (0, 1), (0, 1, 2, 3, 4), (), (0, 4)), (10, 9, 8, 7, 6),
     "cannot have the index vector dimension as a batching dimension"),
    (G((4, 5, 6, 7), (2,), (0, 1, 2, 3, 4)), (10, 9, 8, 100, 6),
     r"Slice size at index 3 in gather op is out of range"),
])
@pytest.mark.parametrize("jit", [False, True])
def test_gather_checks(dn, sizes, message, jit):
    f = lambda x, i: lax.gather(x, i, dn, sizes)
    with pytest.raises(TypeError, match=f"lax.gather: .*{message}"):
        (tracer.jit(f, backend="numpy") if jit else f)(OPERAND, INDICES)


def test_scatter_checks():
    dn = lax.ScatterDimensionNumbers((4, 5, 6, 7, 8), (), (0, 1, 2, 3, 10))
    with pytest.raises(TypeError, match=r"lax.scatter_add: Invalid "
                                        r"scatter_dims_to_operand_dims mapping; domain"):
        lax.scatter_add(OPERAND, INDICES, np.ones((5, 4, 3, 2, 10, 9, 8, 7, 6), np.float32), dn)
    dn = lax.ScatterDimensionNumbers((4, 5, 6, 7, 8), (), (0, 1, 2, 3, 4))
    with pytest.raises(TypeError, match="Bounds of the window dimensions of updates must not "
                                        "exceed.*For dimension 4, updates bound is 65"):
        lax.scatter(OPERAND, INDICES, np.ones((5, 4, 3, 2, 65, 9, 8, 7, 6), np.float32), dn)


def test_batched_gather_and_scatter_still_run():
    x, idx = np.arange(12.0).reshape(3, 4), np.array([[1], [3], [0]])
    dn = G(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
           operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    np.testing.assert_array_equal(lax.gather(x, idx, dn, (1, 1)), x[[0, 1, 2], [1, 3, 0]])
    sdn = lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))
    out = lax.scatter_add(x, idx, np.ones(3), sdn)
    np.testing.assert_array_equal(out - x, np.eye(4)[[1, 3, 0]])
