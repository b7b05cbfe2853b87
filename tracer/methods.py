"""Operators and array methods on traced values, delegating to tracer.numpy."""
from tracer import numpy as tnp
from tracer.core import Tracer


def _swap(f):
    return lambda self, other: f(other, self)


_OPERATORS = {
    "__add__": tnp.add, "__radd__": _swap(tnp.add),
    "__sub__": tnp.subtract, "__rsub__": _swap(tnp.subtract),
    "__mul__": tnp.multiply, "__rmul__": _swap(tnp.multiply),
    "__truediv__": tnp.divide, "__rtruediv__": _swap(tnp.divide),
    "__pow__": tnp.power, "__rpow__": _swap(tnp.power),
    "__matmul__": tnp.matmul, "__rmatmul__": _swap(tnp.matmul),
    "__lt__": tnp.less, "__le__": tnp.less_equal, "__gt__": tnp.greater,
    "__ge__": tnp.greater_equal, "__eq__": tnp.equal, "__ne__": tnp.not_equal,
    "__neg__": tnp.negative, "__pos__": lambda x: x, "__abs__": tnp.abs,
    "__getitem__": tnp.getitem,
    "sum": tnp.sum, "mean": tnp.mean, "max": tnp.max, "min": tnp.min, "prod": tnp.prod,
    "argmax": tnp.argmax, "argmin": tnp.argmin, "reshape": tnp.reshape,
    "astype": tnp.astype, "transpose": lambda x, *axes: tnp.transpose(
        x, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes or None),
    "squeeze": tnp.squeeze, "ravel": tnp.ravel, "flatten": tnp.ravel,
}

for _name, _fn in _OPERATORS.items():
    setattr(Tracer, _name, _fn)
Tracer.T = property(tnp.transpose)
Tracer.__hash__ = object.__hash__
