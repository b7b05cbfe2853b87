"""tracer.errors: JAX's error names (jax.errors) for the situations this project detects,
each the class raised there, caught by the built-ins JAX's are, its message opening with
JAX's words (the phrases JAX's api_test matches) and then saying ours."""
import inspect
import re

import numpy as np
import pytest

import tracer
import tracer.errors
import tracer.numpy as tnp
from ir import errors as ir_errors
from tracer.errors import (ConcretizationTypeError, NonConcreteBooleanIndexError,
                           TracerArrayConversionError, TracerBoolConversionError,
                           TracerIntegerConversionError, UnexpectedTracerError)

F3 = np.arange(3, dtype=np.float32) - 1


def test_the_names_are_this_projects_classes_with_jaxs_bases():
    assert sorted(tracer.errors.__all__) == [
        "ConcretizationTypeError", "JaxRuntimeError", "NonConcreteBooleanIndexError",
        "TracerArrayConversionError", "TracerBoolConversionError",
        "TracerIntegerConversionError", "UnexpectedTracerError"]
    assert ConcretizationTypeError is ir_errors.ConcretizationError
    for name in tracer.errors.__all__:
        cls = getattr(tracer.errors, name)
        assert cls is getattr(ir_errors, cls.__name__) and issubclass(cls, tracer.TracerError)
    for cls in (ConcretizationTypeError, TracerArrayConversionError,
                TracerIntegerConversionError, UnexpectedTracerError):
        assert issubclass(cls, TypeError)
    assert issubclass(TracerBoolConversionError, ConcretizationTypeError)
    assert issubclass(NonConcreteBooleanIndexError, IndexError)
    assert tracer.UnexpectedTracerError is UnexpectedTracerError
    assert issubclass(tracer.errors.JaxRuntimeError, (RuntimeError, ValueError))


def test_an_unknown_compile_option_is_jaxs_runtime_error():
    """JAX raises JaxRuntimeError (a RuntimeError) for "No such compile option"; a
    ValueError too, as this project raised before."""
    f = lambda x: x + 1.0          # noqa: E731
    with pytest.raises(tracer.errors.JaxRuntimeError, match="No such compile option: 'nope'"):
        tracer.jit(f, compiler_options={"nope": 1})
    lowered = tracer.jit(f).lower(1.0)
    with pytest.raises(RuntimeError, match="No such compile option: 'invalid_key'"):
        lowered.compile(compiler_options={"invalid_key": "invalid_value"})
    with pytest.raises(ValueError):
        lowered.compile(compiler_options={"invalid_key": "invalid_value"})
    assert lowered.compile(compiler_options={"exec_time_optimization_effort": 0.0})(2.0) == 3.0


# ---- UnexpectedTracerError: a leaked tracer -----------------------------------------------

def _leak(transform, x):
    saved = []

    def save(x):
        saved.append(x * 2)          # the line the leaked value is made on
        return tnp.sum(x)
    transform(save)(x)
    return saved[0], f"{__file__}:{inspect.getsourcelines(save)[1] + 1} (save)"


@pytest.mark.parametrize("transform", [tracer.jit, tracer.grad, tracer.vmap],
                         ids=["jit", "grad", "vmap"])
def test_a_leaked_tracer_used_later_is_an_unexpected_tracer_error(transform):
    x = np.ones((4, 3), np.float32)
    leaked, line = _leak(transform, x)
    for use in (tracer.jit(lambda y: y + leaked), lambda y: y + leaked,
                lambda y: tracer.jit(lambda z: z)(leaked)):
        with pytest.raises(UnexpectedTracerError) as info:
            use(1.0)
        msg = str(info.value)
        assert msg.startswith("Encountered an unexpected tracer. A leaked tracer: a traced "
                              "value f32["), msg
        assert "global state" in msg and "Return it from the function" in msg
        assert f"It was created on line {line}" in msg, msg
        assert re.search(r"float32\[(4,)?3\]", msg), msg      # JAX's spelling


def test_the_leak_message_has_the_shape_in_jaxs_spelling_and_typeerror_catches_it():
    """api_test's test_escaped_tracer_shape_dtype and the escaped_tracers tests."""
    saved = []
    tracer.jit(lambda x: saved.append(x) or x)(np.ones((4, 3), np.int32))
    try:
        tracer.jit(lambda y: saved[0] + y)(1)
    except TypeError as e:
        assert isinstance(e, UnexpectedTracerError)
        assert re.search(r"int32\[4,3\]", str(e)) and "i32[4,3]" in str(e)
        assert "It was an argument of the traced function" in str(e)
    else:
        pytest.fail("no error")


# ---- TracerArrayConversionError: numpy.asarray of a traced value --------------------------

@pytest.mark.parametrize("transform", [tracer.jit, tracer.grad, tracer.vmap],
                         ids=["jit", "grad", "vmap"])
def test_numpy_asarray_of_a_traced_value(transform):
    shape = "float32[]" if transform is tracer.vmap else "float32[3]"
    with pytest.raises(TypeError) as info:
        transform(lambda x: tnp.sum(np.asarray(x)))(F3)
    assert type(info.value) is TracerArrayConversionError
    assert isinstance(info.value, ConcretizationTypeError)
    msg = str(info.value)
    assert msg.startswith("The numpy.ndarray conversion method __array__() was called on "
                          f"traced array with shape {shape}. numpy.asarray() of a traced "
                          "value f32["), msg
    assert "test_jax_error_names.py" in msg and "tracer.numpy function" in msg


# ---- TracerBoolConversionError: bool() of a traced value ----------------------------------

def _branch(x):
    return x if x.sum() > 0 else -x


@pytest.mark.parametrize("transform", [tracer.jit, tracer.make_graph, tracer.vmap],
                         ids=["jit", "make_graph", "vmap"])
def test_bool_of_a_traced_value(transform):
    with pytest.raises(TypeError) as info:
        transform(_branch)(F3)
    assert type(info.value) is TracerBoolConversionError
    assert isinstance(info.value, ConcretizationTypeError)
    msg = str(info.value)
    assert msg.startswith("Attempted boolean conversion of traced array with shape bool[]. "
                          "bool() of a traced value bool[] at "), msg
    assert re.search(r"with shape bool\[\]\.[^\.]", msg)    # api_test's no double dots
    assert "lax.cond" in msg and "static_argnums" in msg


def test_bool_of_a_traced_value_under_eager_grad_sees_its_value():
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(_branch(x)))(F3), -1)


# ---- TracerIntegerConversionError and the index of a non-integer --------------------------

@pytest.mark.parametrize("transform", [tracer.jit, tracer.vmap], ids=["jit", "vmap"])
def test_a_traced_integer_as_a_python_index(transform):
    with pytest.raises(TypeError) as info:
        transform(lambda i: [1.0, 2.0, 3.0][i])(
            np.int32(1) if transform is tracer.jit else np.array([1], np.int32))
    assert type(info.value) is TracerIntegerConversionError
    msg = str(info.value)
    assert msg.startswith("The __index__() method was called on traced array with shape "
                          "int32[]. index() of a traced value i32[] at "), msg


@pytest.mark.parametrize("transform", [tracer.jit, tracer.grad], ids=["jit", "grad"])
@pytest.mark.parametrize("x", [np.float32(1), np.arange(3, dtype=np.int32)],
                         ids=["float", "array"])
def test_only_integer_scalars_are_python_indices(transform, x):
    """api_test's test_scalar_conversion_errors: JAX's plain TypeError, not a
    concretization error (the type decides, traced or not)."""
    if transform is tracer.grad and x.dtype.kind != "f":
        return
    with pytest.raises(TypeError, match=r"^Only integer scalar arrays can be converted to a "
                                        r"scalar index\. index\(\) of a traced value") as info:
        transform(lambda v: tnp.sum(v) * [1.0, 2.0][v])(x)
    assert not isinstance(info.value, ConcretizationTypeError)


# ---- ConcretizationTypeError: a traced value where a Python value is needed ---------------

@pytest.mark.parametrize("convert", [int, float, lambda x: x.item()],
                         ids=["int", "float", "item"])
def test_python_number_of_a_traced_value(convert):
    with pytest.raises(ConcretizationTypeError) as info:
        tracer.jit(lambda x: x * convert(x))(np.float32(2))
    assert isinstance(info.value, TypeError)
    assert "of a traced value f32[] at" in str(info.value)


# ---- NonConcreteBooleanIndexError: a traced boolean mask ----------------------------------

@pytest.mark.parametrize("transform", [tracer.jit, tracer.vmap], ids=["jit", "vmap"])
def test_a_traced_boolean_mask_as_an_index(transform):
    x = F3 if transform is tracer.jit else np.stack([F3, F3])
    with pytest.raises(IndexError) as info:
        transform(lambda v: v[v > 0])(x)
    assert type(info.value) is NonConcreteBooleanIndexError
    assert str(info.value).startswith("Array boolean indices must be concrete; got bool[3]. "
                                      "getitem: a traced boolean mask"), str(info.value)


def test_a_concrete_boolean_mask_is_no_error():
    mask = F3 > 0
    np.testing.assert_array_equal(tracer.jit(lambda v: v[mask])(F3), F3[mask])
