"""Math that gives the same bits on every backend, for tracer.random: erfinv, log and
log1p built from integer ops, bit casts and IEEE + - * /, which every backend rounds alike
(each backend's own log is a different polynomial, so it may differ in the last bit).
"""
import numpy as np

import tracer.numpy as tnp
from tracer import lax
from tracer.numpy._base import dtype_of


# ---- erfinv (XLA's: Giles, "Approximating the erfinv function") -------------------------
_ERFINV32 = ((5.0, 2.5, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                         0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                         1.50140941)),
             (None, 3.0, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                          0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                          2.83297682)))
_ERFINV64 = ((6.25, 3.125, (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)),
    (16.0, 3.25, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (None, 5.0, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)))


def erfinv(x):
    """erfinv of x in (-1, 1), as XLA: w = -log(1 - x^2) picks a range, whose polynomial
    is in w (the first range) or sqrt(w) (the others), shifted. Each range's polynomial is
    evaluated and the right one selected: XLA's values (it selects the coefficients of one
    Horner chain instead; about as fast here)."""
    dt = dtype_of(x)
    w = -log1p(-(x * x))
    root, out = tnp.sqrt(w), None
    for j, (bound, shift, coefficients) in reversed(list(enumerate(_ERFINV64 if dt == np.float64
                                                                  else _ERFINV32))):
        p = _horner((w if j == 0 else root) - np.array(shift, dt), coefficients[::-1], dt)
        out = p if out is None else tnp.where(tnp.less(w, np.array(bound, dt)), p, out)
    return out * x


# ---- log and log1p (musl's, fdlibm's method) in + - * / and integer ops only -----------
# Each backend's log rounds its own way (the llvm math library's is not libm's), but every
# backend rounds + - * / as IEEE does and reads bits exactly: so these give the same bits
# everywhere. (ln2's hi and lo parts, and the coefficients of R in log(1 + f) = f - f*f/2 +
# s*(f*f/2 + R(s*s)), s = f / (2 + f))
_LOG32 = (6.9313812256e-01, 9.0580006145e-06,
          (0.66666662693, 0.40000972152, 0.28498786688, 0.24279078841))
_LOG64 = (6.93147180369123816490e-01, 1.90821492927058770002e-10,
          (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
           2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
           1.479819860511658591e-01))
# (int dtype of a float's bits, mantissa bits, exponent bias, bits of sqrt(1/2))
_FIELDS = {np.dtype(np.float32): (np.dtype(np.int32), 23, 127, 0x3F3504F3),
           np.dtype(np.float64): (np.dtype(np.int64), 52, 1023, 0x3FE6A09E667F3BCD)}


def _reduce(x):
    """(k, f): x = (1 + f) 2**k with 1 + f in [sqrt(1/2), sqrt(2)), read from the bits of
    a positive normal float32/float64 x as musl does; f = (1 + f) - 1 is exact."""
    dt = dtype_of(x)
    it, nmant, bias, half = _FIELDS[dt]
    bits = tnp.add(lax.bitcast_convert_type(x, it), np.array((bias << nmant) - half, it))
    k = tnp.astype(tnp.right_shift(bits, np.array(nmant, it)), dt) - np.array(bias, dt)
    m = tnp.add(tnp.bitwise_and(bits, np.array((1 << nmant) - 1, it)), np.array(half, it))
    return k, lax.bitcast_convert_type(m, dt) - np.array(1, dt)


def log(x):
    """log(x) of positive normal floats (float16/bfloat16 in float32, rounded once)."""
    dt = dtype_of(x)
    if dt in _FIELDS:
        return _log_reduced(*_reduce(x))
    return tnp.astype(log(tnp.astype(x, np.float32)), dt)


def log1p(z):
    """log1p(z) for z in (-1, 0]. 1 + z is rounded, so f is taken from z where that
    rounding matters: z itself for k = 0, 2z + 1 for k = -1 (z in [-1/2, -0.29]; exact);
    for k < -1, z < -1/2, so 1 + z is not rounded (Sterbenz)."""
    dt = dtype_of(z)
    k, f = _reduce(np.array(1, dt) + z)
    f = tnp.where(tnp.equal(k, np.array(-1, dt)), z * np.array(2, dt) + np.array(1, dt), f)
    f = tnp.where(tnp.equal(k, np.array(0, dt)), z, f)
    return _log_reduced(k, f)


def _log_reduced(k, f):
    """k log(2) + log(1 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1)."""
    dt = dtype_of(f)
    ln2_hi, ln2_lo, lg = _LOG64 if dt == np.float64 else _LOG32

    def c(v):
        return np.array(v, dt)
    s = f / (c(2) + f)
    s2 = s * s
    s4 = s2 * s2
    r = s2 * _horner(s4, lg[0::2], dt) + s4 * _horner(s4, lg[1::2], dt)
    half_f2 = c(0.5) * f * f
    return s * (half_f2 + r) + k * c(ln2_lo) - half_f2 + f + k * c(ln2_hi)


def _horner(x, coefficients, dt):
    """coefficients[0] + x * (coefficients[1] + x * (...))."""
    p = np.array(coefficients[-1], dt)
    for co in coefficients[-2::-1]:
        p = np.array(co, dt) + p * x
    return p
