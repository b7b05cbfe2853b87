"""tracer.config: JAX's flags that tracer honours, their context managers and refusals."""
import logging
import threading
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import config


def test_update_read_and_unknown_or_refused_flags():
    config.update("jax_log_compiles", True)
    try:
        assert config.jax_log_compiles is True and config._read("jax_log_compiles") is True
    finally:
        config.update("jax_log_compiles", False)
    assert config.jax_log_compiles is False
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        config.update("jax_nope", 1)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nope"):
        config.jax_nope
    with pytest.raises(ValueError, match="jax_platforms is JAX's but tracer cannot"):
        config.update("jax_platforms", "cpu")
    with pytest.raises(ValueError, match="Invalid value 'sometimes'"):
        config.update("jax_numpy_rank_promotion", "sometimes")


def test_x64_and_prng_impl():
    config.update("jax_enable_x64", True)
    with pytest.raises(ValueError, match="follows NumPy's dtype rules.*astype"):
        config.update("jax_enable_x64", False)
    assert tracer.enable_x64 is config.enable_x64 and config.jax_enable_x64
    config.update("jax_default_prng_impl", "threefry2x32")
    with pytest.raises(ValueError, match="'rbg' is not available"):
        config.update("jax_default_prng_impl", "rbg")


def test_context_manager_restores_on_exception_and_is_per_thread():
    seen = []
    with pytest.raises(RuntimeError):
        with config.numpy_rank_promotion("warn"):
            t = threading.Thread(target=lambda: seen.append(config.jax_numpy_rank_promotion))
            t.start()
            t.join()
            seen.append(config.jax_numpy_rank_promotion)
            raise RuntimeError
    assert seen == ["allow", "warn"]          # another thread keeps the global value
    assert config.jax_numpy_rank_promotion == "allow"
    assert config.numpy_rank_promotion.active == 0


def test_rank_promotion_warns_raises_and_retraces():
    a, b = np.ones(3), np.ones((2, 3))
    with config.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="could not be broadcast together for add on "
                                             r"shapes \(3,\) \(2, 3\)"):
            tnp.add(a, b)
        tnp.add(b, 1.0)                         # a scalar is not a rank promotion
    with config.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="Following NumPy automatic rank promotion"):
            tnp.multiply(a, b)
    traces = []

    @tracer.jit
    def f(x):
        traces.append(1)
        return x + x
    f(b)
    f(b)
    with config.numpy_rank_promotion("warn"):
        f(b)
        f(b)
    f(b)
    assert len(traces) == 2


def test_matmul_precision_values_and_retrace():
    with pytest.raises(ValueError, match="Invalid value 'fast'"):
        config.update("jax_default_matmul_precision", "fast")
    traces = []

    @tracer.jit
    def f(x):
        traces.append(1)
        return tnp.dot(x, x)
    x = np.eye(2)
    f(x)
    with tracer.default_matmul_precision("tensorfloat32"):
        f(x)
        assert len(traces) == 2
    config.update("jax_default_matmul_precision", "BF16_BF16_F32")
    try:
        f(x)
        f(x)
        assert len(traces) == 3
    finally:
        config.update("jax_default_matmul_precision", None)
    f(x)
    assert len(traces) == 3


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_f16_reductions_can_be_refused_eagerly_and_under_jit(dtype):
    x = tnp.ones(3, dtype)
    f = tracer.jit(lambda v: tracer.lax.reduce_sum(v, [0]))
    assert tracer.lax.reduce_sum(x, [0]) == 3 and f(x) == 3       # allowed by default
    with tracer.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand .*\[3\] is not allowed"):
            tracer.lax.reduce_sum(x, [0])
        with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
            f(x)                                  # the flag is part of jit's key
        assert tracer.lax.reduce_sum(tnp.ones((1, 3), dtype), [0]).tolist() == [1, 1, 1]
        assert tnp.sum(x) == 3                    # tracer.numpy's sums are not lax's
        assert tracer.lax.reduce_sum(tnp.ones(3, "float32"), [0]) == 3
    assert f(x) == 3


def test_disable_jit_process_wide():
    calls = []
    f = tracer.jit(lambda x: calls.append(type(x)) or x)
    config.update("jax_disable_jit", True)
    try:
        f(np.ones(2))
        assert config.jax_disable_jit
        with config.disable_jit(False):
            f(np.ones(2))
    finally:
        config.update("jax_disable_jit", False)
    assert calls[0] is np.ndarray and calls[1] is tracer.Tracer


def test_random_seed_offset_and_legacy_keys():
    k = tracer.random.key(17)
    with config.random_seed_offset(3):
        assert tracer.random.PRNGKey(17).tolist() == [0, 20]
    with tracer.legacy_prng_key("warn"):
        with pytest.warns(UserWarning, match="Legacy uint32 key array passed as key"):
            tracer.random.uniform(k)
    with tracer.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key array passed as key"):
            tracer.random.split(k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tracer.random.uniform(k)


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_log_compiles_lines(caplog):
    f = tracer.jit(lambda x: x * 2)
    with caplog.at_level(logging.DEBUG, logger="tracer.compile"):
        f(np.ones(2, np.float32))
    debug = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Finished tracing <lambda> for jit in") for m in debug)
    caplog.clear()
    with tracer.log_compiles(True), caplog.at_level(logging.WARNING):
        f(np.ones(3, np.float32))
        f(np.ones(3, np.float32))             # a cached call logs nothing
    out = _messages(caplog)
    assert len(out) == 3
    assert out[1].startswith("Compiling jit(<lambda>) with global shapes and types [f32[3]]")
    assert out[2].startswith("Finished XLA compilation of jit(<lambda>) in")


def test_explain_cache_misses(caplog):
    @tracer.jit
    def f(x, y):
        return x + y
    f(np.float32(0), np.ones(1, np.float32))
    with config.explain_cache_misses(True), caplog.at_level(logging.WARNING):
        f(np.float32(0), np.ones(1, np.float32))      # a hit: nothing
        f(np.float32(0), np.ones(2, np.float32))
        f(np.float32(0), (np.float32(1), np.float32(2)))
        with tracer.numpy_rank_promotion("warn"):
            f(np.float32(0), np.ones(2, np.float32))
        for _ in range(2):
            tracer.jit(lambda x: 2 * x)(3)
        tnp.sin(np.ones(2))                            # tracer's own code: nothing
    shape, tree, ctx, new1, new2 = _messages(caplog)
    assert shape.startswith("TRACING CACHE MISS at ") and "for f defined at" in shape
    assert "different input types:\n  * at y, now f32[2] and before f32[1]" in shape
    assert "different input pytree" in tree
    assert "jax_numpy_rank_promotion differs: now warn and before allow" in ctx
    assert "never seen function" in new1 and "same line" not in new1
    assert "another function defined on the same line" in new2


def test_clear_caches_retraces_every_jitted_function(caplog):
    f = tracer.jit(lambda x: x * 2)
    with tracer.log_compiles(True), caplog.at_level(logging.WARNING):
        f(np.arange(8))
        tracer.clear_caches()
        f(np.arange(8))
    assert sum(m.startswith("Finished tracing <lambda> for jit") for m in _messages(caplog)) == 2
    assert f.cache_info().misses == 2


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_no_tracing_and_no_execution_guard_jitted_calls(backend):
    f = tracer.jit(lambda x: x * 2, backend=backend)
    np.testing.assert_array_equal(f(np.arange(3)), [0, 2, 4])
    with tracer.no_tracing():
        np.testing.assert_array_equal(f(np.arange(3)), [0, 2, 4])   # cached: allowed
        with pytest.raises(RuntimeError, match="re-tracing function <lambda> .*no_tracing"):
            f(np.arange(4))
    g = tracer.jit(lambda: tnp.ones(3), backend=backend)
    g()
    with tracer.no_execution():
        with pytest.raises(RuntimeError, match="execute jit\\(<lambda>\\).*no_execution"):
            g()
        # other threads keep running: the flag is per thread
        out = []
        t = threading.Thread(target=lambda: out.append(g()))
        t.start()
        t.join()
        np.testing.assert_array_equal(out[0], np.ones(3))
    np.testing.assert_array_equal(g(), np.ones(3))        # the hot path is back
    config.update("jax_no_tracing", True)
    try:
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(np.arange(5))
    finally:
        config.update("jax_no_tracing", False)
    np.testing.assert_array_equal(f(np.arange(5)), [0, 2, 4, 6, 8])
