"""lowering.llvm.mathlib: each function compiled into a vectorized loop kernel and checked
against long-double references over dense sweeps (max error in ulps of the result dtype),
against NumPy on special values and arbitrary floats (hypothesis), and for full vector
width without libm calls. Kernels are compiled for the host and for named CPUs (AVX2,
AVX-512), each run where the host can execute it.

`python3 tests/lowering/test_mathlib.py` prints the measured accuracy table."""
import ctypes
import functools
import math
import os
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

llvm = pytest.importorskip("llvmlite.binding")
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))  # as a script
from lowering.llvm import mathlib, trig  # noqa: E402

DTYPES = (np.float32, np.float64)
LONG = np.longdouble
needs_long = pytest.mark.skipif(np.finfo(LONG).nmant < 63, reason="needs 80-bit long double")

# Max ulp error asserted per (function, dtype)
BOUND = {(name, dt): 1.0 for name in mathlib.FUNCTIONS for dt in DTYPES}


# A named CPU gets that CPU's own features from LLVM, so AVX2 code is compiled (and run) on
# AVX-512 hosts and AVX-512 code is compiled anywhere:
# target -> (cpu, host features needed to run its code, (float32, float64) vector lanes)
_AVX2 = ("avx2", "fma", "bmi", "bmi2", "f16c", "lzcnt", "movbe")
TARGETS = {
    "host": (None, (), None),
    "avx2": ("haswell", _AVX2, (8, 4)),
    # AVX-512 with LLVM's prefer-256-bit tuning (as on Intel server CPUs): 256-bit vectors
    "avx512-256": ("skylake-avx512", _AVX2 + ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"), (8, 4)),
    "avx512": ("znver4", None, (16, 8)),  # 512-bit vectors; code generation only
}
RUN_TARGETS = ("host", "avx2", "avx512-256")  # special values: every target the host can run
SWEEP_TARGETS = ("host", "avx2")  # dense sweeps: the host's code and AVX2's, the common ISA


def _host_features():
    return {k for k, on in llvm.get_host_cpu_features().items() if on}


def _missing(target):
    """Why this host cannot run target's code ([] if it can)."""
    needs = TARGETS[target][1]
    return ["code generation only"] if needs is None else sorted(set(needs) - _host_features())


def runnable(target):
    """Skip the calling test unless this host can execute code compiled for target."""
    if _missing(target):
        pytest.skip(f"host cannot run {target} code ({', '.join(_missing(target))})")


@functools.cache
def _jit(target):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    triple = llvm.get_process_triple()
    cpu = TARGETS[target][0]
    tm = llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu or llvm.get_host_cpu_name(), features="" if cpu else llvm.get_host_cpu_features().flatten(),
        opt=3, reloc="default", codemodel="jitdefault", jit=True)
    backing = llvm.parse_assembly("")
    backing.triple = triple
    return tm, llvm.create_mcjit_compiler(backing, tm)


@functools.cache
def kernel(name, dtype, target="host"):
    """`void k(ptr in.., ptr out, i64 n)` applying the function elementwise, optimized at O3
    for target. Returns (callable(*arrays) -> out, optimized IR, assembly); call the callable
    only if runnable(target)."""
    tm, ee = _jit(target)
    sym, text = mathlib.declare(name, dtype)
    ty = "float" if dtype == np.float32 else "double"
    ins = ["x", "y"] if name == "pow" else ["x"]
    fname = f"k_{name}_{ty}"
    args = ", ".join(f"ptr noalias readonly %in_{v}" for v in ins)
    loads = "".join(f"  %p_{v} = getelementptr inbounds {ty}, ptr %in_{v}, i64 %i\n"
                    f"  %{v} = load {ty}, ptr %p_{v}\n" for v in ins)
    call_args = ", ".join(f"{ty} %{v}" for v in ins)
    ir = f"""{text}
define void @{fname}({args}, ptr noalias writeonly %out, i64 %n) nounwind {{
entry:
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
{loads}  %r = call {ty} @{sym}({call_args})
  %p_out = getelementptr inbounds {ty}, ptr %out, i64 %i
  store {ty} %r, ptr %p_out
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""
    mod = llvm.parse_assembly(ir)
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = pto.slp_vectorization = True
    pto.loop_interleaving = pto.loop_unrolling = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    opt_ir, asm = str(mod), tm.emit_assembly(mod)
    ee.add_object_file(llvm.ObjectFileRef.from_data(tm.emit_object(mod)))
    cfn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(ins) + 1), ctypes.c_int64)(
        ee.get_function_address(fname))

    def run(*arrays):
        arrays = [np.ascontiguousarray(a, dtype) for a in np.broadcast_arrays(*arrays)]
        out = np.empty_like(arrays[0])
        cfn(*[a.ctypes.data for a in arrays], out.ctypes.data, out.size)
        return out
    return run, opt_ir, asm


def _erf_long(x):
    """erf in long double: 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (1*3*..*(2n+1)), a series
    of positive terms (no cancellation); erf = +-1 to double precision beyond |x| = 6."""
    x = np.asarray(x, LONG)
    ax = np.minimum(np.abs(x), LONG(6))
    term, total = ax.copy(), ax.copy()
    for n in range(1, 130):
        term = term * (2 * ax * ax) / (2 * n + 1)
        total += term
    two_over_sqrt_pi = LONG("1.12837916709551257389615890312154517")
    y = two_over_sqrt_pi * np.exp(-ax * ax) * total
    return np.copysign(np.where(np.abs(x) > 6, LONG(1), y), x)


REF = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sin": np.sin,
       "cos": np.cos, "tanh": np.tanh, "erf": _erf_long, "pow": np.power, "atan": np.arctan}


def _signed(mags, lo, hi):
    v = np.concatenate([mags, -mags])
    return v[(v >= lo) & (v <= hi)]


def sweep(name, dtype):
    """Dense inputs inside the finite-result domain: a linear sweep of the main range plus
    log-spaced magnitudes of both signs down to tiny values."""
    f = np.finfo(dtype)
    n = 50_001 if name == "erf" else 200_001  # the erf reference is a slow series
    geo = np.geomspace(float(f.smallest_subnormal) if name == "log" else 1e-30, float(f.max) / 2, n)
    ranges = {"exp": (-103.9, 88.72) if dtype == np.float32 else (-745.1, 709.78),
              "expm1": (-90.0, 88.72) if dtype == np.float32 else (-750.0, 709.78),
              "log": (0.0, float(f.max)), "log1p": (-1.0, float(f.max)),
              "sin": (-1e13, 1e13), "cos": (-1e13, 1e13), "tanh": (-30.0, 30.0),
              "erf": (-10.0, 10.0), "atan": (-float(f.max), float(f.max))}
    if name == "pow":
        rng = np.random.default_rng(0)
        t_lo, t_hi = np.log(float(f.smallest_subnormal)), np.log(float(f.max))
        x_edge = np.geomspace(1.001, float(f.max) ** 0.5, 50_001)  # with y: every result size
        x = np.concatenate([np.geomspace(1e-3, 1e3, n), rng.uniform(-10, -0.1, 20_000), x_edge,
                            np.geomspace(1e-300, 1e300, n) if dtype == np.float64 else []])
        y = np.concatenate([rng.uniform(-12, 12, n), rng.integers(-30, 31, 20_000),
                            rng.uniform(t_lo, t_hi, x_edge.size) / np.log(x_edge),
                            rng.uniform(-2.3, 2.3, n) if dtype == np.float64 else []])
        x, y = x.astype(dtype), y.astype(dtype)
        t = y.astype(LONG) * np.log(np.abs(x.astype(LONG)))
        keep = (t > t_lo) & (t < t_hi)  # finite, nonzero results
        return x[keep], y[keep]
    lo, hi = ranges[name]
    core = {"log": (0.5, 2.0), "log1p": (-0.999, 10.0), "sin": (-20.0, 20.0), "cos": (-20.0, 20.0),
            "atan": (-4.0, 4.0)}
    a, b = core.get(name, (lo, hi))
    parts = [np.linspace(a, b, n), _signed(geo, lo, hi)]
    if name == "log1p":
        parts.append(-1 + np.geomspace(1e-7, 1.0, 20_001))
    x = np.concatenate(parts).astype(dtype)
    return (x[(x > lo) & (x < hi)],)


def ulp_error(out, ref, dtype):
    """|out - ref| in units of the last place of dtype at ref (subnormal spacing floor)."""
    f = np.finfo(dtype)
    ref = np.asarray(ref, LONG)
    _, e = np.frexp(np.abs(ref))
    ulp = np.maximum(np.ldexp(LONG(1), (e - 1 - f.nmant).astype(np.int32)), LONG(f.smallest_subnormal))
    return np.abs(out.astype(LONG) - ref) / ulp


@functools.cache
def _swept(name, dtype):
    """sweep() and its long-double reference, shared by the targets."""
    args = sweep(name, dtype)
    return args, REF[name](*[a.astype(LONG) for a in args])


def max_ulp(name, dtype, target="host"):
    args, ref = _swept(name, dtype)
    err = ulp_error(kernel(name, dtype, target)[0](*args), ref, dtype)
    worst = int(np.argmax(err))
    return float(err[worst]), [a[worst] for a in args]


@needs_long
@pytest.mark.parametrize("target", SWEEP_TARGETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", mathlib.FUNCTIONS)
def test_accuracy_over_dense_sweep(name, dtype, target):
    runnable(target)
    err, at = max_ulp(name, dtype, target)
    assert err <= BOUND[name, dtype], f"{name} {dtype.__name__} {target}: {err:.3f} ulp at {at}"


def _numpy(name, *args):
    if name == "erf":
        return np.vectorize(math.erf, otypes=[args[0].dtype])(*args)
    return REF[name](*args)


def check_like_numpy(name, dtype, target, *args):
    """NaN, inf and signed-zero results exactly as NumPy's; every other result within
    BOUND ulp of the long-double reference (NumPy's own float32 results may be off by more)."""
    if name in ("sin", "cos"):  # NaN beyond the reduction range, tested separately
        args = tuple(a[~(np.abs(args[0]) > trig.TRIG_LIMIT)] for a in args)
    with np.errstate(all="ignore"):
        got, want = kernel(name, dtype, target)[0](*args), _numpy(name, *args)
        ref = REF[name](*[a.astype(LONG) for a in args])
    assert np.array_equal(np.isnan(got), np.isnan(want)), (args, got, want)
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), (args[0][inf], got[inf])
    both_zero = (got == 0) & (want == 0)
    assert np.array_equal(np.signbit(got[both_zero]), np.signbit(want[both_zero]))
    finite = np.isfinite(want)
    err = ulp_error(got[finite], ref[finite], dtype)
    assert err.max(initial=0) <= BOUND[name, dtype], [a[finite][np.argmax(err)] for a in args]


SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, 1e-30, -1e-30,
            1e30, -1e30, 88.0, 89.0, 710.0, -710.0, -750.0, 1e300, -1e300, math.inf,
            -math.inf, math.nan]


@needs_long
@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", mathlib.FUNCTIONS)
def test_special_values_match_numpy(name, dtype, target):
    runnable(target)
    f = np.finfo(dtype)
    with np.errstate(over="ignore"):
        vals = np.array(SPECIALS + [f.tiny, -f.tiny, f.smallest_subnormal, f.max, -f.max], dtype)
    args = tuple(a.ravel() for a in np.meshgrid(vals, vals)) if name == "pow" else (vals,)
    check_like_numpy(name, dtype, target, *args)


@needs_long
@settings(max_examples=25, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("target", RUN_TARGETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", mathlib.FUNCTIONS)
def test_arbitrary_floats_match_numpy(name, dtype, target, data):
    runnable(target)
    floats = st.floats(width=np.finfo(dtype).bits)
    draw = [np.array(data.draw(st.lists(floats, min_size=1, max_size=64)), dtype)]
    if name == "pow":
        draw.append(np.array(data.draw(st.lists(floats, min_size=len(draw[0]), max_size=len(draw[0]))), dtype))
    check_like_numpy(name, dtype, target, *draw)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("name", mathlib.FUNCTIONS)
def test_loop_vectorizes_without_libm_calls(name, dtype, target):
    """Full vector width for the target (float32 must not be computed at double's width)."""
    _, ir, asm = kernel(name, dtype, target)
    f32 = dtype == np.float32
    ty = "float" if f32 else "double"
    widest = max(map(int, re.findall(rf"<(\d+) x {ty}>", ir)), default=0)
    lanes = TARGETS[target][2]
    if lanes is None:  # the host: its vector preference is unknown, its width is not
        avx2 = "avx2" in _host_features()
        assert widest >= (8 if avx2 else 4) // (1 if f32 else 2)
    else:
        assert widest == lanes[0 if f32 else 1], (target, widest)
    assert not re.search(r"\bcall", asm), [ln for ln in asm.splitlines() if "call" in ln][:5]


# float32 x nearest a multiple of pi/2 in their binade (exhaustive search over |x| < 2**45):
# |x - n*pi/2| down to 2**-28.9, the hardest inputs for the argument reduction
TRIG_HARD_F32 = [1.5707963705062866, 4.71238899230957, 252.89820861816406, 52516.43359375,
                 2709675.5, 42781604.0, 620046656.0, 21999384576.0, 1522788990976.0]


@needs_long
@pytest.mark.parametrize("target", RUN_TARGETS)
def test_float32_trig_hard_arguments(target):
    """Reduction worst cases and their neighbours, the largest arguments below TRIG_LIMIT,
    subnormals and zeros: within BOUND and NumPy's signed zeros."""
    runnable(target)
    hard = np.array(TRIG_HARD_F32, np.float32)
    top = np.float32(trig.TRIG_LIMIT)
    f = np.finfo(np.float32)
    x = np.concatenate([hard, np.nextafter(hard, 0), np.nextafter(hard, np.inf),
                        [top, np.nextafter(top, 0), 3e13, 1e13 + 4096],
                        [f.smallest_subnormal, 3 * f.smallest_subnormal, f.tiny / 3, f.tiny, 0.0]]).astype(np.float32)
    x = np.concatenate([x, -x])
    for name in ("sin", "cos"):
        check_like_numpy(name, np.float32, target, x)


def _floats_between(a, b, step):
    """Every step-th float32 in [a, b) (a, b of one sign), by bit pattern."""
    lo, hi = sorted(int(np.float32(v).view(np.int32)) for v in (a, b))
    return np.arange(lo, hi, step, dtype=np.int32).view(np.float32)


@needs_long
@pytest.mark.parametrize("target", SWEEP_TARGETS)
def test_float32_exp_tanh_polynomial_ranges(target):
    """float32 exp's minimax e^r - 1 over its whole reduced range (|x| in [0.5, 1): r at
    both ends, x near overflow), and tanh around its switch from the polynomial to the
    quotient (0.9), every few floats: exp within 0.9 ulp (0.88 measured), tanh within
    BOUND (0.98 measured just above 0.9, where the quotient's three roundings add up)."""
    runnable(target)
    cases = {"exp": ([(0.5, 1.0), (-1.0, -0.5), (64.0, 88.72), (-103.9, -64.0)], 0.9),
             "tanh": ([(0.8, 1.1)], BOUND["tanh", np.float32])}
    for name, (ranges, bound) in cases.items():
        x = np.concatenate([_floats_between(a, b, 5) for a, b in ranges])
        err = ulp_error(kernel(name, np.float32, target)[0](x), REF[name](x.astype(LONG)), np.float32)
        assert err.max() <= bound, (name, err.max(), x[np.argmax(err)])


def _multiplies(name):
    """fmul and fma instructions in the float32 body: the loops of exp and tanh are bound
    by the two multiply pipes, so this counts their cost."""
    _, text = mathlib.declare(name, np.float32)
    return len(re.findall(r"= fmul |@llvm\.fma\.", text))


def test_float32_exp_tanh_multiply_count():
    """A degree-6 minimax e^r - 1, n rounded by the add-magic trick, one scaling factor in
    tanh: exp 14 -> 12, tanh 23 -> 19 multiplies (W1 ~19% faster)."""
    assert (_multiplies("exp"), _multiplies("tanh")) == (12, 19)


@pytest.mark.parametrize("target", RUN_TARGETS)
def test_trig_beyond_reduction_range_is_nan(target):
    runnable(target)
    x = np.array([trig.TRIG_LIMIT * 1.01, -3e15, 1e30, math.inf, -math.inf])
    for name in ("sin", "cos"):
        for dtype in DTYPES:
            assert np.isnan(kernel(name, dtype, target)[0](x)).all()


def test_declare_interface():
    for dtype in DTYPES:
        texts = [mathlib.declare(name, dtype) for name in mathlib.FUNCTIONS]
        assert len({sym for sym, _ in texts}) == len(mathlib.FUNCTIONS)
        llvm.parse_assembly("".join(t for _, t in texts)).verify()  # one module holds all
    assert mathlib.declare("exp", "float32")[0] == "tracer.exp.f32"
    with pytest.raises(KeyError, match="sqrt"):
        mathlib.declare("sqrt", np.float32)
    with pytest.raises(TypeError, match="int32"):
        mathlib.declare("exp", np.int32)


if __name__ == "__main__":
    for target in SWEEP_TARGETS:
        if _missing(target):
            continue
        print(f"{target:8} {'float32':>9} {'float64':>9}   (max ulp over sweep(); worst input)")
        for name in mathlib.FUNCTIONS:
            cells = [max_ulp(name, dt, target) for dt in DTYPES]
            print(f"{name:8} {cells[0][0]:9.3f} {cells[1][0]:9.3f}   "
                  + "; ".join(f"{[float(v) for v in at]}" for _, at in cells))
