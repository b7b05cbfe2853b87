"""tracer.numpy.linalg: NumPy's values (float32/float64, batched, eager and under jit on
both backends), gradients against finite differences, vmap, and clear errors."""
import warnings

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer.numpy import linalg as tla

RNG = np.random.default_rng(0)


def _general(shape):
    return RNG.normal(size=shape) + 3 * np.eye(shape[-1], M=shape[-2]).T


def _spd(shape):
    a = RNG.normal(size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


SQ, SPD, RECT, TALL = _general((2, 3, 4, 4)), _spd((2, 4, 4)), _general((2, 5, 3)), _general((5, 3))
B = RNG.normal(size=(2, 3, 4, 2))

# name -> (call on a module with numpy.linalg's names, args, outputs compared up to sign)
CASES = {
    "solve": (lambda m, a, b: m.solve(a, b), (SQ, B), False),
    "solve_vector": (lambda m, a, b: m.solve(a, b), (SQ[0, 0], B[0, 0, :, 0]), False),
    "inv": (lambda m, a: m.inv(a), (SQ,), False),
    "det": (lambda m, a: m.det(a), (SQ,), False),
    "slogdet": (lambda m, a: tuple(m.slogdet(a)), (SQ,), False),
    "cholesky": (lambda m, a: m.cholesky(a), (SPD,), False),
    "cholesky_upper": (lambda m, a: m.cholesky(a, upper=True), (SPD,), False),
    "qr": (lambda m, a: tuple(m.qr(a)), (RECT,), True),
    "qr_complete": (lambda m, a: tuple(m.qr(a, mode="complete")), (RECT,), True),
    "qr_r": (lambda m, a: m.qr(a, mode="r"), (RECT,), True),
    "eigh": (lambda m, a: tuple(m.eigh(a)), (SPD,), True),
    "eigh_upper": (lambda m, a: tuple(m.eigh(a, UPLO="U")), (SPD,), True),
    "eigvalsh": (lambda m, a: m.eigvalsh(a), (SPD,), False),
    "svd": (lambda m, a: tuple(m.svd(a, full_matrices=False)), (RECT,), True),
    "svd_full": (lambda m, a: tuple(m.svd(a)), (RECT,), True),
    "svdvals": (lambda m, a: m.svd(a, compute_uv=False), (RECT,), False),
    "pinv": (lambda m, a: m.pinv(a), (RECT,), False),
    "matrix_power": (lambda m, a: m.matrix_power(a, 5), (SQ,), False),
    "matrix_power_neg": (lambda m, a: m.matrix_power(a, -2), (SQ,), False),
    "matrix_power_0": (lambda m, a: m.matrix_power(a, 0), (SQ,), False),
    "lstsq": (lambda m, a, b: m.lstsq(a, b)[0:2], (TALL, RNG.normal(size=(5, 2))), False),
    "multi_dot": (lambda m, a, b, c: m.multi_dot([a, b, c]),
                  (RNG.normal(size=6), RNG.normal(size=(6, 2)), RNG.normal(size=(2, 7))), False),
    "norm": (lambda m, a: m.norm(a), (SQ,), False),
    **{f"norm_vec_{o}": (lambda m, a, o=o: m.norm(a, ord=o, axis=-1), (SQ,), False)
       for o in (None, 1, 2, np.inf, -np.inf, 0, 3)},
    **{f"norm_mat_{o}": (lambda m, a, o=o: m.norm(a, ord=o, axis=(-2, -1), keepdims=True),
                         (SQ,), False)
       for o in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)},
}


def _check(got, want, signs, rtol):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        if signs:       # vectors and factors are unique up to sign
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


@pytest.fixture(autouse=True)
def _no_llvm_fallback_warning():
    """The linalg kernels run through LAPACK on the llvm backend on purpose: no warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*has no llvm impl.*")
        yield


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy_eager_and_jit(name, dtype):
    fn, args, signs = CASES[name]
    args = tuple(a.astype(dtype) for a in args)
    want = fn(np.linalg, *args)
    rtol = 1e-9 if dtype == np.float64 else 2e-3
    _check(fn(tla, *args), want, signs, rtol)
    for backend in ("numpy", "llvm"):
        _check(tracer.jit(lambda *a: fn(tnp.linalg, *a), backend=backend)(*args), want,
               signs, rtol)


def test_namespace_and_products_imports():
    import tracer.numpy.linalg as mod
    from tracer.numpy import products
    assert tnp.linalg is mod
    assert (tnp.matmul, tnp.dot, tnp.outer) == (products.matmul, products.dot, products.outer)
    for name in ("norm solve inv det slogdet cholesky qr svd eigh eigvalsh pinv "
                 "matrix_power lstsq multi_dot").split():
        assert callable(getattr(tnp.linalg, name)), name


def test_integer_input_is_float64_and_lstsq_rank_deficient_matches_numpy():
    a = np.array([[2, 1], [1, 3]])
    np.testing.assert_allclose(tla.inv(a), np.linalg.inv(a))
    assert tla.det(a).dtype == np.float64
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])      # rank 1
    b = np.array([1.0, 2.0, 2.0])
    for g, w in zip(tla.lstsq(a, b), np.linalg.lstsq(a, b)):
        np.testing.assert_allclose(g, w, atol=1e-12)


def _sym_in(f):
    """f of a symmetric matrix built from x (so perturbations stay symmetric)."""
    return lambda x: f(_sym(x))


GRADS = {
    "solve": (lambda a, b: tnp.sum(tnp.sin(tla.solve(a, b))), (SQ[0], B[0])),
    "inv": (lambda a: tnp.sum(tla.inv(a) ** 2), (SQ[0, :2],)),
    "det": (lambda a: tla.det(a), (SQ[0, 0],)),
    "logdet": (lambda a: tnp.sum(tla.slogdet(a)[1]), (SQ[0],)),
    "cholesky": (_sym_in(lambda a: tnp.sum(tnp.sin(tla.cholesky(a)))), (SPD,)),
    "qr": (lambda a: tnp.sum(tnp.sin(tla.qr(a)[0])) + tnp.sum(tla.qr(a)[1] ** 2), (RECT,)),
    "qr_square": (lambda a: tnp.sum(tnp.sin(tla.qr(a)[0] + tla.qr(a)[1])), (SQ[0, 0],)),
    "eigh": (_sym_in(lambda a: tnp.sum(tla.eigh(a)[0] ** 2)
                     + tnp.sum(tnp.sin(tla.eigh(a)[1][..., 0] ** 2))), (SPD,)),
    "eigvalsh": (_sym_in(lambda a: tnp.sum(tnp.exp(tla.eigvalsh(a) / 10))), (SPD,)),
    "svd_tall": (lambda a: tnp.sum(tnp.cos(tla.svd(a, full_matrices=False)[0] ** 2))
                 + tnp.sum(tla.svd(a, full_matrices=False)[1] ** 3)
                 + tnp.sum(tnp.sin(tla.svd(a, full_matrices=False)[2] ** 2)), (RECT,)),
    "svd_wide": (lambda a: tnp.sum(tnp.cos(tla.svd(a, full_matrices=False)[0] ** 2))
                 + tnp.sum(tnp.sin(tla.svd(a, full_matrices=False)[2] ** 2)),
                 (np.swapaxes(RECT, -1, -2).copy(),)),
    "pinv": (lambda a: tnp.sum(tla.pinv(a) ** 2), (TALL,)),
    "norm_nuc": (lambda a: tla.norm(a, "nuc"), (TALL,)),
    "norm_2": (lambda a: tla.norm(a, 2, axis=-1), (SQ[0, 0],)),
    "matrix_power": (lambda a: tnp.sum(tla.matrix_power(a, 3)), (SQ[0, 0] / 3,)),
    "lstsq": (lambda a, b: tnp.sum(tla.lstsq(a, b)[0] ** 2), (TALL, RNG.normal(size=5))),
    "multi_dot": (lambda a, b, c: tla.multi_dot([a, b, c]),
                  (RNG.normal(size=3), RNG.normal(size=(3, 4)), RNG.normal(size=4))),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_finite_differences(name):
    fn, args = GRADS[name]
    tracer.check_grads(fn, args, order=1, modes=("rev",))


@pytest.mark.parametrize("name", ["solve", "logdet", "cholesky", "eigh", "svd_tall", "qr"])
def test_second_order_gradients(name):
    fn, args = GRADS[name]
    tracer.check_grads(fn, tuple(a[..., :3, :3] if a.ndim >= 2 else a[:3] for a in args),
                       order=2, modes=("rev",))


def test_jit_of_grad_on_both_backends():
    fn, args = GRADS["cholesky"]
    want = tracer.grad(fn)(*args)
    for backend in ("numpy", "llvm"):
        np.testing.assert_allclose(tracer.jit(tracer.grad(fn), backend=backend)(*args), want,
                                   rtol=1e-10)


def test_vmap_matches_a_loop():
    a, b = SQ[0], B[0]
    f = lambda a, b: (tla.solve(a, b), tla.slogdet(a)[1], tla.svd(a)[1],  # noqa: E731
                      tla.eigh(_sym(a))[0], tla.qr(a)[1], tla.cholesky(_spd_of(a)))
    got = tracer.vmap(f)(a, b)
    want = [f(x, y) for x, y in zip(a, b)]
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, np.stack([w[k] for w in want]), rtol=1e-9, atol=1e-12)
    kernels = [n.kernel for n in tracer.make_graph(tracer.vmap(f))(a, b).nodes]
    assert "scan" not in kernels and kernels.count("svd") == 1     # batched, not a loop
    # one operand unbatched (broadcast), batch dim not in front
    got = tracer.vmap(tla.solve, in_axes=(None, 1))(a[0], np.moveaxis(b, 0, 1))
    np.testing.assert_allclose(got, np.linalg.solve(a[0], b), rtol=1e-10)


def _spd_of(a):
    return a @ tnp.swapaxes(a, -1, -2) + 4 * tnp.eye(a.shape[-1])


def test_bad_input_raises_clear_errors():
    with pytest.raises(tla.LinAlgError, match="cholesky") as e:
        tla.cholesky(-np.eye(3))
    assert isinstance(e.value, tracer.KernelError) and isinstance(e.value, np.linalg.LinAlgError)
    with pytest.raises(np.linalg.LinAlgError, match="solve"):
        tracer.jit(tla.inv, backend="llvm")(np.zeros((2, 2)))
    with pytest.raises(tracer.ShapeError, match="square"):
        tla.inv(np.ones((2, 3)))
    with pytest.raises(tracer.DTypeError, match="float16"):
        tla.det(np.ones((2, 2), np.float16))
    with pytest.raises(tracer.GradientError, match="qr"):
        tracer.grad(lambda a: tnp.sum(tla.qr(a)[1]))(np.ones((2, 3)))
    assert tla.det(np.zeros((2, 2))) == 0.0


def test_degenerate_spectra_give_finite_gradients_where_jax_does():
    """Repeated eigenvalues / singular values and rank deficiency make only the vectors'
    gradients undefined: functions of the values alone keep finite gradients."""
    eye = np.eye(3)
    np.testing.assert_allclose(tracer.grad(lambda a: tnp.sum(tla.eigvalsh(a)))(eye), eye)
    np.testing.assert_allclose(tracer.grad(lambda a: tla.norm(a, "nuc"))(eye), eye)
    low_rank = np.outer([1.0, 2.0, 3.0, 4.0], [1.0, -1.0, 2.0])       # rank 1, tall
    g = tracer.grad(lambda a: tnp.sum(tla.svd(a, compute_uv=False)))(low_rank)
    u, _, vh = np.linalg.svd(low_rank, full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, atol=1e-12)      # d sum(s) = U V^T
