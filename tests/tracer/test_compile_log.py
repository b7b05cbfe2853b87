"""Compile visibility: the compile log, recompilation warnings, cache_info, progress."""
import io
import logging
import time

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from tracer import compile_log


def test_cache_info_counts_hits_misses_and_size():
    f = tracer.jit(lambda a: a * 2.0)
    assert f.cache_info() == (0, 0, 0, f.cache_size)
    for n in (3, 3, 3, 4):
        f(np.ones(n))
    f.lower(np.ones(3))
    assert f.cache_info() == (3, 2, 2, f.cache_size)


def test_every_build_is_logged_with_signature_phases_and_reason(caplog):
    name = "test_compile_log_double"
    registry.register_shape_rule(name, lambda x: x)
    registry.register_kernel(name, "numpy", lambda x: x * 2)
    try:
        f = tracer.jit(lambda x, n: tracer.run_kernel(name, [x]) + n, static_argnums=1,
                       backend="numpy")
        with caplog.at_level(logging.INFO, logger="tracer.compile"):
            f(np.ones(3, np.float32), 4)
            f(np.ones(3, np.float32), 4)                  # a hit: not logged
            registry.register_kernel(name, "numpy", lambda x: x * 3)
            np.testing.assert_array_equal(f(np.ones(3, np.float32), 4), 7)
        first, second = [r.getMessage() for r in caplog.records]
        assert "compiled for (float32[3], static 4)" in first and "new signature" in first
        assert "trace " in first and "lower " in first and "nodes" in first
        assert f"rebuilt: {name} re-registered" in second
    finally:
        registry.unregister_kernel(name, "numpy")
        registry.unregister_shape_rule(name)


def test_many_signatures_warn_once_naming_the_changing_argument():
    f = tracer.jit(lambda scale, x: tnp.sum(x) * scale)
    with pytest.warns(UserWarning, match=r"argument 1 \(x\) was float32\[1\], float32\[2\]"
                                         r".*pad inputs") as record:
        for n in range(1, compile_log.RECOMPILE_WARNING + 4):
            f(np.float32(2), np.ones(n, np.float32))
    assert len(record) == 1 and record[0].filename == __file__


def test_a_long_compile_shows_progress_on_a_terminal(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    out = Terminal()
    monkeypatch.setattr("sys.stderr", out)
    monkeypatch.setattr(compile_log, "PROGRESS_AFTER", 0.0)
    with compile_log.progress("big", 1234):
        time.sleep(1.3)
    assert "compiling big (1234 nodes)..." in out.getvalue()
    quiet = io.StringIO()                                 # not a terminal: silent
    monkeypatch.setattr("sys.stderr", quiet)
    with compile_log.progress("big", 1234):
        time.sleep(1.1)
    assert quiet.getvalue() == ""
