"""lax.switch's argument errors have jax.lax.switch's types: an empty branch sequence is a
ValueError ("Empty branch sequence" in jax), a branch that is not callable a TypeError."""
import numpy as np
import pytest

import tracer
from tracer import lax


def test_empty_branches_are_a_value_error():
    with pytest.raises(ValueError, match="switch: branches must be a non-empty sequence"):
        lax.switch(0, [])
    with pytest.raises(ValueError, match="switch: branches must be a non-empty sequence"):
        tracer.jit(lambda i: lax.switch(i, []))(np.int32(0))


def test_a_branch_that_is_not_callable_is_a_type_error():
    with pytest.raises(TypeError, match="switch: branches must be a non-empty sequence"):
        lax.switch(0, [lambda: 1.0, 2.0])
