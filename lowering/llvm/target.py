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
is freed (engine and code pages) as soon as no Program uses it. A module that calls
math functions in their library (lowering.llvm.mathlib_shared) or matmul (matmul_shared)
has each library loaded before its engine is made, once per process and kept, its
symbols registered for every engine (llvm.add_symbol). A library gets an engine of its
own, or, when the disk cache holds both it and the first module calling it, shares that
module's, which is then kept too (an engine costs ~0.5 ms of a warm first call). With a
core idle, a library missing is compiled at the same time as the module, from the moment
codegen declares it (a matmul library costs ~1.4 s of CPU, a deep MLP's step module ~1 s).

Threads compile at once: each compile takes an LLVM context and a target machine of its
own from a pool (neither is thread-safe; LLVM runs compiles on disjoint ones in parallel,
as ThinLTO does), and its two long calls, the optimizer and object emission, bypass the
lock llvmlite puts around every call (ctypes releases the GIL). The same module text is
compiled once however many threads ask for it. Fork and the interpreter's exit wait
until no thread is inside LLVM (lowering.llvm.engine's gate, `_gate` here): a daemon
thread in LLVM's code generator when exit() runs LLVM's static destructors crashes the
process, so a daemon thread (jit's background compiles) never runs the optimizer or
emitter here: it hands the module to a worker process and waits outside the gate.
A long module is cut into parts (lowering.llvm.split), one per idle core the missing
libraries leave (and one for this thread), compiled at the same time, one here and the others by worker processes, and
loaded into one engine. A worker whose process ended while it compiled (a background
compile cut short by the exit) writes the object into the disk cache (under the
module's key, or a part's own), so the next run does not compile it again.

llvmlite leaks ~85 KiB per optimizer run, which only the end of a process returns: past
its first IN_PROCESS compiles a process hands compiles to worker processes
(lowering.llvm.compile_worker; ~0.3 s to start one, a few ms a compile to pass text
and object code), each replaced after RECYCLE compiles, so memory stays flat however
many functions are compiled and dropped.
"""
import atexit
import contextlib
import functools
import hashlib
import itertools
import marshal
import os
import re
import threading
import weakref

import llvmlite
import llvmlite.binding as llvm

from ir.errors import CodegenError
from lowering import forks
from lowering.host import idle_core, idle_cores
from lowering.llvm import caches, compile_worker, conv_shared, mathlib_shared, matmul_shared, split
from lowering.llvm.cpu import CURRENT, TRIPLE
from lowering.llvm.engine import Loaded, gate as _gate
from lowering.profile import note, phase
from lowering.settings import settings

CPU, FEATURES = CURRENT.name, CURRENT.features   # TRACER_CPU, or the host's
_TM = CURRENT.machine
DATA_LAYOUT = CURRENT.data_layout


_table = forks.lock()       # _live and _pending (each change to them is one dict operation)
_pending = {}               # key -> Event set when the thread compiling it is done
_tools = []                 # idle (LLVM context, target machine) pairs: one per compile
_live = weakref.WeakValueDictionary()       # key -> Loaded, every module loaded now
_linked = {}        # library (a math function, a matmul variant) -> its Loaded, linked
_prefetched = set()     # libraries prefetch() has started compiling (once each)
_LIBRARIES = (mathlib_shared, matmul_shared, conv_shared)
_recent = caches.Lru(settings.code_cache_size)
stats = {"compiled": 0, "disk_hits": 0, "memory_hits": 0}
IN_PROCESS = 64     # compiles this process runs itself before handing them to workers
RECYCLE = 256       # compiles a worker process runs before it is replaced
_compiles = itertools.count()
_workers = []       # idle compile_worker.Worker processes
atexit.register(lambda: [w.close() for w in _workers])


def warm_worker():
    """Start a compile worker process unless one is idle (see warm.worker)."""
    if not _workers:
        with contextlib.suppress(OSError):
            _workers.append(compile_worker.Worker(CPU, FEATURES))


def _after_fork():
    """The child has no compiling threads and none of the parent's workers: no module is
    pending (one the parent was compiling is compiled anew if the child asks for it)."""
    _pending.clear()
    _workers.clear()


os.register_at_fork(after_in_child=_after_fork)


def cache_key(text):
    h = hashlib.sha256(text.encode())
    for part in (llvmlite.__version__, CPU, FEATURES, "O3"):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def disk_cache_dir():
    """Where the disk caches live; None when disk caching is off."""
    return settings.cache_dir if settings.disk_cache else None


def _optimize(text, context=None, machine=_TM):
    """The module of `text` optimized (the caller closes it: a module of a pooled context
    must not be freed by the garbage collector while another compile uses the context)."""
    try:
        return compile_worker.optimize(text, context, machine, TRIPLE, DATA_LAYOUT)
    except RuntimeError as e:
        raise _rejected(e) from e


def _rejected(error):
    return CodegenError(f"LLVM rejected the generated module (a bug in an llvm kernel "
                        f"impl or the backend): {error}")


def _emit_object(machine, mod):
    try:
        return compile_worker.emit_object(machine, mod)
    except RuntimeError as e:
        raise CodegenError(str(e)) from e


def _compile(key, text):
    """Object code of module `text`: optimized and emitted here for this process's first
    IN_PROCESS compiles, then by worker processes, each replaced after RECYCLE compiles
    (llvmlite leaks ~85 KiB per optimizer run; a worker's end returns it). A daemon thread
    always uses a worker, and waits for it outside the gate (see the module's docstring).
    Here too if no worker process can be started."""
    global IN_PROCESS
    if next(_compiles) >= IN_PROCESS or threading.current_thread().daemon:
        try:
            return _in_worker(_workers.pop() if _workers else
                              compile_worker.Worker(CPU, FEATURES), key, text)
        except OSError:             # none can start here: every compile stays here
            IN_PROCESS = float("inf")
    with _llvm() as tools:
        with phase("llvm-optimize"):
            mod = _optimize(text, *tools)
        try:
            with phase("llvm-emit"):
                obj = _emit_object(tools[1], mod)
            _dump(key, text, mod, tools)
        finally:
            mod.close()         # before the context goes to another compile
    return obj


def _in_worker(worker, key, text):
    try:
        obj, optimize_s, emit_s = worker.compile(text, disk_cache_dir() or "", key + ".o")
    except RuntimeError as e:
        _workers.append(worker)
        raise _rejected(e) from e
    except EOFError as e:
        raise CodegenError(f"{e} while compiling module {key[:12]}: LLVM crashed on it "
                           f"(a bug in an llvm kernel impl or the backend)") from None
    if worker.compiles < RECYCLE:
        _workers.append(worker)
    else:
        worker.close()
    note("llvm-optimize", optimize_s)
    note("llvm-emit", emit_s)
    _dump_here(key, text)
    return obj


def _dump(key, text, mod, tools):
    directory = settings.dump_dir
    if not directory or os.path.exists(os.path.join(directory, key + ".s")):
        return
    text = text() if callable(text) else text
    own = mod is None
    mod = mod or _optimize(text, *tools)
    try:
        for ext, data in ((".ll", text), (".opt.ll", str(mod)),
                          (".s", tools[1].emit_assembly(mod))):
            caches.atomic_write(directory, key + ext, data.encode())
    finally:
        if own:
            mod.close()


def _dump_here(key, text):
    if settings.dump_dir:
        with _llvm() as tools:
            _dump(key, text, None, tools)


@contextlib.contextmanager
def _llvm(machine=True):
    """Inside the gate, with an LLVM context and, if `machine`, a target machine of this
    thread's own (made on first use: a load needs only the context, and a warm process
    compiles nothing, so it never pays the ~0.3 ms of one for the host CPU)."""
    with _gate:
        try:
            tools = _tools.pop()
        except IndexError:
            tools = [llvm.create_context(), None]
        if machine and tools[1] is None:
            tools[1] = compile_worker.machine_for(CPU, FEATURES)
        try:
            yield tools
        finally:
            _tools.append(tools)


def load(text, key=None):
    """The loaded native code of module `text`, compiling only on a cache miss (once, if
    several threads ask for it at the same time). `key` names its cache entries (default:
    cache_key(text)); then `text` may be a function making the text, called on a miss."""
    key = key or cache_key(text)
    while True:
        with _table:
            loaded = _live.get(key)
            if loaded is not None:
                stats["memory_hits"] += 1
                _recent.put(key, loaded)
                break
            done = _pending.get(key)
            if done is None:
                done = _pending[key] = threading.Event()
                break
        done.wait()                 # another thread compiles it; then look again
    if loaded is not None:
        _dump_here(key, text)
        return loaded
    try:
        loaded = _load(key, text)
        with _table:
            _live[key] = loaded
            _recent.put(key, loaded)
        return loaded
    finally:
        with _table:
            _pending.pop(key, None)
        done.set()


def cached(text):
    """True if module `text`'s native code is loaded or in the disk cache: loading it
    compiles nothing (a library it calls may still be missing)."""
    return _cached(cache_key(text))


def _cached(key):
    with _table:
        if key in _live:
            return True
    directory = disk_cache_dir()
    return bool(directory) and os.path.isfile(os.path.join(directory, key + ".o"))


def libraries_to_compile(text):
    """How many libraries module `text` calls are neither linked nor in the disk cache:
    each compiles in a worker of its own, beside the module (prefetch starts them)."""
    return sum(not _cached(cache_key(library[1])) for _, library in _missing(text))


def _missing(text):
    """[(name, library)] of the libraries module `text` calls that are not linked yet (the
    math functions' and matmul's: `libraries` of mathlib_shared and matmul_shared). Each
    kind reads the module's declarations only: its pattern, anchored at a line's start,
    is tried at every character of the text (~0.1 ms for W7's 6 KB module, three times),
    where one searched for "\ndeclare " skips to each declaration."""
    declared = "".join(_DECLARATION.findall("\n" + text))
    return [(name, kind.library(name, CURRENT.isa)) for kind in _LIBRARIES
            for name in kind.libraries(declared) if name not in _linked]


_DECLARATION = re.compile(r"\ndeclare [^\n]*")


def prefetch(text):
    """Start compiling, on a daemon thread, the libraries missing that module text (or
    declarations) `text` calls: codegen calls this as it goes, so that a matmul library
    (~1.4 s of CPU) compiles, in a worker process, while the rest of the module is made."""
    wanted = [item for item in _missing(text) if item[0] not in _prefetched]
    if wanted and idle_core():
        _prefetched.update(name for name, _ in wanted)
        threading.Thread(target=_link_early, args=(wanted,), daemon=True,
                         name="tracer-compile-library").start()


def _link_early(wanted):
    with contextlib.suppress(Exception):    # the module's load links again, and raises
        _link(wanted)


def _link(wanted):
    """Load libraries `wanted` (of _missing; each compiled once per process, all at the
    same time) and make their symbols resolvable from every engine."""
    loads = _at_once(lambda item: load(item[1][2], cache_key(item[1][1])), wanted)
    for (name, (symbols, _, _)), loaded in zip(wanted, loads):
        _register(name, symbols, loaded)


def _register(name, symbols, loaded):
    """Resolve library `name`'s `symbols` to their code in `loaded` from every engine, and
    keep `loaded` for good: other modules call it."""
    for symbol in symbols:
        address = loaded.address(symbol)    # (MCJIT aborts on a missing one)
        with _gate:
            llvm.add_symbol(symbol, address)
    _linked[name] = loaded


def _claim(wanted, directory):
    """[(name, symbols, key, objects)] of every library of `wanted`, for the module's own
    engine to load (an engine costs ~0.5 ms), each marked pending, if the disk cache holds
    them all and no thread has loaded or is loading any; else []. All or none: a thread
    holding a claim then waits for no other library (two threads each holding one the
    other waits for would wait for good)."""
    keys = [cache_key(identity) for _, (_, identity, _) in wanted]
    with _table:
        if not keys or any(k in _live or k in _pending for k in keys):
            return []
        _pending.update((k, threading.Event()) for k in keys)
    claimed = [(name, symbols, k, caches.read(directory, k + ".o"))
               for (name, (symbols, _, _)), k in zip(wanted, keys)]
    if any(blob is None for *_, blob in claimed):
        _release(claimed)
        return []
    for (_, (_, _, text)), k in zip(wanted, keys):
        _dump_here(k, text)
    return [(name, symbols, k, _unpack(blob)) for name, symbols, k, blob in claimed]


def _release(claimed):
    for _, _, key, _ in claimed:
        with _table:
            done = _pending.pop(key)
        done.set()


def _load(key, text):
    """Loaded module `text` (a library's text is a function making it, and calls none):
    from the disk cache or compiled (_compiled). The libraries it calls must be linked
    before its engine loads it; those the disk cache holds and no engine has yet are
    loaded into its engine, which is then kept for good as theirs."""
    directory, name = disk_cache_dir(), key + ".o"
    blob = caches.read(directory, name) if directory else None
    wanted = _missing(text) if isinstance(text, str) else []
    if blob is None:
        return _engine(key, _unpack(_compiled(key, text, wanted, directory)))
    claimed = _claim(wanted, directory)
    try:
        if not claimed:
            _link(wanted)
        with _table:
            stats["disk_hits"] += 1 + len(claimed)
        note("object-disk-hits", 1 + len(claimed))
        _dump_here(key, text)
        loaded = _engine(key, [obj for *_, objs in claimed for obj in objs] + _unpack(blob))
        for name, symbols, lkey, _ in claimed:
            _register(name, symbols, loaded)
            with _table:
                _live[lkey] = loaded
        return loaded
    finally:
        _release(claimed)


def _compiled(key, text, wanted, directory):
    """The object code of module `text`, compiled in parts at the same time as the
    libraries `wanted` it calls, and stored in the disk cache."""
    if wanted and not idle_core():
        _link(wanted)
        wanted = []
    texts = split.parts(text() if callable(text) else text,
                        max(1, 1 + idle_cores() - len(wanted)))
    jobs = [functools.partial(_object, cache_key(part) if len(texts) > 1 else key, part)
            for part in texts]
    if wanted:
        jobs.append(functools.partial(_link, wanted))
    blob = _pack(_at_once(lambda job: job(), jobs)[:len(texts)])
    with _table:                # (a library may finish beside it)
        stats["compiled"] += 1
    if directory:
        caches.write(directory, key + ".o", blob)
    return blob


def _engine(key, objs):
    with _llvm(machine=False) as tools, phase("load"):
        return Loaded(key, objs, tools[0])


def _object(key, text):
    """Object code of module (part) `text`: compiled, or the disk cache's entry `key` a
    compile worker left when the process it compiled it for ended first."""
    directory = disk_cache_dir()
    obj = caches.read(directory, key + ".o") if directory else None
    return _compile(key, text) if obj is None else obj


def _at_once(work, items):
    """[work(item) for item in items]: the first here, each other one at the same time on
    a daemon thread (whose compiles run in worker processes); raises the first failure."""
    items = list(items)
    results, failed = [None] * len(items), []

    def one(k):
        try:
            results[k] = work(items[k])
        except BaseException as e:
            failed.append(e)
    others = [threading.Thread(target=one, args=(k,), daemon=True, name="tracer-compile-part")
              for k in range(1, len(items))]
    for t in others:
        t.start()
    if items:
        one(0)
    for t in others:
        t.join()
    if failed:
        raise failed[0]
    return results


_PARTS = b"tracer-parts\0"     # a cache entry of several objects; else it is one


def _pack(objs):
    return objs[0] if len(objs) == 1 else _PARTS + marshal.dumps(objs)


def _unpack(blob):
    return marshal.loads(blob[len(_PARTS):]) if blob.startswith(_PARTS) else [blob]
