"""lowering.settings: one object holds every TRACER_* variable and the code generator's
knobs; the graph cache's key reads all of it, and a knob set on it changes the code."""
import os
import pathlib
import re

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError
from lowering.llvm import graph_cache
from lowering.settings import Env, LiveEnv, Settings, settings

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENVS = [s for s in Settings.declared() if isinstance(s, Env)]


def test_every_tracer_variable_the_code_reads_is_declared_once():
    named = {m for pkg in ("ir", "registry", "lowering", "tracer")
             for p in (ROOT / pkg).rglob("*.py")
             for m in re.findall(r"\bTRACER_[A-Z][A-Z_]*[A-Z]\b", p.read_text())}
    declared = [s.name for s in ENVS]
    assert len(declared) == len(set(declared))
    assert named - set(declared) == set()
    table = Settings.table()
    assert all(f"`{name}`" in table for name in declared)


@pytest.mark.parametrize("var", [s for s in ENVS if s.default is None or
                                 not isinstance(s.default, str)], ids=lambda s: s.name)
def test_a_bad_value_names_the_variable(monkeypatch, var):
    if var.default is None:         # a directory: any text is one
        monkeypatch.setenv(var.name, "/some/dir")
        assert var.read() == "/some/dir"
        return
    monkeypatch.setenv(var.name, "bogus")
    with pytest.raises(ArgumentError, match=f"{var.name} must be .*'bogus'"):
        var.read()
    monkeypatch.setenv(var.name, "")
    assert var.read() == var.default


def test_variables_read_at_each_use_follow_the_environment(monkeypatch):
    monkeypatch.setenv("TRACER_NUM_THREADS", "3")
    assert settings.num_threads == 3
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")
    assert settings.disk_cache is False
    with pytest.raises(AttributeError, match="TRACER_NUM_THREADS"):
        settings.num_threads = 4


def _other(value):
    return (not value if isinstance(value, bool) else 1 if value is None
            else value + 1 if isinstance(value, (int, float)) else value + "-other")


def test_the_graph_key_reads_every_setting_that_steers_code(monkeypatch):
    g = tracer.make_graph(lambda x: tnp.sum(tnp.tanh(x.T) * 2.0))(np.ones((3, 4), np.float32))
    base = graph_cache.key_of(g)
    assert base is not None
    for s in Settings.declared():
        new = _other(getattr(settings, s.attr))
        with monkeypatch.context() as m:
            if isinstance(s, LiveEnv):
                m.setenv(s.name, str(int(new) if isinstance(new, bool) else new)
                         if s.name != "TRACER_CACHE_DIR" else "/elsewhere")
            else:
                m.setattr(settings, s.attr, new)
            assert (graph_cache.key_of(g) != base) == s.key, s.attr
    assert graph_cache.key_of(g) == base


def _transposing(t, u):
    return t.T * 2 + u


@pytest.mark.parametrize("knob, value, f, shapes", [
    ("transpose_tile", 16, _transposing, [(72, 64), (64, 72)]),
    ("conv_row_chunk", 2, lambda x, w: tracer.lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
     [(2, 6, 6, 3), (3, 3, 3, 8)])])
def test_a_knob_set_on_settings_changes_the_code_not_the_result(monkeypatch, knob, value, f,
                                                                 shapes):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    default = tracer.jit(f).lower(*args).as_text()
    want = tracer.jit(f, backend="numpy")(*args)
    monkeypatch.setattr(settings, knob, value)
    jf = tracer.jit(f)
    assert jf.lower(*args).as_text() != default
    np.testing.assert_allclose(jf(*args), want, rtol=2e-5, atol=2e-5)
