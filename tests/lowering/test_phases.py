"""The llvm compiler's phases (lowering/llvm/schedule.py, codegen.py, artifact.py): the
schedule of a graph is plain data with a readable text form (a fused chain is one
segment, a big elementwise graph a parallel step, a numpy fallback a Python step, a
fori_loop a nested schedule); codegen reads it and writes nothing back; the artifact
round-trips through the graph cache's plain form."""
import marshal
import warnings

import numpy as np

import tracer
import tracer.numpy as tnp
from lowering.llvm import artifact, codegen, compile_graph, graph_cache, matmul, program, schedule
from lowering.settings import settings

X = np.linspace(-1, 1, 8, dtype=np.float32)
W = np.eye(8, dtype=np.float32) * 0.5


def graph_of(f, *args):
    return program.optimize(tracer.make_graph(f)(*args))


def schedule_of(f, *args, threads=1):
    part = schedule.partition(graph_of(f, *args))
    return schedule.Schedule(part, threads, settings.parallel_ns)


def test_a_fused_chain_is_one_segment_of_one_loop():
    s = schedule_of(lambda x: tnp.tanh(x) * 2.0 + 1.0, X)
    assert str(s) == "\n".join([
        "schedule: 1 inputs, 0 consts, 1 per-call buffers",
        "  segment:",
        "    g0 loop(8,) [5 nodes] b0 -> b1 | items 8, ~6 ns",
        "  outs b1"])
    assert s.specs == (((8,), np.dtype(np.float32)),) and s.outs == (1,)


def test_a_big_elementwise_graph_is_a_parallel_step_when_threads_pay():
    x = np.ones(1 << 22, np.float32)
    f = lambda x: tnp.tanh(x) * 2.0        # noqa: E731
    assert [st.kind for st in schedule_of(f, x, threads=2).steps] == ["parallel"]
    assert [st.kind for st in schedule_of(f, x, threads=1).steps] == ["segment"]
    assert [st.kind for st in schedule_of(f, X, threads=2).steps] == ["segment"]
    step = schedule_of(f, x, threads=3).steps[0]
    assert step.threads == 3 and step.program_step({}) == (
        "parallel", (("g0", (0, 1), 1 << 22, None),), 3)


def test_a_numpy_fallback_is_a_python_step_between_segments():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = schedule_of(lambda a: tnp.exp(tnp.linalg.inv(a * 2.0)) + 1.0, np.eye(4))
    assert [st.kind for st in s.steps] == ["segment", "python", "segment"]
    assert str(s).splitlines()[3] == "  python solve: b2 b1 -> b3"


def test_launch_facts_of_a_kernel_with_a_prepare_step():
    a = np.ones((64, 64), np.float32)
    seg, = schedule_of(lambda a, b: a @ b, a, a).steps
    call, = seg.calls
    assert call.launch.items == 64 and call.launch.prepare and call.launch.scratch > 0
    packs = matmul.pack_plan(1, 64, 64, np.float32)[1]
    assert call.launch.prepare == packs
    assert [(f, items) for f, _, items in seg.entries()] == [("g0.prep", packs), ("g0", 64)]
    assert "+ scratch b" in str(seg.lines())


def test_a_fori_loop_has_its_body_scheduled_under_it():
    s = schedule_of(lambda v, w: tracer.lax.fori_loop(
        0, 10, lambda i, v: tnp.tanh(w @ v) + v, v), X, W)
    call, = s.steps[0].calls
    (label, body), = call.regions
    assert label == "body" and body is schedule.region(body.graph) and not body.python
    assert [c.group.kind for c in body.calls] == [g.kind for g in body.part.groups]
    text = str(s).splitlines()
    assert text[2].startswith("    g0 scan [1 nodes] b0 b1 -> ") and "scratch" in text[2]
    assert text[3] == f"      body: temps {body.temps} B, shared {body.shared} B"
    assert text[4].startswith("        g0 ")
    assert str(body).splitlines()[1:] == [ln[6:] for ln in text[4:-1]]
    assert body.scratch == body.temps + body.shared
    s = schedule_of(lambda v: tracer.lax.while_loop(
        lambda v: tnp.sum(v) < 100.0, lambda v: v * 2.0, v), X + 2)
    assert [label for label, _ in s.steps[0].calls[0].regions] == ["cond", "body"]


def test_codegen_writes_nothing_into_the_partition():
    s = schedule_of(lambda v, w: (tnp.sum(tnp.exp(w @ v)), tracer.nn.softmax(w)), X, W)
    before = [dict(vars(g)) for g in s.part.groups]
    codegen.emit_program(s)
    assert [dict(vars(g)) for g in s.part.groups] == before


def test_an_artifact_round_trips_through_the_graph_cache(monkeypatch):
    monkeypatch.setenv("TRACER_DISK_CACHE", "0")

    def f(v, w):
        return tnp.tanh(w @ v) * 2.0, tnp.sum(v), 3.0
    g = graph_of(f, X, W)
    sched = schedule.Schedule(schedule.partition(g), 2, 0)
    art = artifact.build(sched, codegen.emit_program(sched))
    assert artifact.cacheable(art)
    g2 = graph_of(f, X, W)          # the same structure, other objects
    back = artifact.decode(marshal.loads(marshal.dumps(artifact.encode(art, g))), g2)
    assert (back.text, back.errors, back.specs, back.steps) == (
        art.text, art.errors, art.specs, art.steps)
    assert back.outs[:2] == art.outs[:2] and back.outs[2] is g2.outvars[2]
    assert str(back.graph) == str(art.graph)
    key = graph_cache.key_of(g)
    graph_cache.store(key, g, art)
    assert graph_cache.lookup(key, g2).text == art.text
    got = program.Program(back).run([X, W])
    want = compile_graph(tracer.make_graph(f)(X, W)).run([X, W])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)
