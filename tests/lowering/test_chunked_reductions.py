"""A reduction to one element of at least reductions.SPLIT_AT items runs in chunks: its
prepare step computes each chunk's partial result on all threads, its one work item
combines them in order (W3's sum(x*x) over 64 MB: one thread read half the copy bandwidth
of a Zen 3 host). The chunks do not depend on the thread count, so neither do the
results; they agree with the numpy backend, NaN and all."""
import ml_dtypes
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import program, reductions, schedule
from lowering.settings import settings

N = reductions.SPLIT_AT


def _schedule(f, x, threads):
    part = schedule.partition(program.optimize(tracer.make_graph(f)(x)))
    return schedule.Schedule(part, threads, settings.parallel_ns)


def test_a_big_full_reduction_is_chunks_split_across_threads():
    x = np.ones(N + 5, np.float32)
    step, = _schedule(lambda a: tnp.sum(a * a), x, threads=2).steps
    chunks = -(-(N + 5) // reductions.CHUNK)
    assert step.kind == "parallel"
    call, = step.calls
    assert call.launch.items == 1 and call.launch.prepare == chunks
    assert call.launch.scratch == chunks * 8         # float64 partials of a float32 sum
    assert [(f, n) for f, _, n, _ in step.program_step({})[1]] == [("g0.prep", chunks),
                                                                   ("g0", 1)]


@pytest.mark.parametrize("size", [N - 1, 1 << 10])
def test_smaller_reductions_and_ones_keeping_an_axis_are_not_chunked(size):
    seg, = _schedule(lambda a: tnp.sum(a), np.ones(size, np.float32), threads=2).steps
    assert seg.calls[0].launch.prepare == 0
    seg, = _schedule(lambda a: tnp.sum(a, axis=1), np.ones((2, N), np.float32), 2).steps
    assert all(c.launch.prepare == 0 for c in seg.calls)


def _run(f, x, threads, monkeypatch, backend="llvm"):
    monkeypatch.setenv("TRACER_NUM_THREADS", str(threads))
    out = tracer.jit(f, backend=backend)(x)
    return out if isinstance(out, tuple) else np.asarray(out)


KERNELS = {"sum": tnp.sum, "max": tnp.max, "min": tnp.min, "prod": tnp.prod,
           "sum of squares": lambda a: tnp.sum(a * a)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8,
                                   ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("shape", [(N,), (3, 1, N // 3 + 7), (N // 100 + 1, 100)])
def test_chunked_results_match_the_numpy_backend_on_any_thread_count(dtype, shape,
                                                                      monkeypatch):
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    if np.dtype(dtype).kind in "iu":
        x = rng.integers(0, 3, shape).astype(dtype)
    for name, f in KERNELS.items():
        if name == "prod":
            x = np.where(rng.random(shape) < 0.5, 1, -1).astype(dtype)
        one, two = (_run(f, x, t, monkeypatch) for t in (1, 2))
        ref = _run(f, x, 1, monkeypatch, backend="numpy")
        assert one.dtype == ref.dtype and one.tobytes() == two.tobytes(), name
        if np.dtype(dtype).kind in "iu" or name in ("max", "min", "prod"):
            assert one == ref, name
        else:
            tol = 3e-2 if np.dtype(dtype).itemsize == 2 else 1e-5
            np.testing.assert_allclose(np.float64(one), np.float64(ref), rtol=tol,
                                       atol=tol * np.sqrt(x.size), err_msg=name)


def test_nan_in_one_chunk_reaches_the_result(monkeypatch):
    x = np.zeros(N + 3, np.float32)
    x[N + 1] = np.nan          # in the last, shorter chunk
    for f in (tnp.max, tnp.min, tnp.sum):
        assert np.isnan(_run(f, x, 2, monkeypatch))
    x[:] = 1
    x[7] = -np.inf
    assert _run(tnp.min, x, 2, monkeypatch) == -np.inf
    assert _run(tnp.sum, x, 2, monkeypatch) == -np.inf


def test_chunked_reductions_in_loop_bodies_and_gradients(monkeypatch):
    x = np.random.default_rng(1).standard_normal(N + 9).astype(np.float32)

    def loop(x):
        return tracer.lax.fori_loop(0, 3, lambda i, acc: acc + tnp.sum(x * (i + 1.0)) +
                                    tnp.max(x - i), tnp.float32(0))

    def scanned(x):
        return tracer.lax.scan(lambda c, r: (c + tnp.sum(r * r), tnp.min(r)), tnp.float32(0),
                               tnp.stack([x, -x]))
    for f in (loop, scanned, tracer.grad(lambda x: tnp.sum(x * x) + tnp.max(x))):
        got, want = (tracer.tree_util.tree_leaves(_run(f, x, 2, monkeypatch, backend))
                     for backend in ("llvm", "numpy"))
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.float64(a), np.float64(b), rtol=1e-5, atol=1e-3)
