"""Parallel calls whose functions differ only by name (a deep network's identical layers)
share one body in the module: the later calls' `.a` entries call the first's, and each
still works on its own buffers."""
import re

import numpy as np

import tracer
import tracer.numpy as tnp
from lowering.llvm import artifact, codegen, program, schedule
from lowering.settings import settings

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
    sched = schedule.Schedule(schedule.partition(g), 2, 0, settings.segment_size)
    return sched, artifact.build(sched, codegen.emit_program(sched))


def forwards(text):
    """{entry: entry it forwards to} of the module text."""
    return dict(re.findall(r'define i64 @"(g\d+[.\w]*\.a)"\(.*\n\{\n[.\w]+:\n'
                           r'\s*%"?[.\w]+"? = tail call i64 @"(g\d+[.\w]*\.a)"', text))


def reference(scales):
    x = X
    for w, s in zip(WS, scales):
        x = np.tanh(x @ w) * s
    return np.sum(x * x)


def test_identical_layers_share_one_body_and_keep_their_buffers():
    scales = [1.0] * 4
    sched, art = build(mlp(scales), [X] + WS)
    fwd = forwards(art.text)
    parallel = [c.name for s in sched.steps if s.kind == "parallel" for c in s.calls]
    assert len(fwd) >= 3, art.text[:2000]
    for entry, target in fwd.items():
        assert entry != target and target not in fwd      # to a body, never a chain
        name = entry.split(".")[0]
        assert name in parallel
        assert not re.search(r'^define [^\n]*@"' + re.escape(name) + r'"\(', art.text, re.M)
        assert re.search(r'^define i64 @"' + re.escape(target) + r'"\(.*noinline', art.text,
                         re.M)
    got = program.Program(art).run([X] + WS)
    np.testing.assert_allclose(np.asarray(got[0]), reference(scales), rtol=1e-4)


def test_layers_differing_in_a_constant_keep_their_own_bodies():
    scales = [1.0, 0.5, 1.0, 0.25]
    _, art = build(mlp(scales), [X] + WS)
    texts = {}
    for entry, target in forwards(art.text).items():
        texts.setdefault(target, []).append(entry)
    got = program.Program(art).run([X] + WS)
    np.testing.assert_allclose(np.asarray(got[0]), reference(scales), rtol=1e-4)
    same = build(mlp([1.0] * 4), [X] + WS)[1]
    assert len(forwards(art.text)) < len(forwards(same.text))
