"""A library a module calls compiles at the same time as the module, not before it:
codegen starts it as soon as a function declares it (target.prefetch), and a load finding
it still missing compiles it beside the module's own parts. A warm process loads a module
and the libraries it is the first to call from the disk cache into one engine."""
import ctypes
import os
import re
import threading
import uuid

import llvmlite.binding as llvm
import numpy as np

import tracer
from lowering.llvm import matmul_shared, program, target


class FakeLibraries:
    """A library kind (as mathlib_shared and matmul_shared are) whose library `fake_<tag>`
    defines `fake_<tag>(i64) -> i64` returning its argument plus 5."""

    @staticmethod
    def libraries(text):
        return re.findall(r'^declare [^\n]*@"?(fake_\w+)"?\(', text, re.M)

    @staticmethod
    def library(name, isa):
        return [name], f"{name} {isa}", lambda: (
            f'define i64 @"{name}"(i64 %x) {{\n  %y = add i64 %x, 5\n  ret i64 %y\n}}\n')


def _module(*libs):
    """`entry(x)`: x through each library of `libs` in turn (each adds 5)."""
    calls = "".join(f'  %y{k + 1} = call i64 @"{lib}"(i64 %y{k})\n' for k, lib in enumerate(libs))
    return "".join(f'declare i64 @"{lib}"(i64)\n' for lib in libs) + (
        f'define i64 @"entry"(i64 %y0) {{\n{calls}  ret i64 %y{len(libs)}\n}}\n')


def _setup(monkeypatch, tmp_path, idle=True):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(target, "_LIBRARIES", (FakeLibraries,))
    monkeypatch.setattr(target, "idle_core", lambda: idle)
    return "fake_" + uuid.uuid4().hex


def test_a_missing_library_compiles_beside_the_module(monkeypatch, tmp_path):
    """The module's compile and its library's meet at a barrier: one after the other, the
    first would wait there alone."""
    lib = _setup(monkeypatch, tmp_path)
    both = threading.Barrier(2, timeout=10)
    compile_ = target._compile

    def meeting(key, text):
        both.wait()
        return compile_(key, text)
    monkeypatch.setattr(target, "_compile", meeting)
    loaded = target.load(_module(lib))
    assert loaded.function("entry", ctypes.c_int64, ctypes.c_int64)(37) == 42
    assert lib in target._linked


def test_without_an_idle_core_the_library_compiles_first(monkeypatch, tmp_path):
    lib = _setup(monkeypatch, tmp_path, idle=False)
    order, compile_ = [], target._compile
    monkeypatch.setattr(target, "_compile", lambda key, text: (
        order.append("library" if lib in text and "entry" not in text else "module"),
        compile_(key, text))[1])
    target.prefetch(f'declare i64 @"{lib}"(i64)\n')          # no idle core: nothing
    assert lib not in target._linked and not order
    assert target.load(_module(lib)).function("entry", ctypes.c_int64, ctypes.c_int64)(0) == 5
    assert order == ["library", "module"]


def test_prefetch_compiles_a_library_before_any_module_asks(monkeypatch, tmp_path):
    lib = _setup(monkeypatch, tmp_path)
    target.prefetch(f'declare i64 @"{lib}"(i64)\n')
    for _ in range(200):
        if lib in target._linked:
            break
        threading.Event().wait(0.05)
    assert lib in target._linked
    compiled = target.stats["compiled"]
    assert target.load(_module(lib)).function("entry", ctypes.c_int64, ctypes.c_int64)(1) == 6
    assert target.stats["compiled"] == compiled + 1         # the module only


def test_codegen_starts_the_matmul_library_while_it_emits(monkeypatch, tmp_path):
    """Codegen (program.prepare, which does not load) names the matmul library to
    target.prefetch before the module is loaded."""
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))     # no graph cache hit
    seen = []
    monkeypatch.setattr(target, "prefetch", lambda text: seen.append(text))
    x, w = np.ones((64, 48), np.float32), np.ones((48, 40), np.float32)
    graph = tracer.make_graph(lambda x, w: tracer.numpy.tanh(x @ w))(x, w)
    program.prepare(graph)
    assert matmul_shared.libraries("\n".join(seen)) == [
        matmul_shared.symbol(np.float32).rsplit(".", 1)[0]]


def _entry(loaded):
    return loaded.function("entry", ctypes.c_int64, ctypes.c_int64)


def _warm(monkeypatch, *texts):
    """Load `texts` (compiling them and their libraries into the disk cache), then make
    this process forget them, as a fresh one would find it; returns what it loaded, to
    keep alive (their symbols stay registered)."""
    loaded = [target.load(text) for text in texts]
    for name in {lib for text in texts for lib in FakeLibraries.libraries(text)}:
        loaded.append(target._linked.pop(name))
    for kept in loaded:
        target._live.pop(kept.key, None)
    monkeypatch.setattr(target, "_recent", target.caches.Lru(0))
    return loaded


def _engines(monkeypatch):
    made, create = [], llvm.create_mcjit_compiler
    monkeypatch.setattr(llvm, "create_mcjit_compiler", lambda *a: made.append(a) or create(*a))
    return made


def test_a_warm_module_and_its_libraries_load_into_one_engine(monkeypatch, tmp_path):
    """One engine, not three (each costs a warm first call ~0.5 ms), kept as the libraries'
    engine: a module compiled afterwards calls them there."""
    libs = [_setup(monkeypatch, tmp_path), "fake_" + uuid.uuid4().hex]
    kept = _warm(monkeypatch, _module(*libs))
    made, hits = _engines(monkeypatch), target.stats["disk_hits"]
    warm = target.load(_module(*libs))
    assert len(made) == 1 and target.stats["disk_hits"] == hits + 3
    assert all(target._linked[lib] is warm for lib in libs) and _entry(warm)(30) == 40
    later = target.load(_module(libs[1]) + "; later\n")
    assert _entry(later)(1) == 6 and len(made) == 2
    del kept


def test_a_library_missing_from_disk_leaves_each_library_its_own_engine(monkeypatch, tmp_path):
    libs = [_setup(monkeypatch, tmp_path), "fake_" + uuid.uuid4().hex]
    kept = _warm(monkeypatch, _module(*libs))
    os.remove(os.path.join(tmp_path, target.cache_key(
        FakeLibraries.library(libs[1], target.CURRENT.isa)[1]) + ".o"))
    made, compiled = _engines(monkeypatch), target.stats["compiled"]
    warm = target.load(_module(*libs))
    assert target.stats["compiled"] == compiled + 1 and len(made) == 3
    assert _entry(warm)(0) == 10 and not {target._linked[lib] for lib in libs} & {warm}
    del kept


def test_threads_loading_warm_modules_that_share_libraries_all_finish(monkeypatch, tmp_path):
    """Two modules calling two libraries in opposite orders, loaded at once: a thread
    that loads libraries into its module's engine claims them all or none, so neither
    waits for a library the other holds while it holds one the other waits for."""
    for _ in range(5):
        libs = [_setup(monkeypatch, tmp_path), "fake_" + uuid.uuid4().hex]
        texts = [_module(*libs), _module(*libs[::-1])]
        kept = _warm(monkeypatch, *texts)
        made, start, results = _engines(monkeypatch), threading.Barrier(2), {}

        def load(text):
            start.wait()
            loaded = target.load(text)      # (held: nothing else keeps every module)
            results[text] = _entry(loaded)(0)
        threads = [threading.Thread(target=load, args=(t,), daemon=True) for t in texts]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert list(results.values()) == [10, 10] and len(made) == 2
        assert target._linked[libs[0]] is target._linked[libs[1]]
        del kept
