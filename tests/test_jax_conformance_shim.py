"""examples/jax_conformance.py: JAX's test files reach the routed names through
`jax._src.api` too (api_test calls api.jit, api.linearize ...), checked with a stand-in
for jax (jax is not a dependency)."""
import os
import sys
import types

import tracer
from fresh import ROOT

sys.path.insert(0, os.path.join(ROOT, "examples"))
import jax_conformance  # noqa: E402


def test_the_internal_api_import_is_routed():
    text = jax_conformance.rewrite("from jax._src import api, api_util\napi.jit(f)\n")
    assert text.splitlines()[:2] == [
        "from jax._src import api, api_util",
        "from conform_shim import Internal as _Internal; api = _Internal(api)"]


def test_internal_routes_what_tracer_has(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", types.ModuleType("jax"))
    monkeypatch.setenv("CONFORM_MODE", "tracer")
    shim = {"__name__": "conform_shim"}
    exec(jax_conformance.SHIM, shim)
    api = shim["Internal"](types.SimpleNamespace(linearize="jax's", named_call="jax's"))
    for name in ("linearize", "jit", "eval_shape"):
        assert getattr(api, name).__wrapped__ is getattr(tracer, name)
    assert api.ShapeDtypeStruct is tracer.ShapeDtypeStruct
    assert api.named_call == "jax's"         # a name tracer does not have stays JAX's


def test_jax_error_names_are_tracers_where_it_has_them(monkeypatch):
    """`from jax.errors import (...)` (over several lines) and `jax.errors.X` give
    tracer.errors' class in tracer mode, JAX's for a name tracer lacks, and JAX's in jax
    mode."""
    text = jax_conformance.rewrite("from jax.errors import (UnexpectedTracerError,\n"
                                   "                        KeyReuseError)\n")
    assert text.startswith("from conform_shim import (UnexpectedTracerError,\n")
    jax_errors = types.ModuleType("jax.errors")
    jax_errors.UnexpectedTracerError = type("UnexpectedTracerError", (TypeError,), {})
    jax_errors.KeyReuseError = type("KeyReuseError", (Exception,), {})
    jax = types.ModuleType("jax")
    jax.errors = jax_errors
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jax.errors", jax_errors)
    for mode, expected in [("tracer", tracer.errors.UnexpectedTracerError),
                           ("jax", jax_errors.UnexpectedTracerError)]:
        monkeypatch.setenv("CONFORM_MODE", mode)
        shim = types.ModuleType("conform_shim")
        exec(jax_conformance.SHIM, shim.__dict__)
        monkeypatch.setitem(sys.modules, "conform_shim", shim)
        names = {}
        exec(text, names)
        assert names["UnexpectedTracerError"] is expected
        assert names["KeyReuseError"] is jax_errors.KeyReuseError
        assert shim.errors.UnexpectedTracerError is expected
        assert shim.errors.KeyReuseError is jax_errors.KeyReuseError
        assert not shim.TOUCHED[0]


def test_tracers_array_conversion_error_is_within_the_contract():
    assert jax_conformance.outside("jax.errors.TracerArrayConversionError: The numpy")
    assert jax_conformance.outside("ArgumentError: add: cannot convert DynamicJaxprTracer")
    assert not jax_conformance.outside("ir.errors.TracerArrayConversionError: The numpy")


def test_typed_keys_and_other_prng_implementations_are_outside_the_contract():
    """API.md fixes keys as uint32 arrays of shape (2,): a reshape to JAX's typed-key shape
    (two words per key) or another implementation is outside it; other reshapes are not."""
    keys = jax_conformance.outside("ValueError: cannot reshape array of size 24 into shape (3,4)")
    assert keys and "typed keys" in keys
    assert jax_conformance.outside("ValueError: cannot reshape array of size 2 into shape ()")
    assert not jax_conformance.outside("ValueError: cannot reshape array of size 12 into shape (3,4)")
    assert jax_conformance.outside("key: PRNG implementation 'rbg' is not available") == keys
    assert jax_conformance.outside("AssertionError: False is not true",
                                   "random_test.py::KeyArrayTest::test_issubdtype") == keys
    selection = "random_test.py::PrngTest::test_default_prng_selection3"
    assert jax_conformance.outside("AssertionError: Tuples differ: (2,) != (4,)", selection) == keys
    assert not jax_conformance.outside("AssertionError: Tuples differ: (2,) != (4,)",
                                       "random_test.py::PrngTest::test_split_shape")
    assert not jax_conformance.outside("AssertionError: 1 != 2", selection)
