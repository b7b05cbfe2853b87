"""Errors jit raises where JAX does: what it is given to trace, arguments both static and
donated, donate_argnames without a signature, masked arrays."""
import numpy as np
import pytest

import tracer


def test_only_functions_are_traced():
    with pytest.raises(TypeError, match=r"jit\(int\): Expected a callable value, got 3"):
        tracer.jit(3)

    def gen(x):
        yield x
    with pytest.raises(TypeError, match="Expected a function, got a generator function"):
        tracer.jit(gen)
    with pytest.raises(TypeError, match="staticmethod arguments are not supported"):
        class A:
            @tracer.jit
            @staticmethod
            def f(x):
                return x
    with pytest.raises(TypeError, match="Expected a callable value"):
        tracer.make_graph(3)


@pytest.mark.parametrize("spec", [dict(static_argnames="x", donate_argnames="x"),
                                  dict(static_argnums=0, donate_argnums=0),
                                  dict(static_argnums=0, donate_argnames="x")])
def test_an_argument_is_not_both_static_and_donated(spec):
    with pytest.raises(ValueError, match=r"static_argnames and donate_argnames cannot "
                                         r"intersect.*position 0, 'x' are in both"):
        tracer.jit(lambda x, y: x, **spec)


def test_donate_argnames_needs_a_signature():
    class NoSignature:
        @property
        def __signature__(self):
            raise TypeError("no signature")

        def __call__(self, *args):
            return args[0]
    with pytest.raises(ValueError, match="Getting the signature of function .* failed. "
                                         "Pass donate_argnums instead of donate_argnames"):
        tracer.jit(NoSignature(), donate_argnames="a")
    x = np.arange(4.0)
    np.testing.assert_array_equal(tracer.jit(NoSignature(), donate_argnums=0)(x), x)


def test_masked_arrays_are_refused_not_unmasked():
    x = np.ma.array([1.0, 2.0, 3.0], mask=[True, False, True])
    with pytest.raises(ValueError, match="masked arrays are not supported.*filled"):
        tracer.jit(lambda x: x * 2)(x)
    np.testing.assert_array_equal(tracer.jit(lambda x: x * 2)(x.filled(0.0)), [0, 4, 0])


def test_inline_and_keep_unused_are_what_jit_does():
    g = tracer.jit(lambda x: x * 2, inline=True)
    h = tracer.jit(lambda x, unused: g(x) + 1, keep_unused=True)
    assert "mul" in str(tracer.make_graph(h)(1.0, 2.0))       # g's graph inlined
    assert len(h.lower(1.0, 2.0).graph.invars) == 2            # the unused argument kept
    assert h(1.0, 2.0) == 3.0
    with pytest.raises(TypeError, match="inline must be a bool"):
        tracer.jit(lambda x: x, inline="yes")


def test_a_bad_argument_is_named():
    """By its path, in JAX's words (api_test's test_jit_bad_input)."""
    def f(x, y):
        return x
    with pytest.raises(TypeError, match=r"Error interpreting argument to jit\(f\) as an "
                       r"abstract array. The problematic value is of type <class 'str'> and "
                       r"was passed to the function at path x: .*'foo'"):
        tracer.jit(f)("foo", 1.0)
    with pytest.raises(TypeError, match=r"passed to the function at path y\['a'\]"):
        tracer.jit(f)(np.ones(2), y={"a": "foo"})
    with pytest.raises(TypeError, match=r"passed to the function at path args\[1\]"):
        tracer.jit(lambda *args: args[0])(1.0, "foo")
    with pytest.raises(TypeError, match=r"of type <class 'type'> .* at path x"):
        tracer.jit(f)(np.int32, 1.0)


def test_none_names_no_arguments_as_in_jax():
    """jit(static_argnums=None, static_argnames=None, donate_argnums=None) are JAX's
    spellings of none (random_test's choice/permutation tests use them)."""
    f = tracer.jit(lambda x, n: x * n, static_argnums=None, static_argnames=None,
                   donate_argnums=None)
    assert f(2.0, 3) == 6.0
    g = tracer.jit(lambda x, n: x * n, static_argnums=None, static_argnames="n")
    assert g(2.0, n=3) == 6.0
