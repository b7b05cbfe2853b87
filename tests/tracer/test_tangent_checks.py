"""linearize's function refuses tangents inconsistent with its primals (another shape, an
int for a float, an int32 where float0 is due) with JAX's ValueError and words
("linearized function called on tangent values inconsistent with the original primal
values"), which is also the TypeError jvp raises. (A Python float tangent for a float32
primal is refused, as by JAX with x64 enabled: Python floats are float64 here, as NumPy's.)"""
import numpy as np
import pytest

import tracer
from tracer import float0


@pytest.mark.parametrize("primal, tangent", [
    (1.0, 1),                                               # an int for a float
    (np.ones(2, np.int32), np.ones(2, np.int32)),           # an int32 for an int: float0
    (np.array([1.0, 2.0, 3.0]), np.ones((3, 2))),           # another shape
])
def test_linearize_refuses_inconsistent_tangents_as_jax(primal, tangent):
    _, f_jvp = tracer.linearize(lambda x: x, primal)
    with pytest.raises(ValueError, match="tangent values inconsistent with the original "
                                         "primal values") as e:
        f_jvp(tangent)
    assert isinstance(e.value, TypeError)


def test_consistent_tangents_pass():
    _, f_jvp = tracer.linearize(lambda x: x, np.ones(2, np.int32))
    f_jvp(np.zeros(2, float0))
    with pytest.raises(TypeError, match="primal and tangent arguments to jax.jvp do not match"):
        tracer.jvp(lambda x: x, (1.0,), (1,))
