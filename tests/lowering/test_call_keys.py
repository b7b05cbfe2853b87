"""codegen does not emit a call whose key (graph_cache.call_key: what its emission reads)
an earlier call had; its entries forward to that call's. Each case is checked against
the code too: sharing_check emits the module again without keys, and text sharing must
find every call a key forwarded equal to the call it forwards to."""
import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from lowering.llvm import artifact, codegen, graph_cache, program, schedule
from sharing_check import check, unchecked_emit_program

RNG = np.random.default_rng(0)
X = RNG.standard_normal((64, 32)).astype(np.float32)
WS = [RNG.standard_normal((32, 32)).astype(np.float32) * 0.3 for _ in range(4)]


def build(f, args):
    g = program.optimize(tracer.make_graph(f)(*args))
    sched = schedule.Schedule(schedule.partition(g), 2, 0)
    mb = codegen.emit_program(sched, graph_cache.call_key)
    check(sched, mb)
    return sched, mb


def run(sched, mb, args):
    return [np.asarray(r) for r in program.Program(artifact.build(sched, mb)).run(args)]


def test_identical_layers_are_emitted_once(monkeypatch):
    emitted = []
    monkeypatch.setattr(codegen, "emit_group", lambda mb, part, call, name, emit=codegen.emit_group:
                        emitted.append(name) or emit(mb, part, call, name))

    def mlp(x, *ws):
        for w in ws:
            x = tnp.tanh(x @ w)
        return tnp.sum(x * x)
    g = program.optimize(tracer.make_graph(mlp)(X, *WS))
    sched = schedule.Schedule(schedule.partition(g), 2, 0)
    mb = unchecked_emit_program(sched, graph_cache.call_key)
    calls = [c.name for s in sched.steps for c in s.calls]
    assert len(mb.forwarded) >= 2 and set(mb.forwarded).isdisjoint(emitted)
    assert len(emitted) + len(mb.forwarded) == len(calls)
    check(sched, mb)
    x = X
    for w in WS:
        x = np.tanh(x @ w)
    np.testing.assert_allclose(run(sched, mb, [X] + WS)[0], np.sum(x * x), rtol=1e-4)


def _zeros(x, v, w):    # constants 0.0 and -0.0 compare equal, but not their code
    zeros = [tnp.full(x.shape, c) for c in (0.0, -0.0)]
    return [tnp.signbit((x @ m) * z) for m, z in zip((v, w), zeros)]


def _axes(x, v, w):     # the same kernel and shapes, other attrs
    return [tnp.sum(tnp.tanh(x @ m), axis=a) for m, a in ((v, 0), (w, 1))]


def _order(x, v, w):    # the same nodes, inputs swapped
    return [tnp.tanh(x @ v) - x, x - tnp.tanh(x @ w)]


def _dtypes(x, v, w):   # w is float64
    return [tnp.tanh(x @ v), tnp.tanh(w @ w)]


@pytest.mark.parametrize("f", [_zeros, _axes, _order, _dtypes], ids=lambda f: f.__name__)
def test_calls_differing_in_what_their_code_reads_keep_their_own(f):
    args = [RNG.standard_normal((32, 32)).astype(np.float32), WS[0],
            WS[1].astype(np.float64 if f is _dtypes else np.float32)]
    sched, mb = build(f, args)
    calls = [(c.name, (s.kind, c.group.kind, [n.kernel for n in c.group.nodes]))
             for s in sched.steps for c in s.calls]
    plain = codegen.emit_program(sched).forwarded
    # calls with the same kernels whose code differs: a key blind to the difference forwards
    assert any(k == j and plain.get(a, a) != plain.get(b, b)
               for i, (a, k) in enumerate(calls) for b, j in calls[i + 1:])
    want = tracer.jit(f, backend="numpy")(*args)
    for got, ref in zip(run(sched, mb, args), want):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-5, atol=1e-5)
