"""Host callbacks in compiled code (lowering.llvm.callbacks): native calls, in loops too;
the module text names no callable, so equal texts with other callables (this process's
caches, or another process reading the disk cache) call their own program's."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracer
from lowering.llvm import compile_graph, graph_cache, target
from tracer import lax

X = np.arange(4, dtype=np.float32)


def _graph(tag, seen=None):
    def f(x):
        def body(c, xi):
            if seen is not None:
                tracer.debug.callback(lambda v: seen.append((tag, float(v))), xi)
            y = tracer.pure_callback(lambda a: a * 0 + np.float32(tag),
                                     tracer.ShapeDtypeStruct((), np.float32), xi)
            return c + y, None
        return lax.scan(body, np.float32(0), x)[0]
    return tracer.make_graph(f)(X)


def test_a_callback_in_a_loop_is_a_native_call_not_a_python_step():
    seen = []
    program = compile_graph(_graph(1.0, seen))
    assert program.steps == ["segment"]
    assert "tracer_host_callback" in program.as_text()
    assert float(program.run([X])[0]) == 4.0
    assert seen == [(1.0, 0.0), (1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]


def test_equal_module_texts_call_their_own_programs_callables():
    seen = []
    first, second = compile_graph(_graph(1.0, seen)), compile_graph(_graph(2.0, seen))
    assert first.as_text() == second.as_text()          # one native code, two tables
    assert float(second.run([X])[0]) == 8.0 and float(first.run([X])[0]) == 4.0
    assert [t for t, _ in seen] == [2.0] * 4 + [1.0] * 4


def test_graphs_with_callbacks_are_not_graph_cached():
    stored = graph_cache.stats["stored"]
    compile_graph(_graph(3.0))
    assert graph_cache.stats["stored"] == stored
    from ir.passes import inline_calls
    assert graph_cache.key_of(inline_calls(_graph(3.0))) is None


def test_another_process_loading_the_module_from_disk_calls_its_own_callables(tmp_path):
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import tracer
        from lowering.llvm import compile_graph, target
        from tracer import lax
        tag = float(sys.argv[1])
        def f(x):
            def body(c, xi):
                y = tracer.pure_callback(lambda a: a * 0 + np.float32(tag),
                                         tracer.ShapeDtypeStruct((), np.float32), xi)
                return c + y, None
            return lax.scan(body, np.float32(0), x)[0]
        program = compile_graph(tracer.make_graph(f)(np.arange(4, dtype=np.float32)))
        out = program.run([np.arange(4, dtype=np.float32)])[0]
        print(float(out), target.stats["disk_hits"])
        """)
    env = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    runs = [subprocess.run([sys.executable, "-c", script, tag], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
            for tag in ("1", "5")]
    assert runs[0][0] == "4.0" and runs[1][0] == "20.0"
    assert int(runs[1][1]) >= 1                          # the second read the first's code


def test_a_callback_failure_stops_the_program_and_raises_its_exception():
    calls = []

    def host(a):
        calls.append(float(a))
        if a == 1:
            raise ZeroDivisionError("no")
        return a

    def f(x):
        def body(c, xi):
            return c + tracer.pure_callback(host, tracer.ShapeDtypeStruct((), np.float32),
                                            xi), None
        return lax.scan(body, np.float32(0), x)[0]
    program = compile_graph(tracer.make_graph(f)(X))
    with pytest.raises(tracer.KernelError, match=r"pure_callback\(.*host\) raised "
                                                 r"ZeroDivisionError: no"):
        program.run([X])
    assert calls == [0.0, 1.0]
    calls.clear()
    with pytest.raises(tracer.KernelError):
        program.run([X])
    assert calls == [0.0, 1.0]


def test_a_literal_operand_and_no_operands():
    seen = []

    def f(x):
        tracer.debug.callback(lambda: seen.append("none"))
        tracer.debug.callback(lambda a, b: seen.append((float(a), b.dtype.name)), 2.5,
                              np.int8(3))
        return x + 1
    program = compile_graph(tracer.make_graph(f)(X))
    program.run([X])
    assert seen == ["none", (2.5, "int8")]


def test_beside_parallel_steps_callbacks_run_on_the_calling_thread(monkeypatch):
    monkeypatch.setenv("TRACER_NUM_THREADS", "2")
    import threading
    threads = []

    def f(x):
        y = tracer.numpy.sin(x) * tracer.numpy.exp(x)
        tracer.debug.callback(lambda v: threads.append(threading.get_ident()), y)
        z = tracer.pure_callback(lambda a: a + 1, tracer.ShapeDtypeStruct(x.shape, x.dtype), y)
        return tracer.numpy.tanh(z) * tracer.numpy.sin(z)
    x = np.linspace(0, 1, 1 << 20, dtype=np.float32)
    program = compile_graph(tracer.make_graph(f)(x))
    assert "parallel" in program.steps
    y = np.sin(x) * np.exp(x) + 1
    np.testing.assert_allclose(program.run([x])[0], np.tanh(y) * np.sin(y), atol=1e-5)
    assert threads == [threading.get_ident()]
