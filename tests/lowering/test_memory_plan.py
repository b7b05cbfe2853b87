"""Buffer assignment by liveness (lowering.llvm.liveness): temporaries whose lifetimes do
not overlap share memory, an elementwise loop writes in place over a temporary that dies
in it, and `donate_argnums` writes results into the donated arguments' arrays -- while
results never share memory with a non-donated argument, a constant or each other."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import buffers, compile_graph, liveness, program, schedule
from lowering.settings import settings

RNG = np.random.default_rng(0)


def plan_of(f, *args):
    g = program.optimize(tracer.make_graph(f)(*args))
    sched = schedule.Schedule(schedule.partition(g), 1, settings.parallel_ns)
    return sched, liveness.plan(sched)


def chain(x):
    """Whole kernels (cumsum) with elementwise loops between them: each loop's input is
    a temporary that dies in it."""
    for axis in (1, 0, 1, 0):
        c = tnp.cumsum(x, axis=axis)
        d = tnp.exp(c * 0.01) * 2 + c       # materialized: read twice, and costly
        x = tnp.tanh(d) - 0.5 * tnp.tanh(d * 0.5)
    return tnp.sum(x, axis=0)


def reference(x):
    for axis in (1, 0, 1, 0):
        c = np.cumsum(x, axis=axis)
        d = np.exp(c * 0.01) * 2 + c
        x = np.tanh(d) - 0.5 * np.tanh(d * 0.5)
    return np.sum(x, axis=0)


def test_temporaries_of_a_chain_share_memory():
    x = RNG.standard_normal((64, 48)).astype(np.float32)
    p = compile_graph(tracer.make_graph(chain)(x))
    planned = sum(buffers.nbytes(s) for s in p._temps.specs)
    assert len(p._temps.specs) >= 4 and p._temps.nbytes <= planned // 2
    for _ in range(2):          # the second call runs on the kept (shared) arena
        np.testing.assert_allclose(p.run([x])[0], reference(x), rtol=2e-5)


def test_an_elementwise_loop_writes_over_the_temporary_that_dies_in_it():
    sched, plan = plan_of(chain, np.zeros((64, 48), np.float32))
    nfixed = 1
    loops = [c for s in sched.steps for c in s.calls if c.group.kind == "loop"]
    assert loops
    for c in loops:             # leaf and root of each loop: one buffer
        leaf, root = c.buffers
        assert plan.offsets[leaf - nfixed] == plan.offsets[root - nfixed] is not None


def transposed(t, c):
    return t.transpose(c) * 0.1


def through_fused(t, c):        # the transpose reads c through a fused value
    return c * 0.1 + t.transpose(t.tanh(c))


@pytest.mark.parametrize("n", [40, 72])        # a transpose loop, plain and tiled
@pytest.mark.parametrize("body", [transposed, through_fused])
def test_a_loop_reading_its_input_elsewhere_does_not_write_over_it(n, body):
    """c is read at other positions than the loop writes: never in place."""
    def f(x):
        d = tnp.exp(body(tnp, tnp.cumsum(x, axis=1)))      # materialized
        return tnp.cumsum(d * tnp.tanh(d), axis=0)
    x = RNG.standard_normal((n, n)).astype(np.float32)
    sched, plan = plan_of(f, x)
    loops = [c for s in sched.steps for c in s.calls if c.group.kind == "loop"]
    assert loops
    for c in loops:
        leaf, root = c.buffers
        assert plan.offsets[leaf - 1] != plan.offsets[root - 1]
    d = np.exp(body(np, np.cumsum(x, axis=1)))
    np.testing.assert_allclose(tracer.jit(f)(x), np.cumsum(d * np.tanh(d), axis=0), rtol=1e-5)


# int32's cumsum is int64 (NumPy's promotion): no result can take the donated int32 buffers
@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, ml_dtypes.bfloat16])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (33, 65)])
def test_shared_and_donated_buffers_give_the_interpreters_results(dtype, shape):
    def f(x, y):
        c = tnp.cumsum(x, axis=0)
        d = c * 3 - y
        return tnp.cumsum(d * c, axis=1), d
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    y = (RNG.standard_normal(shape) * 4).astype(dtype)
    expect = tracer.jit(f, backend="numpy")(x, y)
    g = tracer.jit(f, donate_argnums=(0, 1))
    for _ in range(2):
        got = g(x.copy(), y.copy())
        for a, b in zip(got, expect):
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-2)
        assert not np.shares_memory(got[0], got[1])


def test_a_donated_argument_holds_the_result():
    f = tracer.jit(lambda x, y: (x * 2.0 + y, tnp.sin(y)), donate_argnums=0)
    x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    where = x.ctypes.data
    a, b = f(x, y)
    assert a.ctypes.data == where
    np.testing.assert_allclose(a, np.arange(8) * 2.0 + 1.0)
    np.testing.assert_allclose(y, 1.0)                       # not donated: unchanged
    assert not np.shares_memory(b, y) and not np.shares_memory(a, b)


def _step(x, y, *, z):
    return x * 2.0 + y + z, tnp.sin(y)


@pytest.mark.parametrize("options, call", [
    ({"donate_argnames": "x"}, lambda f, x, y, z: f(x, y, z=z)),
    ({"donate_argnames": "x"}, lambda f, x, y, z: f(y=y, x=x, z=z)),
    ({"donate_argnums": 0}, lambda f, x, y, z: f(y=y, x=x, z=z)),   # named, donated by position
], ids=["positional", "by-keyword", "argnums-by-keyword"])
def test_a_donated_argument_is_the_one_named_however_it_is_passed(options, call):
    f = tracer.jit(_step, **options)
    x, y, z = np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    where = x.ctypes.data
    a, b = call(f, x, y, z)
    assert a.ctypes.data == where
    np.testing.assert_allclose(a, np.arange(8) * 2.0 + 1.0)
    np.testing.assert_allclose(y, 1.0)
    np.testing.assert_allclose(z, 0.0)


def test_a_keyword_only_argument_can_be_donated():
    f = tracer.jit(_step, donate_argnames="z")
    x, y, z = np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros(8, np.float32)
    where = z.ctypes.data
    a, _ = f(x, y, z=z)
    assert a.ctypes.data == where
    np.testing.assert_allclose(x, np.arange(8))          # not donated: unchanged
    with pytest.raises(ValueError, match="donate_argnames"):
        tracer.jit(_step, donate_argnames="w")


def test_a_donated_parameter_tree_is_updated_in_its_own_buffers():
    step = tracer.jit(lambda p: tracer.tree_util.tree_map(lambda v: v - 0.1 * tnp.tanh(v), p),
                      donate_argnums=0)
    params = {"w": np.ones((300, 300), np.float32), "b": np.zeros(5)}
    where = [v.ctypes.data for v in params.values()]
    expect = {k: v.copy() for k, v in params.items()}
    for _ in range(3):
        params = step(params)
        expect = {k: v - 0.1 * np.tanh(v) for k, v in expect.items()}
    assert [params[k].ctypes.data for k in ("w", "b")] == where
    for k in params:
        np.testing.assert_allclose(params[k], expect[k], rtol=1e-6)


def test_an_argument_also_passed_undonated_is_not_written():
    f = tracer.jit(lambda x, y: x * 2.0 + y, donate_argnums=0)
    x = np.arange(6.0)
    base = np.arange(12.0)
    view = base[:6]
    for args in [(x, x), (base[:6], view), (view, base[:6])]:
        keep = [a.copy() for a in args]
        out = f(*args)
        np.testing.assert_allclose(out, keep[0] * 2.0 + keep[1])
        assert not np.shares_memory(out, args[1])
        np.testing.assert_array_equal(args[1], keep[1])


def test_constants_and_read_only_arrays_are_never_written():
    w = np.arange(4.0)
    f = tracer.jit(lambda x: x + w, donate_argnums=0)
    np.testing.assert_allclose(f(w), 2 * np.arange(4.0))        # w itself is donated
    np.testing.assert_allclose(f(np.ones(4)), np.arange(4.0) + 1)   # its constant is not
    const = f.lower(np.ones(4))._consts[0]
    np.testing.assert_allclose(f(const), 2 * np.arange(4.0))
    np.testing.assert_allclose(const, np.arange(4.0))
    frozen = np.ones(4)
    frozen.flags.writeable = False
    assert not np.shares_memory(f(frozen), frozen)


def test_an_input_read_after_the_output_is_written_is_not_donated():
    """y = x + 1 is written before x's last read (the sum): x keeps its values."""
    def f(x):
        y = tnp.cumsum(x, axis=0) + 1.0
        return y, tnp.sum(x * y)
    x = RNG.standard_normal(16)
    keep = x.copy()
    y, s = tracer.jit(f, donate_argnums=0)(x)
    np.testing.assert_allclose(y, np.cumsum(keep) + 1.0)
    np.testing.assert_allclose(s, np.sum(keep * (np.cumsum(keep) + 1.0)))


@pytest.mark.parametrize("threads", [1, 2])
def test_a_donated_weight_holds_its_update_made_in_a_matmul_epilogue(threads, monkeypatch):
    """SGD's `w - lr * dw` runs in the epilogue of the matmul making dw
    (lowering.llvm.epilogues); with w donated, it is written over w's own array, chunk by
    chunk after the matmul's rows (which do not read w), and gives the interpreter's
    values."""
    monkeypatch.setenv("TRACER_NUM_THREADS", str(threads))
    monkeypatch.setattr(settings, "parallel_ns", 0)
    x = RNG.standard_normal((300, 70)).astype(np.float32)

    def step(w1, w2):
        g1, g2 = tracer.grad(lambda w1, w2: tnp.sum(tnp.tanh(tnp.tanh(x @ w1) @ w2) ** 2),
                             argnums=(0, 1))(w1, w2)
        return w1 - 0.1 * g1, w2 - 0.1 * g2
    w1, w2 = (RNG.standard_normal(s).astype(np.float32) / 8 for s in ((70, 130), (130, 90)))
    expect = tracer.jit(step, backend="numpy")(w1, w2)
    a1, a2 = w1.copy(), w2.copy()
    where = (a1.ctypes.data, a2.ctypes.data)
    got = tracer.jit(step, donate_argnums=(0, 1))(a1, a2)
    assert (got[0].ctypes.data, got[1].ctypes.data) == where
    for g, e in zip(got, expect):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def _place_reference(allocations):
    """The placement rule in its plainest form: largest first, each at the lowest aligned
    offset clear of every placed allocation whose lifetime overlaps its own."""
    placed, offsets = [], {}
    for a in sorted(allocations, key=lambda a: (-a[2], a[0])):
        size, at = schedule.aligned(a[2]), 0
        for off, top in sorted((off, off + schedule.aligned(b[2])) for off, b in placed
                               if b[0] <= a[1] and a[0] <= b[1]):
            if off - at >= size:
                break
            at = max(at, top)
        placed.append((at, a))
        offsets.update((k, at) for k in a[3])
    return offsets, max((off + schedule.aligned(b[2]) for off, b in placed), default=0)


@pytest.mark.parametrize("seed", range(20))
def test_placement_finds_the_lowest_gap_as_the_plain_rule(seed):
    rng = np.random.default_rng(seed)
    allocations = []
    for k in range(int(rng.integers(0, 300))):
        start = int(rng.integers(0, 200))
        size = int(rng.choice([0, 1, 8, 64, 100, 4096, 5000]))
        allocations.append([start, start + int(rng.integers(0, 60)), size, [k]])
    assert liveness._place(allocations) == _place_reference(allocations)
