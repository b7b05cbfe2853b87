"""Module text -> loaded native code, through two caches.

Compiling (parse, O3 for the target CPU of lowering.llvm.cpu, codegen) costs tens of
milliseconds, so the object code of every module is cached in memory by a hash of its
text, and on disk under TRACER_CACHE_DIR (default ~/.cache/tracer; TRACER_DISK_CACHE=0
disables it) keyed by sha256(text + llvmlite version + target CPU name + feature
string): a second process loads the object file (~0.3 ms) instead of compiling. Disk
entries are bound to their key and the directory is size-capped (lowering.llvm.caches).
TRACER_DUMP_DIR=<dir> writes <key>.ll, <key>.opt.ll and <key>.s for every module
compiled or loaded.

Each module gets its own MCJIT engine, kept alive by `Loaded`, so symbol names never
clash; a Program holds its Loaded, so code is never freed under a live program. In memory
every loaded module is held weakly (a live program's module is always shared) and the
TRACER_CODE_CACHE_SIZE (default 256) most recently used ones strongly; any other module
is freed (engine and code pages) as soon as no Program uses it.

One lock serializes all LLVM work (its global context is not thread-safe). It is also
held across fork, so a child never inherits LLVM (or the lock) halfway through a compile.
"""
import ctypes
import hashlib
import os
import sys
import threading
import weakref

import llvmlite
import llvmlite.binding as llvm

from ir.errors import CodegenError
from lowering.llvm import caches
from lowering.llvm.cpu import CURRENT, TRIPLE
from lowering.profile import note, phase

CPU, FEATURES = CURRENT.name, CURRENT.features   # TRACER_CPU, or the host's
_TM = CURRENT.machine
DATA_LAYOUT = CURRENT.data_layout

_lock = threading.RLock()       # LLVM's global context is not thread-safe
os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                    after_in_child=_lock.release)
_live = weakref.WeakValueDictionary()       # key -> Loaded, every module loaded now
_recent = caches.Lru(caches.env_size("TRACER_CODE_CACHE_SIZE", 256))
stats = {"compiled": 0, "disk_hits": 0, "memory_hits": 0}


def cache_key(text):
    h = hashlib.sha256(text.encode())
    for part in (llvmlite.__version__, CPU, FEATURES, "O3"):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def _cache_dir():
    if os.environ.get("TRACER_DISK_CACHE", "1") == "0":
        return None
    return os.environ.get("TRACER_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tracer")


def _optimize(text):
    try:
        mod = llvm.parse_assembly(text)
        mod.triple, mod.data_layout = TRIPLE, DATA_LAYOUT
        mod.verify()
    except RuntimeError as e:
        raise CodegenError(f"LLVM rejected the generated module (a bug in an llvm kernel "
                           f"impl or the backend): {e}") from e
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = pto.slp_vectorization = True
    pto.loop_interleaving = pto.loop_unrolling = True
    pb = llvm.create_pass_builder(_TM, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def _machine():
    """A target machine for an engine, which deletes it when the engine is freed (so
    engines cannot share one). The engine only links object code, so a generic machine
    does: it costs a quarter of the time of one for the host CPU."""
    return llvm.Target.from_triple(TRIPLE).create_target_machine(
        opt=0, reloc="default", codemodel="jitdefault", jit=True)


def _dump(key, text, mod):
    directory = os.environ.get("TRACER_DUMP_DIR")
    if not directory or os.path.exists(os.path.join(directory, key + ".s")):
        return
    mod = mod or _optimize(text)
    for ext, data in ((".ll", text), (".opt.ll", str(mod)), (".s", _TM.emit_assembly(mod))):
        caches.atomic_write(directory, key + ext, data.encode())


class Loaded:
    """Native code of one module: its engine (owning the code pages) and symbol lookup.
    Freed with the last reference to it, under the lock (freeing deregisters the code's
    unwind tables, which must not be half done when the process forks)."""
    engine = None

    def __init__(self, key, obj):
        self.key = key
        CURRENT.check_runnable()
        backing = llvm.parse_assembly("")
        self.engine = llvm.create_mcjit_compiler(backing, _machine())
        self.engine.remove_module(backing)  # else finalizing compiles it: ~0.6 ms for nothing
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def function(self, name, restype, *argtypes):
        with _lock:
            addr = self.engine.get_function_address(name)
        if not addr:
            raise CodegenError(f"symbol {name!r} missing from compiled module {self.key[:12]}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(addr)

    def __del__(self, finalizing=sys.is_finalizing, lock=_lock):
        if self.engine is not None and not finalizing():
            with lock:
                self.engine.close()


def load(text):
    """The loaded native code of module `text`, compiling only on a cache miss."""
    key = cache_key(text)
    with _lock:
        loaded = _live.get(key)
        if loaded is None:
            loaded = _live[key] = _load(key, text)
        else:
            stats["memory_hits"] += 1
            _dump(key, text, None)
        _recent.put(key, loaded)
        return loaded


def _load(key, text):
    directory, name = _cache_dir(), key + ".o"
    obj = caches.read(directory, name) if directory else None
    mod = None
    if obj is None:
        with phase("llvm-optimize"):
            mod = _optimize(text)
        with phase("llvm-emit"):
            obj = _TM.emit_object(mod)
        stats["compiled"] += 1
        if directory:
            caches.write(directory, name, obj)
    else:
        stats["disk_hits"] += 1
        note("object-disk-hits")
    _dump(key, text, mod)
    with phase("load"):
        return Loaded(key, obj)
