"""The code generated for AVX2 and for AVX-512, checked on any x86 host.

Users run AVX2 laptops and AVX-512 servers; a host tests only its own ISA unless the code
for the other is generated too. Each ISA gets one fresh process (TRACER_CPU is read at
import) that compiles representative fused graphs, dumps their assembly (TRACER_DUMP_DIR
is written before the code is loaded, so this works for CPUs the host lacks), and runs
them against NumPy when the host can. The checks: the vector registers of the ISA's
width (ymm for AVX2, zmm for AVX-512, never zmm on AVX2) and no libm calls: only the
module's own functions and LLVM intrinsics are called, none that LLVM lowers to libm (a
transcendental that became a libm call runs one lane at a time).
"""
import glob
import json
import os
import platform
import re

import pytest

from fresh import run_script
from ir.errors import CodegenError
from lowering.llvm import cpu

PROBE = r"""
import json, os, sys
import numpy as np
import tracer, tracer.numpy as tnp
from ir.errors import CodegenError
from lowering.llvm import cpu

def softmax(lib):
    def f(x):
        e = lib.exp(x - lib.max(x, axis=-1, keepdims=True))
        return e / lib.sum(e, axis=-1, keepdims=True)
    return f

rng = np.random.default_rng(0)
x = rng.standard_normal(4099).astype(np.float32)
m = rng.standard_normal((64, 256)).astype(np.float32)
a = rng.standard_normal((96, 80)).astype(np.float32)
b = rng.standard_normal((80, 72)).astype(np.float32)
cases = {
    "elementwise": (lambda lib: lambda x: lib.tanh(x) * lib.exp(-x) + lib.log1p(x * x), (x,)),
    "reduction": (lambda lib: lambda x: lib.sum(x * x), (x,)),
    "softmax": (softmax, (m,)),
    "matmul": (lambda lib: lambda a, b: a @ b, (a, b)),
    "transpose": (lambda lib: lambda a: lib.swapaxes(a, -1, -2), (a,)),
}
ran = {}
for name, (make, args) in cases.items():
    os.environ["TRACER_DUMP_DIR"] = os.path.join(sys.argv[1], name)
    try:
        got = tracer.jit(make(tnp))(*args)
    except CodegenError:
        ran[name] = None                # generated and dumped, but not runnable here
        continue
    want = make(np)(*(v.astype(np.float64) for v in args))
    ran[name] = float(np.max(np.abs(got - want) / (1 + np.abs(want))))
print(json.dumps({"isa": cpu.CURRENT.isa, "runnable": not cpu.CURRENT.missing, "err": ran}))
"""
pytestmark = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                                reason="AVX2 and AVX-512 are x86 instruction sets")
CASES = ("elementwise", "reduction", "softmax", "matmul", "transpose")
# intrinsics that LLVM lowers to libm calls on x86
LIBM = re.compile(r"@llvm\.(exp|exp2|exp10|log|log2|log10|sin|cos|tan|tanh|sinh|cosh|asin|"
                  r"acos|atan|atan2|pow|powi|frexp|ldexp)\.")


@pytest.fixture(scope="module", params=["haswell", "znver4"])
def generated(request, tmp_path_factory):
    """(cpu name, probe results, {case: (optimized IR, assembly)})."""
    d = tmp_path_factory.mktemp(request.param)
    out = json.loads(run_script(PROBE, d, cache=d / "cache", TRACER_CPU=request.param))
    code = {}
    for case in CASES:      # the program's module and the libraries it links (matmul)
        ir, asm = [], []
        for ll in sorted(glob.glob(os.path.join(d, case, "*.opt.ll"))):
            with open(ll) as f, open(ll[:-len(".opt.ll")] + ".s") as g:
                ir.append(f.read())
                asm.append(g.read())
        assert ir, f"{case}: no module was dumped"
        code[case] = ("\n".join(ir), "\n".join(asm))
    return request.param, out, code


@pytest.mark.parametrize("case", CASES)
def test_vector_width(generated, case):
    name, out, code = generated
    asm = code[case][1]
    assert out["isa"] == cpu.Cpu(name).isa
    if out["isa"] == "avx2":
        assert "%zmm" not in asm and asm.count("%ymm") > 20
    else:
        assert asm.count("%zmm") > 20


def test_transpose_moves_whole_vectors(generated):
    """Rows in, rows out, shuffled in registers: no gathers or scatters (AVX-512 scatters
    made a 1024x1024 transpose 5x slower), no element-at-a-time main loop."""
    ir, asm = generated[2]["transpose"]
    assert "shufflevector" in ir
    assert not re.search(r"gather|scatter", asm)


@pytest.mark.parametrize("case", CASES)
def test_no_libm_calls(generated, case):
    ir = generated[2][case][0]
    defined = set(re.findall(r"^define [^@]*@\"?([\w.]+)", ir, re.M))
    declared = set(re.findall(r"^declare [^@]*@\"?([\w.]+)", ir, re.M))
    outside = {d for d in declared - defined if not d.startswith("llvm.")}
    assert not outside, outside     # only intrinsics and the linked libraries' functions
    assert not LIBM.search(ir), LIBM.search(ir).group()
    called = set(re.findall(r"\bcall [^@]*@\"?([\w.]+)", ir))
    assert called <= defined | declared
    assert " frem " not in ir                                  # fmodf


@pytest.mark.parametrize("case", CASES)
def test_runs_correctly_where_the_host_can(generated, case):
    name, out, _ = generated
    if not out["runnable"]:
        assert out["err"][case] is None
        pytest.skip(f"this host cannot run {name} code")
    assert out["err"][case] < 2e-5


def test_names():
    assert (cpu.Cpu("avx2").name, cpu.Cpu("avx2").isa) == ("haswell", "avx2")
    assert cpu.Cpu("avx512").isa == cpu.Cpu("znver4").isa == "avx512"
    with pytest.raises(CodegenError, match="TRACER_CPU='skylak'.*avx2"):
        cpu.Cpu("skylak")


def test_unrunnable_code_is_refused_not_run():
    target = cpu.Cpu("znver4")
    if not target.missing:
        target.check_runnable()
        pytest.skip("this host runs AVX-512 code")
    with pytest.raises(CodegenError, match=re.escape(", ".join(target.missing))):
        target.check_runnable()
