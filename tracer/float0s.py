"""float0, JAX's dtype of the tangent of an integer or bool value: such a value has no
tangent space, so its tangent (or gradient) is zeros that carry no data (itemsize 0).

A float0 array is never traced: it is a NumPy constant inside any trace too, since
there is nothing to compute with it (an op on it raises, as in JAX). So grad with
allow_int, jvp and vjp give float0 the same way eagerly and under jit, vmap or an outer
transform, and jit and vmap keep a function's float0 arguments and results out of its
graph (`Float0Leaves`), as the constants they are.
"""
import numpy as np

float0 = np.dtype([("float0", np.void, 0)])


def is_float0(x):
    return isinstance(x, np.ndarray) and x.dtype == float0


def zeros(shape):
    return np.zeros(shape, float0)


class Float0Leaves:
    """The float0 leaves of a list (a traced function's arguments or results) by
    position: `others` drops them, `merge` puts them back among the other leaves."""
    __slots__ = ("values",)

    def __init__(self, leaves):
        self.values = {i: x for i, x in enumerate(leaves) if is_float0(x)}

    def __bool__(self):
        return bool(self.values)

    def others(self, leaves):
        if not self.values:
            return leaves
        return [x for i, x in enumerate(leaves) if i not in self.values]

    def merge(self, others, values=None):
        """`others` with the float0 leaves (or `values`, by the same positions) put back."""
        if not self.values:
            return others
        values = self.values if values is None else values
        it = iter(others)
        return [values[i] if i in values else next(it)
                for i in range(len(others) + len(values))]
