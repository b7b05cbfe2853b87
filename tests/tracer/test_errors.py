"""One exception hierarchy (ir.errors): every common mistake raises a project error whose
message names the op or kernel, the shapes/dtypes, and the fix, eagerly and under jit,
and never surfaces as a raw NumPy traceback from deep inside."""
import inspect
import os
import re

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import errors

X = np.ones((2, 3), np.float32)
MODES = ["eager", "jit"]
NUMPY_DIR = os.path.dirname(np.__file__)


def call(mode, fun, *args):
    return fun(*args) if mode == "eager" else tracer.jit(fun, backend="numpy")(*args)


def raises(mode, exc, match, fun, *args):
    with pytest.raises(exc, match=match) as info:
        call(mode, fun, *args)
    assert isinstance(info.value, errors.TracerError)
    assert not str(info.traceback[-1].path).startswith(NUMPY_DIR), "raised inside NumPy"
    assert not isinstance(info.value.__cause__, Exception) or isinstance(
        info.value.__cause__, errors.TracerError)
    return info.value


def test_hierarchy_derives_from_the_builtins_users_catch():
    e = errors
    for cls, base in [(e.ShapeError, ValueError), (e.OutOfBoundsError, IndexError),
                      (e.OutOfBoundsError, e.ShapeError), (e.DTypeError, TypeError),
                      (e.ArgumentError, TypeError), (e.KernelNotFoundError, LookupError),
                      (e.BackendNotFoundError, LookupError),
                      (e.ShapeRuleNotFoundError, LookupError),
                      (e.GradientNotFoundError, LookupError),
                      (e.ConcretizationError, TypeError), (e.IRError, ValueError),
                      (e.KernelError, RuntimeError), (e.CodegenError, RuntimeError)]:
        assert issubclass(cls, base) and issubclass(cls, e.TracerError)
        assert getattr(tracer, cls.__name__) is cls


# ---- concretization ---------------------------------------------------------------------

def _branchy(x):
    if x.sum() > 0:              # the offending line: its number is checked below
        return x
    return -x


@pytest.mark.parametrize("what,fun", [
    ("bool", _branchy),
    ("int", lambda x: int(x[0, 0])),
    ("float", lambda x: float(tnp.sum(x))),
    ("index", lambda x: [1, 2, 3][x[0, 0].astype(np.int32)]),
    ("numpy.asarray", lambda x: np.asarray(x)),
])
def test_concretization_names_the_user_line_and_suggests_static_argnums(what, fun):
    line = (inspect.getsourcelines(_branchy)[1] + 1 if fun is _branchy
            else inspect.getsourcelines(fun)[1])
    abstract = (tracer.jit, tracer.make_graph)   # eager grad sees values, but not NumPy's
    for transform in abstract + ((tracer.grad,) if what == "numpy.asarray" else ()):
        with pytest.raises(errors.ConcretizationError) as info:
            transform(lambda x: tnp.sum(fun(x)))(X)
        msg = str(info.value)
        jax_opening = {"bool": "Attempted boolean conversion of traced array with shape ",
                       "index": "The __index__() method was called on traced array with "
                                "shape ",
                       "numpy.asarray": "The numpy.ndarray conversion method __array__() "
                                        "was called on traced array with shape "}
        assert msg.startswith(jax_opening.get(
            what, "Abstract tracer value encountered where concrete value is expected: "
                  "traced array with shape ")), msg
        assert f"{what}() of a traced value" in msg, msg
        assert f"test_errors.py:{line}" in msg, msg
        assert "static_argnums" in msg and "where" in msg


def test_converting_a_traced_value_to_numpy_points_to_tracer_numpy():
    np.testing.assert_allclose(tracer.jit(lambda x: np.exp(x), backend="numpy")(X), np.exp(X))
    with pytest.raises(errors.ConcretizationError, match="call the tracer.numpy function of "
                                                         "the same name"):
        tracer.jit(lambda x: np.asarray(x) + 1, backend="numpy")(X)


def test_static_argument_fixes_the_concretization():
    f = tracer.jit(lambda x, n: x * n if n > 1 else x, static_argnums=1, backend="numpy")
    assert f(X, 2)[0, 0] == 2


# ---- shapes -------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_shape_mismatch_names_the_op_and_the_shapes(mode):
    raises(mode, errors.ShapeError, r"add: operand shapes \(2, 3\), \(3, 2\) cannot be "
           r"broadcast together", lambda x: tnp.add(x, np.ones((3, 2), np.float32)), X)
    raises(mode, errors.ShapeError, r"where: operand shapes \(2,\), \(2, 3\), \(\) cannot",
           lambda x: tnp.where(np.ones(2, bool), x, 0), X)


COMMON_MISTAKES = [
    ("bad axis", errors.ShapeError, r"sum: axis 2 is out of bounds for an array of rank 2",
     lambda x: tnp.sum(x, axis=2)),
    ("axis not int", errors.ArgumentError, r"mean: axis must be an int, got 1.0",
     lambda x: tnp.mean(x, axis=1.0)),
    ("repeated axis", errors.ShapeError, r"max: duplicate value in 'axis'", lambda x: tnp.max(x, (0, -2))),
    ("reshape size", errors.ShapeError, r"reshape: cannot reshape \(2, 3\) \(6 elements\) to "
     r"\(4, 2\)", lambda x: tnp.reshape(x, (4, 2))),
    ("reshape -1", errors.ShapeError, r"reshape: cannot reshape \(2, 3\) \(6 elements\) into "
     r"\(-1, 4\)", lambda x: x.reshape(-1, 4) if hasattr(x, "_trace") else tnp.reshape(x, (-1, 4))),
    ("reshape negative", errors.ShapeError, r"reshape: invalid shape \(-2, -3\)",
     lambda x: tnp.reshape(x, (-2, -3))),
    ("reshape float", errors.ArgumentError, r"reshape: shape must be an int or a tuple of ints",
     lambda x: tnp.reshape(x, (2.0, 3))),
    ("matmul dims", errors.ShapeError, r"matmul: shapes \(2, 3\) and \(2, 3\) are not aligned",
     lambda x: tnp.matmul(x, x)),
    ("matmul 0-d", errors.ShapeError, r"matmul: operands must not be 0-d",
     lambda x: tnp.matmul(x, 2.0)),
    ("dot dims", errors.ShapeError, r"shapes \(2, 3\) and \(2, 3\) are not aligned",
     lambda x: tnp.dot(x, x)),
    ("take oob", errors.OutOfBoundsError, r"take: index 5 is out of bounds for axis 1 with "
     r"size 3", lambda x: tnp.take(x, np.array([0, 5]), axis=1)),
    ("take negative oob", errors.OutOfBoundsError, r"index -4 is out of bounds",
     lambda x: tnp.take(x, [-4], axis=1)),
    ("getitem oob", errors.OutOfBoundsError, r"getitem: index 2 is out of bounds for axis 0 "
     r"with size 2", lambda x: x[2] if hasattr(x, "_trace") else tnp.getitem(x, 2)),
    ("getitem too many", errors.ShapeError, r"too many indices \(3\) for an array of rank 2",
     lambda x: tnp.getitem(x, (0, 0, 0))),
    ("getitem float", errors.ArgumentError, r"getitem: unsupported index 1.5",
     lambda x: tnp.getitem(x, 1.5)),
    ("getitem mask shape", errors.OutOfBoundsError, r"boolean index did not match",
     lambda x: tnp.getitem(x, np.array([True, False, True, False, True]))),
    ("getitem two arrays", errors.OutOfBoundsError, r"out of bounds",
     lambda x: tnp.getitem(x, ([0], [99]))),
    ("concatenate", errors.ShapeError, r"concatenate: shapes \[\(2, 3\), \(2, 2\)\] differ off "
     r"axis 0", lambda x: tnp.concatenate([x, x[:, :2]])),
    ("stack", errors.ShapeError, r"stack: all input arrays must have the same shape",
     lambda x: tnp.stack([x, x[:1]])),
    ("squeeze", errors.ShapeError, r"squeeze: cannot select axis 0 of shape \(2, 3\)",
     lambda x: tnp.squeeze(x, 0)),
    ("broadcast_to", errors.ShapeError, r"broadcast_to: operand shapes \(2, 3\), \(3, 3\)",
     lambda x: tnp.broadcast_to(x, (3, 3))),
    ("transpose", errors.ShapeError, r"transpose: axes \(0, 0\) are not a permutation",
     lambda x: tnp.transpose(x, (0, 0))),
    ("max of empty", errors.ShapeError, r"reduce_max: reducing over an empty axis",
     lambda x: tnp.max(x[:0])),
    ("argmax of empty", errors.ShapeError, r"argmax of an empty sequence",
     lambda x: tnp.argmax(x[:, :0])),
    ("full shape", errors.ArgumentError, r"full: shape must be an int or a tuple of ints",
     lambda x: tnp.full((2, "a"), 1.0)),
    ("arange step", errors.ArgumentError, r"arange\(0, 3, 0\)", lambda x: tnp.arange(0, 3, 0)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,exc,match,fun", COMMON_MISTAKES,
                         ids=[m[0] for m in COMMON_MISTAKES])
def test_common_mistakes_raise_clear_project_errors(mode, name, exc, match, fun):
    raises(mode, exc, match, fun, X)


def test_traced_index_out_of_bounds_fails_at_run_time_with_the_source_line():
    f = tracer.jit(lambda x, i: x[i], backend="numpy")
    np.testing.assert_array_equal(f(X, np.array([1, -2])), X[[1, -2]])
    with pytest.raises(errors.OutOfBoundsError, match=r"take: index 5 is out of bounds.*"
                                                      r"test_errors.py:\d+"):
        f(X, np.array([5]))


# ---- dtypes and non-array arguments --------------------------------------------------------

UNSUPPORTED = [np.ones(3, np.complex64), np.complex128(1), np.ones(2, "datetime64[s]")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad", UNSUPPORTED, ids=lambda b: f"{type(b).__name__}-{b.dtype}")
def test_unsupported_dtypes_say_what_is_supported(mode, bad):
    match = (rf"dtype {re.escape(str(bad.dtype))} is not supported; supported dtypes are bool, "
             rf"int8, int16, .*, bfloat16, float32, float64. Cast first")
    raises(mode, errors.DTypeError, match, lambda x: tnp.add(x, bad), X)
    raises(mode, errors.DTypeError, match, lambda x: tnp.exp(bad), X)
    raises(mode, errors.DTypeError, match, lambda x: tnp.astype(x, bad.dtype), X)
    with pytest.raises(errors.DTypeError, match=match):
        tracer.jit(lambda b: b * 2, backend="numpy")(bad)


def test_unsupported_dtypes_can_be_cast_to_supported_ones():
    half = np.ones(3, np.float16)
    assert tnp.astype(half, np.float32).dtype == np.float32
    assert tnp.asarray(half, dtype=np.float64).dtype == np.float64


def test_bool_only_mistakes_name_the_op():
    b = np.array([True, False])
    for fun, op in [(tnp.negative, "negative"), (tnp.sign, "sign"),
                    (lambda v: tnp.subtract(v, v), "subtract")]:
        with pytest.raises(errors.DTypeError, match=f"{op}: not supported for (a )?bool"):
            fun(b)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bad,kind", [("abc", "str"), (object(), "object"), (None, "NoneType"),
                                      ({}, "dict"), (b"xy", "bytes")],
                         ids=["str", "object", "None", "dict", "bytes"])
def test_non_array_arguments(mode, bad, kind):
    jax_words = rf"of type <class '{kind}'> is not a valid JAX type"
    raises(mode, errors.ArgumentError, rf"add: expected an array or a number: .* {jax_words}",
           lambda x: tnp.add(x, bad), X)
    raises(mode, errors.ArgumentError, rf"exp: expected an array or a number: .* {jax_words}",
           lambda x: tnp.exp(bad), X)


@pytest.mark.parametrize("mode", MODES)
def test_ragged_lists_and_bad_run_kernel_calls(mode):
    raises(mode, errors.ArgumentError, r"cannot convert list to an array",
           lambda x: tnp.add(x, [[1], [1, 2]]), X)
    raises(mode, errors.ArgumentError, r"inputs must be a list or tuple of arrays, got ndarray",
           lambda x: tracer.run_kernel("neg", X), X)
    raises(mode, errors.ArgumentError, r"attrs must be a dict",
           lambda x: tracer.run_kernel("neg", [x], [("a", 1)]), X)


# ---- kernels, shape rules, backends --------------------------------------------------------

def test_unknown_kernel_eager_and_traced():
    with pytest.raises(errors.KernelNotFoundError, match=r"no kernel 'ad' for backend 'numpy'"
                                                         r".*Did you mean 'pad' or .*'add'\?"):
        tracer.run_kernel("ad", [X, X])
    with pytest.raises(errors.ShapeRuleNotFoundError, match=r"kernel 'ad' has no shape rule.*"
                                                            r"Did you mean"):
        tracer.make_graph(lambda x: tracer.run_kernel("ad", [x, x]))(X)


@pytest.fixture
def rule_less_kernel():
    registry.register_kernel("test_double", "numpy", lambda x: x * 2)
    yield
    registry.unregister_kernel("test_double", "numpy")


def test_missing_shape_rule_runs_eagerly_but_cannot_be_traced(rule_less_kernel):
    np.testing.assert_array_equal(tracer.run_kernel("test_double", [X]), 2 * X)
    with pytest.raises(errors.ShapeRuleNotFoundError,
                       match=r"kernel 'test_double' has no shape rule, so it cannot be traced "
                             r"\(jit, grad, make_graph\). Register one with "
                             r"registry.register_shape_rule\('test_double'"):
        tracer.jit(lambda x: tracer.run_kernel("test_double", [x]), backend="numpy")(X)


@pytest.fixture
def lying_kernel():
    registry.register_shape_rule("test_liar", lambda x: x)
    registry.register_kernel("test_liar", "numpy", lambda x: x[:1].astype(np.float64))
    yield
    registry.unregister_kernel("test_liar", "numpy")
    registry.unregister_shape_rule("test_liar")


def test_a_kernel_breaking_its_shape_rule_is_caught(lying_kernel):
    with pytest.raises(errors.KernelError, match=r"kernel 'test_liar' on backend 'numpy' "
                                                 r"returned \[f64\[1,3\]\] but its shape rule "
                                                 r"says \[f32\[2,3\]\]"):
        tracer.run_kernel("test_liar", [X])


def test_a_failing_kernel_is_wrapped_with_kernel_shapes_and_source():
    ints = np.array([2, 3], np.int32)
    with pytest.raises(errors.KernelError, match=r"kernel 'pow' on backend 'numpy' failed for "
                                                 r"inputs \(i32\[2\], i32\[2\]\)"):
        tnp.power(ints, np.array([-1, 2], np.int32))
    with pytest.raises(errors.KernelError, match=r"kernel 'pow' \(numpy\) failed on .* at "
                                                 r".*test_errors.py:\d+"):
        tracer.jit(lambda a, b: tnp.power(a, b), backend="numpy")(ints, np.array([-1, 2],
                                                                                 np.int32))


def test_python_ints_beyond_int64_promote_like_numpy_or_fail_clearly():
    np.testing.assert_array_equal(tnp.add(np.ones(2), 2 ** 70), np.ones(2) + 2 ** 70)
    np.testing.assert_array_equal(tracer.jit(lambda x: x + 2 ** 70, backend="numpy")(
        np.ones(2)), np.ones(2) + 2 ** 70)
    with pytest.raises(errors.DTypeError, match=r"add: Python scalar 2147483648 does not fit "
                                                r"in int32"):
        tnp.add(np.ones(2, np.int32), 2 ** 31)
    with pytest.raises(errors.DTypeError, match=r"Python int \d+ does not fit in int64"):
        tracer.jit(lambda x, s: x + s, backend="numpy")(np.ones(2), 2 ** 70)
