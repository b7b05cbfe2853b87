"""Module text -> loaded native code, through two caches.

Compiling (parse, O3 for the target CPU of lowering.llvm.cpu, codegen) costs tens of
milliseconds, so the object code of every module is cached in memory by a hash of its text, and on disk under
TRACER_CACHE_DIR (default ~/.cache/tracer; TRACER_DISK_CACHE=0 disables it) keyed by
sha256(text + llvmlite version + target CPU name + feature string): a second process
loads the object file (~0.3 ms) instead of compiling. Each module gets its own MCJIT
engine, kept alive by `Loaded`, so symbol names never clash. TRACER_DUMP_DIR=<dir>
writes <key>.ll, <key>.opt.ll and <key>.s for every module compiled or loaded.
"""
import ctypes
import hashlib
import os
import tempfile
import threading

import llvmlite
import llvmlite.binding as llvm

from ir.errors import CodegenError
from lowering.llvm.cpu import CURRENT, TRIPLE

CPU, FEATURES = CURRENT.name, CURRENT.features   # TRACER_CPU, or the host's
_TM = CURRENT.machine
DATA_LAYOUT = CURRENT.data_layout

_lock = threading.RLock()       # LLVM's global context is not thread-safe
_memory = {}                    # key -> Loaded
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


def _read_object(path):
    """The object code cached at `path`, or None if absent or damaged (each file starts
    with the sha256 of the rest, so a truncated or corrupted file is only a miss)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    digest, obj = data[:32], data[32:]
    return obj if obj and hashlib.sha256(obj).digest() == digest else None


def _write(directory, name, data):
    """Atomic write (tmp file + rename), so concurrent processes never see half a file."""
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(directory, name))
    except OSError:
        pass    # a read-only or full cache directory only costs recompiles


def _dump(key, text, mod):
    directory = os.environ.get("TRACER_DUMP_DIR")
    if not directory or os.path.exists(os.path.join(directory, key + ".s")):
        return
    mod = mod or _optimize(text)
    for ext, data in ((".ll", text), (".opt.ll", str(mod)), (".s", _TM.emit_assembly(mod))):
        _write(directory, key + ext, data.encode())


class Loaded:
    """Native code of one module: its engine (owning the code pages) and symbol lookup."""

    def __init__(self, key, obj):
        self.key = key
        CURRENT.check_runnable()
        backing = llvm.parse_assembly("")
        self.engine = llvm.create_mcjit_compiler(backing, _TM)
        self.engine.remove_module(backing)  # else finalizing compiles it: ~0.6 ms for nothing
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self.engine.finalize_object()

    def function(self, name, restype, *argtypes):
        addr = self.engine.get_function_address(name)
        if not addr:
            raise CodegenError(f"symbol {name!r} missing from compiled module {self.key[:12]}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(addr)


def load(text):
    """The loaded native code of module `text`, compiling only on a cache miss."""
    key = cache_key(text)
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            stats["memory_hits"] += 1
            _dump(key, text, None)
            return hit
        directory = _cache_dir()
        obj = _read_object(os.path.join(directory, key + ".o")) if directory else None
        mod = None
        if obj is None:
            mod = _optimize(text)
            obj = _TM.emit_object(mod)
            stats["compiled"] += 1
            if directory:
                _write(directory, key + ".o", hashlib.sha256(obj).digest() + obj)
        else:
            stats["disk_hits"] += 1
        _dump(key, text, mod)
        loaded = _memory[key] = Loaded(key, obj)
        return loaded
