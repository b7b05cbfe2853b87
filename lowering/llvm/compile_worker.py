"""LLVM module text -> object code (O3 for a target machine), in the calling process or in a
worker process that runs this file.

llvmlite 0.50 never frees what each optimizer run registers in its pass builder's
instrumentation callbacks (nor the callbacks object itself), ~85 KiB a run, so a process
that compiles thousands of modules grows without bound. lowering.llvm.target therefore
hands compiles, past its first few, to worker processes: each reads requests on stdin
(8-byte length, module text) and answers on stdout (8-byte length, marshal of (True,
object code, optimize seconds, emit seconds) or (False, LLVM's message); a length of 0
first, once it is ready), and is replaced after a number of compiles, which returns what
it leaked. This file imports nothing but llvmlite, so a worker starts in ~0.3 s.
"""
import sys

if __name__ == "__main__":
    del sys.path[0]     # this file's directory: its modules must not shadow llvmlite's imports

import ctypes
import marshal
import os
import struct
import subprocess
import time

import llvmlite.binding as llvm
from llvmlite.binding import ffi

HEADER = struct.Struct("<Q")


def unlocked(name):
    """llvmlite's C function `name` without llvmlite's lock (for calls on a context and
    target machine no other thread uses)."""
    wrapper = getattr(ffi.lib, name)
    return getattr(wrapper, "_cfn", wrapper)


def optimize(text, context, machine, triple, data_layout):
    """The module of `text` verified and optimized (the caller closes it: a module of a
    pooled context must not be freed by the garbage collector while another compile uses
    the context). LLVM's complaints are RuntimeErrors."""
    mod = llvm.parse_assembly(text, context)
    try:
        mod.triple, mod.data_layout = triple, data_layout
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = pto.slp_vectorization = True
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
    """Compile each module text read from `requests` until it ends, answering on `replies`."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    machine, context = machine_for(cpu, features), llvm.create_context()
    triple, data_layout = llvm.get_process_triple(), str(machine.target_data)
    replies.write(HEADER.pack(0))       # ready
    replies.flush()
    while True:
        head = requests.read(HEADER.size)
        if len(head) < HEADER.size:
            return
        text = requests.read(HEADER.unpack(head)[0]).decode()
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
        replies.write(HEADER.pack(len(data)) + data)
        replies.flush()



class Worker:
    """A worker process compiling for LLVM CPU `cpu` with `features`, used by one thread at
    a time; it exits when its input ends (close, or this process ending)."""

    def __init__(self, cpu, features):
        self.compiles = 0
        self._proc = subprocess.Popen([sys.executable, __file__, cpu, features],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if self._proc.stdout.read(HEADER.size) != HEADER.pack(0):
            self.close()
            raise OSError(f"the LLVM compile process did not start (exit status "
                          f"{self._proc.returncode})")

    def compile(self, text):
        """(object code, optimize seconds, emit seconds) of module `text`; RuntimeError
        with LLVM's message if LLVM rejected it, EOFError if the worker died meanwhile."""
        data = text.encode()
        try:
            self._proc.stdin.write(HEADER.pack(len(data)) + data)
            self._proc.stdin.flush()
            head = self._proc.stdout.read(HEADER.size)
            reply = self._proc.stdout.read(HEADER.unpack(head)[0])
            reply = marshal.loads(reply)
        except (OSError, ValueError, EOFError, struct.error):
            self.close()
            raise EOFError(f"the LLVM compile process ended (exit status "
                           f"{self._proc.returncode})") from None
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
    try:
        serve(sys.argv[1], sys.argv[2], sys.stdin.buffer, sys.stdout.buffer)
    except BrokenPipeError:     # the process it served ended mid-compile: nothing to say
        os._exit(0)
