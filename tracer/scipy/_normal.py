"""The standard normal's ndtr, ndtri and log_ndtr, with JAX's algorithms: ndtr from erf
near 0 and erfc in the tails; ndtri from Cephes' three rational approximations; log_ndtr
from -ndtr(-x) above an upper segment (log(1 - e) ~ -e), log(ndtr) in the middle and the
asymptotic series for log ndtr below a lower segment (-20 in float64, -10 in float32),
where ndtr underflows. log_ndtr's gradient is JAX's custom one, exp(logpdf - log_ndtr),
which stays finite far into the lower tail."""
import math

import numpy as np

from tracer import lax
from tracer import numpy as tnp
from tracer.custom_jvp import custom_jvp
from tracer.lax.lax_special import _polyval
from tracer.scipy._util import promote_inexact

_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)
_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)
_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _ndtr(x):
    half_sqrt_2 = 0.5 * math.sqrt(2.0)
    w = x * half_sqrt_2
    z = tnp.abs(w)
    tail = lax.erfc(z)
    y = tnp.where(z < half_sqrt_2, 1.0 + tnp.erf(w), tnp.where(w > 0, 2.0 - tail, tail))
    return 0.5 * y


def ndtr(x):
    """jax.scipy.special.ndtr: the standard normal CDF."""
    (x,) = promote_inexact(x)
    return _ndtr(x)


def ndtri(p):
    """jax.scipy.special.ndtri: the standard normal quantile (-inf at 0, inf at 1, NaN
    outside [0, 1])."""
    (p,) = promote_inexact(p)
    big = 1.0 - math.exp(-2.0)
    mcp = tnp.where(p > big, 1.0 - p, p)
    mcp = tnp.where(mcp == 0, 0.5, mcp)              # any value that is not NaN later
    w = mcp - 0.5
    ww = w * w
    x_big = (w + w * ww * (_polyval(_P0, ww) / _polyval(_Q0, ww))) * -math.sqrt(2 * math.pi)
    z = tnp.sqrt(-2.0 * tnp.log(mcp))
    first = z - tnp.log(z) / z
    small = first - _polyval(_P2, 1 / z) / _polyval(_Q2, 1 / z) / z
    other = first - _polyval(_P1, 1 / z) / _polyval(_Q1, 1 / z) / z
    x = tnp.where(mcp > math.exp(-2.0), x_big, tnp.where(z >= 8.0, small, other))
    x = tnp.where(p > big, x, -x)
    return tnp.where(p == 0, -np.inf, tnp.where(p == 1, np.inf, x))


def _double_factorial(n):
    return math.prod(range(n, 1, -2))


def _log_ndtr_lower(x, series_order):
    """The asymptotic series of log ndtr(x) for x << -1."""
    x2 = x * x
    log_scale = -0.5 * x2 - tnp.log(-x) - _HALF_LOG_2PI
    even, odd, x2n = tnp.zeros_like(x), tnp.zeros_like(x), x2
    for n in range(1, series_order + 1):
        y = float(_double_factorial(2 * n - 1)) / x2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x2n = x2n * x2
    return log_scale + tnp.log(1.0 + even - odd)


def _log_ndtr(x, series_order):
    lower, upper = (-20.0, 8.0) if x.dtype == np.float64 else (-10.0, 5.0)
    above = x > upper
    res = _ndtr(tnp.where(above, -x, tnp.maximum(x, lower)))
    return tnp.where(above, -res, tnp.where(x > lower, tnp.log(res),
                                            _log_ndtr_lower(tnp.minimum(x, lower),
                                                            series_order)))


_log_ndtr_custom = custom_jvp(_log_ndtr, nondiff_argnums=(1,))


@_log_ndtr_custom.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr_custom(x, series_order)
    return ans, t * tnp.exp(-0.5 * x * x - _HALF_LOG_2PI - ans)


def log_ndtr(x, series_order=3):
    """jax.scipy.special.log_ndtr: log of the standard normal CDF, accurate for large
    negative x through the asymptotic series of `series_order` terms (0 to 30)."""
    series_order = int(series_order)
    if not 0 <= series_order <= 30:
        raise ValueError(f"series_order must be in [0, 30], got {series_order}")
    (x,) = promote_inexact(x)
    if x.dtype in (np.float32, np.float64):
        return _log_ndtr_custom(x, series_order)
    return tnp.astype(_log_ndtr_custom(tnp.astype(x, np.float32), series_order), x.dtype)
