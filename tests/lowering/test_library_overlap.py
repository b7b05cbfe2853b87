"""A library a module calls compiles at the same time as the module, not before it:
codegen starts it as soon as a function declares it (target.prefetch), and a load finding
it still missing compiles it beside the module's own parts."""
import ctypes
import re
import threading
import uuid

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


def _module(lib):
    return (f'declare i64 @"{lib}"(i64)\n'
            f'define i64 @"entry"(i64 %x) {{\n  %y = call i64 @"{lib}"(i64 %x)\n'
            f"  ret i64 %y\n}}\n")


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
