"""jax.scipy.linalg.expm: JAX's (Higham 2005) Pade approximant with scaling and squaring.
The 1-norm picks the degree (3, 5, 7, 9 or 13 in float64; 3, 5 or 7 in float32) through
lax.switch, A is scaled by 2^-s so the approximant is accurate, r = q(A)^-1 p(A) is
solved, then squared s times (a fori_loop of max_squarings steps, each squaring only
while the count is below s); more than max_squarings squarings gives NaN, as JAX. Leading
dims are batched with tracer.vmap, as JAX's vectorize."""
import numpy as np

from tracer import lax, vmap
from tracer import numpy as tnp
from tracer.lax.linalg import triangular_solve
from tracer.scipy._util import promote_inexact

_B3 = (120., 60., 12., 1.)
_B5 = (30240., 15120., 3360., 420., 30., 1.)
_B7 = (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)
_B9 = (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
       3960., 90., 1.)
_B13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
        129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
        40840800., 960960., 16380., 182., 1.)


def _pade(b):
    """U (odd terms) and V (even terms) of the degree-(len(b) - 1) approximant."""
    def approximant(a):
        ident = tnp.eye(a.shape[-1], dtype=a.dtype)
        powers = [ident, a @ a]                                   # I, A^2, A^4, ...
        for _ in range(2, len(b) // 2):
            powers.append(powers[-1] @ powers[1])
        u = sum(b[2 * i + 1] * p for i, p in enumerate(powers))
        v = sum(b[2 * i] * p for i, p in enumerate(powers))
        return a @ u, v
    return approximant


def _pade13(a):
    b = _B13
    ident = tnp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    return u, v


_DEGREES = {np.dtype(np.float64): (5.371920351148152, (1.495585217958292e-002,
                                                       2.539398330063230e-001,
                                                       9.504178996162932e-001,
                                                       2.097847961257068e+000),
                                   [_pade(_B3), _pade(_B5), _pade(_B7), _pade(_B9), _pade13]),
            np.dtype(np.float32): (3.925724783138660, (4.258730016922831e-001,
                                                       1.880152677804762e+000),
                                   [_pade(_B3), _pade(_B5), _pade(_B7)])}


def _expm2d(a, upper_triangular, max_squarings):
    maxnorm, conds, branches = _DEGREES[np.dtype(a.dtype)]
    norm1 = tnp.max(tnp.sum(tnp.abs(a), axis=0))
    n_squarings = lax.stop_gradient(tnp.maximum(0.0, tnp.floor(tnp.log2(norm1 / maxnorm))))
    a = a / tnp.astype(2.0 ** n_squarings, a.dtype)
    idx = sum(tnp.astype(norm1 >= c, np.int32) for c in conds)   # jnp.digitize
    u, v = lax.switch(idx, branches, a)
    p, q = u + v, v - u
    r = (triangular_solve(q, p, left_side=True, lower=False) if upper_triangular else
         tnp.linalg.solve(q, p))
    r = lax.fori_loop(0, max_squarings,
                      lambda i, r: tnp.where(i < n_squarings, r @ r, r), r)
    return tnp.where(n_squarings > max_squarings, np.nan, r)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of A (..., n, n), float32 or float64."""
    (a,) = promote_inexact(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    if np.dtype(a.dtype) not in _DEGREES:
        wide = tnp.astype(a, np.float32)
        return tnp.astype(expm(wide, upper_triangular=upper_triangular,
                               max_squarings=max_squarings), a.dtype)
    fn = lambda x: _expm2d(x, upper_triangular, int(max_squarings))  # noqa: E731
    if a.ndim == 2:
        return fn(a)
    flat = tnp.reshape(a, (-1,) + a.shape[-2:])
    return tnp.reshape(vmap(fn)(flat), a.shape)


expm.__module__ = "tracer.scipy.linalg"
