"""Eager tracer.numpy results never alias their arguments, also where the value is the
argument's unchanged: x ** 1, concatenate of one array (any wrapper of it: hstack, block),
diff with n=0 (where NumPy itself returns its argument). Writing into the result must
leave the argument as it was."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

CASES = {
    "power 1": lambda x: tnp.power(x, 1),
    "concatenate one": lambda x: tnp.concatenate([x]),
    "concatenate one, axis None": lambda x: tnp.concatenate([x], axis=None),
    "hstack one": lambda x: tnp.hstack([x]),
    "diff n=0": lambda x: tnp.diff(x, n=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_result_is_a_new_array(name):
    x = np.arange(6.0).reshape(2, 3)
    before = x.copy()
    out = CASES[name](x)
    assert isinstance(out, np.ndarray) and not np.shares_memory(out, x)
    np.testing.assert_array_equal(out.reshape(x.shape), before)
    out[...] = -1
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(tracer.jit(CASES[name])(x).reshape(x.shape), before)
