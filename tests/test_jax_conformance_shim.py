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
