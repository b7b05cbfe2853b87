"""Which CPU the llvm backend generates code for: the host, or the one TRACER_CPU names.

Users run on AVX2 laptops and CI runners as well as AVX-512 servers, and speed or lane
width measured on one says little about the other. `TRACER_CPU=haswell` (or `avx2`) makes
any host generate, test and time AVX2 code; `TRACER_CPU=avx512` generates AVX-512 code.
Code for a CPU whose instructions the host lacks can still be generated and inspected
(`jit(f).lower(x).as_text()`, TRACER_DUMP_DIR), but loading it raises CodegenError instead
of dying on an illegal instruction.

The features a CPU name implies are asked of LLVM itself (`implied_features`), so every
one the host can report having is checked, not a hand-kept subset. Only the names listed
below are accepted: LLVM takes a misspelled one for a generic CPU (or aborts the process).
"""
import functools

import llvmlite.binding as llvm

from ir.errors import CodegenError
from lowering.settings import settings

CPUS = ("x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "haswell", "broadwell", "skylake",
        "alderlake", "znver1", "znver2", "znver3", "skylake-avx512", "cascadelake",
        "icelake-server", "sapphirerapids", "znver4", "znver5")
ALIASES = {"avx2": "haswell", "avx512": "skylake-avx512"}

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()
llvm.initialize_native_asmparser()
TRIPLE = llvm.get_process_triple()
_HOST = llvm.get_host_cpu_features()


@functools.lru_cache(maxsize=None)
def implied_features(name):
    """The features (of those the host's feature map names) that LLVM's model of CPU `name`
    has. LLVM's inliner moves a function into another only if the callee's features are
    a subset of the caller's, so a function for `name` takes in one for x86-64 plus
    feature f exactly when `name` implies f: one probe pair per feature, one module,
    optimized once (~0.2 s, only when TRACER_CPU names a CPU). If nothing was inlined
    (an LLVM that inlines differently) that is an error, never an empty set."""
    known = sorted(_HOST)
    lines = ["@sink = global i32 0",
             f'attributes #0 = {{ nounwind "target-cpu"="{name}" }}']
    for k, feature in enumerate(known):
        lines += [f"define void @has{k}() #0 {{\n  call void @probe{k}()\n  ret void\n}}",
                  f"define internal void @probe{k}() #{k + 1} {{\n"
                  f"  store volatile i32 {k}, ptr @sink\n  ret void\n}}",
                  f'attributes #{k + 1} = {{ nounwind "target-cpu"="x86-64" '
                  f'"tune-cpu"="{name}" "target-features"="+{feature}" }}']
    mod = llvm.parse_assembly("\n".join(lines))
    try:
        machine = llvm.Target.from_triple(TRIPLE).create_target_machine(opt=1)
        pb = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(1))
        pb.getModulePassManager().run(mod, pb)
        inlined = {f.name for f in mod.functions if f.name.startswith("has") and not any(
            i.opcode == "call" for b in f.blocks for i in b.instructions)}
    finally:
        mod.close()
    found = frozenset(f for k, f in enumerate(known) if f"has{k}" in inlined)
    if "sse2" not in found:         # every x86-64 CPU has it
        raise CodegenError(f"could not tell which features TRACER_CPU={name!r} implies with "
                           f"llvmlite {llvm.llvm_version_info}; unset TRACER_CPU")
    return found


class Cpu:
    """A code-generation target: LLVM CPU name, feature string, and what it may use."""

    def __init__(self, name="host"):
        name = ALIASES.get(name, name)
        if name == "host":
            self.name, self.features = llvm.get_host_cpu_name(), _HOST.flatten()
            self._has = {k for k, v in _HOST.items() if v}
            self.missing = ()
        elif name in CPUS:
            self.name, self.features, self._has = name, "", implied_features(name)
            self.missing = tuple(sorted(f for f in self._has if not _HOST.get(f)))
        else:
            raise CodegenError(
                f"TRACER_CPU={name!r} is not a CPU this backend knows; use 'host' (the "
                f"default), 'avx2', 'avx512', or one of: {', '.join(sorted(CPUS))}")
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


CURRENT = Cpu(settings.cpu)
# the knobs whose default is the target's
if settings.vector_bytes is None:
    settings.vector_bytes = CURRENT.vector_bytes
if settings.reduce_splits is None:
    settings.reduce_splits = 4 if CURRENT.vector_registers >= 32 else 1
