"""Segment calls whose group functions differ only by name (an optimizer's update of each
parameter: the same ops on tensors of different sizes) share one body in the module: the
later calls' functions call the first's, within a segment and across segments, and each
still works on its own buffers."""
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


def build(rates, segment_size):
    g = program.optimize(tracer.make_graph(update(rates))(*PARAMS, *GRADS, *MOMENTS))
    sched = schedule.Schedule(schedule.partition(g), 1, 0, segment_size)
    return sched, artifact.build(sched, codegen.emit_program(sched))


def bodies(text):
    """Names of the group functions with a loop of their own."""
    return re.findall(r'^define internal i64 @"(g\d+)"\([^\n]*\n\{\n(?:(?!^\}).*\n)*?'
                      r'"?\w+\.body"?:', text, re.M)


def check(rates, segment_size):
    sched, art = build(rates, segment_size)
    got = program.Program(art).run(PARAMS + GRADS + MOMENTS)
    for a, b in zip(got, reference(rates)):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6)
    return sched, art


def test_equal_updates_of_different_sizes_share_one_body():
    sched, art = check([0.01] * 4, 10_000)
    assert [s.kind for s in sched.steps] == ["segment"]
    assert len(sched.steps[0].calls) == 4
    assert len(bodies(art.text)) == 1, art.text


def test_sharing_reaches_across_segments():
    sched, art = check([0.01] * 4, 12)
    assert [s.kind for s in sched.steps].count("segment") > 1
    assert len(bodies(art.text)) == 1, art.text
    shared = bodies(art.text)[0]
    assert re.search(r'^define internal i64 @"' + shared + r'"\(.*noinline', art.text, re.M)


def test_updates_differing_in_a_constant_keep_their_own_bodies():
    _, art = check([0.01, 0.02, 0.01, 0.02], 10_000)
    assert len(bodies(art.text)) == 2, art.text
