"""Peers on the ISA tracer compiled for. TRACER_CPU=avx2 makes tracer generate AVX2 code on
an AVX-512 host, but NumPy, OpenBLAS, XLA and glibc pick their kernels from the host's CPU:
an "AVX2" table would then compare AVX2 tracer against AVX-512 peers. Each of them reads a
setting that caps its ISA, once, when it is loaded, so the benchmark re-executes itself
(`restrict_peers`) with those settings, then checks NumPy's and OpenBLAS's (`check_peers`).

What each setting was seen to change on a znver5 host: NumPy's dispatched loops
(np.show_runtime), glibc's memcpy (__memmove_avx512 -> __memmove_avx), XLA's generated
code (no more AVX-512 mask instructions; it already used 256-bit vectors). OpenBLAS picks
Haswell kernels there anyway. Not capped by anything: jax.jit's matmuls run YNNPACK
kernels chosen from CPUID (dot_fp32_..._avx512 under every setting), so matmul-bound rows
stay conservative for tracer against jax.jit."""
import os
import sys

RANK = {"sse": 0, "avx2": 1, "avx512": 2}
_MARK = "TRACER_BENCH_PEERS_ISA"      # set in the re-executed process
_OPENBLAS = {"sse": "Nehalem", "avx2": "Haswell"}
_XLA = {"sse": "SSE4_2", "avx2": "AVX2"}
_GLIBC_AVX512 = ["AVX512F", "AVX512VL", "AVX512BW", "AVX512DQ", "AVX512CD"]
_GLIBC = {"sse": ["AVX", "AVX2", "FMA"] + _GLIBC_AVX512, "avx2": _GLIBC_AVX512}
_SETTINGS = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE", "XLA_FLAGS", "GLIBC_TUNABLES")


def _numpy_level(name):
    """The ISA rank a NumPy dispatch target needs (names of NumPy 2.0-2.4)."""
    if name.startswith("AVX512") or name == "X86_V4":
        return RANK["avx512"]
    return RANK["avx2"] if name in ("X86_V3", "AVX", "AVX2", "FMA3", "F16C") else RANK["sse"]


def _numpy_dispatch():
    """{dispatch target: enabled} of the imported NumPy."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    return {name: __cpu_features__.get(name, False) for name in __cpu_dispatch__}


def settings(isa):
    """{environment variable: value} that cap NumPy, OpenBLAS, XLA and glibc at `isa`."""
    above = [n for n in _numpy_dispatch() if _numpy_level(n) > RANK[isa]]
    tunables = [t for t in [os.environ.get("GLIBC_TUNABLES"),
                            "glibc.cpu.hwcaps=" + ",".join("-" + f for f in _GLIBC[isa])] if t]
    xla = [os.environ.get("XLA_FLAGS"), f"--xla_cpu_max_isa={_XLA[isa]}"]
    return dict(zip(_SETTINGS, [" ".join(above), _OPENBLAS[isa], " ".join(filter(None, xla)),
                                ":".join(tunables)]))


def restrict_peers(isa, host_isa):
    """Re-execute this very command line (sys.orig_argv) with the peers capped at `isa`,
    when that is below the host's; return (without re-executing) in the re-executed
    process or when there is nothing to cap."""
    if os.environ.get(_MARK) or RANK[isa] >= RANK[host_isa]:
        return
    env = dict(os.environ, **settings(isa), **{_MARK: isa})
    sys.stdout.flush()
    os.execve(sys.executable, sys.orig_argv, env)


def check_peers():
    """Header lines saying which caps were applied and what was checked; SystemExit if a
    cap that can be checked did not take effect."""
    isa = os.environ.get(_MARK)
    if not isa:
        return []
    enabled = [n for n, on in _numpy_dispatch().items() if on]
    wrong = [n for n in enabled if _numpy_level(n) > RANK[isa]]
    core = _openblas_core()
    if core and core.lower() != _OPENBLAS[isa].lower():
        wrong.append(f"OpenBLAS core {core}")
    if wrong:
        raise SystemExit(f"benchmark: the peers were not kept to {isa}: {', '.join(wrong)} "
                         f"still enabled (this NumPy's names differ?); run with "
                         f"--peers-on-host to compare against the host's ISA")
    applied = ", ".join(f"{k}={os.environ.get(k, '')!r}" for k in _SETTINGS)
    jax = ("; jax.jit's matmuls (YNNPACK, kernels chosen by CPUID) cannot be capped and use "
           "the host's ISA") if sys.modules.get("jax") else ""
    return [f"peers capped at {isa}: {applied}",
            f"checked: NumPy dispatches to {', '.join(enabled) or 'its baseline only'}; "
            f"OpenBLAS core {core or 'unknown'}{jax}"]


def isa_lines(host):
    """Header lines: the ISA tracer compiled for, and the peers' (capped or the host's)."""
    from lowering.llvm import cpu
    line = f"tracer llvm compiled for {cpu.CURRENT.name} ({cpu.CURRENT.isa})"
    if os.environ.get("TRACER_CPU"):
        line += f" via TRACER_CPU={os.environ['TRACER_CPU']} on a {host.name} ({host.isa}) host"
    return "\n".join([line] + (check_peers() or [f"peers use the host's {host.isa}"]))


def _openblas_core():
    """OpenBLAS's kernel family, as NumPy's bundled OpenBLAS reports it (None if unknown)."""
    import ctypes
    import glob

    import numpy as np
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs",
                                  "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None
