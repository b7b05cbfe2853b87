"""jit's static_argnums, static_argnames and donate_argnums are checked against the
function's signature when jit is applied, as JAX 0.10.2 does: a name the function does
not take by keyword, or a position past its parameters, is a ValueError naming the
option (unless **kwargs or *args take it), and a malformed option is a TypeError."""
import pytest

import tracer
from ir.errors import ArgumentError, ArgumentValueError


def f(x, n):
    return x * n


def positional_only(x, n, /, *, k=1):
    return x * n * k


def open_ended(*args, **kwargs):
    return args[0] * kwargs.get("m", 1)


@pytest.mark.parametrize("fun, options, message", [
    (f, {"static_argnames": "m"}, "static_argnames names 'm'"),
    (f, {"static_argnames": ("n", "m")}, "static_argnames names 'm'"),
    (positional_only, {"static_argnames": "n"}, "static_argnames names 'n'"),
    (f, {"static_argnums": 2}, r"static_argnums=\(2,\)"),
    (f, {"static_argnums": -3}, r"static_argnums=\(-3,\)"),
    (f, {"donate_argnums": 5}, r"donate_argnums=\(5,\)"),
])
def test_options_naming_no_parameter_raise_value_error(fun, options, message):
    with pytest.raises(ArgumentValueError, match=message) as info:
        tracer.jit(fun, **options)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("options", [{"static_argnames": 1}, {"static_argnums": "n"},
                                     {"static_argnums": True}, {"donate_argnums": 1.0}])
def test_malformed_options_raise_type_error(options):
    with pytest.raises(ArgumentError, match="must be") as info:
        tracer.jit(f, **options)
    assert isinstance(info.value, TypeError)


def test_what_the_signature_takes_is_accepted():
    assert tracer.jit(f, static_argnames="n")(2.0, 3) == 6.0
    assert tracer.jit(positional_only, static_argnames="k")(2.0, 3, k=2) == 12.0
    assert tracer.jit(open_ended, static_argnames="m", static_argnums=4)(2.0, m=3) == 6.0
    tracer.jit(max, static_argnums=3)      # no signature to check, as in JAX


def test_static_argnums_and_argnames_both_given_are_taken_as_written():
    """JAX's rule: given alone, one is completed from the other through the signature;
    given both (an empty one too), each is as written, so they may disagree."""
    seen = []

    def f(x, y):
        seen.append((isinstance(x, tracer.Tracer), isinstance(y, tracer.Tracer)))
        return 1
    tracer.jit(f, static_argnums=1)(1, y="a")                              # completed
    tracer.jit(f, static_argnums=1, static_argnames=())(1, y=2)             # as written
    tracer.jit(f, static_argnums=(), static_argnames="y")(2, 3)
    tracer.jit(f, static_argnums=(1,), static_argnames="x")(2, "foo")
    assert seen == [(True, False), (True, True), (True, True), (True, False)]
