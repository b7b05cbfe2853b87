"""Every TRACER_* setting the llvm backend reads is checked: a value out of range is an
ArgumentError naming the variable, the value and what is valid, never a silent default
or a crash."""
import os

import numpy as np
import pytest

import tracer
from fresh import run_script
from ir.errors import ArgumentError
from lowering.settings import MAX_THREADS, settings


@pytest.mark.parametrize("value", ["1000000", "0", "-1", "two"])
def test_bad_thread_counts_are_refused(monkeypatch, value):
    """A million started ~22k threads and died with a bare RuntimeError; 0 and -1
    silently meant 1."""
    monkeypatch.setenv("TRACER_NUM_THREADS", value)
    with pytest.raises(ArgumentError, match=rf"TRACER_NUM_THREADS must be an integer from 1 "
                                            rf"to {MAX_THREADS}, got '{value}'"):
        tracer.jit(lambda x: x * 3.0 + 1.0)(np.ones(7, np.float32))


@pytest.mark.parametrize("value, threads", [("1", 1), (" 3 ", 3), ("", None)])
def test_good_thread_counts(monkeypatch, value, threads):
    monkeypatch.setenv("TRACER_NUM_THREADS", value)
    assert settings.num_threads == (threads or os.cpu_count())


@pytest.mark.parametrize("value", ["false", "no", "2"])
def test_disk_cache_switch_is_zero_or_one(monkeypatch, value):
    """Anything but 0 used to leave the disk cache on, 'false' included."""
    monkeypatch.setenv("TRACER_DISK_CACHE", value)
    with pytest.raises(ArgumentError, match=f"TRACER_DISK_CACHE must be 0 .* or 1 .*'{value}'"):
        tracer.jit(lambda x: x * 5.0 - 2.0)(np.ones(9 + len(value), np.float32))


@pytest.mark.parametrize("name, value", [("TRACER_LOG_COMPILES", "yes"),
                                         ("TRACER_NUM_THREADS", "0")])
def test_a_bad_setting_in_a_fresh_process_names_itself(name, value):
    """TRACER_LOG_COMPILES=yes (or anything but 0) switched logging on unasked."""
    out = run_script(f"""
import numpy as np
try:
    import tracer
    tracer.jit(lambda x: x + 1.0)(np.ones(3))
    print("accepted")
except Exception as e:
    print(type(e).__name__, e)
""", **{name: value})
    assert out.startswith(f"ArgumentError {name} must be") and repr(value) in out, out
