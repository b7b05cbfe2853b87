"""What the native code must never do: read or write out of bounds, trust a buffer it was
not compiled for, or give a wrong answer under threads."""
import threading

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import compile_graph
from lowering.settings import settings
from fresh import run_script


def llvm(f):
    return tracer.jit(f, backend="llvm")


def test_non_contiguous_and_unaligned_inputs_are_copied_first():
    base = np.arange(40, dtype=np.float64).reshape(5, 8)
    f = llvm(lambda x: x * 2.0 + 1.0)
    strided = base[:, ::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(f(strided), strided * 2 + 1)
    np.testing.assert_array_equal(f(base.T.copy().T[:, :4]), base[:, :4] * 2 + 1)
    raw = np.zeros(8 * 20 + 1, np.uint8)[1:].view(np.float64)     # misaligned by one byte
    raw[:] = np.arange(20.0)
    assert not raw.flags.aligned
    g = llvm(lambda x: tnp.sum(x))
    assert g(raw) == raw.sum()
    prog = g.lower(raw)
    np.testing.assert_array_equal(prog.run([np.broadcast_to(np.float64(2.0), (20,))])[0], 40.0)


def test_program_rejects_inputs_it_was_not_compiled_for():
    prog = compile_graph(tracer.make_graph(lambda x: x + 1.0)(np.ones(4, np.float32)))
    with pytest.raises(tracer.DTypeError, match="float32"):
        prog.run([np.ones(4, np.float64)])
    with pytest.raises(tracer.ShapeError, match=r"\(4,\)"):
        prog.run([np.ones(5, np.float32)])
    with pytest.raises(tracer.ArgumentError, match="1 inputs"):
        prog.run([])
    np.testing.assert_array_equal(prog.run([[1, 2, 3, 4]])[0], [2, 3, 4, 5])


def test_take_and_scatter_add_indices_are_checked_like_the_numpy_kernels():
    x = np.arange(12.0).reshape(4, 3)
    graph = tracer.make_graph(lambda x, i: tracer.run_kernel("take", [x * 1.0, i], {"axis": 0}))
    take = compile_graph(graph(x, np.zeros(3, np.int64)))
    np.testing.assert_array_equal(take.run([x, np.array([0, 3, 2])])[0], x[[0, 3, 2]])
    for bad in ([0, 4, 1], [-1, 0, 0], [2**40, 0, 0]):
        with pytest.raises(tracer.OutOfBoundsError, match="out of bounds for axis 0 of size 4"):
            take.run([x, np.array(bad)])
    upd = np.ones((2, 3))
    graph = tracer.make_graph(lambda u, i: tracer.run_kernel(
        "scatter_add", [u, i], {"axis": 1, "size": 4}))(upd, np.zeros(3, np.int32))
    prog = compile_graph(graph)
    idx = np.array([0, 3, 0], np.int32)
    want = np.zeros((2, 4))
    np.add.at(want, (slice(None), idx), upd)
    np.testing.assert_array_equal(prog.run([upd, idx])[0], want)
    with pytest.raises(IndexError, match="scatter_add: index 4 is out of bounds for axis 1"):
        prog.run([upd, np.array([0, 4, 0], np.int32)])


def test_ops_wrap_negative_traced_indices():
    x = np.arange(12.0).reshape(4, 3)
    f = llvm(lambda x, i: tnp.take(x, i, axis=0))
    np.testing.assert_array_equal(f(x, np.array([0, -1, -4])), x[[0, -1, -4]])
    with pytest.raises(IndexError):
        f(x, np.array([-5]))


@pytest.mark.parametrize("shape", [(), (0,), (1,), (1, 1), (3, 0, 2), (1, 5), (5, 1)])
def test_degenerate_shapes_with_broadcasts_index_maps_and_reductions(shape):
    x = np.random.default_rng(0).normal(size=shape)
    f = llvm(lambda x: (tnp.broadcast_to(x, (2,) + shape) * 2.0,
                        tnp.sum(x, axis=0) if x.ndim else x, tnp.transpose(x).reshape(-1)[::-1],
                        tnp.concatenate([x.reshape(-1), x.reshape(-1)])))
    want = (np.broadcast_to(x, (2,) + shape) * 2, np.sum(x, axis=0) if x.ndim else x,
            np.transpose(x).reshape(-1)[::-1], np.concatenate([x.reshape(-1)] * 2))
    for g, w in zip(f(x), want):
        np.testing.assert_array_equal(g, w)


def _check_concurrently(f, inputs, want, threads=4, rounds=20):
    errors, barrier = [], threading.Barrier(threads)

    def worker(k):
        barrier.wait()
        for r in range(rounds):
            x = inputs[(k + r) % len(inputs)]
            got = f(x)
            if not np.array_equal(got, want[(k + r) % len(inputs)]):
                errors.append((k, r))
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


def test_one_jitted_function_called_from_several_threads():
    f = llvm(lambda x: tracer.nn.softmax(x * 2.0) @ x.T)
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=(16, 33)).astype(np.float32) for _ in range(4)]
    want = [f(x) for x in inputs]         # the same native code, run alone: bit-identical
    e = np.exp(2 * inputs[0] - (2 * inputs[0]).max(-1, keepdims=True))
    np.testing.assert_allclose(want[0], (e / e.sum(-1, keepdims=True)) @ inputs[0].T, atol=1e-5)
    _check_concurrently(f, inputs, want)


def test_threaded_split_of_big_groups(monkeypatch):
    """Force every splittable group onto the thread pool (and check the results)."""
    monkeypatch.setattr(settings, "parallel_ns", 0)
    monkeypatch.setenv("TRACER_NUM_THREADS", "3")
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(37, 20)), rng.normal(size=(20, 11))
    f = llvm(lambda a, b, i: (tnp.exp(a) * 2.0, tnp.max(a, axis=1), (a @ b) + 1.0,
                              tnp.take(a, i, axis=0)))
    idx = np.array([3, -1, 36] * 20)
    prog = f.lower(a, b, idx)
    assert "parallel" in prog.steps
    np.testing.assert_array_equal(f(a, b, idx)[3], a[idx])
    with pytest.raises(IndexError, match="out of bounds"):
        f(a, b, idx + 1)
    g = llvm(lambda a, b: (tnp.exp(a) * 2.0, tnp.max(a, axis=1), (a @ b) + 1.0))
    got = g(a, b)
    for x, w in zip(got, (np.exp(a) * 2, a.max(1), a @ b + 1)):
        np.testing.assert_allclose(x, w, rtol=1e-12)
    _check_concurrently(lambda a: g(a, b)[2], [a, a * 2], [got[2], g(a * 2, b)[2]], threads=3,
                        rounds=5)


GUARD_SCRIPT = r'''
import ctypes, mmap, sys
import numpy as np
import tracer, tracer.numpy as tnp

PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
keep = []


def guarded(a, at_end):
    """A read-only copy of `a` whose first or last byte touches a PROT_NONE page."""
    pages = -(-max(a.nbytes, 1) // PAGE)
    m = mmap.mmap(-1, (pages + 2) * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    keep.append(m)
    for p in (0, pages + 1):
        assert libc.mprotect(base + p * PAGE, PAGE, 0) == 0
    off = (pages + 1) * PAGE - a.nbytes if at_end else PAGE
    out = np.frombuffer(m, a.dtype, a.size, off).reshape(a.shape)
    out[...] = a
    out.flags.writeable = False
    return out


rng = np.random.default_rng(0)
FUNS = [
    (rng.normal(size=(37, 29)).astype(np.float32), lambda x: (
        tnp.exp(x) * 2.0, tnp.sum(x, axis=0), tnp.max(x, axis=1), tnp.sum(x), x.T + 1.0,
        x[::-3, 1:], x[::-1, ::-2], tnp.concatenate([x, x[:3]]), x @ x.T,
        tnp.argmax(x, axis=0), tnp.argmin(x, axis=1), tnp.broadcast_to(x[:, :1], (2, 37, 5)))),
    (rng.normal(size=(70, 66)), lambda x: (x.T * 2.0, tnp.transpose(x)[1:], tnp.min(x, axis=0))),
    (rng.integers(-9, 9, (5, 7)).astype(np.int32), lambda x: (
        x * 3, tnp.sum(x, axis=0), tnp.take(x, np.array([4, 0, 2]), axis=0), x.T @ x)),
    (rng.random((4, 6)) > 0.5, lambda x: (x * x[::-1], tnp.sum(x, axis=1), tnp.max(x, axis=0))),
    (rng.normal(size=(3, 8)), tracer.grad(lambda x: tnp.sum(x[1:, ::3] * x[:-1, 1::3]))),
]
for x, f in FUNS:
    f = tracer.jit(f)
    want = f(x.copy())
    for at_end in (True, False):
        got = f(guarded(x, at_end))
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.array_equal(a, b), (a, b)
print("ok")
'''


def test_native_code_never_reads_past_its_inputs():
    """Inputs placed against inaccessible pages: any out-of-bounds read is a segfault of
    the subprocess (checked at both ends of every input)."""
    assert run_script(GUARD_SCRIPT, timeout=300).strip() == "ok"
