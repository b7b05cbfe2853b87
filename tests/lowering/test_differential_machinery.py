"""The program-level machinery on random mixed-kernel programs (those of
test_differential_programs.py), llvm against the numpy backend: results that are arrays
of their own (never an input, a constant or another result; unchanged by later calls,
whose large outputs are recycled), donated arguments, one jitted function called with
new shapes, loop, cond and vmap bodies nested in each other, several threads calling one
function while it traces new signatures, and code reloaded from the disk cache by a
fresh process."""
import threading
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

import tracer
import tracer.numpy as tnp
from fresh import run_script
from lowering.settings import settings
from test_differential_programs import (OPS, SHAPES, SMOOTH, build, close, inputs, steps,
                                        threads)  # noqa: F401  (threads: a fixture)
from tracer import lax

SETTINGS = hsettings(max_examples=10, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.function_scoped_fixture])
LARGE = (130, 300)      # float64: 312 KB, past buffers.RECYCLE_MIN


def interpreted(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return tracer.jit(f, backend="numpy")(*args)


def _own(results, args):
    """No result shares memory with another result or with an argument."""
    for i, r in enumerate(results):
        assert not any(np.shares_memory(r, a) for a in args)
        assert not any(np.shares_memory(r, s) for s in results[i + 1:])


@SETTINGS
@given(steps(sorted(OPS)), st.sampled_from([(6, 5), LARGE]), st.integers(0, 2**16),
       st.sampled_from([(), (0,), (0, 1)]))
def test_results_are_arrays_of_their_own(prog, shape, seed, donate):
    f = build(prog, n_out=4)          # may return an argument itself, or one value twice
    x, y = inputs(shape, seed)
    x2, y2 = inputs(shape, seed + 1)
    want, want2 = interpreted(f, x, y), interpreted(f, x2, y2)
    jf = tracer.jit(f, donate_argnums=donate)
    args = (x.copy(), y.copy())
    got = jf(*args)
    close(got, want, 1e-10)
    _own(got, [a for k, a in enumerate(args) if k not in donate])
    for k, a in enumerate(args):
        if k not in donate:
            np.testing.assert_array_equal(a, (x, y)[k])
    for r in got:
        r[...] = 7.0
    again = jf(x2.copy(), y2.copy())   # may recycle buffers, not the ones still held
    close(again, want2, 1e-10)
    assert all((r == 7.0).all() for r in got)


def test_one_function_called_with_new_shapes():
    prog = [("matmul", 0, 1), ("conv", 2, 0), ("cumsum", 3, 1), ("sort", 4, 2),
            ("scatter", 5, 3), ("gram", 6, 0), ("xt_dy", 7, 1), ("reduce01", 8, 4)]
    f = build(prog)
    jf = tracer.jit(f)
    for shape in SHAPES + SHAPES[::-1]:
        x, y = inputs(shape, sum(shape))
        close(jf(x, y), interpreted(f, x, y), 1e-10)


def _nest(kind, g):
    """g (two (m, n) values -> two) inside one control-flow or batching transform, again
    two (m, n) values -> two."""
    fold = lambda carry, ys: (carry, ys[0] - ys[1] * 0.5)
    if kind == "scan":
        return lambda a, b: fold(*lax.scan(lambda c, x: (tnp.tanh(g(c, x)[0]), g(c, x)[1]), a,
                                           tnp.stack([b, b * 0.5])))
    if kind == "scan_reverse":
        return lambda a, b: fold(*lax.scan(lambda c, x: (tnp.tanh(g(x, c)[1]), c), a,
                                           tnp.stack([b, a]), reverse=True, unroll=2))
    if kind == "fori":
        return lambda a, b: lax.fori_loop(0, 2, lambda i, c: (tnp.tanh(g(*c)[1]), c[1] * 0.9),
                                          (a, b))
    if kind == "while":
        return lambda a, b: lax.while_loop(lambda c: c[2] < 2, lambda c: (
            tnp.tanh(g(c[0], c[1])[0]), c[1], c[2] + 1), (a, b, 0))[:2]
    if kind == "cond":
        return lambda a, b: lax.cond(tnp.sum(a) > tnp.sum(b), g, lambda u, v: g(v, u), a, b)
    if kind == "vmap":
        return lambda a, b: tuple(o[0] - o[1] * 0.5 for o in
                                  tracer.vmap(g)(tnp.stack([a, b]), tnp.stack([b, a])))
    if kind == "vmap_axis1":
        return lambda a, b: tuple(o[:, 0] - o[:, 1] * 0.5 for o in tracer.vmap(
            g, in_axes=(1, None), out_axes=1)(tnp.stack([a, b], axis=1), b))
    return tracer.checkpoint(g)


NESTS = ["scan", "scan_reverse", "fori", "while", "cond", "vmap", "vmap_axis1", "remat"]


@SETTINGS
@given(steps(SMOOTH), st.sampled_from(SHAPES[:3]), st.integers(0, 2**16),
       st.lists(st.sampled_from(NESTS), min_size=1, max_size=2), st.booleans())
def test_nested_bodies_and_their_gradients(threads, prog, shape, seed, nests, grad):
    f = build(prog, n_out=2)
    for kind in nests:
        f = _nest(kind, f)
    leaves = tracer.tree_util.tree_leaves
    fn = tracer.value_and_grad(lambda a, b: sum(tnp.sum(tnp.sin(v)) for v in leaves(f(a, b))),
                               argnums=(0, 1)) if grad else f
    x, y = inputs(shape, seed)
    close(leaves(tracer.jit(fn)(x, y)), leaves(interpreted(fn, x, y)), 1e-8)


def test_threads_calling_one_function_while_it_traces(monkeypatch):
    """Six threads call one function and its gradient on every shape, each in its own
    order, so new signatures are traced and compiled while others run; groups split."""
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    monkeypatch.setattr(settings, "parallel_ns", 0)
    f = build([("matmul", 0, 1), ("sort", 2, 0), ("scatter", 3, 1), ("conv", 4, 2),
               ("cumsum", 5, 3)])
    loss = tracer.grad(lambda a, b: tnp.sum(tnp.sin(f(a, b)[-1])))
    cases = [inputs(s, k) for k, s in enumerate(SHAPES[:4])]
    wants = [(interpreted(f, *c), interpreted(loss, *c)) for c in cases]
    jf, jloss, errors = tracer.jit(f), tracer.jit(loss), []

    def work(i):
        try:
            for r in range(2 * len(cases)):
                k = (i + r) % len(cases)
                close(jf(*cases[k]), wants[k][0], 1e-10)
                close([jloss(*cases[k])], [wants[k][1]], 1e-10)
        except BaseException as e:      # noqa: BLE001  (reported below)
            errors.append(e)
    pool = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not errors, errors[0]


SCRIPT = """
import sys, numpy as np
sys.path.insert(0, "tests/lowering")
import tracer
from lowering.llvm import target
from test_differential_programs import OPS, SHAPES, build, inputs
names, out = sorted(OPS), {}
for k in range(4):
    rng = np.random.default_rng(k)
    prog = [(names[rng.integers(len(names))], int(rng.integers(10)), int(rng.integers(10)))
            for _ in range(6)]
    for j, r in enumerate(tracer.jit(build(prog))(*inputs(SHAPES[k % 4], k))):
        out[f"{k}_{j}"] = r
np.savez(sys.argv[1], **out)
print(target.stats["compiled"], target.stats["disk_hits"])
"""


def test_code_reloaded_from_the_disk_cache_by_a_fresh_process(tmp_path):
    runs = []
    for n in range(2):
        compiled, hits = map(int, run_script(SCRIPT, tmp_path / f"{n}.npz",
                                             cache=tmp_path / "cache").split())
        runs.append(np.load(tmp_path / f"{n}.npz"))
    assert compiled == 0 and hits >= 4          # the second process compiled nothing
    names = sorted(OPS)
    for k in range(4):
        rng = np.random.default_rng(k)
        prog = [(names[rng.integers(len(names))], int(rng.integers(10)),
                 int(rng.integers(10))) for _ in range(6)]
        want = interpreted(build(prog), *inputs(SHAPES[k % 4], k))
        for j, w in enumerate(want):
            close([runs[0][f"{k}_{j}"]], [w], 1e-10)
            np.testing.assert_array_equal(runs[1][f"{k}_{j}"], runs[0][f"{k}_{j}"])
