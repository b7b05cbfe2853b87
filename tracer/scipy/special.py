"""`tracer.scipy.special`: jax.scipy.special's real-valued functions, each composed of
tracer.numpy, tracer.lax and tracer.nn functions with JAX's formulas (so their values,
dtypes, gradients, batching and LLVM lowering follow from those ops). Arguments are
promoted as JAX's promote_args_inexact: one float dtype for all, float32 stays float32.
xlogy, xlog1py and x log x carry JAX's custom derivatives (finite where the product is 0).

Not here: what needs complex numbers (wofz, complex loggamma, sph_harm_y) or a special
function tracer.lax does not have (spence, expi, exp1, expn, hyp1f1, hyp2f1, erfcx, dawsn,
fresnel, sici, owens_t, bessel_jn, lpmn, the Bernoulli numbers `bernoulli`)."""
import math

import numpy as np

from tracer import lax, nn
from tracer import numpy as tnp
from tracer.custom_jvp import custom_jvp as _custom_jvp
from tracer.scipy._normal import log_ndtr, ndtr, ndtri
from tracer.scipy._util import axes_of as _axes_of
from tracer.scipy._util import bfloat16_via_float32 as _bf16
from tracer.scipy._util import concrete_int as _concrete_int
from tracer.scipy._util import promote_broadcast as _broadcast
from tracer.scipy._util import promote_inexact as _promote

__all__ = ["logsumexp", "expit", "logit", "log_softmax", "softmax", "erf", "erfc", "erfinv",
           "gammaln", "loggamma", "gammasgn", "gamma", "digamma", "polygamma", "zeta",
           "betaln", "beta", "betainc", "gammainc", "gammaincc", "xlogy", "xlog1py", "entr",
           "rel_entr", "kl_div", "ndtr", "ndtri", "log_ndtr", "i0e", "i1e", "i0", "i1",
           "multigammaln", "factorial", "poch", "comb", "boxcox", "boxcox1p"]


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, the max shifted out (and held constant, as JAX).
    With return_sign, (log|sum|, sign(sum)); without, a negative sum gives NaN."""
    if b is not None:
        a, b = _promote(a, b)
        a = tnp.where(b != 0, a, -np.inf)
    else:
        (a,) = _promote(a)
    if where is not None:
        a = tnp.where(where, a, -np.inf)
    dims = _axes_of(tnp.ndim(a) if b is None else max(tnp.ndim(a), tnp.ndim(b)), axis)
    if b is not None:
        a = tnp.broadcast_to(a, tnp.broadcast_shapes(tnp.shape(a), tnp.shape(b)))
    amax = tnp.max(a, axis=dims, keepdims=True)
    amax = lax.stop_gradient(tnp.where(tnp.isfinite(amax), amax, tnp.zeros_like(amax)))
    exp_a = tnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    total = tnp.sum(exp_a, axis=dims, keepdims=True)
    sign = tnp.sign(total)
    out = tnp.log(tnp.abs(total)) + amax
    if not keepdims:
        out, sign = tnp.squeeze(out, dims), tnp.squeeze(sign, dims)
    if return_sign:
        return out, sign
    return out if b is None else tnp.where(sign < 0, np.nan, out)


def expit(x):
    (x,) = _promote(x)
    return lax.logistic(x)


def logit(x):
    (x,) = _promote(x)
    return tnp.log(x / (1 - x))


def softmax(x, /, *, axis=None):
    """jax.scipy.special.softmax: over all axes by default (jax.nn's default is -1)."""
    (x,) = _promote(x)
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    (x,) = _promote(x)
    return nn.log_softmax(x, axis=axis)


def _unary(lax_fn, doc):
    def fn(x):
        (x,) = _promote(x)
        return lax_fn(x)
    fn.__name__ = fn.__qualname__ = doc.split()[0]
    fn.__doc__ = f"jax.scipy.special.{doc}"
    return fn


erf = _unary(tnp.erf, "erf: the error function.")
erfc = _unary(lax.erfc, "erfc: 1 - erf(x), accurate in the right tail.")
erfinv = _unary(lax.erf_inv, "erfinv: the inverse of erf.")
gammaln = _unary(lax.lgamma, "gammaln: log |Gamma(x)|.")
digamma = _unary(lax.digamma, "digamma: d/dx log Gamma(x).")
i0e = _unary(lax.bessel_i0e, "i0e: exp(-|x|) I0(x).")
i1e = _unary(lax.bessel_i1e, "i1e: exp(-|x|) I1(x).")


def i0(x):
    (x,) = _promote(x)
    return tnp.exp(tnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    (x,) = _promote(x)
    return tnp.exp(tnp.abs(x)) * lax.bessel_i1e(x)


def loggamma(x):
    """log Gamma(x) for real x > 0 (NaN elsewhere, as JAX's real loggamma)."""
    (x,) = _promote(x)
    return tnp.where(x > 0, lax.lgamma(x), np.nan)


def gammasgn(x):
    """The sign of Gamma(x): NaN at the poles, -inf and NaN; -1 at -0."""
    (x,) = _promote(x)
    fl = tnp.floor(x)
    neg = x < 0
    nan = (neg & (x == fl)) | tnp.isnan(x)
    minus = (neg & (tnp.fmod(fl, 2.0) != 0)) | ((x == 0) & tnp.signbit(x))
    return tnp.astype(tnp.where(nan, np.nan, tnp.where(minus, -1.0, 1.0)), x.dtype)


def gamma(x):
    (x,) = _promote(x)
    return gammasgn(x) * tnp.exp(lax.lgamma(x))


def polygamma(n, x):
    """The n-th derivative of digamma; n must be of an integer dtype (as JAX)."""
    if not np.issubdtype(tnp.result_type(n), np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{tnp.result_type(n)}.")
    (x,) = _promote(x)                               # x's dtype, whatever n's integer type
    return lax.polygamma(*tnp.broadcast_arrays(tnp.astype(n, x.dtype), x))


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x; q=None gives Riemann's (q = 1)."""
    return lax.zeta(*_broadcast(x, 1.0 if q is None else q))


def _algdiv(a, b):
    """log Gamma(b) - log Gamma(a + b) for b >= 8 (cdflib's algdiv, a <= b)."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (x / b)
    u = d * tnp.log1p(a / b)
    v = a * (tnp.log(b) - 1.0)
    return tnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log |B(a, b)|, through cdflib's algdiv when the larger argument is >= 8 (accurate
    where lgamma(a) + lgamma(b) - lgamma(a + b) cancels)."""
    a, b = _broadcast(a, b)
    a, b = tnp.minimum(a, b), tnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, tnp.where(b < 8, 8.0, b))
    return tnp.where(b < 8, small_b, large_b)


def beta(a, b):
    a, b = _broadcast(a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * tnp.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return lax.betainc(*_broadcast(a, b, x))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return lax.igamma(*_broadcast(a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return lax.igammac(*_broadcast(a, x))


@_custom_jvp
def _xlogy(x, y):
    return tnp.where((x != 0) | tnp.isnan(y), x * tnp.log(y), tnp.zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (xd, yd) = primals, tangents
    return _xlogy(x, y), xd * tnp.log(y) + yd * x / y


@_custom_jvp
def _xlog1py(x, y):
    return tnp.where((x != 0) | tnp.isnan(y), x * tnp.log1p(y), tnp.zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (xd, yd) = primals, tangents
    return _xlog1py(x, y), xd * tnp.log1p(y) + yd * x / (1 + y)


@_custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (xd,) = primals, tangents
    return _xlogx(x), xd * (tnp.log(x) + 1)


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is NaN)."""
    return _xlogy(*_broadcast(x, y))


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is NaN)."""
    return _xlog1py(*_broadcast(x, y))


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below."""
    (x,) = _promote(x)
    return tnp.where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 for p = 0 and q >= 0; inf otherwise."""
    p, q = _broadcast(p, q)
    both = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p, safe_q = tnp.where(both, p, 1.0), tnp.where(both, q, 1.0)
    val = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    return tnp.astype(tnp.where(both, val, tnp.where(one_zero, 0.0, np.inf)), p.dtype)


def kl_div(p, q):
    """p log(p / q) - p + q for p, q > 0; q for p = 0 and q >= 0; inf otherwise."""
    p, q = _broadcast(p, q)
    return rel_entr(p, q) - p + q


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a concrete int)."""
    d = _concrete_int(d, "d argument of multigammaln")
    (a,) = _promote(a)
    constant = 0.25 * d * (d - 1) * math.log(math.pi)
    halves = (np.arange(d) / 2).astype(a.dtype)
    return tnp.sum(lax.lgamma(tnp.expand_dims(a, -1) - halves), axis=-1) + constant


def factorial(n, exact=False):
    """Gamma(n + 1) (0 for n < 0); exact=True is not supported, as in JAX."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _promote(n)
    return tnp.astype(tnp.where(n < 0, 0.0, tnp.exp(lax.lgamma(n + 1))), n.dtype)


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z) (1 where m == 0)."""
    z, m = _broadcast(z, m)
    return tnp.astype(tnp.where(m == 0, 1.0, gamma(z + m) / gamma(z)), z.dtype)


def comb(N, k, *, exact=False, repetition=False):
    """N choose k from gammaln (0 for N < 0, k < 0 or k > N); exact=True is unsupported
    (as in JAX)."""
    if exact:
        raise NotImplementedError("comb with exact=True")
    N, k = _broadcast(N, k)
    if repetition:
        return tnp.astype(tnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k)), N.dtype)
    ok = (k <= N) & (N >= 0) & (k >= 0)
    sn, sk = tnp.where(ok, N, 0.0), tnp.where(ok, k, 0.0)
    out = tnp.exp(lax.lgamma(sn + 1) - lax.lgamma(sk + 1) - lax.lgamma(sn + 1 - sk))
    return tnp.astype(tnp.where(ok, out, 0.0), N.dtype)


def boxcox(x, lmbda):
    """(x^lmbda - 1) / lmbda, log x at lmbda == 0."""
    x, lmbda = _broadcast(x, lmbda)
    zero = lmbda == 0
    safe = tnp.where(zero, 1.0, lmbda)
    log_x = tnp.log(x)
    return tnp.where(zero, log_x, tnp.expm1(safe * log_x) / safe)


def boxcox1p(x, lmbda):
    """((1 + x)^lmbda - 1) / lmbda, log1p x at lmbda == 0."""
    x, lmbda = _broadcast(x, lmbda)
    zero = lmbda == 0
    safe = tnp.where(zero, 1.0, lmbda)
    log1p_x = tnp.log1p(x)
    return tnp.where(zero, log1p_x, tnp.expm1(safe * log1p_x) / safe)


for _f in (ndtr, ndtri, log_ndtr):
    _f.__module__ = __name__
for _name in __all__:
    globals()[_name] = _bf16(globals()[_name])
