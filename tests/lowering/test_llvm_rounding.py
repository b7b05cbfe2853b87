"""The llvm backend rounds user arithmetic exactly as NumPy does, on AVX2 and AVX-512.

Each + - * / of a graph is one IEEE operation rounded once, as NumPy's ufuncs round it:
no fast-math flag may let LLVM fuse a*b+c into an fma (rounded once where NumPy rounds
twice), fold x + 0.0 into x (wrong for -0.0) or approximate a square root. That is what
makes a jitted program's numbers NumPy's, bit for bit, and `tracer.random.normal` and
`categorical` (their log1p and log are written with + - * /) give the same bits eagerly
and under jit on both backends. The math library keeps its own
flags and fmas (its functions are ulp-tested against libm in test_mathlib.py).

Each ISA gets one fresh process (TRACER_CPU is read at import).
"""
import json
import platform

import pytest

from fresh import run_script
from lowering.llvm import cpu

PROBE = r"""
import json
import numpy as np
import tracer, tracer.numpy as tnp, tracer.random as tr
from tracer import lax

EXPRS = {
    "a*b+c": lambda a, b, c: a * b + c,
    "a*b-c": lambda a, b, c: a * b - c,
    "c-a*b": lambda a, b, c: c - a * b,
    "a*a-b*b": lambda a, b, c: a * a - b * b,
    "a*b+c*a": lambda a, b, c: a * b + c * a,
    "(a+b)*c-a": lambda a, b, c: (a + b) * c - a,
    "-(a*b)+c": lambda a, b, c: -(a * b) + c,
    "sqrt(a*a+b*b)": lambda a, b, c: tnp.sqrt(a * a + b * b),
    "a/b*c+a": lambda a, b, c: a / b * c + a,
    "horner": lambda a, b, c: ((a * 0.25 + b) * a + c) * a + 1.5,
    "signed zeros": lambda a, b, c: (a * 0.0 - b * 0.0) + 0.0,
}

def bits(x):
    x = np.asarray(x)
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint64)

def same(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(bits(x), bits(y))

def samplers(dt):
    key = tr.PRNGKey(7)
    cases = {f"normal{s}": (lambda s: lambda k: tr.normal(k, s, dt))(s)
             for s in [(), (0,), (1,), (7,), (1001,), (3, 37)]}
    cases["categorical"] = lambda k: tr.categorical(k, np.linspace(-3, 2, 9).astype(dt),
                                                    shape=(2001,))
    cases["vmap"] = lambda k: tracer.vmap(lambda k: tr.normal(k, (13,), dt))(tr.split(k, 5))
    cases["fori_loop"] = lambda k: lax.fori_loop(
        0, 3, lambda i, a: a * 0.5 + tr.normal(tr.fold_in(k, i), (67,), dt),
        tnp.zeros(67, dt))
    for name, f in cases.items():
        eager = f(key)
        for backend in ("numpy", "llvm"):
            if not same(eager, tracer.jit(f, backend=backend)(key)):
                yield f"{name} {backend}"

rng = np.random.default_rng(0)
out = {}
for dt in (np.float32, np.float64):
    a, b, c = (rng.standard_normal(1001).astype(dt) for _ in range(3))
    a[:4] = [-0.0, 0.0, -0.0, 1e-30]
    b[4:6] = -0.0
    for name, f in EXPRS.items():
        got = tracer.jit(f, backend="llvm")(a, b, c)
        want = f(tnp.asarray(a), tnp.asarray(b), tnp.asarray(c))
        if not same(got, np.asarray(want)) or not same(got, f(a, b, c)):
            out.setdefault("arith", []).append(f"{np.dtype(dt).name} {name}")
    out.setdefault("random", []).extend(f"{np.dtype(dt).name} {n}" for n in samplers(dt))
print(json.dumps(out))
"""
X86 = platform.machine().lower() in ("x86_64", "amd64")
ISAS = [pytest.param(isa, marks=pytest.mark.skipif(
    not X86 or bool(cpu.Cpu(isa).missing), reason=f"the host cannot run {isa} code"))
    for isa in ("avx2", "avx512")]


@pytest.fixture(scope="module", params=ISAS)
def mismatches(request, tmp_path_factory):
    """{'arith': [...], 'random': [...]}: what differed from NumPy / eager on this ISA."""
    d = tmp_path_factory.mktemp(request.param)
    return json.loads(run_script(PROBE, cache=d, TRACER_CPU=request.param))


def test_arithmetic_rounds_as_numpy(mismatches):
    assert mismatches.get("arith", []) == []


def test_samplers_are_bit_identical_eagerly_and_jitted_on_both_backends(mismatches):
    assert mismatches.get("random", []) == []
