"""A Program keeps its temporaries (buffers no output is) and its large outputs between
calls instead of allocating them per call (fresh memory page-faults on every first
touch): each running call has a set of temporaries of its own, a failed call drops its
set, no kernel may rely on what a reused buffer holds, an output is reused only once
nothing the caller can reach refers to it, and the kept memory is bounded."""
import gc

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from concurrency import run_threads
from fresh import run_script
from lowering.llvm import buffers, compile_graph
from lowering.settings import settings
from tracer import lax

pytestmark = pytest.mark.filterwarnings("ignore:kernel 'test_temps_checked' has no llvm impl")
RNG = np.random.default_rng(0)
X, W = RNG.standard_normal((8, 16)), RNG.standard_normal((16, 4))
IMG = RNG.standard_normal((2, 6, 6, 1)).astype(np.float32)
KER = RNG.standard_normal((3, 3, 1, 4)).astype(np.float32)
DENSE = RNG.standard_normal((36 * 4, 3)).astype(np.float32)


def mlp(x, w):
    return tnp.tanh(x @ w) @ w.T


def cnn(x, k, d):
    h = tnp.maximum(lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC")), 0)
    return tnp.sum(tnp.tanh(tnp.reshape(h, (2, -1)) @ d))


def compiled(fn, *args):
    p = compile_graph(tracer.make_graph(fn)(*args))
    assert p._temps.specs, "the test needs a program with temporaries"
    return p


def independent(*arrays):
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)


@pytest.fixture
def numpy_only():
    """A kernel with a numpy impl only (a Python step under llvm) that rejects x > 100."""
    name = "test_temps_checked"

    def impl(x):
        if (x > 100).any():
            raise ValueError("test_temps_checked: too big")
        return x * 3.0
    registry.register_shape_rule(name, lambda x: x)
    registry.register_kernel(name, "numpy", impl)
    yield name
    registry.unregister_kernel(name, "numpy")
    registry.unregister_shape_rule(name)


def test_temporaries_are_reused_and_outputs_are_fresh():
    p = compiled(mlp, X, W)
    a = p.run([X, W])[0]
    kept = p._temps.free[0]
    b = p.run([X, W])[0]
    c = p.run([X * 2, W])[0]
    assert p._temps.free == [kept]
    np.testing.assert_allclose(a, np.tanh(X @ W) @ W.T, rtol=1e-12)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(c, np.tanh(2 * X @ W) @ W.T, rtol=1e-12)
    independent(a, b, c, X, W)
    for t in kept:          # temporaries share an arena with each other (liveness), not these
        assert not any(np.shares_memory(t, o) for o in (a, b, c, X, W))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", ["mlp", "cnn_grad", "python_step"])
def test_results_do_not_depend_on_what_reused_temporaries_hold(
        case, threads, numpy_only, monkeypatch):
    """Every kept buffer is overwritten with NaN bytes between calls: kernels that read a
    temporary before writing it (an accumulator assumed zero) would change the result."""
    monkeypatch.setenv("TRACER_NUM_THREADS", str(threads))
    monkeypatch.setattr(settings, "parallel_ns", 0)
    fn, args = {"mlp": (mlp, (X, W)),
                "cnn_grad": (tracer.value_and_grad(cnn, argnums=(1, 2)), (IMG, KER, DENSE)),
                "python_step": (lambda x, w: tnp.sum(
                    tracer.run_kernel(numpy_only, [x @ w]) @ w.T, axis=0), (X, W))}[case]
    p = compiled(fn, *args)
    assert ("python" in p.steps) == (case == "python_step")
    assert ("parallel" in p.steps) == (threads == 2)
    first = p.run(list(args))
    for buf in p._temps.free[0]:
        buf.view(np.uint8).fill(0xFF)
    for a, b in zip(first, p.run(list(args))):
        np.testing.assert_array_equal(a, b)


def test_concurrent_calls_each_get_their_own_set():
    p = compiled(mlp, X, W)

    def worker(k):
        x = X * (k + 1)
        for _ in range(40):
            assert np.allclose(p.run([x, W])[0], np.tanh(x @ W) @ W.T, rtol=1e-12)
    run_threads(worker, 4)
    assert 1 <= len(p._temps.free) <= p._temps.kept[0] <= buffers.KEEP_SETS


def test_a_program_keeps_at_most_keep_sets():
    temps = compiled(mlp, X, W)._temps
    sets = [temps.take() for _ in range(buffers.KEEP_SETS + 2)]    # overlapping calls
    assert len({id(s) for s in sets}) == len(sets)
    for s in sets:
        temps.give(s)
    assert len(temps.free) == temps.kept[0] == buffers.KEEP_SETS


def test_a_native_error_drops_the_set_and_the_next_call_works():
    f = lambda x, w, i: tnp.take(tnp.tanh(x @ w), i, axis=0) @ w.T   # noqa: E731
    good, bad = np.array([0, 7, 3]), np.array([0, 8, 3])
    p = compiled(f, X, W, good)
    p.run([X, W, good])
    kept = p._temps.free[0]
    with pytest.raises(IndexError, match="index 8 is out of bounds"):
        p.run([X, W, bad])
    assert p._temps.free == []
    out = p.run([X, W, good])[0]
    np.testing.assert_allclose(out, np.tanh(X @ W)[good] @ W.T, rtol=1e-12)
    assert len(p._temps.free) == 1 and p._temps.free[0] is not kept


def test_a_failing_python_step_drops_the_set_and_the_next_call_works(numpy_only):
    p = compiled(lambda x, w: tracer.run_kernel(numpy_only, [x @ w]) @ w.T, X, W)
    p.run([X, W])
    with pytest.raises(Exception, match="too big"):
        p.run([X * 1e6, W])
    assert p._temps.free == []
    np.testing.assert_allclose(p.run([X, W])[0], (X @ W) * 3 @ W.T, rtol=1e-12)
    assert len(p._temps.free) == 1


def test_kept_memory_is_bounded_across_programs_and_freed_with_them(monkeypatch):
    first = compiled(mlp, X, W)
    first.run([X, W])
    gc.collect()                # programs of earlier tests release their bytes now
    monkeypatch.setattr(buffers, "KEEP_BYTES", buffers._kept[0])   # no room for more
    second = compiled(mlp, X, W)
    for _ in range(2):
        np.testing.assert_allclose(second.run([X, W])[0], np.tanh(X @ W) @ W.T, rtol=1e-12)
    assert second._temps.free == [] and second._temps.kept[0] == 0
    del first
    gc.collect()
    second.run([X, W])
    assert len(second._temps.free) == 1


FORK = """
import os, sys, threading, time
import numpy as np
import tracer, tracer.numpy as tnp
from lowering.llvm import buffers, compile_graph

x, w = np.linspace(-1, 1, 32).reshape(8, 4), np.linspace(0, 1, 12).reshape(4, 3)
f = lambda x, w: tnp.tanh(x @ w) @ w.T
held, done = threading.Event(), threading.Event()

def hold():                     # another thread in Temps.fresh while the process forks
    with buffers._kept_lock:
        held.set()
        done.wait()
threading.Thread(target=hold).start()
held.wait()
pid = os.fork()
done.set()
if pid == 0:
    p = compile_graph(tracer.make_graph(f)(x, w))
    ok = all(np.allclose(p.run([x, w])[0], np.tanh(x @ w) @ w.T) for _ in range(2))
    os._exit(0 if ok and len(p._temps.free) == 1 else 3)
deadline = time.monotonic() + 20
while not (done := os.waitpid(pid, os.WNOHANG))[0]:
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        sys.exit("child hung")
    time.sleep(0.01)
print("ok" if os.waitstatus_to_exitcode(done[1]) == 0 else f"child: {done[1]}")
"""


def test_a_child_forked_while_the_budget_lock_is_held_keeps_temporaries(tmp_path):
    assert run_script(FORK, cache=tmp_path, timeout=60).startswith("ok")


# ---- recycled outputs -------------------------------------------------------------------
BIG = np.linspace(-1, 1, 1 << 16)           # 512 KiB: a recycled output


def test_a_dropped_output_is_reused_and_a_held_one_never():
    p = compile_graph(tracer.make_graph(lambda x: tnp.tanh(x) * 2.0)(BIG))
    assert p._recycled, "the test needs a recycled output"
    first = p.run([BIG])[0]
    want, address = first.copy(), first.ctypes.data
    del first
    again = p.run([BIG])[0]
    assert again.ctypes.data == address                     # dropped: reused
    np.testing.assert_array_equal(again, want)
    holders = [again, again[10:], memoryview(again), [again]]
    for held in holders:
        ref = again.copy()
        others = [p.run([BIG])[0] for _ in range(2)]
        for o in others:
            assert not np.shares_memory(o, again)           # held: never handed out
        np.testing.assert_array_equal(again, ref)
        del others
    del holders


def test_feeding_a_result_back_never_aliases_input_and_output():
    p = compile_graph(tracer.make_graph(lambda x: x * 0.5 + 1.0)(BIG))
    x, want = BIG.copy(), BIG.copy()
    for _ in range(5):
        y = p.run([x])[0]
        assert not np.shares_memory(x, y)
        want = want * 0.5 + 1.0
        np.testing.assert_array_equal(y, want)
        x = y


def test_recycled_outputs_are_right_from_many_threads():
    p = compile_graph(tracer.make_graph(lambda x, s: tnp.sin(x) * s)(BIG, 1.0))
    want = {s: p.run([BIG, float(s)])[0] for s in range(1, 5)}

    def work(k):
        for _ in range(30):
            np.testing.assert_array_equal(p.run([BIG, float(k + 1)])[0], want[k + 1])
    run_threads(work, 4)


def test_small_outputs_and_programs_without_room_are_not_recycled(monkeypatch):
    assert not compile_graph(tracer.make_graph(lambda x: x + 1.0)(X))._recycled
    gc.collect()
    monkeypatch.setattr(buffers, "KEEP_BYTES", buffers._kept[0])   # no room for more
    p = compile_graph(tracer.make_graph(lambda x: tnp.cos(x) + 3.0)(BIG))
    first = p.run([BIG])[0]
    address = first.ctypes.data
    del first
    kept = p._outputs.last[0]
    assert kept is None or kept.ctypes.data != address


def test_the_first_call_finds_its_temporaries_and_large_outputs_made():
    """Made, their pages touched, while LLVM compiles (Program.__init__), so that the first
    call does not page-fault on them: W18's first call took 11,800 faults on its new
    weights. The first call uses exactly those."""
    p = compiled(mlp, X, W)
    made = list(p._temps.free)
    assert len(made) == 1
    np.testing.assert_allclose(p.run([X, W])[0], np.tanh(X @ W) @ W.T, rtol=1e-12)
    assert p._temps.free == made
    q = compile_graph(tracer.make_graph(lambda x: tnp.tanh(x) * 2.0)(BIG))
    assert q._recycled and q._outputs.last[0] is not None
    address = q._outputs.last[0].ctypes.data
    first = q.run([BIG])[0]
    assert first.ctypes.data == address
    np.testing.assert_allclose(first, np.tanh(BIG) * 2.0, rtol=1e-6)
