"""`tracer.config`, as `jax.config` (and JAX's `from jax._src import config`): the flags of
JAX's that mean something here, so that programs written for JAX run unchanged.

`update("jax_x", v)` sets a flag process-wide; `config.jax_x` reads it; each flag is also
a context manager under JAX's short name (`config.log_compiles(True)`) whose value holds
in the calling thread only, within the block, as JAX's do (other threads keep the
process-wide value). A flag's `active` counts the blocks open in any thread plus one while
the process-wide value is not the default, so that code on a hot path tests one attribute
(`if RANK_PROMOTION.active:`) and pays nothing while a flag is unused. Flags JAX has but
tracer cannot honour are refused with the reason (REFUSED); other names are JAX's
"Unrecognized config option" AttributeError."""
import contextlib
import operator
import threading

import numpy as np

from ir.errors import ArgumentError, ArgumentValueError

_UNSET = object()
_lock = threading.Lock()
FLAGS = {}                  # "jax_..." -> Flag


class Flag:
    """One option: a process-wide value, and a per-thread value within `with flag(v):`."""

    def __init__(self, name, default, check, changed=None):
        self.name, self.default, self._check, self._changed = name, default, check, changed
        self._global, self._here, self.active = default, threading.local(), 0
        FLAGS[name] = self

    @property
    def value(self):
        """This thread's value: its innermost block's, else the process-wide one."""
        v = getattr(self._here, "v", _UNSET)
        return self._global if v is _UNSET else v

    def get_global(self):
        return self._global

    def _set(self, value):
        value = self._check(self.name, value)
        with _lock:
            self.active += (value != self.default) - (self._global != self.default)
            self._global = value
        self._notify()

    @contextlib.contextmanager
    def __call__(self, new_val=_UNSET):
        if new_val is _UNSET:           # JAX's: a bool flag's block turns it on
            if self._check is not _boolean:
                raise TypeError(f"Context manager for {self.name} config option requires "
                                f"an argument representing the new value for the config "
                                f"option.")
            new_val = True
        value = self._check(self.name, new_val)
        before = getattr(self._here, "v", _UNSET)
        self._here.v = value
        with _lock:
            self.active += 1
        self._notify()
        try:
            yield
        finally:
            self._here.v = before
            with _lock:
                self.active -= 1
            self._notify()

    def _notify(self):
        if self._changed is not None:
            self._changed()

    def __repr__(self):
        return f"<config flag {self.name}={self.value!r}>"


def _one_of(*values):
    def check(name, value):
        if value not in values:
            raise ValueError(f"Invalid value {value!r} for JAX flag {name}: new enum value "
                             f"must be in {list(values)}")
        return value
    return check


def _boolean(name, value):
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise TypeError(f"Invalid value {value!r} for JAX flag {name}: expected a bool")
    return bool(value)


def _integer(name, value):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"Invalid value {value!r} for JAX flag {name}: expected an "
                        f"int") from None


def _x64(name, value):
    if not _boolean(name, value):
        raise ValueError(f"{name}=False is not supported: tracer always has NumPy's 64-bit "
                         f"dtypes and follows NumPy's dtype rules (float64 stays float64); "
                         f"cast with .astype(np.float32) where 32 bits are wanted")
    return True


_JAX_IMPLS = ("threefry2x32", "threefry4x32", "philox2x32", "philox4x32", "rbg",
              "unsafe_rbg")


def check_prng_impl(impl, dtype, op):
    """Accepts JAX's ways of naming threefry2x32 keys (tracer.random's key makers and
    jax_default_prng_impl): impl= its name, dtype= its name or key_dtype()'s uint32;
    JAX's errors for both or for an unknown name or type."""
    if impl is not None and dtype is not None:
        raise ArgumentValueError(f"{op}: Cannot specify both `impl` and `dtype`")
    spec = dtype if impl is None else impl
    if spec is None or isinstance(spec, str) and spec == "threefry2x32":
        return
    if isinstance(spec, str):
        if spec in _JAX_IMPLS:
            raise ArgumentValueError(f"{op}: PRNG implementation {spec!r} is not available; "
                                     f"keys here are raw threefry2x32 keys (impl=None or "
                                     f"'threefry2x32')")
        raise ArgumentValueError(f"{op}: unrecognized PRNG implementation {spec!r}; the "
                                 f"only one here is 'threefry2x32'")
    if isinstance(spec, (np.dtype, type)) and np.dtype(spec) == np.uint32:
        return
    raise ArgumentError(f"{op}: unrecognized type {type(spec).__name__} for specifying a "
                        f"PRNG implementation; give 'threefry2x32'")


def _prng_impl(name, value):
    check_prng_impl(value, None, name)
    return value


_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32")


def _precision(name, value):
    from tracer.precision import DotAlgorithmPreset
    if value is not None and (not isinstance(value, str) or (
            value not in _PRECISIONS and value not in DotAlgorithmPreset.__members__)):
        raise ValueError(f"Invalid value {value!r} for JAX flag {name}: give None, one of "
                         f"'default', 'high', 'highest', 'bfloat16', 'tensorfloat32', "
                         f"'float32' or a jax.lax.DotAlgorithmPreset name")
    return value


def _retrace():
    """A trace-context flag changed: no cached jit entry may be taken as current until
    its key (which holds the context while it is not the default) is looked up again."""
    from registry.versioned import bump_epoch
    bump_epoch()


enable_x64 = Flag("jax_enable_x64", True, _x64)
log_compiles = Flag("jax_log_compiles", False, _boolean)
explain_cache_misses = Flag("jax_explain_cache_misses", False, _boolean)
log_checkpoint_residuals = Flag("jax_log_checkpoint_residuals", False, _boolean)
numpy_rank_promotion = Flag("jax_numpy_rank_promotion", "allow",
                            _one_of("allow", "warn", "raise"), _retrace)
default_matmul_precision = Flag("jax_default_matmul_precision", None, _precision, _retrace)
# a guard against summing in 16 bits (lax.reduce_sum of float16/bfloat16 raises when False)
allow_f16_reductions = Flag("jax_allow_f16_reductions", True, _boolean, _retrace)
random_seed_offset = Flag("jax_random_seed_offset", 0, _integer)
legacy_prng_key = Flag("jax_legacy_prng_key", "allow", _one_of("allow", "warn", "error"))
default_prng_impl = Flag("jax_default_prng_impl", "threefry2x32", _prng_impl)
# guards a user sets to assert that cached code is reused (no_tracing) or that nothing runs
# (no_execution: a jitted call raises rather than run compiled code); while either is on,
# jit's hot path stands aside (the epoch moves), so that its slow path checks them
no_tracing = Flag("jax_no_tracing", False, _boolean, _retrace)
no_execution = Flag("jax_no_execution", False, _boolean, _retrace)


def trace_context():
    """The flags a trace depends on, when any differs from its default (else None): jit
    adds them to its cache key, as JAX's include_in_jit_key."""
    if numpy_rank_promotion.active or default_matmul_precision.active or \
            allow_f16_reductions.active:
        return (numpy_rank_promotion.value, default_matmul_precision.value,
                allow_f16_reductions.value)
    return None


def guarded():
    """Whether a no_tracing or no_execution block (or setting) is open in any thread."""
    return no_tracing.active or no_execution.active


class _DisableJit:
    """jax_disable_jit: `update` turns jit off process-wide; the block is tracer's
    disable_jit (this thread)."""
    name = "jax_disable_jit"

    @property
    def value(self):
        from tracer import jit_disabled
        return jit_disabled.disabled()

    def get_global(self):
        from tracer import jit_disabled
        return jit_disabled.GLOBAL[0]

    def _set(self, value):
        from tracer import jit_disabled
        jit_disabled.set_global(_boolean(self.name, value))

    def __call__(self, new_val=True):
        from tracer import jit_disabled
        return jit_disabled.disable_jit(_boolean(self.name, new_val))


disable_jit = FLAGS["jax_disable_jit"] = _DisableJit()

def _switching(name, module, *args):
    """A flag whose effect is a process-wide switch (tracer.nan_check's, tracer.leak_check's
    `set_checking`): the switch takes the value the changing thread now sees (a block in
    one thread turns the check on in all, as the switch has no per-thread state)."""
    def changed():
        import importlib
        importlib.import_module(module).set_checking(*args, flag.value)
    flag = Flag(name, False, _boolean, changed)
    return flag


debug_nans = _switching("jax_debug_nans", "tracer.nan_check", "nan")
debug_infs = _switching("jax_debug_infs", "tracer.nan_check", "inf")
check_tracer_leaks = _switching("jax_check_tracer_leaks", "tracer.leak_check")


_ELSEWHERE = ("tracer runs on this host's CPU only (one device, no accelerator "
              "platforms or device placement to choose)")
_XLA = "tracer compiles with its own backends, not XLA (no XLA cache, profile or options)"
REFUSED = {
    "jax_platforms": _ELSEWHERE, "jax_platform_name": _ELSEWHERE,
    "jax_default_device": _ELSEWHERE, "jax_num_cpu_devices": _ELSEWHERE,
    "jax_enable_compilation_cache": _XLA, "jax_compilation_cache_dir": _XLA,
    "jax_persistent_cache_min_compile_time_secs": _XLA, "jax_enable_pgle": _XLA,
    "jax_numpy_dtype_promotion": "tracer.numpy follows NumPy's dtype promotion only",
    "jax_enable_custom_prng": "keys here are raw uint32 threefry2x32 arrays only",
    "jax_threefry_partitionable": "keys here are raw uint32 threefry2x32 arrays only",
    "jax_traceback_filtering": "tracer's errors name the user's line themselves",
    "jax_transfer_guard": _ELSEWHERE,
    "jax_enable_checks": "it checks JAX's internals, which tracer does not have",
}


def _holder(name):
    flag = FLAGS.get(name)
    if flag is not None:
        return flag
    if name in REFUSED:
        raise ValueError(f"config option {name} is JAX's but tracer cannot honour it: "
                         f"{REFUSED[name]}")
    raise AttributeError(f"Unrecognized config option: {name}")


def update(name, val):
    """Set flag `name` ("jax_...") process-wide, as jax.config.update."""
    _holder(name)._set(val)


def _read(name):
    """This thread's value of flag `name`."""
    return _holder(name).value


def __getattr__(name):
    """`config.jax_log_compiles`: a flag's value, as jax.config's attributes."""
    if name.startswith("jax_"):
        return _read(name)
    raise AttributeError(f"module 'tracer.config' has no attribute {name!r}")

