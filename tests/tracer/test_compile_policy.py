"""The background-compile policy (tracer.background_compile): which graphs interpret their first
calls beside a compile, which compile first, which calls wait for the native code, and
which thread does which part of the compile. A fake backend whose compile is split like
llvm's (`prepare` in the caller, the rest on the compile thread, held back by an Event)
makes every decision observable without timing a real compile."""
import threading

import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from lowering import host
from tracer import background_compile as programs

from compile_fakes import Sevens, chain

X = np.linspace(-1, 1, 5)


@pytest.fixture
def split(monkeypatch):
    """Backend "split": `prepare` returns a compile estimated at `seconds` and a finish
    that waits for `release`; records the thread each part ran on."""
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "10")
    monkeypatch.setattr(programs, "idle_cores", lambda: 1)
    state = {"release": threading.Event(), "seconds": 100.0, "threads": [], "cores": 1}

    def prepare(graph):
        state["threads"].append(("prepare", threading.current_thread()))

        def finish():
            state["threads"].append(("finish", threading.current_thread()))
            assert state["release"].wait(10)
            return Sevens(graph)
        finish.cores = state["cores"]
        return finish, state["seconds"]

    def compile_graph(graph):
        finish, _ = prepare(graph)
        return finish()
    compile_graph.prepare = prepare
    registry.register_backend("split", compile=compile_graph)
    yield state
    state["release"].set()
    registry.unregister_backend("split")


def compiling_of(f):
    (entry,) = f._cache.values()
    return entry.lowered


def test_prepare_runs_in_the_caller_and_only_the_rest_on_the_compile_thread(split):
    """The Python part of a compile holds the GIL: beside interpreted calls it would make
    each of their nodes wait for the GIL."""
    f = tracer.jit(chain, backend="split")
    np.testing.assert_allclose(f(X), np.asarray(chain(X)), rtol=1e-12)    # interpreted
    split["release"].set()
    assert isinstance(f.lower(X).program, Sevens)
    np.testing.assert_array_equal(f(X), 7.0)
    (_, prep), (_, fin) = split["threads"]
    assert prep is threading.main_thread() and fin is not threading.main_thread()


def test_a_compile_estimated_shorter_than_an_interpreted_call_runs_first(split):
    split["release"].set()
    split["seconds"] = 0                # a compile that takes no time, by the estimate
    assert programs.interpreted_cost(tracer.make_graph(chain)(X)) > 0
    f = tracer.jit(chain, backend="split")
    np.testing.assert_array_equal(f(X), 7.0)
    assert isinstance(compiling_of(f), Sevens)
    assert [t for _, t in split["threads"]] == [threading.main_thread()] * 2


def test_on_a_busy_host_the_compile_runs_first(split, monkeypatch):
    split["release"].set()
    monkeypatch.setattr(programs, "idle_cores", lambda: 0)
    np.testing.assert_array_equal(tracer.jit(chain, backend="split")(X), 7.0)


@pytest.mark.parametrize("idle", [1, 2])
def test_a_compile_in_parts_interprets_only_with_a_core_idle_for_each(split, monkeypatch,
                                                                      idle):
    """Interpreted calls take the caller's core, which a compile cut into parts would use:
    on a 2-core host (one core idle beside the caller) W20's whole run by default took
    1.07-1.25x its compile-first time. With a core idle for each part, it interprets."""
    split["cores"] = 2
    monkeypatch.setattr(programs, "idle_cores", lambda: idle)
    f = tracer.jit(chain, backend="split")
    if idle == 1:
        split["release"].set()
        np.testing.assert_array_equal(f(X), 7.0)           # compiled first: no interpreter
        assert isinstance(compiling_of(f), Sevens)
    else:
        np.testing.assert_allclose(f(X), np.asarray(chain(X)), rtol=1e-12)
        assert isinstance(compiling_of(f), programs.Compiling)
        split["release"].set()


def test_llvm_counts_the_cores_of_a_compile_by_its_parts():
    from lowering.llvm import split
    assert [split.cores(s) for s in (0.0, 0.1, 2 * split.PART_S - 0.01)] == [1, 1, 1]
    assert split.cores(2 * split.PART_S) == 2 and split.cores(1.0) == int(1.0 // split.PART_S)


@pytest.mark.parametrize("load, cpus, idle", [(0.9, 2, True), (1.6, 2, False),
                                              (0.1, 1, False), (6.0, 8, True)])
def test_a_core_is_idle_under_a_load_of_the_cpus_less_half_a_core(monkeypatch, load, cpus,
                                                                     idle):
    """The caller's own thread counts in the load: a 2-CPU host running only it is idle."""
    monkeypatch.setattr(host.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(host, "runnable", lambda: None)
    monkeypatch.setattr(host.os, "sched_getaffinity", lambda pid: set(range(cpus)),
                        raising=False)
    assert (host.idle_cores() > 0) is idle


def test_a_loop_of_unknown_trip_count_never_interprets_beside_a_compile(split):
    split["release"].set()

    def loop(x):
        return tracer.lax.while_loop(lambda v: tnp.sum(v) < 100.0, chain, x)
    assert programs.interpreted_cost(tracer.make_graph(loop)(X + 2)) == float("inf")
    np.testing.assert_array_equal(tracer.jit(loop, backend="split")(X + 2), 7.0)


def test_a_scan_costs_its_body_times_its_length():
    body = programs.interpreted_cost(tracer.make_graph(chain)(X))
    g = tracer.make_graph(lambda x: tracer.lax.fori_loop(0, 1000, lambda i, v: chain(v), x))(X)
    assert programs.interpreted_cost(g) >= 1000 * body


def test_a_matmul_costs_its_multiply_adds():
    a, b = np.ones((64, 256), np.float32), np.ones((256, 128), np.float32)
    cost = programs.interpreted_cost(tracer.make_graph(lambda a, b: a @ b)(a, b))
    assert cost >= 2 * 64 * 256 * 128 * programs.FLOP_S


def test_a_call_that_would_end_after_the_compile_waits_for_it(split, monkeypatch):
    """An interpreted call that took longer than the compile's estimated remaining time is
    not repeated: the next call waits for the native program."""
    split["seconds"] = 1.0              # a 1 s compile, by the estimate
    run = programs.InterpretedProgram.run
    gate = threading.Event()

    def slow_run(self, leaves):
        gate.wait(0.6)
        return run(self, leaves)
    monkeypatch.setattr(programs.InterpretedProgram, "run", slow_run)
    f = tracer.jit(chain, backend="split")
    np.testing.assert_allclose(f(X), np.asarray(chain(X)), rtol=1e-12)
    compiling = compiling_of(f)
    assert isinstance(compiling, programs.Compiling) and not compiling.interprets()
    threading.Timer(0.2, split["release"].set).start()
    np.testing.assert_array_equal(f(X), 7.0)            # waited, then native


def test_interpreted_results_are_arrays_as_native_ones(split):
    """A 0-d result has one type whatever runs the call: a new type would change the
    signature of a loop that feeds it back, and retrace it at the switch."""
    f = tracer.jit(lambda x: tnp.sum(chain(x)), backend="split")
    first = f(X)
    split["release"].set()
    f.lower(X)
    assert type(first) is type(f(X)) is np.ndarray


def test_interpreted_calls_beside_a_compile_run_blas_on_one_thread(split, monkeypatch):
    setter = programs._blas_threads_setter()
    if setter is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    before = setter(2)
    seen = []
    run = programs.InterpretedProgram.run

    def spy(self, leaves):
        seen.append(setter(1))
        return run(self, leaves)
    monkeypatch.setattr(programs.InterpretedProgram, "run", spy)
    try:
        tracer.jit(chain, backend="split")(X)
        assert seen == [1] and setter(2) == 2          # restored after the call
    finally:
        setter(before)


def test_a_matmul_heavy_step_on_llvm_compiles_first(monkeypatch, tmp_path):
    """A deep MLP's step: interpreted, its matmuls take longer than LLVM takes to compile
    it, so its first call waits for the native code in the caller. The estimate was 1 ms
    a line of module text, ~7x LLVM's time since the matmul library and shared bodies
    (lowering.llvm.split.LINE_S): W18's first call ran interpreted, 1.5 s against 1.4 s
    compiling first (python examples/bench_real.py --only W18)."""
    monkeypatch.setenv("TRACER_BACKGROUND_COMPILE", "10")
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))      # nothing compiled yet
    monkeypatch.setattr(programs, "idle_cores", lambda: 4)
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((1024, 1024)).astype(np.float32) / 32 for _ in range(6)]
    x = rng.standard_normal((512, 1024)).astype(np.float32)

    def loss(ws, x):
        for w in ws:
            x = tnp.tanh(x @ w)
        return tnp.mean(x * x)
    g = tracer.make_graph(tracer.grad(loss))(ws, x)
    from lowering.llvm import program
    _, estimate = programs.stages(program.compile_graph, g)
    assert 0 < estimate < programs.interpreted_cost(g)
    f = tracer.jit(tracer.grad(loss))
    f(ws, x)
    assert not isinstance(compiling_of(f), programs.Compiling)
