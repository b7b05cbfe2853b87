"""LLVM module text -> object code (O3 for a target machine), in the calling process or in a
worker process that runs this file.

llvmlite 0.50 never frees what each optimizer run registers in its pass builder's
instrumentation callbacks (nor the callbacks object itself), ~85 KiB a run, so a process
that compiles thousands of modules grows without bound. lowering.llvm.target therefore
hands compiles, past its first few, to worker processes: each reads requests on stdin
(8-byte length, marshal of (module text, disk-cache directory or "", entry name)) and
answers on stdout (8-byte length, marshal of (True, object code, optimize seconds, emit
seconds) or (False, LLVM's message); a length of 0 first, once it is ready), and is
replaced after a number of compiles, which returns what it leaked. A worker whose process
ended while it compiled (a background compile cut short by the exit) finishes that one
compile, writes its object into the disk cache as the entry named in the request (what
that process would have written), and exits: the next run of the program loads it. This
file imports nothing but llvmlite and the standard library, so a worker starts in ~0.3 s;
the disk cache's entry format (lowering.llvm.caches) is therefore made here.
"""
import sys

if __name__ == "__main__":
    del sys.path[0]     # this file's directory: its modules must not shadow llvmlite's imports

import contextlib
import ctypes
import fcntl
import hashlib
import marshal
import os
import struct
import subprocess
import tempfile
import time

import llvmlite.binding as llvm
from llvmlite.binding import ffi

HEADER = struct.Struct("<Q")
MAGIC = b"tracer-cache-1\n"     # the first bytes of a disk-cache entry


def digest(head, payload):
    """The checksum a disk-cache entry holds after its head."""
    h = hashlib.sha256(head)
    h.update(payload)
    return h.digest()


def cache_entry(name, payload):
    """The bytes of the disk-cache entry `name` holding `payload` (lowering.llvm.caches)."""
    head = MAGIC + name.encode() + b"\0"
    return head + digest(head, payload) + payload


def atomic_write(directory, name, data):
    """Write a file (tmp file + rename), so that concurrent processes never see half of
    it; False if that failed (a read-only or full directory only costs recompiles)."""
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(directory, name))
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def unlocked(name):
    """llvmlite's C function `name` without llvmlite's lock (for calls on a context and
    target machine no other thread uses)."""
    wrapper = getattr(ffi.lib, name)
    return getattr(wrapper, "_cfn", wrapper)


PIPELINE = "; tracer-pipeline:"   # a module's first line asking for another LLVM pipeline


def pipeline(level, slp=True):
    """The first line of a module asking for LLVM's O`level` pipeline, without the SLP
    vectorizer unless `slp` (being in the text, the choice is part of its cache key)."""
    return f"{PIPELINE} O{level}{'' if slp else ' no-slp'}\n"


def tuning(text):
    """(O level, SLP vectorizer on) for module `text`: (3, True) unless its first line
    asks otherwise (pipeline()). The matmul library asks for O2 (its tiles are written as
    vector code already): O3 spent 0.42 s of CPU optimizing it, 5,446 lines out, O2 0.27 s
    and 3,821 lines, the same speed (llvm-notes: O2 and O3 ran these kernels alike; python
    examples/bench_steps.py --only MM); and, but for the dtypes it widens, without SLP,
    which made the same code from it in 0.08 s more (float32; int8 0.5 s)."""
    if not text.startswith(PIPELINE):
        return 3, True
    words = text[len(PIPELINE):text.index("\n")].split()
    return int(words[0][1:]), "no-slp" not in words


def optimize(text, context, machine, triple, data_layout):
    """The module of `text` verified and optimized (the caller closes it: a module of a
    pooled context must not be freed by the garbage collector while another compile uses
    the context). LLVM's complaints are RuntimeErrors."""
    mod = llvm.parse_assembly(text, context)
    try:
        mod.triple, mod.data_layout = triple, data_layout
        mod.verify()
        level, slp = tuning(text)
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization, pto.slp_vectorization = True, slp
        pto.loop_interleaving = pto.loop_unrolling = True
        pb = llvm.create_pass_builder(machine, pto)
        unlocked("LLVMPY_RunNewModulePassManager")(pb.getModulePassManager(), mod, pb)
        return mod
    except BaseException:
        mod.close()
        raise


def emit_object(machine, mod):
    """machine.emit_object(mod), the emission itself outside llvmlite's lock."""
    with ffi.OutputString() as error:
        buf = unlocked("LLVMPY_TargetMachineEmitToMemory")(machine, mod, 1, error)
        if not buf:
            raise RuntimeError(f"LLVM could not emit object code: {error}")
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buf),
                                ffi.lib.LLVMPY_GetBufferSize(buf))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buf)


def machine_for(cpu, features):
    """The target machine code is generated with, for LLVM CPU `cpu` and `features`."""
    return llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        cpu=cpu, features=features, opt=3, reloc="default", codemodel="jitdefault", jit=True)


def serve(cpu, features, requests, replies):
    """Compile each module text read from `requests` until it ends, answering on `replies`;
    if they are closed (the process served ended), cache the object as it asked, and end."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    machine, context = machine_for(cpu, features), llvm.create_context()
    triple, data_layout = llvm.get_process_triple(), str(machine.target_data)
    with contextlib.suppress(BrokenPipeError):  # (ended already: its request may be waiting)
        replies.write(HEADER.pack(0))   # ready
        replies.flush()
    while True:
        head = requests.read(HEADER.size)
        if len(head) < HEADER.size:
            return
        size = HEADER.unpack(head)[0]
        request = requests.read(size)
        if len(request) < size:     # the process it served ended while it wrote it
            return
        text, directory, name = marshal.loads(request)
        try:
            t0 = time.perf_counter()
            mod = optimize(text, context, machine, triple, data_layout)
            try:
                t1 = time.perf_counter()
                reply = (True, emit_object(machine, mod), t1 - t0, time.perf_counter() - t1)
            finally:
                mod.close()
        except RuntimeError as e:
            reply = (False, str(e))
        data = marshal.dumps(reply)
        try:
            replies.write(HEADER.pack(len(data)) + data)
            replies.flush()
        except BrokenPipeError:
            if reply[0] and directory:
                atomic_write(directory, name, cache_entry(name, reply[1]))
            return


class Worker:
    """A worker process compiling for LLVM CPU `cpu` with `features`, used by one thread at
    a time; it exits when its input ends (close, or this process ending). Its first
    request goes out before it is ready (the pipe holds it), so that a worker whose
    process ends while it starts still compiles and caches it."""

    def __init__(self, cpu, features):
        self.compiles, self._ready = 0, False
        self._proc = subprocess.Popen([sys.executable, __file__, cpu, features],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def compile(self, text, directory="", name=""):
        """(object code, optimize seconds, emit seconds) of module `text`; RuntimeError
        with LLVM's message if LLVM rejected it, EOFError if the worker died meanwhile,
        OSError if it never started. Should this process end first, the worker writes
        the object as entry `name` of the disk cache in `directory` ("": none)."""
        data = marshal.dumps((text, directory, name))
        if not self._ready:     # the pipe holds all of it (up to /proc/sys/fs/pipe-max-size)
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(self._proc.stdin, fcntl.F_SETPIPE_SZ, HEADER.size + len(data))
        try:
            self._proc.stdin.write(HEADER.pack(len(data)) + data)
            self._proc.stdin.flush()
            if not self._ready:
                self._ready = self._proc.stdout.read(HEADER.size) == HEADER.pack(0)
                if not self._ready:
                    raise EOFError
            head = self._proc.stdout.read(HEADER.size)
            reply = marshal.loads(self._proc.stdout.read(HEADER.unpack(head)[0]))
        except (OSError, ValueError, EOFError, struct.error):
            self.close()
            raise (EOFError if self._ready else OSError)(
                f"the LLVM compile process {'ended' if self._ready else 'did not start'} "
                f"(exit status {self._proc.returncode})") from None
        self.compiles += 1
        if not reply[0]:
            raise RuntimeError(reply[1])
        return reply[1:]

    def close(self):
        for pipe in (self._proc.stdin, self._proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self._proc.wait()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], sys.stdin.buffer, sys.stdout.buffer)
    os._exit(0)                 # (no flush of a closed stdout at exit)
