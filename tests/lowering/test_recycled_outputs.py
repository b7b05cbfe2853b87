"""A recycled large output (lowering/llvm/buffers.py) cannot be told from a fresh array in
any way a NumPy user can observe: whatever the caller did to a result before dropping it
-- changed its shape, strides, dtype or flags, resized it, took a weak reference or a
finalizer -- the next call returns an array with a fresh one's metadata, flags, base and
ownership, and a result something still refers to, even weakly, is never handed out
again: it dies (its finalizers run) once the program lets it go."""
import gc
import weakref

import numpy as np
import pytest

import tracer
from fresh import run_script

X = np.linspace(-1, 1, 1 << 17, dtype=np.float32).reshape(512, 256)   # 512 KiB: recycled
FRESH = np.empty_like(X)


def observed(a):
    """Everything NumPy lets a user see of an array but its address and its values."""
    return (type(a), a.shape, a.strides, a.dtype, a.flags.num, a.base, a.flags.owndata,
            weakref.getweakrefcount(a))


@pytest.fixture(scope="module")
def f():
    f = tracer.jit(lambda x, s: x * s, backend="llvm")
    assert f.lower(X, np.float32(1))._recycled, "the test needs a recycled output"
    return f


def _shape(r):
    r.shape = (256, 512)


def _dtype(r):
    r.dtype = np.int32


def _strides(r):
    with pytest.warns(DeprecationWarning):
        r.strides = (4, 2048)


def _read_only(r):
    r.flags.writeable = False


def _unaligned(r):
    r.flags.aligned = False


def _resized_and_back(r):     # the same shape again, in memory realloc moved
    r.resize((4,), refcheck=False)
    r.resize(X.shape, refcheck=False)


@pytest.mark.parametrize("change", [_shape, _dtype, _strides, _read_only, _unaligned,
                                    _resized_and_back])
def test_a_result_changed_then_dropped_comes_back_as_a_fresh_array(f, change):
    f(X, np.float32(1))
    r = f(X, np.float32(2))
    change(r)
    del r
    for s in (3, 4):
        out = f(X, np.float32(s))
        assert observed(out) == observed(FRESH)
        np.testing.assert_array_equal(out, X * np.float32(s))
        out[0, 0] = 1.0                                     # writeable, its own memory
        del out


def test_an_unchanged_dropped_result_is_still_recycled(f):
    address = f(X, np.float32(1)).ctypes.data
    assert f(X, np.float32(2)).ctypes.data == address


def test_a_resized_result_is_never_written_past_its_end():
    """resize(refcheck=False) to 64 bytes, dropped: the next call wrote 2 MiB into it."""
    run_script("""
import numpy as np, tracer
x = np.ones((512, 512), np.float64)
f = tracer.jit(lambda x: x * 2.0)
for _ in range(3):
    r = f(x)
    r.resize((8,), refcheck=False)
    del r
    out = f(x)
    assert out.shape == x.shape and (out == 2.0).all()
""", timeout=60)


@pytest.mark.parametrize("hold", ["ref", "WeakValueDictionary", "finalize"])
def test_a_weakly_held_result_is_never_reused_and_dies(f, hold):
    died = []
    r = f(X, np.float32(1))
    if hold == "ref":
        holder = weakref.ref(r, died.append)
    elif hold == "WeakValueDictionary":
        holder = weakref.WeakValueDictionary(a=r)
    else:
        holder = weakref.finalize(r, died.append, "finalized")
    del r
    out = f(X, np.float32(5))
    if hold == "ref":
        assert holder() is None and len(died) == 1
    elif hold == "WeakValueDictionary":
        assert "a" not in holder
    else:
        assert not holder.alive and died == ["finalized"]
    np.testing.assert_array_equal(out, X * np.float32(5))
    assert weakref.getweakrefcount(out) == 0


def test_a_weakly_held_result_dies_with_its_program():
    f = tracer.jit(lambda x: x + 1.0, backend="llvm")
    died = []
    weakref.finalize(f(X), died.append, True)
    del f
    gc.collect()
    assert died == [True]
