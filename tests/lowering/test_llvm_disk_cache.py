"""Disk cache entries: used only for the key they were written for, never blocking, and
the directory kept under its size cap, least recently used entries evicted first."""
import contextlib
import gc
import os
import threading

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir.errors import ArgumentError
from lowering.llvm import caches, compile_graph, entries, graph_cache, target
from lowering.settings import settings
from fresh import run_script

X = np.linspace(-1, 1, 12)

SCRIPT = """
import numpy as np, tracer
from lowering.llvm import graph_cache, target
x = np.linspace(0, 1, 8)
f = tracer.jit(lambda x: x * 2.0 + 1.0)
g = tracer.jit(lambda x: x * 3.0 - 1.0)
ok = np.allclose(f(x), x * 2.0 + 1.0) and np.allclose(g(x), x * 3.0 - 1.0)
print(int(ok), target.stats["compiled"], graph_cache.stats["disk_hits"])
"""


def _run(cache):
    return tuple(int(v) for v in run_script(SCRIPT, cache=cache).split())


def _swap(a, b):
    data = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(data)


def _programs(cache):
    """The object files of the script's two programs (not the segments' runner's)."""
    runner = target.cache_key(entries.RUNNER_IR) + ".o"
    return sorted(p for p in cache.glob("*.o") if p.name != runner)


def test_swapped_entries_are_misses_in_a_fresh_process(tmp_path):
    assert _run(tmp_path) == (1, 3, 0)          # the two programs and the runner
    _swap(*_programs(tmp_path))                 # two modules of the same signature
    assert _run(tmp_path) == (1, 2, 2)          # both recompiled, results right
    assert _run(tmp_path) == (1, 0, 2)          # ... and rewritten
    _swap(*sorted(tmp_path.glob("*.g")))
    assert _run(tmp_path) == (1, 0, 0)          # codegen again; object files still hit
    assert _run(tmp_path) == (1, 0, 2)


@pytest.fixture
def disk_only(tmp_path, monkeypatch):
    """A disk cache in tmp_path and no memory caches beyond live programs."""
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRACER_DISK_CACHE", raising=False)
    monkeypatch.delenv("TRACER_DISK_CACHE_SIZE", raising=False)
    monkeypatch.setattr(target, "_recent", caches.Lru(0))
    monkeypatch.setattr(graph_cache, "_memory", caches.Lru(0))
    gc.collect()
    return tmp_path


def graph(scale):
    return tracer.make_graph(lambda x: tnp.tanh(x) * scale + 0.5)(X)


def _compile_and_check(scale):
    """Compile, check the result; returns (modules compiled, graph disk hits), the
    segments' runner loaded first (it is once per process: run alone, this test file
    counted it)."""
    entries.runner()
    before = target.stats["compiled"], graph_cache.stats["disk_hits"]
    out = compile_graph(graph(scale)).run([X])[0]
    np.testing.assert_allclose(out, np.tanh(X) * scale + 0.5, rtol=1e-14)
    gc.collect()                    # the program's module is freed: the next load reads disk
    return target.stats["compiled"] - before[0], graph_cache.stats["disk_hits"] - before[1]


def test_damaged_entries_are_misses(disk_only):
    assert _compile_and_check(2.0) == (1, 0)
    assert _compile_and_check(2.0) == (0, 1)
    for damage in (lambda d: d[:-1],                                # truncated
                   lambda d: d[:40] + bytes([d[40] ^ 1]) + d[41:],  # a bit flipped in the key
                   lambda d: d[:-9] + bytes([d[-9] ^ 4]) + d[-8:],  # ... in the payload
                   lambda d: b"",
                   lambda d: d.replace(caches.MAGIC, b"tracer-cache-0\n")):   # foreign format
        for path in disk_only.iterdir():
            path.write_bytes(damage(path.read_bytes()))
        assert _compile_and_check(2.0) == (1, 0)


def test_entries_that_are_not_regular_files_are_misses_and_never_block(disk_only):
    _compile_and_check(3.0)
    names = sorted((p.name for p in disk_only.iterdir()), key=lambda n: n[-1])
    assert [n[-2:] for n in names] == [".c", ".g", ".o"]     # runner, graph, object
    fifos = names[0], names[2]
    for name in names:
        os.unlink(disk_only / name)
    os.mkdir(disk_only / names[1])
    for name in fifos:
        os.mkfifo(disk_only / name)
    result = []
    worker = threading.Thread(target=lambda: result.append(_compile_and_check(3.0)),
                              daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():                    # unblock the reader, so the test can fail
        for name in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(disk_only / name, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(20)
        pytest.fail("reading a FIFO cache entry blocked")
    assert result == [(1, 0)]
    assert all(os.path.isfile(disk_only / name) for name in fifos)  # replaced by new entries


def test_a_programs_runner_is_compiled_once_across_processes(disk_only, monkeypatch):
    """The Python a program runs its steps with (Program._fast_run) is kept on disk with
    its code: Python's compiler takes ~0.3 ms for it, a third of a warm first call's
    loading. An entry serves only its own source, name and Python."""
    source, name = "def run(x):\n    return x + 1\n", "<llvm program test>"
    code = caches.python_code(str(disk_only), source, name)
    made = []
    monkeypatch.setattr(caches, "compile", lambda *a: made.append(a) or compile(*a),
                        raising=False)
    again = caches.python_code(str(disk_only), source, name)
    env = {}
    exec(again, env)
    assert again == code and env["run"](1) == 2 and made == []
    caches.python_code(str(disk_only), source, "<llvm program other>")
    caches.python_code(str(disk_only), source.replace("1", "2"), name)
    caches.python_code(None, source, name)          # no disk cache
    assert len(made) == 3


def _sizes(directory):
    return sum(p.stat().st_size for p in directory.iterdir())


def test_disk_cache_is_capped_least_recently_used_first(disk_only, monkeypatch):
    _compile_and_check(1.0)
    entry = _sizes(disk_only)           # one .o, one .g and one .c
    first = sorted(disk_only.iterdir())
    monkeypatch.setattr(caches, "_written", {})
    monkeypatch.setenv("TRACER_DISK_CACHE_SIZE", str(4 * entry))
    for k in range(2, 12):
        _compile_and_check(float(k))
        assert _compile_and_check(1.0) == (0, 1)    # used again: never the one evicted
        assert _sizes(disk_only) <= 4 * entry + entry
    assert all(p.exists() for p in first)
    assert len(list(disk_only.iterdir())) < 2 * 11           # some were evicted


def test_disk_cache_size_setting(monkeypatch):
    for value, size in (("123", 123), ("4k", 4096), ("2M", 2 << 20), ("1G", 1 << 30)):
        monkeypatch.setenv("TRACER_DISK_CACHE_SIZE", value)
        assert settings.disk_cache_size == size
    monkeypatch.setenv("TRACER_DISK_CACHE_SIZE", "lots")
    with pytest.raises(ArgumentError, match="TRACER_DISK_CACHE_SIZE.*'lots'"):
        settings.disk_cache_size
