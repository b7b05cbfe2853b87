"""Loaded native code (`Loaded`: an MCJIT engine holding a module's object code), and
the gate every thread working in LLVM holds.

Fork waits until no thread is inside LLVM (`gate`), so a child never inherits LLVM halfway
through; so does the interpreter's exit, which then keeps every other thread out: a daemon
thread still inside LLVM when exit() runs LLVM's static destructors crashes the process in
LLVM's code generator.
"""
import atexit
import ctypes
import os
import sys
import threading

import llvmlite.binding as llvm

from ir.errors import CodegenError
from lowering.llvm.cpu import CURRENT, TRIPLE


class Gate:
    """Held (shared, reentrantly) by every thread working in LLVM; fork waits until none
    is, and holds new ones back meanwhile (except its own thread: a Loaded freed by the
    garbage collector there)."""

    def __init__(self):
        self._cv = threading.Condition(threading.RLock())
        self._active, self._forking, self._depth = 0, None, threading.local()

    def __enter__(self):
        depth = getattr(self._depth, "n", 0)
        with self._cv:
            if not depth:
                self._cv.wait_for(lambda: self._forking in (None, threading.get_ident()))
            self._active += 1
        self._depth.n = depth + 1

    def __exit__(self, *exc):
        self._depth.n -= 1
        with self._cv:
            self._active -= 1
            self._cv.notify_all()

    def before_fork(self):
        with self._cv:
            self._forking = threading.get_ident()
            self._cv.wait_for(lambda: not self._active)

    def after_fork_in_parent(self):
        with self._cv:
            self._forking = None
            self._cv.notify_all()

    def close(self):
        """At exit: wait until no other thread is inside LLVM, then keep them out."""
        self.before_fork()


gate = Gate()
os.register_at_fork(before=gate.before_fork, after_in_parent=gate.after_fork_in_parent,
                    after_in_child=gate.__init__)
atexit.register(gate.close)


def _machine():
    """A target machine for an engine, which deletes it when the engine is freed (so
    engines cannot share one). The engine only links object code, so a generic machine
    does: it costs a quarter of the time of one for the host CPU."""
    return llvm.Target.from_triple(TRIPLE).create_target_machine(
        opt=0, reloc="default", codemodel="jitdefault", jit=True)


class Loaded:
    """Native code of one module (the object code of its parts, lowering.llvm.split): its
    engine (owning the code pages) and symbol lookup. Freed with the last reference to
    it, inside the gate (freeing deregisters the code's unwind tables, which must not be
    half done when the process forks)."""
    engine = None

    def __init__(self, key, objs, context):
        self.key = key
        CURRENT.check_runnable()
        backing = llvm.parse_assembly("", context)
        self.engine = llvm.create_mcjit_compiler(backing, _machine())
        self.engine.remove_module(backing)  # else finalizing compiles it: ~0.6 ms for nothing
        backing.close()                     # before the context goes to another compile
        for obj in objs:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def address(self, name):
        with gate:
            addr = self.engine.get_function_address(name)
        if not addr:
            raise CodegenError(f"symbol {name!r} missing from compiled module {self.key[:12]}")
        return addr

    def function(self, name, restype, *argtypes):
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.address(name))

    def __del__(self, finalizing=sys.is_finalizing):
        if self.engine is not None and not finalizing():
            with gate:
                self.engine.close()
