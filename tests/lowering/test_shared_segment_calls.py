"""Segment calls whose group functions differ only by name (an optimizer's update of each
parameter: the same ops on tensors of different sizes) share one body in the module: the
later calls have no functions, their entries in the segment's table (and in a parallel
step) are the first's, and each still works on its own buffers and work items."""
import re

import numpy as np

import tracer
import tracer.numpy as tnp
from lowering.llvm import artifact, codegen, program, schedule

RNG = np.random.default_rng(0)
SHAPES = [(64,), (32, 16), (8, 8, 8), (3, 5)]
PARAMS = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]
MOMENTS = [np.abs(RNG.standard_normal(s)).astype(np.float32) for s in SHAPES]


def update(rates):
    def f(*args):
        n = len(SHAPES)
        ps, gs, ms = args[:n], args[n:2 * n], args[2 * n:]
        out = []
        for p, g, m, rate in zip(ps, gs, ms, rates):
            m = 0.9 * m + 0.1 * g * g
            out += [p - rate * g / (tnp.sqrt(m) + 1e-8), m]
        return out
    return f


def reference(rates):
    out = []
    for p, g, m, rate in zip(PARAMS, GRADS, MOMENTS, rates):
        m = np.float32(0.9) * m + np.float32(0.1) * g * g
        out += [p - np.float32(rate) * g / (np.sqrt(m) + np.float32(1e-8)), m]
    return out


def build(rates, threads=1, parallel_ns=0):
    g = program.optimize(tracer.make_graph(update(rates))(*PARAMS, *GRADS, *MOMENTS))
    sched = schedule.Schedule(schedule.partition(g), threads, parallel_ns)
    return sched, artifact.build(sched, codegen.emit_program(sched))


def bodies(text):
    """Names of the group functions with a loop of their own."""
    return re.findall(r'^define internal i64 @"(g\d+)"\([^\n]*\n\{\n(?:(?!^\}).*\n)*?'
                      r'"?\w+\.body"?:', text, re.M)


def called(art):
    """The functions the program's steps call, in order."""
    return [f for step in art.steps
            for f in ([f for f, _, _ in step[2]] if step[0] == "segment" else
                      [f for f, _, _, _ in step[1]])]


def check(rates, **options):
    sched, art = build(rates, **options)
    got = program.Program(art).run(PARAMS + GRADS + MOMENTS)
    for a, b in zip(got, reference(rates)):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6)
    return sched, art


def test_equal_updates_of_different_sizes_share_one_body():
    sched, art = check([0.01] * 4)
    assert [s.kind for s in sched.steps] == ["segment"]
    assert len(sched.steps[0].calls) == 4
    assert bodies(art.text) == called(art)[:1] and len(set(called(art))) == 1, art.text
    assert sorted(items for _, _, items in art.steps[0][2]) == [15, 64, 512, 512]


def test_sharing_reaches_across_steps():
    """A parallel step runs the body a segment's call has (and the other way round)."""
    sched, _ = build([0.01] * 4)
    ns = sorted(c.launch.ns for c in sched.steps[0].calls)
    sched, art = check([0.01] * 4, threads=2, parallel_ns=(ns[0] + ns[-1]) / 2)
    assert {"segment", "parallel"} <= {s.kind for s in sched.steps}
    assert len(bodies(art.text)) == 1 and len(set(called(art))) == 1, art.text


def test_updates_differing_in_a_constant_keep_their_own_bodies():
    _, art = check([0.01, 0.02, 0.01, 0.02])
    assert len(bodies(art.text)) == 2 and len(set(called(art))) == 2, art.text


def deep_mlp(layers):
    """value_and_grad of a `layers`-deep tanh MLP, 8 wide: every call a segment's."""
    ws = [RNG.standard_normal((8, 8)).astype(np.float32) * 0.3 for _ in range(layers)]
    x = RNG.standard_normal((4, 8)).astype(np.float32)

    def loss(ws, x):
        for w in ws:
            x = tnp.tanh(x @ w)
        return tnp.sum(x * x)
    return tracer.value_and_grad(loss), ws, x


def test_a_deep_graph_has_the_code_of_its_distinct_calls_only():
    """The module of a 64-layer MLP's gradient is the 4-layer one's, but for the
    segments' tables: code grows with distinct group bodies, not with calls."""
    texts = {}
    for layers in (4, 64):
        f, ws, x = deep_mlp(layers)
        prog = tracer.jit(f).lower(ws, x)
        assert prog.steps == ["segment"]
        texts[layers] = prog.as_text()
        (value, grads) = tracer.jit(f)(ws, x)
        want = tracer.jit(f, backend="numpy")(ws, x)
        np.testing.assert_allclose(value, want[0], rtol=1e-5)
        for a, b in zip(grads, want[1]):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert len(texts[64].splitlines()) <= len(texts[4].splitlines()) + 10
