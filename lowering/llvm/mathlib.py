"""Transcendental functions as straight-line LLVM IR, so LoopVectorize widens them like
any other arithmetic. The llvm.exp/llvm.sin/... intrinsics would be scalarized into libm
calls after vectorization (~20x slower, /work/shared/llvm-notes.md 2.5).

Algorithms are FreeBSD msun's (fdlibm) with branches turned into selects and fma used for
exact argument reduction; e^r - 1 uses its Taylor polynomial (exact coefficients 1/k!),
except in float32 exp and tanh: a minimax polynomial two degrees lower (their loops are
bound by the multiply pipes).
float32 runs at float width (8 lanes with AVX2, 16 with 512-bit AVX-512): a float32 body
computed in double got half the lanes, LoopVectorize finding no gain in wider vectors.
exp and tanh use shorter float forms (_exp_f32, _tanh_f32); pow is the double algorithm
with its log and product carried in float-float; sin/cos do only the argument reduction
in double (two fmas, exact enough for any float) and the kernels in float.
sin, cos and atan are in lowering.llvm.trig.
Special values follow NumPy (NaN propagates, log(0) = -inf, pow's C99 cases, signed zeros).
Measured: < 1 ulp everywhere (max 0.87 on the sweeps, `python3 tests/lowering/test_mathlib.py`;
float32 tanh reaches 0.98 just above 0.9 on every float, exp 0.88); float32
sin/cos max 0.63 (every float in [2**-12, 2**8), 10**8 random ones up to 2**45, the worst
reduction cases), float32 pow 0.60 on normal results, 0.75 on subnormal ones (the final
scaling rounds twice there, as in float64).
"""
import math
from fractions import Fraction

import numpy as np

from lowering.llvm.mathir import TYPES, Builder, Value
from lowering.llvm.trig import atan as _atan, sincos as _sincos

FUNCTIONS = ("exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "erf", "pow", "atan")

ATTRS = 'nounwind willreturn memory(none) "no-trapping-math"="true"'
_INF, _NAN = math.inf, math.nan


# ---- exp, expm1 ------------------------------------------------------------------------
# clamp range (beyond it exp is inf / 0, with 2**k still representable in two factors),
# ln2 = hi + lo with hi having trailing zeros (fdlibm), Taylor degree of e^r - 1 on
# |r| <= ln2/2 (truncation error < 0.01 ulp)
_EXP = {"float": (-110.0, 90.0, 6.9313812256e-01, 9.0580006145e-06, 8),
        "double": (-750.0, 710.0, 6.93147180369123816490e-01, 1.90821492927058770002e-10, 13)}


def _exp(b, hi, lo=None, minus_one=False, split=False):
    """exp(hi + lo) (minus 1 when minus_one), lo small against hi or against 1: reduce by
    n = rint((hi+lo)/ln2) to r + r_lo (r_lo the exact rounding error), evaluate e^r - 1,
    then scale by 2**n as two factors so that overflow gives inf and underflow is gradual.
    With split, returns the result unrounded as head + tail, |tail| <= ulp(head)/2."""
    ty = hi.ty
    lo_c, hi_c, ln2_hi, ln2_lo, degree = _EXP[ty]
    big, small = b.cmp("ogt", hi, hi_c), b.cmp("olt", hi, lo_c)  # false for NaN: NaN flows
    hi = b.sel(big, hi_c, b.sel(small, lo_c, hi))
    if lo is not None:
        lo = b.sel(b.op("or", big, small), b.c(0.0, ty), lo)
    n = b.call("rint", b.mul(hi if lo is None else b.add(hi, lo), 1 / math.log(2)))
    r0 = b.fma(b.neg(n), ln2_hi, hi)  # exact
    r = b.fma(b.neg(n), ln2_lo, r0)
    r_lo = b.fma(b.neg(n), ln2_lo, b.sub(r0, r))
    if lo is not None:
        r, err = b.two_sum(r, lo)
        r_lo = b.add(r_lo, err)
    q = b.poly(r, [1 / math.factorial(j) for j in range(2, degree + 1)])
    p_lo = b.fma(b.mul(r, r), q, b.fma(r_lo, r, r_lo))  # e^(r + r_lo) - 1 = r + p_lo
    k = b.to_int32(n)
    k1 = b.op("ashr", k, 1)
    k2 = b.op("sub", k, k1)
    s1, s2 = b.pow2(k1, ty), b.pow2(k2, ty)
    # e^x - m = 2^k2 * (2^k1 * (r + p_lo) + (2^k1 - m * 2^-k2)), the big sums kept exact
    c, c_lo = s1, 0.0
    if minus_one:
        inv_s2 = b.pow2(b.op("sub", 0, k2), ty)
        c = b.sub(s1, inv_s2)
        c_lo = b.sub(b.sub(s1, c), inv_s2)  # exact: c is s1 - 2^-k2 rounded
    t, err = b.two_sum(b.mul(s1, r), c)
    tail = b.fma(s1, p_lo, b.add(err, c_lo))
    if split:
        t, tail = b.two_sum(t, tail)
        return b.mul(t, s2), b.mul(tail, s2)
    return b.mul(b.add(t, tail), s2)


# float32: e^r - 1 = r + r^2 Q(r) with Q minimax on |r| <= 1.002 ln2/2 (weight r^2/e^r, a
# linear program on a dense grid, coefficients rounded to float one at a time and the rest
# refitted): relative error 2**-28.2 (< 0.05 ulp) with two fmas fewer than the degree-8
# Taylor polynomial (2**-31.8); Taylor's of this degree is off by 2**-22.5
_EXPM1_Q_F32 = [0.4999999403953552, 0.1666652113199234, 0.04166828840970993,
                0.00836870539933443, 0.0013818948063999414]
_ROUNDER = 1.5 * 2.0 ** 23  # float t = v + _ROUNDER (|v| < 2**22): t - _ROUNDER = rint(v), and
_ROUNDER_BITS = int(np.float32(_ROUNDER).view(np.int32))  # bits(t) - _ROUNDER_BITS too


def _exp_f32_parts(b, x, tail=True):
    """(p, k) with e^x = 2**k (1 + p), k an i32, for |x| <= 110: _exp's reduction with n
    rounded by _ROUNDER, which also gives k without a conversion. Without tail, r's
    rounding error (up to 2**-26 relative) is left out, for callers that damp it."""
    _, _, ln2_hi, ln2_lo, _ = _EXP["float"]
    t = b.fma(x, 1 / math.log(2), _ROUNDER)
    n = b.sub(t, _ROUNDER)
    r0 = b.fma(b.neg(n), ln2_hi, x)  # exact
    r = b.fma(b.neg(n), ln2_lo, r0)
    q, k = b.poly(r, _EXPM1_Q_F32), b.op("sub", b.bits(t), _ROUNDER_BITS)
    if not tail:
        return b.fma(b.mul(r, r), q, r), k
    r_lo = b.fma(b.neg(n), ln2_lo, b.sub(r0, r))  # x - n ln2 = r + r_lo
    return b.add(r, b.fma(b.mul(r, r), q, r_lo)), k


def _exp_f32(b, x):
    """float32 exp with one rounding of e^r - 1 instead of _exp's carried tails: 0.88 ulp
    max (every float32 in [-104,-0.25] and [0.25,89], 10M random ones), against _exp's
    0.74, for half its instructions."""
    lo_c, hi_c = _EXP["float"][:2]
    x = b.sel(b.cmp("ogt", x, hi_c), b.c(hi_c, x.ty), b.sel(b.cmp("olt", x, lo_c), lo_c, x))  # NaN flows
    p, k = _exp_f32_parts(b, x)
    k1 = b.op("ashr", k, 1)
    s1 = b.pow2(k1, x.ty)
    return b.mul(b.fma(p, s1, s1), b.pow2(b.op("sub", k, k1), x.ty))


# ---- log, log1p --------------------------------------------------------------------------
_LN2 = {ty: v[2:4] for ty, v in _EXP.items()}
_SQRT_HALF_BITS = {"float": 0x3F3504F3, "double": 0x3FE6A09E667F3BCD}
_LG = {  # fdlibm k_logf.h / k_log.h: (log(1+s) - log(1-s))/s ~ 2 + z*poly(z), z = s*s
    "float": [0xaaaaaa / 2**24, 0xccce13 / 2**25, 0x91e9ee / 2**25, 0xf89e26 / 2**26],
    "double": [0.6666666666666735, 0.3999999999940942, 0.2857142874366239, 0.22222198432149784,
               0.1818357216161805, 0.15313837699209373, 0.14798198605116586]}


def _frexp(b, a):
    """(k, m) as floats with a = 2**k * m, m in [sqrt(1/2), sqrt(2)), for finite a > 0."""
    ty = a.ty
    _, _, mant, bias, _ = TYPES[ty]
    tiny = b.cmp("olt", a, float(np.finfo(TYPES[ty][0]).tiny))
    a = b.sel(tiny, b.mul(a, 2.0 ** (mant + 2)), a)
    one_bits = bias << mant
    ia = b.op("add", b.bits(a), one_bits - _SQRT_HALF_BITS[ty])
    k = b.op("sub", b.op("lshr", ia, mant), bias)
    m_bits = b.op("add", b.op("and", ia, (1 << mant) - 1), _SQRT_HALF_BITS[ty])
    kf = b.sub(b.to_float(k, ty), b.sel(tiny, b.c(mant + 2, ty), 0.0))
    return kf, b.cast("bitcast", m_bits, ty)


def _log_kernel(b, kf, m, c):
    """log(2**kf * m) + c, c a small correction (fdlibm k_log)."""
    ln2_hi, ln2_lo = _LN2[m.ty]
    f = b.sub(m, 1.0)
    hfsq = b.mul(b.mul(f, 0.5), f)
    s = b.div(f, b.add(f, 2.0))
    z = b.mul(s, s)
    r = b.mul(z, b.poly(z, _LG[m.ty]))
    acc = b.add(b.mul(s, b.add(hfsq, r)), b.fma(kf, ln2_lo, c))
    return b.fma(kf, ln2_hi, b.add(b.sub(acc, hfsq), f))


def _log_domain(b, x, edge, r):
    """r inside (edge, inf); -inf at edge, inf at inf, NaN below edge and for NaN."""
    inside = b.op("and", b.cmp("ogt", x, edge), b.cmp("olt", x, _INF))
    outside = b.sel(b.cmp("oeq", x, edge), b.c(-_INF, x.ty), b.sel(b.cmp("oeq", x, _INF), b.c(_INF, x.ty), _NAN))
    return b.sel(inside, r, outside)


def _log(b, x):
    kf, m = _frexp(b, x)
    return _log_domain(b, x, 0.0, _log_kernel(b, kf, m, 0.0))


def _log1p(b, x):
    """log(u) + (x - (u - 1))/u with u = 1 + x rounded (fdlibm s_log1p)."""
    u = b.add(x, 1.0)
    kf, m = _frexp(b, u)
    c = b.sel(b.cmp("oge", kf, 2.0), b.sub(1.0, b.sub(u, x)), b.sub(x, b.sub(u, 1.0)))
    c = b.sel(b.cmp("olt", kf, TYPES[x.ty][2] + 2.0), b.div(c, u), 0.0)
    return _log_domain(b, x, -1.0, _log_kernel(b, kf, m, c))


_ATANH_TERMS = {"float": 8, "double": 13}  # |s| < 0.172: the terms left out are < 2**-44 / 2**-70


def _log_dd(b, a):
    """log(a) = hi + lo with ~2**-64 relative error for double, ~2**-44 for float (for
    pow): log(m) = 2 atanh(s) with s = f/(2+f) carried in two parts and the s**3 term
    computed exactly."""
    ln2_hi, ln2_lo = _LN2[a.ty]
    kf, m = _frexp(b, a)
    f = b.sub(m, 1.0)
    d = b.add(f, 2.0)
    d_lo = b.sub(f, b.sub(d, 2.0))
    s = b.div(f, d)
    s_lo = b.div(b.sub(b.fma(b.neg(s), d, f), b.mul(s, d_lo)), d)
    z = b.mul(s, s)
    c = b.mul(s, z)  # s**3 = c + c_lo
    c_lo = b.fma(s, b.fma(s, s, b.neg(z)), b.fma(s, z, b.neg(c)))
    two3 = float(TYPES[a.ty][0](2 / 3))  # 2/3 rounded to the type; the fma below adds the rest
    t3 = b.mul(c, two3)  # 2/3 s**3 = t3 + t3_lo
    t3_lo = b.fma(c, float(Fraction(2, 3) - Fraction(two3)), b.fma(c, two3, b.neg(t3)))
    # log a = k ln2 + 2s + 2s^3/3 + 2s^5/5 + ...: the three leading terms summed exactly
    head = b.mul(kf, ln2_hi)  # exact; |head| >= |2s| unless k = 0, so Fast2Sum applies
    s1 = b.fma(s, 2.0, head)
    e1 = b.fma(s, 2.0, b.sub(head, s1))
    s2 = b.add(s1, t3)
    e2 = b.add(b.sub(s1, s2), t3)
    small = [b.mul(b.mul(c, z), b.poly(z, [2 / (2 * j + 1) for j in range(2, _ATANH_TERMS[a.ty])])),
             b.mul(kf, ln2_lo), b.mul(c_lo, two3), t3_lo, b.mul(b.mul(z, 2.0), s_lo),
             b.mul(s_lo, 2.0), e2, e1]
    lo = small[0]
    for v in small[1:]:
        lo = b.add(lo, v)
    hi = b.add(s2, lo)
    # lo is meaningless where hi is not finite; _exp drops it there (pow's y = 0 aside)
    return _log_domain(b, a, 0.0, hi), b.add(b.sub(s2, hi), lo)


# ---- pow ---------------------------------------------------------------------------------
def _pow(b, x, y):
    """exp(y * log|x|) with log|x| and the product carried in two parts (float-float for
    float32, so that it runs at float width), sign and C99/NumPy special cases by selects."""
    hi, lo = _log_dd(b, b.call("fabs", x))
    ph = b.mul(y, hi)
    r = _exp(b, ph, b.fma(y, lo, b.fma(y, hi, b.neg(ph))))
    y_int = b.cmp("oeq", b.call("floor", y), y)  # true for +-inf, false for NaN
    half = b.mul(y, 0.5)
    y_odd = b.op("and", y_int, b.cmp("une", b.call("floor", half), half))
    x_neg = b.cmp("slt", b.bits(x), 0)  # sign bit: -0 and -inf too
    r = b.sel(b.op("and", x_neg, y_odd), b.neg(r), r)
    neg_finite = b.op("and", b.cmp("olt", x, 0.0), b.cmp("ogt", x, -_INF))
    r = b.sel(b.op("and", neg_finite, b.op("xor", y_int, b.c(1, "i1"))), _NAN, r)
    unit_inf = b.op("and", b.cmp("oeq", b.call("fabs", x), 1.0), b.cmp("oeq", b.call("fabs", y), _INF))
    one = b.op("or", b.op("or", b.cmp("oeq", x, 1.0), b.cmp("oeq", y, 0.0)), unit_inf)
    return b.sel(one, 1.0, r)


# ---- tanh, erf ---------------------------------------------------------------------------
# float32 tanh x = x + x^3 P(x^2) on |x| < 0.9 (least-squares fit against mpmath, 0.02 ulp)
_TANH_SMALL = 0.9
_TANH_P = [-0.3333332159423374, 0.1333296378450583, -0.05392821690748915,
           0.021659731414438485, -0.008257694161643965, 0.002576565911667552,
           -0.000453323507630707]


def _tanh_f32(b, x):
    """float32: the odd polynomial below 0.9, 1 - 2/(e^2|x| + 1) above (|result| > 0.71,
    so the quotient's rounding costs under 1 ulp); half of fdlibm's instructions.
    e^2|x| + 1 = 2**k (1 + p) + 1 is rounded once, by an fma; as 2|x| <= 20, 2**k is
    one factor, and the quotient damps e^2|x|'s error at least threefold, so r's tail
    is left out."""
    ax = b.call("fabs", x)
    ax = b.sel(b.cmp("ogt", ax, 10.0), b.c(10.0, x.ty), ax)  # tanh(10) = 1 in float; NaN flows
    z = b.mul(ax, ax)
    small = b.fma(b.mul(ax, z), b.poly(z, _TANH_P), ax)
    p, k = _exp_f32_parts(b, b.add(ax, ax), tail=False)
    s = b.pow2(k, x.ty)
    big = b.sub(1.0, b.div(2.0, b.fma(s, p, b.add(s, 1.0))))
    return b.call("copysign", b.sel(b.cmp("olt", ax, _TANH_SMALL), small, big), x)


def _tanh(b, x):
    """fdlibm s_tanh: with t = expm1(-+2|x|), tanh|x| = -t/(t+2) below 1, 1 - 2/(t+2) above;
    t and the quotient are carried with their tails (one division)."""
    ax = b.call("fabs", x)
    ax = b.sel(b.cmp("ogt", ax, 40.0), b.c(40.0, x.ty), ax)  # tanh(40) = 1; NaN flows
    below = b.cmp("olt", ax, 1.0)
    t, t_lo = _exp(b, b.mul(ax, b.sel(below, b.c(-2.0, x.ty), 2.0)), minus_one=True, split=True)
    d, d_lo = b.two_sum(t, 2.0)
    d_lo = b.add(d_lo, t_lo)
    n, n_lo = b.sel(below, b.neg(t), 2.0), b.sel(below, b.neg(t_lo), 0.0)
    inv = b.div(1.0, d)
    q = b.mul(n, inv)  # n/d = q + corr: corr from the residual n - q*d
    q = b.sub(q, b.mul(b.add(b.fma(q, d, b.neg(n)), b.fma(q, d_lo, b.neg(n_lo))), inv))
    return b.call("copysign", b.sel(below, q, b.sub(1.0, q)), x)


_ERX = 8.45062911510467529297e-01
_ERF = [  # fdlibm s_erf.c (s_erff.c's coefficients are exactly these rounded to float):
    # (numerator, denominator) for |x| < 0.84375 (in x^2), < 1.25 (in |x|-1), < 1/0.35 and
    # < 6 (in 1/x^2)
    ([0.12837916709551256, -0.3250421072470015, -0.02848174957559851,
      -0.005770270296489442, -2.3763016656650163e-05],
     [1.0, 0.39791722395915535, 0.0650222499887673, 0.005081306281875766,
      0.00013249473800432164, -3.960228278775368e-06]),
    ([-0.0023621185607526594, 0.41485611868374833, -0.3722078760357013,
      0.31834661990116175, -0.11089469428239668, 0.035478304325618236,
      -0.002166375594868791],
     [1.0, 0.10642088040084423, 0.540397917702171, 0.07182865441419627,
      0.12617121980876164, 0.01363708391202905, 0.011984499846799107]),
    ([-0.009864944034847148, -0.6938585727071818, -10.558626225323291,
      -62.375332450326006, -162.39666946257347, -184.60509290671104, -81.2874355063066,
      -9.814329344169145],
     [1.0, 19.651271667439257, 137.65775414351904, 434.56587747522923, 645.3872717332679,
      429.00814002756783, 108.63500554177944, 6.570249770319282, -0.0604244152148581]),
    ([-0.0098649429247001, -0.799283237680523, -17.757954917754752, -160.63638485582192,
      -637.5664433683896, -1025.0951316110772, -483.5191916086514],
     [1.0, 30.33806074348246, 325.7925129965739, 1536.729586084437, 3199.8582195085955,
      2553.0504064331644, 474.52854120695537, -22.44095244658582])]


def _erf(b, x):
    """fdlibm s_erf with its four intervals merged: one rational whose coefficients are
    selected per lane, erfc tail = exp(-x^2 - 0.5625 + R/S)/x with x^2 split exactly."""
    ty = x.ty
    ax = b.call("fabs", x)
    ax = b.sel(b.cmp("ogt", ax, 6.0), b.c(6.0, ty), ax)  # erf(6) = 1 in double; NaN flows
    masks = [b.cmp("olt", ax, v) for v in (0.84375, 1.25, 1 / 0.35)]
    h = b.mul(ax, ax)
    t = b.sel(masks[0], h, b.sel(masks[1], b.sub(ax, 1.0), b.div(1.0, h)))

    def rational(part):  # polynomial in t with each coefficient selected by interval
        n = max(len(s[part]) for s in _ERF)
        sets = [s[part] + [0.0] * (n - len(s[part])) for s in _ERF]
        return b.poly(t, [b.sel(masks[0], b.c(v0, ty), b.sel(masks[1], b.c(v1, ty), b.sel(masks[2], b.c(v2, ty), v3)))
                          for v0, v1, v2, v3 in zip(*sets)])

    q = b.div(rational(0), rational(1))
    h_lo = b.fma(ax, ax, b.neg(h))  # ax^2 = h + h_lo exactly
    tail = b.sub(1.0, b.div(_exp(b, b.neg(h), b.sub(b.sub(q, 0.5625), h_lo)), ax))
    y = b.sel(masks[0], b.fma(ax, q, ax), b.sel(masks[1], b.add(q, _ERX), tail))
    return b.call("copysign", y, x)


# ---- entry point -------------------------------------------------------------------------
def _zero_in_zero_out(fn):
    """f(+-0) = +-0 as in NumPy, for the functions whose reductions lose the zero's sign."""
    return lambda b, ty, x: b.sel(b.cmp("oeq", x, 0.0), x, fn(b, ty, x))


_BODIES = {
    "exp": lambda b, ty, x: _exp_f32(b, x) if ty == "float" else _exp(b, x),
    "expm1": _zero_in_zero_out(lambda b, ty, x: _exp(b, x, minus_one=True)),
    "log": lambda b, ty, x: _log(b, x),
    "log1p": _zero_in_zero_out(lambda b, ty, x: _log1p(b, x)),
    "tanh": lambda b, ty, x: _tanh_f32(b, x) if ty == "float" else _tanh(b, x),
    "erf": lambda b, ty, x: _erf(b, x),
    "sin": _zero_in_zero_out(lambda b, ty, x: _sincos(b, x, 0)),
    "cos": lambda b, ty, x: _sincos(b, x, 1),
    "pow": lambda b, ty, x, y: _pow(b, x, y),
    "atan": lambda b, ty, x: _atan(b, x),
}


def declare(name: str, dtype) -> tuple[str, str]:
    """(symbol, ir_text): ir_text defines `define internal <T> @<symbol>(<T> %x)` (pow
    takes `(<T> %x, <T> %y)`), T = float for float32, double for float64, alwaysinline.
    The text is self-contained and is pasted once per module: it calls intrinsics without
    declaring them (LLVM 22 declares intrinsics implicitly and still accepts explicit
    declarations elsewhere in the module), so several texts can share one module."""
    ty, params, symbol = signature(name, dtype)
    return symbol, define(name, ty, params, 1, f"internal {ty} @{symbol}", "alwaysinline ")


def signature(name, dtype):
    """(LLVM type, parameter names, symbol) of mathlib function `name` for `dtype`."""
    if name not in _BODIES:
        raise KeyError(f"mathlib: unknown function {name!r}; known: {', '.join(FUNCTIONS)}")
    dt = np.dtype(dtype)
    ty = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}.get(dt)
    if ty is None:
        raise TypeError(f"mathlib.declare({name!r}): no {dt} version; convert to float32 or float64")
    return ty, ["x", "y"] if name == "pow" else ["x"], f"tracer.{name}.{TYPES[ty][4]}"


def define(name, ty, params, lanes, head, inline=""):
    """The IR text defining `head`: function `name` on `lanes`-wide values of `ty`."""
    b = Builder(lanes)
    r = _BODIES[name](b, ty, *(Value(f"%{p}", ty) for p in params))
    sig = ", ".join(f"{b.t(ty)} %{p}" for p in params)
    return "\n".join([f"define {head}({sig}) {inline}{ATTRS} {{", *b.lines,
                      f"  ret {b.t(ty)} {r.ref}", "}", ""])
