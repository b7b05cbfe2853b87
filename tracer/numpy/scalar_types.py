"""tracer.numpy's scalar types (float32, int32, bfloat16, ...), as JAX's: NumPy's types
wherever a dtype or a type is taken (`dtype=float32`, `np.dtype`, `isinstance`,
`issubdtype`), and, called on a traced value, a conversion of it: `jnp.float32(x.sum())`
inside jit is common JAX code, and NumPy's own type would ask the tracer for its data.
Called on concrete values they are NumPy's types (a NumPy scalar or array)."""
import ml_dtypes
import numpy as np


class ScalarType(type):
    """The metaclass: each type subclasses its NumPy type and stands for it."""

    def __call__(cls, *args):
        from tracer.numpy.creation import _traced, asarray
        if len(args) == 1 and _traced(args[0]):
            return asarray(args[0], dtype=cls.numpy_type)
        return cls.numpy_type(*args)

    def __instancecheck__(cls, x):
        return isinstance(x, cls.numpy_type)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.numpy_type)

    def __eq__(cls, other):
        return other is cls or other is cls.numpy_type

    def __hash__(cls):
        return hash(cls.numpy_type)

    @property
    def dtype(cls):
        return np.dtype(cls.numpy_type)


def _scalar_type(numpy_type):
    name = np.dtype(numpy_type).name
    return ScalarType(name, (numpy_type,), {"numpy_type": numpy_type, "__slots__": (),
                                            "__module__": "tracer.numpy",
                                            "__doc__": f"{name}: NumPy's, and JAX's "
                                                       f"conversion of traced values"})


TYPES = {t: _scalar_type(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, ml_dtypes.bfloat16)}
