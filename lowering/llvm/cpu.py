"""Which CPU the llvm backend generates code for: the host, or the one TRACER_CPU names.

Users run on AVX2 laptops and CI runners as well as AVX-512 servers, and speed or lane
width measured on one says little about the other. `TRACER_CPU=haswell` (or `avx2`) makes
any host generate, test and time AVX2 code; `TRACER_CPU=avx512` generates AVX-512 code.
Code for a CPU whose instructions the host lacks can still be generated and inspected
(`jit(f).lower(x).as_text()`, TRACER_DUMP_DIR), but loading it raises CodegenError instead
of dying on an illegal instruction.

Only names whose instruction sets are listed below are accepted, so that the check is
exact: a misspelled name is an error here, not a silent fallback to generic x86-64 code.
"""
import os

import llvmlite.binding as llvm

from ir.errors import CodegenError

_V2 = ("sse4.2", "popcnt")
_V3 = _V2 + ("avx", "avx2", "fma", "bmi2", "f16c")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
# LLVM CPU name -> the host features its code may use (so the host must have them)
NEEDS = {"x86-64": (), "x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4,
         "haswell": _V3, "broadwell": _V3, "skylake": _V3, "alderlake": _V3,
         "znver1": _V3, "znver2": _V3, "znver3": _V3,
         "skylake-avx512": _V4, "cascadelake": _V4, "icelake-server": _V4,
         "sapphirerapids": _V4, "znver4": _V4, "znver5": _V4}
ALIASES = {"avx2": "haswell", "avx512": "skylake-avx512"}

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
llvm.initialize_native_asmparser()
TRIPLE = llvm.get_process_triple()
_HOST = llvm.get_host_cpu_features()


class Cpu:
    """A code-generation target: LLVM CPU name, feature string, and what it may use."""

    def __init__(self, name="host"):
        name = ALIASES.get(name, name)
        if name == "host":
            self.name, self.features = llvm.get_host_cpu_name(), _HOST.flatten()
            self._has = {k for k, v in _HOST.items() if v}
            self.missing = ()
        elif name in NEEDS:
            self.name, self.features, self._has = name, "", set(NEEDS[name])
            self.missing = tuple(f for f in NEEDS[name] if not _HOST.get(f))
        else:
            raise CodegenError(
                f"TRACER_CPU={name!r} is not a CPU this backend knows; use 'host' (the "
                f"default), 'avx2', 'avx512', or one of: {', '.join(sorted(NEEDS))}")
        self.machine = llvm.Target.from_triple(TRIPLE).create_target_machine(
            cpu=self.name, features=self.features, opt=3, reloc="default",
            codemodel="jitdefault", jit=True)
        self.data_layout = str(self.machine.target_data)

    def has(self, feature):
        return feature in self._has

    @property
    def isa(self):
        """'avx512', 'avx2' or 'sse': the widest vector instruction set it may use."""
        return "avx512" if self.has("avx512f") else "avx2" if self.has("avx2") else "sse"

    @property
    def vector_bytes(self):
        """Bytes of the vectors kernels are tiled for: 64 with AVX-512, else 32 (AVX2's;
        LLVM splits them on older ISAs)."""
        return 64 if self.has("avx512f") else 32

    @property
    def vector_registers(self):
        """Vector registers a kernel may keep values in: 32 with AVX-512, else 16."""
        return 32 if self.has("avx512f") else 16

    def check_runnable(self):
        if self.missing:
            raise CodegenError(
                f"code generated for TRACER_CPU={self.name!r} needs {', '.join(self.missing)}, "
                f"which this host ({llvm.get_host_cpu_name()}) lacks: it can be inspected "
                f"(.lower(...).as_text(), TRACER_DUMP_DIR) but not run. Unset TRACER_CPU "
                f"or pick a CPU this host can run (e.g. 'avx2').")

    def __repr__(self):
        return f"Cpu({self.name!r}, isa={self.isa})"


CURRENT = Cpu(os.environ.get("TRACER_CPU") or "host")
