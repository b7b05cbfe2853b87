"""What JAX 0.10.2's own tests/api_test.py expects of the transforms (issue 26): float0
tangents of int values eagerly and under jit and vmap, the errors JAX raises (of its
exception types), and the phrases its tests match in our messages."""
import inspect
import re

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError
from tracer import float0, lax

F0 = np.zeros((), float0)


def is_float0_zeros(x, shape=()):
    return isinstance(x, np.ndarray) and x.dtype == float0 and x.shape == shape


# ---- float0 -----------------------------------------------------------------------------

@pytest.mark.parametrize("jitted", [False, True])
def test_jvp_tangent_of_an_int_output_is_float0(jitted):
    """api_test's test_jvp_of_int_add, _identity, test_jit_jvp_of_int and
    test_jvp_of_convert_element_type."""
    wrap = tracer.jit if jitted else (lambda f: f)
    out, t = tracer.jvp(wrap(lambda x: x + 1), (2,), (F0,))
    assert out == 3 and is_float0_zeros(t)
    assert is_float0_zeros(tracer.jvp(wrap(lambda x: x), (1,), (F0,))[1])
    out, t = tracer.jvp(wrap(lambda x: (x.astype(np.int32) + 1, x * 2)), (2.0,), (1.0,))
    assert out[0] == 3 and is_float0_zeros(t[0]) and t[1] == 2.0


def test_vjp_cotangent_of_an_int_input_is_float0():
    """api_test's test_vjp_of_int_index, _shapes, _fulllike and test_jit_vjp_of_int: a
    float0 cotangent of an int output is taken, under jit too."""
    _, pull = tracer.vjp(lambda x, i: x[i], np.ones(2) * 2, 1)
    gx, gi = pull(1.0)
    np.testing.assert_array_equal(gx, [0.0, 1.0])
    assert is_float0_zeros(gi)
    _, pull = tracer.vjp(lambda x: lax.reshape(x, (2, 2)), np.ones((4, 1), dtype=int))
    assert is_float0_zeros(pull(np.zeros((2, 2), float0))[0], (4, 1))
    out, pull = tracer.vjp(lax.full_like, np.zeros((2, 2)), 1)
    assert is_float0_zeros(pull(out)[1])
    out, pull = tracer.vjp(lambda x, y: x + y, 2, 1)
    for backend in ("llvm", "numpy"):
        gx, gy = tracer.jit(pull, backend=backend)(F0)
        assert out == 3 and is_float0_zeros(gx) and is_float0_zeros(gy)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_jit_of_grad_allow_int_gives_float0(backend):
    """api_test's test_jit_grad_of_int; the float0 result is no output of the compiled
    graph, and a second call takes the cached entry."""
    g = tracer.jit(tracer.grad(lambda x, i: x[i], argnums=(0, 1), allow_int=True),
                   backend=backend)
    for _ in range(2):
        gx, gi = g(np.ones(2), 1)
        np.testing.assert_array_equal(gx, [0.0, 1.0])
        assert is_float0_zeros(gi)
    assert g.cache_info().misses == 1
    info = tracer.eval_shape(g, np.ones(2), 1)
    assert (info[1].shape, info[1].dtype) == ((), float0)
    assert is_float0_zeros(g.lower(np.ones(2), 1).compile()(np.ones(2), 1)[1])


def test_vmap_batches_float0_arguments_and_results():
    g = tracer.grad(lambda x, i: tnp.sum(tnp.sin(x) * i), (0, 1), allow_int=True)
    xs, iss = np.ones((2, 3)), np.ones((2, 3), np.int32)
    for f in (tracer.vmap(g), tracer.jit(tracer.vmap(g)), tracer.vmap(tracer.jit(g))):
        gx, gi = f(xs, iss)
        np.testing.assert_allclose(gx, np.cos(xs))
        assert is_float0_zeros(gi, (2, 3))
    assert is_float0_zeros(tracer.vmap(g, out_axes=1)(xs, iss)[1], (3, 2))
    c, y = tracer.vmap(lambda c, x: (c, x * 2), in_axes=(1, 0))(np.zeros((3, 2), float0),
                                                                np.ones(2))
    assert is_float0_zeros(c, (2, 3)) and y.tolist() == [2.0, 2.0]


def test_jit_donation_skips_float0_arguments():
    f = tracer.jit(lambda c, x: (c, x * 2), donate_argnums=1)
    c, y = f(np.zeros(3, float0), np.ones(3))
    assert is_float0_zeros(c, (3,)) and y.tolist() == [2.0, 2.0, 2.0]


def test_jacobians_and_linearize_of_int_values():
    """A Jacobian block of an int value is zeros of its dtype, as JAX's (jvp and vjp give
    float0 there); linearize's tangent of an int output is float0."""
    jac = tracer.jacfwd(lambda x: (x.astype(np.int32), x * 2))(np.ones(2))
    assert jac[0].dtype == np.int32 and not jac[0].any()
    jac = tracer.jacrev(lambda x, i: x * i, (0, 1), allow_int=True)(np.ones(2), np.arange(2))
    assert jac[1].dtype == np.arange(2).dtype and not jac[1].any()
    _, f_jvp = tracer.linearize(lambda x: (x + 1, x * 2.0), 2)
    t_int, t_float = f_jvp(F0)
    assert is_float0_zeros(t_int) and t_float == 0.0


def test_an_op_on_float0_raises_jaxs_type_error():
    with pytest.raises(TypeError, match="add: float0s do not support any operations by "
                                        "design"):
        tnp.add(F0, 1.0)


# ---- raised where JAX raises ------------------------------------------------------------

def test_vmap_checks_in_axes_and_out_axes_as_jax():
    """api_test's test_vmap_in_axes_non_tuple_error, _wrong_length_tuple_error,
    _leaf_types, test_vmap_out_axes_leaf_types and test_vmap_in_axes_tree_prefix_error."""
    positional = re.escape("vmap in_axes must be an int, None, or a tuple of entries "
                           "corresponding to the positional arguments passed to the "
                           "function, but got ")
    with pytest.raises(TypeError, match=positional + re.escape("{'a': 0}.")):
        tracer.vmap(lambda x: x["a"], in_axes={"a": 0})          # at vmap(), not the call
    lengths = re.escape("len(in_axes)=2, len(args)=1")
    with pytest.raises(ValueError, match=positional + lengths):
        tracer.vmap(lambda x: x["a"], in_axes=(0, {"a": 0}))({"a": np.zeros((3, 3))})
    for what in ("in_axes", "out_axes"):
        with pytest.raises(TypeError, match=f"vmap {what} must be an int, None, or "
                                            f"\\(nested\\) container with those types as "
                                            f"leaves"):
            tracer.vmap(lambda x: x, **{what: (np.array([1.0, 2.0]),)})
    with pytest.raises(ValueError, match=r"(?s)vmap in_axes specification must be a tree "
                                         r"prefix of the corresponding value;.*Mismatch "
                                         r"details.*different types"):
        tracer.vmap(lambda x: x, in_axes=([0],))(np.ones(3))
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        tracer.vmap(lambda x: x, out_axes=(2, 3))(np.ones(2))


def test_vmap_unmapped_output_errors_use_jaxs_words():
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in "
                                         "in_axes"):
        tracer.vmap(lambda x: x, in_axes=None)(np.ones(2))
    with pytest.raises(ValueError, match=r"vmap has mapped output.*axis_name=foo.*but "
                                         r"out_axes is None"):
        tracer.vmap(lambda x: x, out_axes=None, axis_name="foo")(np.ones(2))
    with pytest.raises(ValueError, match=r"at vmap out_axes for output 1, got axis spec None "
                                         r"but output was batched on axis 0"):
        tracer.vmap(lambda x: (1.0, x), out_axes=None)(np.ones(2))


def test_unhashable_or_incomparable_static_arguments_raise_value_error():
    """api_test's test_cpp_jit_raises_on_non_hashable_static_argnum, but for an array, which
    is keyed by its contents here (JAX raises: see tracer.signature.static_key)."""
    f = tracer.jit(lambda x, y: x + 3, static_argnums=[1])
    assert f(1, 1) == 4
    assert f(1, np.asarray(1)) == 4
    with pytest.raises(ValueError, match=r"Non-hashable static arguments are not supported: "
                                         r"jit\(<lambda>\) argument 1 is a set"):
        f(1, {1})

    class HashableWithoutEq:
        def __hash__(self):
            return 1

        def __eq__(self, other):
            raise NotImplementedError("no comparison")
    f(1, HashableWithoutEq())
    with pytest.raises(ValueError, match=r"static arguments should be comparable using "
                                         r"__eq__: .*NotImplementedError: no comparison"):
        f(1, HashableWithoutEq())


def test_shape_dtype_struct_needs_a_dtype():
    with pytest.raises(ValueError, match="ShapeDtypeStruct: dtype must be specified"):
        tracer.ShapeDtypeStruct(shape=(), dtype=None)


# ---- JAX's phrases in our messages ------------------------------------------------------

def test_vmap_inconsistent_sizes_list_the_axes_as_jax():
    """api_test's test_vmap_mismatched_keyword, test_vmap_explicit_axis_size_mismatch and
    test_vmap_mismatched_axis_sizes_error_message_issue_705; then the function and the fix."""
    def f(x, y):
        return x + y
    head = "vmap got inconsistent sizes for array axes to be mapped:\n"
    with pytest.raises(ValueError, match=re.escape(
            head + "  * one axis had size 1: axis 0 of argument x of type int32[1];\n"
                   "  * one axis had size 2: axis 0 of kwargs['y'] of type int32[2]\n"
                   "All mapped axes of vmap(f) must have one size") + ".*keyword arguments"):
        tracer.vmap(f)(np.array([1], np.int32), y=np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match=re.escape(
            head + "  * the `axis_size` argument was 2;\n"
                   "  * one axis had size 8: axis 0 of argument x of type int32[8]")):
        tracer.vmap(lambda x: x, axis_size=2)(np.arange(8, dtype=np.int32))
    X, U = np.ones((10, 4), np.float32), np.ones((10, 2), np.float32)
    with pytest.raises(ValueError, match=re.escape(
            head + "  * most axes (2 of them) had size 2, e.g. axis 1 of argument b[0] of "
                   "type float32[10,2];\n  * one axis had size 10: axis 0 of argument a of "
                   "type float32[10,4]")):
        tracer.vmap(lambda a, b: a, in_axes=(0, 1))(X, [U, U])


@pytest.mark.parametrize("fun", [hex, oct, lambda n: [1, 2, 3][n], lambda n: list(range(n))])
def test_index_of_a_traced_value_uses_jaxs_words(fun):
    """api_test's test_casts, test_list_index_err and test_range_err."""
    with pytest.raises(tracer.TracerIntegerConversionError,
                       match=r"^The __index__\(\) method was called on traced array with shape "
                             r"int64\[\]\. index\(\) of a traced value i64\[\] at "
                             r".*static_argnums"):
        tracer.jit(fun)(0)


@pytest.mark.parametrize("cast", [float, int, complex])
def test_casting_a_traced_value_suggests_astype(cast):
    """api_test's test_abstract_error_message."""
    with pytest.raises(TypeError, match=rf"{cast.__name__}\(\) of a traced value .* try using "
                                        rf"`x.astype\({cast.__name__}\)`"):
        tracer.jit(lambda x: cast(x))(1.0)


@pytest.mark.parametrize("name", ["grad", "jacfwd", "jacrev"])
def test_holomorphic_errors_name_the_transform_as_jax(name):
    """api_test's test_holomorphic_{grad,jacrev,jacfwd}_of_float_errors."""
    with pytest.raises(TypeError, match=f"{name} with holomorphic=True requires inputs with "
                                        f"complex dtype, but got float64; .*no complex"):
        getattr(tracer, name)(lambda x: x ** 2, holomorphic=True)(3.0)


def test_bad_arguments_are_not_valid_jax_types():
    """api_test's test_bad_input, test_grad_bad_input and test_jit_bad_input."""
    with pytest.raises(TypeError, match=r"grad\(<lambda>\): .* 'foo' of type <class 'str'> "
                                        r"is not a valid JAX type.*static_argnums"):
        tracer.grad(lambda x: x)("foo")
    for bad in ("foo", np.int32):
        with pytest.raises(TypeError, match=r"Error interpreting argument to jit\(<lambda>\) "
                                            r"as an abstract array. The problematic value is "
                                            r"of type .* and was passed to the function at "
                                            r"path x."):
            tracer.jit(lambda x: x)(bad)


# ---- transformed functions present the function they transform -------------------------

@pytest.mark.parametrize("transform", [tracer.grad, tracer.jacfwd, tracer.jacrev])
def test_jit_static_argnames_see_through_a_transform(transform):
    """api_test's test_grad_wrap: jit maps `flag` to position 1 through the transformed
    function's signature (its __wrapped__), so a positional flag is static."""
    @tracer.jit(static_argnames=["flag"])
    @transform
    def my_function(x, flag):
        return x if flag else tnp.zeros_like(x)

    assert my_function(1.0, False) == 0.0 and my_function(1.0, True) == 1.0


def test_transformed_functions_carry_jax_docstrings():
    """api_test's test_vmap_preserves_docstr, and grad's and the jacobians' docstrings,
    which name the function and the argnums."""
    def superfun(a, b=1):
        """Does things with {stuff}."""
        return a

    assert tracer.vmap(superfun).__doc__ == (
        "Vectorized version of superfun. Takes similar arguments as superfun but with "
        "additional array axes over which superfun is mapped.\n\nOriginal documentation:"
        "\n\nDoes things with {stuff}.")
    assert tracer.grad(superfun, argnums=(0, 1)).__doc__.startswith(
        "Gradient of superfun with respect to positional argument(s) (0, 1).")
    assert tracer.value_and_grad(superfun).__doc__.startswith("Value and gradient of superfun")
    for t in (tracer.jacfwd, tracer.jacrev, tracer.hessian):
        f = t(superfun)
        assert f.__doc__.startswith("Jacobian of superfun") and f.__wrapped__ is superfun
        assert str(inspect.signature(f)) == "(a, b=1)"


class _JaxLikeTracer:
    """Stands for JAX's DynamicJaxprTracer (jax is not a dependency): a shape and a dtype,
    no values."""
    shape, dtype = (), np.dtype(np.float32)


_JaxLikeTracer.__module__ = "jax._src.interpreters.partial_eval"


def test_jax_tracers_given_to_our_functions_are_named():
    """api_test's jax.make_jaxpr(tracer.linearize(f, x)[1]) gave a dtype mismatch; JAX's
    traced values are refused by name, under linearize's f_jvp and jit."""
    _, f_jvp = tracer.linearize(tnp.sin, 1.0)
    for call in (lambda: f_jvp(_JaxLikeTracer()),
                 lambda: tracer.jit(lambda x: x * 2)(_JaxLikeTracer())):
        with pytest.raises(TypeError, match="got JAX's traced value _JaxLikeTracer"):
            call()


# ---- api_test's error phrases: our messages start with JAX's words, of JAX's types -------
# (each test names the api_test test(s) whose assertion it mirrors)

def _raises(kind, phrase, thunk):
    """`thunk` raises `kind` whose message starts with `phrase` (a regex)."""
    with pytest.raises(kind) as e:
        thunk()
    assert re.match(phrase, str(e.value)), str(e.value)
    return e.value


def test_dot_and_broadcast_mismatch_messages():
    """test_dot_mismatch, test_binop_mismatch (its grad half: the eager half adds two
    NumPy arrays with NumPy's +)."""
    _raises(TypeError, r"dot_general requires contracting dimensions to have the same "
            r"shape, got \(3,\) and \(4,\)\.",
            lambda: tracer.grad(lambda x, y: tnp.dot(x, y))(np.zeros(3), np.zeros(4)))
    _raises(TypeError, re.escape("add got incompatible shapes for broadcasting: (3,), (4,)."),
            lambda: tracer.grad(lambda x, y: x + y)(np.zeros(3), np.zeros(4)))
    _raises(TypeError, re.escape("add got incompatible shapes for broadcasting: (3,), (4,)."),
            lambda: tnp.add(tnp.zeros(3), tnp.zeros(4)))
    _raises(TypeError, r"dot_general requires contracting dimensions to have the same "
            r"shape, got \(3,\) and \(4,\)\.",
            lambda: lax.dot_general(np.zeros((2, 3)), np.zeros((4, 3)),
                                    (((1,), (0,)), ((), ()))))


def test_grad_error_messages():
    """test_grad_and_aux_error, test_grad_object_array_error, test_grad_of_int_errors,
    test_grad_without_enough_args_error_message, test_grad_{nonscalar,tuple,unit}_output."""
    for f in (lambda x: (1, 2, 3), lambda x: x, lambda x: (x,)):
        _raises(TypeError, ".*two-element tuple", lambda: tracer.grad(f, has_aux=True)(1.))
    _raises(TypeError, r".*is not a valid JAX type",
            lambda: tracer.grad(lambda x: x)(np.array([1, 2, 3], dtype=object)))
    _raises(TypeError, r"grad requires real- or complex-valued inputs \(input dtype that is a "
            r"sub-dtype of np.inexact\), but got int.*\.",
            lambda: tracer.grad(lambda x: x ** 2)(3))

    def f(x, y):
        return x + y
    _raises(TypeError, re.escape("differentiating with respect to argnums=0 requires at "
                                 "least 1 positional arguments to be passed by the caller, "
                                 "but got only 0 positional arguments."),
            lambda: tracer.grad(f, argnums=0)(x=0., y=1.))
    scalar_only = re.escape("Gradient only defined for scalar-output functions. ")
    _raises(TypeError, scalar_only, lambda: tracer.grad(lambda x: x)(np.zeros(3)))
    _raises(TypeError, scalar_only, lambda: tracer.grad(lambda x: (x, x))(1.0))
    _raises(TypeError, scalar_only, lambda: tracer.grad(lambda x: ())(np.zeros(3)))


def test_jvp_argument_messages():
    """test_jvp_mismatched_arguments, test_jvp_non_tuple_arguments: checked before the
    function runs (a short tangent tuple once reached it as a missing argument)."""
    same_tree = "primal and tangent arguments to jax.jvp must have the same tree structure"
    _raises(TypeError, same_tree,
            lambda: tracer.jvp(lambda x, y: x * y, (np.float32(2),), ()))
    _raises(TypeError, same_tree,
            lambda: tracer.jvp(lambda x, y: x * y, (np.float32(2),), [np.float32(2)]))
    _raises(TypeError, "primal and tangent arguments to jax.jvp do not match.",
            lambda: tracer.jvp(lambda x: -x, (np.float16(2),), (np.float32(4),)))
    _raises(ValueError, "jvp called with different primal and tangent shapes",
            lambda: tracer.jvp(lambda x: x + 1, (np.ones(3),), (np.ones(4),)))
    _raises(TypeError, re.escape("primal and tangent arguments to jax.jvp must be tuples or "
                                 "lists; found float and tuple."),
            lambda: tracer.jvp(lambda x, y: x + y, 0., (1.,)))


def test_vjp_fn_argument_messages():
    """test_vjp_bad_cotangent_shape, test_vjp_mismatched_arguments (its tree half),
    test_vjp_multiple_arguments_error_message, test_vjp_too_many_args: vjp_fn checks its
    argument count itself instead of leaking Python's signature error."""
    _, pullback = tracer.vjp(lambda x, y: tnp.matmul(x, y), np.ones((2, 5), np.float32),
                             np.ones((5, 3), np.float32))
    _raises(ValueError, "unexpected JAX type", lambda: pullback(np.ones((2, 4), np.float32)))
    _, pullback = tracer.vjp(lambda x, y: x * y, np.float32(3), np.float32(4))
    _raises(ValueError, "unexpected tree structure",
            lambda: pullback((np.float32(7), np.float32(100))))

    def foo(x):
        return (x, x)
    _, f_vjp = tracer.vjp(foo, 1.0)
    _raises(TypeError, ".*applied to foo was called with 2 arguments", lambda: f_vjp(1.0, 1.0))
    assert f_vjp((1.0, 2.0)) == (3.0,)


def test_vmap_without_arrays_message():
    """test_vmap_empty_arguments; all-None in_axes keeps JAX's other message."""
    _raises(ValueError, re.escape("vmap wrapped function must be passed at least one argument "
                                  "containing an array or axis_size must be specified, got "
                                  "empty *args=({},) and **kwargs={}"),
            lambda: tracer.vmap(lambda x: x)({}))
    _raises(ValueError, "vmap must have at least one non-None value in in_axes",
            lambda: tracer.vmap(lambda x: x, in_axes=None)(1.))


def test_returned_non_array_messages():
    """test_returned_non_jaxtype, test_eval_shape_error_bad_output."""
    import enum

    class Kind(enum.Enum):
        A = enum.auto()

    def f(x):
        return (2.0, f)
    _raises(TypeError, r"function f at .*returned a value.*at output component \[1\], which "
            r"is not a valid JAX type", lambda: tracer.eval_shape(f, 1))
    _raises(TypeError, "function .* returned a value of type",
            lambda: tracer.jit(lambda x: Kind.A)(1))


def test_lax_operand_and_dict_key_and_sharding_messages():
    """test_error_for_invalid_dtype, test_jit_enum_as_dict_keys_fails,
    test_sharding_attr_on_tracer_error."""
    import enum
    _raises(TypeError, "Error interpreting argument to .* as a JAX value. The problematic "
            "value is of type .* and was passed to add at position 1.",
            lambda: lax.add(tnp.array(7), np.array("hello")))

    class E(enum.Enum):
        A = 0
        B = 1
    err = _raises(ValueError, "Comparator raised exception.*'<' not supported",
                  lambda: tracer.jit(lambda d: d[E.A])({E.A: 1.0, E.B: 2.0}))
    assert isinstance(err, TypeError)

    def f(x):
        with pytest.raises(AttributeError, match="typeof"):
            x.sharding
        assert not hasattr(x, "sharding")
        return x
    tracer.jit(f)(tnp.arange(2.))


def test_copies_of_a_traced_value_are_the_value():
    """copy.copy / copy.deepcopy of a traced value (or of a pytree holding one) inside jit
    or grad give the value itself: traced values are immutable, and a deep copy of the
    trace it belongs to would make a value of no live trace (JAX's test_jit_deep_copy)."""
    import copy
    assert tracer.jit(lambda x: copy.deepcopy(x))(1) == 1
    out = tracer.jit(lambda d: copy.deepcopy(d)["a"] * 2)({"a": np.ones(2)})
    np.testing.assert_array_equal(out, [2.0, 2.0])
    assert tracer.grad(lambda x: copy.copy(x) * 3.0)(1.0) == 3.0


@tracer.tree_util.register_pytree_node_class
class _Wrapped:
    """An array-like class of JAX's __jax_array__ protocol, registered as a pytree."""

    def __init__(self, x):
        self.x = x

    def tree_flatten(self):
        return (self.x,), None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)

    def __jax_array__(self):
        return self.x


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_jax_array_protocol_objects_are_arrays_to_ops(backend):
    a = _Wrapped(np.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(tnp.asarray(a), a.x)
    np.testing.assert_allclose(tnp.sin(a), np.sin(a.x))
    np.testing.assert_allclose(tracer.jit(tnp.matmul, backend=backend)(a, a), a.x @ a.x)
    g = tracer.grad(lambda w: tnp.sin(w).sum())(a)
    assert isinstance(g, _Wrapped)
    np.testing.assert_allclose(g.x, np.cos(a.x))

    class Opted(np.ndarray):         # JAX's own tracers set __jax_array__ to None
        __jax_array__ = None
    np.testing.assert_allclose(tnp.sin(np.ones(2).view(Opted)), np.sin(np.ones(2)))

    class Unregistered:
        def __jax_array__(self):
            return np.arange(4)
    with pytest.raises(ValueError, match=r"__jax_array__\(\) during abstractification is no "
                                         r"longer supported .*register Unregistered"):
        tracer.jit(lambda x: x, backend=backend)(Unregistered())


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_a_shape_dtype_struct_given_to_a_jitted_call_is_named(backend):
    s = tracer.ShapeDtypeStruct((2,), np.float32)
    f = tracer.jit(lambda x: x + 1, backend=backend)
    with pytest.raises(ArgumentError, match=r"argument leaf 0 is a ShapeDtypeStruct.*"
                                            r"without values.*eval_shape"):
        f(s)
    assert f.eval_shape(s).shape == (2,)
    np.testing.assert_array_equal(f(np.zeros(2, np.float32)), [1.0, 1.0])
