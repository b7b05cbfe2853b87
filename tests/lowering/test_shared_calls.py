"""Parallel calls whose functions differ only by name (a deep network's identical layers)
share one body in the module: the later calls have no functions of their own, their
program steps call the first's `.a` entries, and each still works on its own buffers."""
import functools
import re

import numpy as np

import tracer
import tracer.numpy as tnp
from lowering.llvm import artifact, codegen, program, schedule

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 32)).astype(np.float32)
WS = [RNG.standard_normal((32, 32)).astype(np.float32) * 0.3 for _ in range(4)]


def mlp(scales):
    def f(x, *ws):
        for w, s in zip(ws, scales):
            x = tnp.tanh(x @ w) * s
        return tnp.sum(x * x)
    return f


def build(f, args):
    g = program.optimize(tracer.make_graph(f)(*args))
    sched = schedule.Schedule(schedule.partition(g), 2, 0)
    return sched, artifact.build(sched, codegen.emit_program(sched))


def forwards(sched, art):
    """{parallel call: the call whose functions its program step runs} for those that run
    another call's."""
    runs = {s.calls[0].name: step[1][-1][0] for s, step in zip(sched.steps, art.steps)
            if s.kind == "parallel"}
    return {name: other for name, other in runs.items() if other != name}


def reference(scales):
    x = X
    for w, s in zip(WS, scales):
        x = np.tanh(x @ w) * s
    return np.sum(x * x)


def test_identical_layers_share_one_body_and_keep_their_buffers():
    scales = [1.0] * 4
    sched, art = build(mlp(scales), [X] + WS)
    fwd = forwards(sched, art)
    assert len(fwd) >= 2, art.text[:2000]
    for name, target in fwd.items():
        assert target not in fwd                            # a body, never a chain
        assert not re.search(r'^define [^\n]*@"' + re.escape(name) + r'[".]', art.text, re.M)
        assert re.search(r'^define i64 @"' + re.escape(target) + r'\.a"\(', art.text, re.M)
    got = program.Program(art).run([X] + WS)
    np.testing.assert_allclose(np.asarray(got[0]), reference(scales), rtol=1e-4)


def test_layers_differing_in_a_constant_keep_their_own_bodies():
    scales = [1.0, 0.5, 1.0, 0.25]
    built = sched, art = build(mlp(scales), [X] + WS)
    got = program.Program(art).run([X] + WS)
    np.testing.assert_allclose(np.asarray(got[0]), reference(scales), rtol=1e-4)
    same = build(mlp([1.0] * 4), [X] + WS)
    assert len(forwards(*built)) < len(forwards(*same))


def test_kernels_with_pasted_code_share_only_when_that_code_matches():
    """Two convs of different shapes have the same group functions up to names; what
    differs is the IR text each pastes into the module. The second used to forward to
    the first and compute the first's conv on its own buffers (nan, or wrong numbers)."""
    from tracer import lax

    def convs(a, k1, m, n):
        dn = ("NHWC", "HWIO", "NHWC")
        conv = functools.partial(lax.conv_general_dilated, window_strides=(1, 1),
                                 padding=[(1, 1), (1, 1)], dimension_numbers=dn)
        return conv(a, k1), conv(m, n)

    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32)
            for s in [(8, 6, 6, 32), (3, 3, 32, 16), (16, 6, 6, 32), (6, 6, 32, 32)]]
    sched, art = build(convs, args)
    assert sum(s.kind == "parallel" for s in sched.steps) == 2
    assert not forwards(sched, art)
    want = tracer.jit(convs, backend="numpy")(*args)
    for got, ref in zip(program.Program(art).run(args), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-3)
    same = [args[0], args[1], args[0] * 2, args[1]]       # same shapes: one body
    sched, art = build(convs, same)
    assert len(forwards(sched, art)) >= 1
    want = tracer.jit(convs, backend="numpy")(*same)
    for got, ref in zip(program.Program(art).run(same), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-3)
