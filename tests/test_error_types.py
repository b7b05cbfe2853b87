"""Each common mistake raises the Python builtin JAX raises for it (so `except TypeError:`
written for JAX works), as a project error whose message still names the op and shapes.
The builtins were read off jax 0.10.2 running the same calls; where NumPy raises another
builtin (ValueError for shapes that do not combine), the error is both."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import lax

F3, F4, F6 = (np.ones(n, np.float32) for n in (3, 4, 6))
M23, M45 = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)


def jitted(fun, *args, **kw):
    return lambda: tracer.jit(fun, **kw)(*args)


def static_arg(x, s):
    return x


def pair(a, b):
    return a + b


def branch(x):
    return 1.0 if x > 0 else 2.0


# (situation, call, builtin JAX raises, words the message must contain)
ROWS = [
    ("add of unbroadcastable shapes", lambda: tnp.add(F3, F4), TypeError, ["add", "(3,)", "(4,)"]),
    ("+ of unbroadcastable shapes, jit", jitted(pair, F3, F4), TypeError, ["add", "(3,)", "(4,)"]),
    ("matmul of unaligned shapes", lambda: tnp.matmul(M23, M45),
     TypeError, ["matmul", "(2, 3)", "(4, 5)"]),
    ("@ of unaligned shapes, jit", jitted(lambda a, b: a @ b, M23, M45),
     TypeError, ["matmul", "(2, 3)"]),
    ("dot of unaligned shapes", lambda: tnp.dot(M23, M45), TypeError, ["(2, 3)", "(4, 5)"]),
    ("reshape to another size", lambda: tnp.reshape(F6, (4,)),
     TypeError, ["reshape", "(6,)", "(4,)"]),
    ("reshape to another size, jit", jitted(lambda x: x.reshape(4), F6),
     TypeError, ["reshape", "(6,)"]),
    ("reshape with two -1", lambda: tnp.reshape(F6, (-1, -1)), TypeError, ["reshape", "(-1, -1)"]),
    ("zeros of a negative size", lambda: tnp.zeros((-1, 2)), TypeError, ["(-1, 2)"]),
    ("transpose by no permutation", jitted(lambda x: x.transpose((0, 0)), M23),
     TypeError, ["transpose", "(0, 0)"]),
    ("concatenate of other shapes",
     jitted(lambda a, b: tnp.concatenate([a, b]), M23, np.ones((2, 4), np.float32)),
     TypeError, ["concatenate", "(2, 3)", "(2, 4)"]),
    ("stack of other shapes", lambda: tnp.stack([F3, F4]), ValueError, ["stack", "(3,)", "(4,)"]),
    ("sum over an axis out of range", jitted(lambda x: x.sum(axis=2), F3),
     ValueError, ["sum", "axis 2"]),
    ("squeeze of a non-1 axis", lambda: tnp.squeeze(M23, axis=0),
     ValueError, ["squeeze", "(2, 3)"]),
    ("where of unbroadcastable shapes", lambda: tnp.where(F3 > 0, F3, F4),
     ValueError, ["where", "(4,)"]),
    ("broadcast_to another shape", lambda: tnp.broadcast_to(F3, (4,)),
     ValueError, ["broadcast_to", "(3,)"]),
    ("einsum of mismatched sizes", lambda: tnp.einsum("ij,jk->ik", M23, M45),
     ValueError, ["einsum", "'j'"]),
    ("uneven split", lambda: tnp.split(F3, 2), ValueError, ["split"]),
    ("inv of a non-square matrix", lambda: tnp.linalg.inv(M23), ValueError, ["inv", "(2, 3)"]),
    ("a dtype that is none", lambda: tnp.zeros(3, dtype="foo"), TypeError, ["'foo'"]),
    ("astype to a dtype that is none", jitted(lambda x: x.astype("foo"), F3),
     TypeError, ["astype", "'foo'"]),
    ("bitwise op on floats", lambda: tnp.bitwise_and(F3, F3),
     TypeError, ["bitwise_and", "float32"]),
    ("asarray of a string", lambda: tnp.asarray("abc"), TypeError, ["asarray", "abc"]),
    ("jit of a string argument", jitted(lambda x: x, "abc"), TypeError, ["abc"]),
    ("Python if on a traced value", jitted(branch, np.float32(1)),
     tracer.TracerBoolConversionError, ["bool", "branch"]),
    ("int() of a traced value", jitted(lambda x: int(x), np.float32(1)), TypeError, ["int()"]),
    ("traced value as a Python index", jitted(lambda x, i: x[range(3)[i]], F3, np.int32(1)),
     tracer.TracerIntegerConversionError, ["index"]),
    ("zeros of a traced size", jitted(lambda n: tnp.zeros(n), 3), TypeError, ["shape"]),
    ("static_argnums past the arguments", jitted(lambda x: x, F3, static_argnums=3),
     ValueError, ["static_argnums=(3,)"]),
    ("unhashable static argument", jitted(static_arg, F3, {1, 2}, static_argnums=1),
     ValueError, ["set", "hashable"]),
    ("grad argnums past the arguments", lambda: tracer.grad(lambda x: x.sum(), argnums=3)(F3),
     TypeError, ["argnums=3"]),
    ("grad of a non-scalar output", lambda: tracer.grad(lambda x: x * 2)(F3),
     TypeError, ["f32[3]", "scalar"]),
    ("grad of an int output", lambda: tracer.grad(lambda x: x.astype(np.int32).sum())(F3),
     TypeError, ["float scalar", "i64[]"]),
    ("grad with respect to an int", lambda: tracer.grad(lambda x: x * 2)(np.int32(3)),
     TypeError, ["int32"]),
    ("jvp tangents of another structure", lambda: tracer.jvp(lambda x: x, (F3,), (F3, F3)),
     TypeError, ["structure"]),
    ("jvp tangent of another shape", lambda: tracer.jvp(lambda x: x, (F3,), (F4,)),
     ValueError, ["(4,)", "(3,)"]),
    ("vjp cotangent of another shape", lambda: tracer.vjp(lambda x: x, F3)[1](F4),
     ValueError, ["(4,)", "(3,)"]),
    ("vmap over inconsistent sizes", lambda: tracer.vmap(pair)(F3, F4),
     ValueError, ["size 3", "size 4"]),
    ("vmap in_axes past the rank", lambda: tracer.vmap(lambda a: a, in_axes=2)(F3),
     ValueError, ["axis 2"]),
    ("vmap in_axes not matching the arguments",
     lambda: tracer.vmap(pair, in_axes=(0, 0, 0))(F3, F3),
     ValueError, ["in_axes", "(0, 0, 0)"]),
    ("more indices than axes", jitted(lambda x: x[0, 0], F3), IndexError, ["getitem", "rank 1"]),
    ("two ellipses", jitted(lambda x: x[..., ...], F3), IndexError, ["ellipsis"]),
    ("cond branches of other types",
     jitted(lambda p, x: lax.cond(p, lambda x: x, lambda x: x[:2], x), True, F3),
     TypeError, ["cond", "f32[2]", "f32[3]"]),
    ("scan carry changing type", lambda: lax.scan(lambda c, x: (c[:1], x), F3, F4),
     TypeError, ["scan", "f32[1]", "f32[3]"]),
    ("while_loop with a non-scalar predicate",
     lambda: lax.while_loop(lambda c: c > 0, lambda c: c - 1, F3),
     TypeError, ["while_loop", "bool[3]"]),
    ("traced boolean mask", jitted(lambda x: x[x > 0], F3), IndexError, ["boolean mask"]),
    ("grad has_aux without a pair", lambda: tracer.grad(lambda x: x.sum(), has_aux=True)(F3),
     TypeError, ["has_aux=True", "pair"]),
    ("vmap with nothing mapped", lambda: tracer.vmap(lambda a: a, in_axes=None)(F3),
     ValueError, ["non-None value in in_axes", "axis_size"]),
    ("jit of a Python int beyond int64", jitted(lambda x: x + 0, 2 ** 63), OverflowError,
     ["9223372036854775808", "int64"]),
    ("a Python int beyond int64 closed over under jit", jitted(lambda: tnp.asarray(-2 ** 63 - 1)),
     OverflowError, ["int64"]),
    ("asarray of a Python int beyond int64", lambda: tnp.asarray(2 ** 64), OverflowError,
     ["18446744073709551616", "int64"]),
    ("device_put of a Python int beyond int64", lambda: tracer.device_put(2 ** 63),
     OverflowError, ["device_put", "int64"]),
    ("a device_put placement tree that is no prefix of x",
     lambda: tracer.device_put({"a": F3, "b": F4}, device={"a": None, "b": (None, None)}),
     ValueError, ["tree prefix", "different types at key path x['b']"]),
]


@pytest.mark.parametrize("call, builtin, words", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_raises_the_builtin_jax_raises(call, builtin, words):
    with pytest.raises(builtin) as info:
        call()
    assert isinstance(info.value, tracer.TracerError)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


@pytest.mark.parametrize("transform", [tracer.grad, tracer.vmap])
def test_a_non_callable_is_a_type_error_when_called(transform):
    """JAX raises when the transform is made; here Python's own TypeError comes at the call
    (jit raises when made, as JAX: tests/tracer/test_jit_argument_checks.py)."""
    with pytest.raises(TypeError, match="'int' object is not callable"):
        transform(3)(F3)


def test_missing_implementations_are_not_implemented_errors():
    """JAX raises NotImplementedError for a primitive without a rule; these stay LookupErrors."""
    for cls in (tracer.KernelNotFoundError, tracer.ShapeRuleNotFoundError,
                tracer.GradientNotFoundError):
        assert issubclass(cls, NotImplementedError) and issubclass(cls, LookupError)


def test_new_classes_keep_the_old_ones_catchable():
    for cls, old in [(tracer.ShapeMismatchError, tracer.ShapeError),
                     (tracer.IndexingError, tracer.ShapeError),
                     (tracer.OutOfBoundsError, tracer.IndexingError),
                     (tracer.ArgumentValueError, tracer.ArgumentError),
                     (tracer.GradientTypeError, tracer.GradientError),
                     (tracer.TracerBoolConversionError, tracer.ConcretizationError),
                     (tracer.TracerIntegerConversionError, tracer.ConcretizationError)]:
        assert issubclass(cls, old)
    with pytest.raises(ValueError):        # NumPy's builtin for shapes stays catchable too
        tnp.add(F3, F4)
