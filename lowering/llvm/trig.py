"""sin, cos and atan for lowering.llvm.mathlib (same conventions: straight-line IR built
with mathir.Builder, branches as selects, fma for exact reduction).

sin/cos reduce by pi/2 and are accurate for |x| <= TRIG_LIMIT = 2**45 (~3.5e13); beyond
that they return NaN rather than a wrong number. float32 does only the reduction in
double (two fmas, exact enough for any float) and the kernels in float: 0.63 ulp max.
atan is fdlibm's (four breakpoints, one division), measured 0.83 ulp (float32) and 0.75
ulp (float64) on the dense sweep.
"""
import math

_NAN = math.nan


# ---- sin, cos ----------------------------------------------------------------------------
_PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)  # sum = pi/2 + O(2**-160)
_SIN_COS = {  # on |r| <= pi/4: sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2)
    # float: S's first coefficient is -1/6 rounded, the others and C fitted to sin and cos
    # with their coefficients rounded to float (relative error 2**-32.3, 2**-30.9)
    "float": ([-0.1666666716337204, 0.008333379402756691, -0.00019853131379932165,
               2.8334488888503984e-06],
              [0.04166664555668831, -0.0013887366512790322, 2.4438384571112692e-05]),
    "double": ([-0.16666666666666632, 0.00833333333332249, -0.0001984126982985795,  # k_sin
                2.7557313707070068e-06, -2.5050760253406863e-08, 1.58969099521155e-10],
               [0.0416666666666666, -0.001388888888887411, 2.480158728947673e-05,  # k_cos
                -2.7557314351390663e-07, 2.087572321298175e-09, -1.1359647557788195e-11])}
TRIG_LIMIT = 2.0 ** 45  # sin/cos return NaN for |x| > TRIG_LIMIT


_MAGIC = 1.5 * 2.0 ** 52  # t = x*2/pi + _MAGIC: t - _MAGIC = rint(x*2/pi), low bits of t = n


def _reduce_pio2(b, x):
    """(t, r, r_lo) for double x: x - n*pi/2 = r + r_lo with pi/2 in three parts (fdlibm's
    __rem_pio2 with fma)."""
    t = b.fma(x, 2 / math.pi, _MAGIC)
    fn = b.sub(t, _MAGIC)
    w = b.mul(fn, _PIO2[1])
    r, e = b.two_sum(b.fma(b.neg(fn), _PIO2[0], x), b.neg(w))  # first step exact
    r_lo = b.fma(b.neg(fn), _PIO2[2], b.sub(e, b.fma(fn, _PIO2[1], b.neg(w))))
    r_hi = b.add(r, r_lo)
    return t, r_hi, b.sub(r_lo, b.sub(r_hi, r))


def _reduce_pio2_f32(b, x):
    """(t, r, r_lo) for float x, r and r_lo float. The reduction runs in double: x - n*P0
    is exact (x has 24 bits and is >= pi/4 if n != 0) and |n*P2| < 2**-64, so two fmas give
    r to 2**-35 relative even at the closest float to a multiple of pi/2 below TRIG_LIMIT
    (|r| = 2**-28.9); then r is split into two floats (r - r_hi is exact in double)."""
    xd = b.cast("fpext", x, "double")
    t = b.fma(xd, 2 / math.pi, _MAGIC)
    fn = b.neg(b.sub(t, _MAGIC))
    r = b.fma(fn, _PIO2[1], b.fma(fn, _PIO2[0], xd))
    r_hi = b.cast("fptrunc", r, "float")
    return t, r_hi, b.cast("fptrunc", b.sub(r, b.cast("fpext", r_hi, "double")), "float")


def sincos(b, x, quarter):
    """sin(x + quarter*pi/2): r + r_lo = x - n*pi/2, then fdlibm's sin and cos kernels on
    |r| <= pi/4 with r's tail, chosen by quadrant n + quarter."""
    t, r, r_lo = (_reduce_pio2_f32 if x.ty == "float" else _reduce_pio2)(b, x)
    sin_coeffs, cos_coeffs = _SIN_COS[x.ty]
    z = b.mul(r, r)
    p = b.mul(r, z)  # r^3
    s = b.poly(z, sin_coeffs)
    sin_tail, cos_tail = b.mul(r_lo, b.fma(z, -0.5, 1.0)), b.mul(r, r_lo)
    if x.ty == "float":  # also the rounding errors of r^2 and r^3: 0.81 -> 0.63 ulp (double
        z_lo = b.fma(r, r, b.neg(z))  # would go from 0.77 to 0.63 for 10% more time)
        p_lo = b.fma(r, z_lo, b.fma(r, z, b.neg(p)))
        sin_tail, cos_tail = b.fma(p_lo, s, sin_tail), b.fma(z_lo, 0.5, cos_tail)
    sin_r = b.add(r, b.fma(p, s, sin_tail))
    hz = b.mul(z, 0.5)  # fdlibm k_cos: 1 - hz computed as w + ((1 - w) - hz)
    w = b.sub(1.0, hz)
    tail = b.fma(b.mul(z, z), b.poly(z, cos_coeffs), b.neg(cos_tail))
    cos_r = b.add(w, b.add(b.sub(b.sub(1.0, w), hz), tail))
    q = b.op("add", b.cast("trunc", b.bits(t), "i32"), quarter)
    y = b.sel(b.cmp("ne", b.op("and", q, 1), 0), cos_r, sin_r)
    y = b.sel(b.cmp("ne", b.op("and", q, 2), 0), b.neg(y), y)
    return b.sel(b.cmp("ogt", b.call("fabs", x), TRIG_LIMIT), _NAN, y)


# ---- atan ---------------------------------------------------------------------------------
# fdlibm s_atan.c / s_atanf.c: |x| is reduced by one of four breakpoints (7/16, 11/16, 19/16,
# 39/16) to t with |t| <= 7/16, atan|x| = atan(c) + atan(t) with atan(c) = hi + lo; the
# branches become selects feeding one division. Huge |x| and inf fall into the last case
# (t = -1/|x|), NaN flows through t.
_ATAN = {
    "double": ([4.63647609000806093515e-01, 7.85398163397448278999e-01,
                9.82793723247329054082e-01, 1.57079632679489655800e+00],
               [2.26987774529616870924e-17, 3.06161699786838301793e-17,
                1.39033110312309984516e-17, 6.12323399573676603587e-17],
               [3.33333333333329318027e-01, -1.99999999998764832476e-01,
                1.42857142725034663711e-01, -1.11111104054623557880e-01,
                9.09088713343650656196e-02, -7.69187620504482999495e-02,
                6.66107313738753120669e-02, -5.83357013379057348645e-02,
                4.97687799461593236017e-02, -3.65315727442169155270e-02,
                1.62858201153657823623e-02]),
    "float": ([4.6364760399e-01, 7.8539812565e-01, 9.8279368877e-01, 1.5707962513e+00],
              [5.0121582440e-09, 3.7748947079e-08, 3.4473217170e-08, 7.5497894159e-08],
              [3.3333328366e-01, -1.9999158382e-01, 1.4253635705e-01, -1.0648017377e-01,
               6.1687607318e-02]),
}


def atan(b, x):
    hi_c, lo_c, coeffs = _ATAN[x.ty]
    a = b.call("fabs", x)
    zero = b.c(0.0, x.ty)
    cases = [b.cmp("olt", a, c) for c in (0.4375, 0.6875, 1.1875, 2.4375)]
    num, den, hi, lo = b.neg(b.c(1.0, x.ty)), a, b.c(hi_c[3], x.ty), b.c(lo_c[3], x.ty)
    for k, (n, d) in reversed(list(enumerate([
            (b.sub(b.mul(a, 2.0), 1.0), b.add(a, 2.0)), (b.sub(a, 1.0), b.add(a, 1.0)),
            (b.sub(a, 1.5), b.fma(a, 1.5, 1.0))]))):
        num, den = b.sel(cases[k + 1], n, num), b.sel(cases[k + 1], d, den)
        hi, lo = b.sel(cases[k + 1], hi_c[k], hi), b.sel(cases[k + 1], lo_c[k], lo)
    num, den = b.sel(cases[0], a, num), b.sel(cases[0], 1.0, den)
    hi, lo = b.sel(cases[0], zero, hi), b.sel(cases[0], zero, lo)
    t = b.div(num, den)
    z = b.mul(t, t)
    w = b.mul(z, z)
    s1 = b.mul(z, b.poly(w, coeffs[0::2]))
    s2 = b.mul(w, b.poly(w, coeffs[1::2]))
    y = b.sub(hi, b.sub(b.sub(b.mul(t, b.add(s1, s2)), lo), t))
    return b.call("copysign", y, x)
