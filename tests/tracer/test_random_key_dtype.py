"""random.key_dtype names the dtype of the keys random.key makes, as jax.random.key_dtype."""
import numpy as np
import pytest

import tracer
import tracer.random as trandom
from ir.errors import ArgumentError


@pytest.mark.parametrize("impl", [None, "threefry2x32"])
def test_key_dtype_is_the_dtype_of_keys(impl):
    assert trandom.key_dtype(impl) == trandom.key(0, impl=impl).dtype == np.uint32
    assert trandom.key_dtype(impl) == tracer.jit(lambda s: trandom.key(s))(3).dtype


def test_key_dtype_of_an_unknown_impl_names_the_op():
    with pytest.raises(ArgumentError, match="key_dtype: PRNG implementation 'rbg' is not available"):
        trandom.key_dtype("rbg")
