"""JAX's keywords on custom rules, checkpoint, vmap and jit, checked against jax 0.10.2's
values and errors: custom_vjp/custom_jvp nondiff_argnums and nondiff_argnames,
checkpoint static_argnames and concrete, vmap spmd_axis_name and sum_match, jit device,
in_shardings and out_shardings; eagerly, under jit on both backends, grad and vmap."""
import functools

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from tracer import custom_jvp, custom_vjp

BACKENDS = ["llvm", "numpy"]
X, Y = np.float32(0.5), np.float32(2.0)
XS = np.linspace(-1, 1, 4, dtype=np.float32)


def _vjp_fn(**kw):
    """sin(x) * n * y whose bwd scales x's gradient by 10 (so the rule is seen)."""
    @functools.partial(custom_vjp, **kw)
    def f(x, n, y):
        return tnp.sin(x) * n * y

    def fwd(x, n, y):
        return f(x, n, y), (x, y)

    def bwd(n, res, g):
        x, y = res
        return g * tnp.cos(x) * n * y * 10, g * tnp.sin(x) * n
    f.defvjp(fwd, bwd)
    return f


def _jvp_fn(**kw):
    """The same function and rule as a custom_jvp."""
    @functools.partial(custom_jvp, **kw)
    def f(x, n, y):
        return tnp.sin(x) * n * y

    @f.defjvp
    def rule(n, primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        return f(x, n, y), dx * tnp.cos(x) * n * y * 10 + dy * tnp.sin(x) * n
    return f


def _rule_grads(x, n, y):
    """What jax.grad(f, argnums=(0, 2)) gives for both rules (jax 0.10.2)."""
    return np.cos(x) * n * y * 10, np.sin(x) * n


NONDIFF = [dict(nondiff_argnums=(1,)), dict(nondiff_argnames=("n",)),
           dict(nondiff_argnums=(-2,)), dict(nondiff_argnums=1, nondiff_argnames="n")]


@pytest.mark.parametrize("make", [_vjp_fn, _jvp_fn])
@pytest.mark.parametrize("kw", NONDIFF)
def test_nondiff_arguments_go_to_the_rule_first(make, kw):
    f = make(**kw)
    assert f.nondiff_argnums in ((1,), (-2,))
    np.testing.assert_allclose(f(X, 3, Y), np.sin(X) * 3 * Y, rtol=1e-6)
    np.testing.assert_allclose(tracer.grad(f, argnums=(0, 2))(X, 3, Y), _rule_grads(X, 3, Y),
                               rtol=1e-6)
    by_name = tracer.grad(lambda x, y: f(x, n=3, y=y), argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(by_name, _rule_grads(X, 3, Y), rtol=1e-6)


@pytest.mark.parametrize("make", [_vjp_fn, _jvp_fn])
@pytest.mark.parametrize("backend", BACKENDS)
def test_nondiff_arguments_under_jit_grad_and_vmap(make, backend):
    f = make(nondiff_argnames="n")
    jitted = tracer.jit(f, static_argnames="n", backend=backend)
    np.testing.assert_allclose(jitted(XS, n=3, y=Y), np.sin(XS) * 3 * Y, rtol=1e-6)
    g = tracer.jit(tracer.grad(f, argnums=(0, 2)), static_argnums=1, backend=backend)
    np.testing.assert_allclose(g(X, 3, Y), _rule_grads(X, 3, Y), rtol=1e-6)
    per_example = tracer.vmap(tracer.grad(lambda x, y: f(x, 3, y)))(XS, XS)
    np.testing.assert_allclose(per_example, _rule_grads(XS, 3, XS)[0], rtol=1e-5)
    np.testing.assert_allclose(tracer.jit(tracer.vmap(lambda x: f(x, 2, Y)), backend=backend)(XS),
                               np.sin(XS) * 2 * Y, rtol=1e-6)


def test_a_nondiff_array_eagerly_is_a_value_as_in_jax():
    """jax: an array (not a Tracer) at a nondiff position is fine, also under grad of
    another argument; here too, though grad traces undifferentiated arrays."""
    x, n, y = np.full(1, X), np.full(1, 3.0, np.float32), np.full(1, Y)
    for f in (_vjp_fn(nondiff_argnums=(1,)), _jvp_fn(nondiff_argnums=(1,))):
        got = tracer.grad(lambda x, n, y: tnp.sum(f(x, n, y)), argnums=(0, 2))(x, n, y)
        np.testing.assert_allclose(got, _rule_grads(x, 3, y), rtol=1e-6)


@pytest.mark.parametrize("transform", [tracer.jit, lambda f: tracer.grad(f, argnums=1)])
def test_a_traced_value_at_a_custom_vjp_nondiff_position_is_an_error(transform):
    """jax raises UnexpectedTracerError (a TypeError) under jit, or when the nondiff
    argument is differentiated."""
    with pytest.raises(TypeError, match=r"custom_vjp\(f\): an argument is marked "
                                        r"non-differentiable"):
        transform(_vjp_fn(nondiff_argnums=(1,)))(X, np.float32(3), Y)


def test_custom_jvp_nondiff_arguments_may_be_traced_and_get_no_gradient():
    """jax: custom_jvp stops their gradient (so it is 0), and jit may trace them."""
    f = _jvp_fn(nondiff_argnames="n")
    assert tracer.grad(f, argnums=1)(X, np.float32(3), Y) == 0.0
    for backend in BACKENDS:
        np.testing.assert_allclose(tracer.jit(f, backend=backend)(X, 3.0, Y),
                                   np.sin(X) * 3 * Y, rtol=1e-6)
    out, tangent = tracer.jvp(lambda x: f(x, 3.0, Y), (X,), (np.float32(1),))
    np.testing.assert_allclose(tangent, _rule_grads(X, 3, Y)[0], rtol=1e-6)
    x, n, y = np.full(2, X), np.full(2, 3.0, np.float32), np.full(2, Y)
    want = (_rule_grads(x, 3, y)[0], np.zeros(2, np.float32))
    loss = tracer.grad(lambda x, n, y: tnp.sum(f(x, n, y)), argnums=(0, 1))
    np.testing.assert_allclose(loss(x, n, y), want, rtol=1e-6)   # n traced, then read
    for backend in BACKENDS:                                      # by a later backward
        np.testing.assert_allclose(tracer.jit(loss, backend=backend)(x, n, y), want, rtol=1e-6)
    np.testing.assert_allclose(tracer.vmap(tracer.grad(f, argnums=(0, 1)))(x, n, y), want,
                               rtol=1e-6)


@pytest.mark.parametrize("cls", [custom_vjp, custom_jvp])
def test_nondiff_misuse(cls):
    def f(x, n, *, k=1):
        return x * n

    with pytest.raises(ValueError, match="nondiff_argnames names 'z'"):
        cls(f, nondiff_argnames="z")
    with pytest.raises(ValueError, match="nondiff_argnames .'k'. are not positional"):
        cls(f, nondiff_argnames="k")
    with pytest.raises(ValueError, match=r"nondiff_argnums=\(5,\) but the function takes "
                                         r"only 2"):
        cls(f, nondiff_argnums=5)
    with pytest.raises(TypeError, match="nondiff_argnums must be an int"):
        cls(f, nondiff_argnums="1")


def test_keyword_arguments_bind_to_positions_as_jax_resolves_them():
    f = _vjp_fn(nondiff_argnums=1)
    np.testing.assert_allclose(tracer.grad(lambda x: f(x, y=Y, n=3))(X), _rule_grads(X, 3, Y)[0],
                               rtol=1e-6)

    @custom_vjp
    def g(x, *, k):
        return x * k
    g.defvjp(lambda x, *, k: (x * k, None), lambda r, c: (c,))
    with pytest.raises(TypeError, match=r"custom_vjp\(g\): the keyword arguments \['k'\] "
                                        r"could not be resolved to positions"):
        tracer.grad(g)(X, k=2.0)


def test_defjvps_with_nondiff_arguments_is_a_type_error():
    f = custom_jvp(lambda x, n: x * n, nondiff_argnames="n")
    with pytest.raises(TypeError, match="defjvps cannot be used with nondiff_argnums"):
        f.defjvps(lambda g, ans, x: g)


def _branchy(x, n):
    """Python branches on n, so n must be static under checkpoint."""
    return tnp.sin(x) * (2.0 if n > 0 else -1.0) * n


@pytest.mark.parametrize("kw", [dict(static_argnames="n"), dict(static_argnames=("n",)),
                                dict(static_argnums=1)])
def test_checkpoint_static_argnames(kw):
    """jax 0.10.2 (with its remat3 flag, which honours static_argnames): grad 5.2654953.
    Here a static parameter is static passed either way, as jit's."""
    g = tracer.checkpoint(_branchy, **kw)
    want = np.cos(X) * 2 * 3
    np.testing.assert_allclose(g(X, n=3), np.sin(X) * 6, rtol=1e-6)
    np.testing.assert_allclose(tracer.grad(g)(X, n=3), want, rtol=1e-6)
    np.testing.assert_allclose(tracer.grad(g)(X, 3), want, rtol=1e-6)
    np.testing.assert_allclose(tracer.grad(lambda x: g(x, n=-1))(X), np.cos(X), rtol=1e-6)
    for backend in BACKENDS:
        jg = tracer.jit(tracer.grad(g), static_argnames="n", backend=backend)
        np.testing.assert_allclose(jg(X, n=3), want, rtol=1e-6)
        np.testing.assert_allclose(jg(X, n=2), np.cos(X) * 4, rtol=1e-6)
    per_example = tracer.vmap(tracer.grad(lambda x: g(x, n=3)))(XS)
    np.testing.assert_allclose(per_example, np.cos(XS) * 6, rtol=1e-6)


def test_checkpoint_static_argnames_misuse():
    with pytest.raises(ValueError, match="static_argnames names 'z', which the function"):
        tracer.checkpoint(_branchy, static_argnames="z")
    with pytest.raises(TypeError, match="static_argnames must be a str"):
        tracer.checkpoint(_branchy, static_argnames=3)
    g = tracer.checkpoint(_branchy, static_argnames="n")
    with pytest.raises(TypeError, match="argument 'n' is in static_argnames but is a traced"):
        tracer.jit(lambda x: g(x, n=x))(X)
    with pytest.raises(TypeError, match="argument 1 is in static_argnums but is a traced"):
        tracer.jit(lambda x: g(x, x))(X)


@pytest.mark.parametrize("concrete", [True, False])
def test_checkpoint_concrete_was_removed_as_in_jax(concrete):
    """jax 0.10.2 raises NotImplementedError for any `concrete` given, also via remat."""
    for fn in (tracer.checkpoint, tracer.remat):
        with pytest.raises(NotImplementedError, match="`concrete` option was deprecated"):
            fn(_branchy, concrete=concrete)


M = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_vmap_sum_match_sums_a_batched_output_whose_out_axes_is_none():
    """jax 0.10.2: [6, 10, 14] and the unbatched output kept as it is; without
    sum_match, the ValueError naming out_axes."""
    pair = tracer.vmap(lambda x, y: (x * 2, y), in_axes=(0, None), out_axes=None,
                       sum_match=True)
    got, kept = pair(M, np.ones(3, np.float32))
    np.testing.assert_array_equal(got, [6.0, 10.0, 14.0])
    np.testing.assert_array_equal(kept, np.ones(3))
    mixed = tracer.vmap(lambda x: (x * 2, x), out_axes=(None, 1), sum_match=True)(M)
    np.testing.assert_array_equal(mixed[0], [6.0, 10.0, 14.0])
    np.testing.assert_array_equal(mixed[1], M.T)
    f = tracer.vmap(lambda x: x * 2, out_axes=None, sum_match=True)
    for backend in BACKENDS:
        np.testing.assert_array_equal(tracer.jit(f, backend=backend)(M), [6.0, 10.0, 14.0])
    g = tracer.grad(lambda x: tnp.sum(tracer.vmap(tnp.sin, out_axes=None, sum_match=True)(x)))
    np.testing.assert_allclose(g(M), np.cos(M), rtol=1e-6)
    nested = tracer.vmap(tracer.vmap(lambda x: x * 2, out_axes=None, sum_match=True))
    np.testing.assert_array_equal(nested(np.ones((2, 3, 4), np.float32)), np.full((2, 4), 6.0))
    with pytest.raises(ValueError, match="got axis spec None but output was batched on axis "
                                         "0: .*output 0 depends on a batched input.*"
                                         "sum_match=True"):
        tracer.vmap(lambda x: x * 2, out_axes=None)(M)


@pytest.mark.parametrize("spmd", ["d", ("d", "e")])
def test_vmap_spmd_axis_name_is_accepted_and_changes_nothing(spmd):
    """jax 0.10.2 on one device: the same values (the name only places shards)."""
    f = tracer.vmap(lambda x: tnp.sin(x) * 2, spmd_axis_name=spmd)
    np.testing.assert_allclose(f(M), np.sin(M) * 2, rtol=1e-6)
    for backend in BACKENDS:
        np.testing.assert_allclose(tracer.jit(f, backend=backend)(M), np.sin(M) * 2, rtol=1e-6)
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(f(x)))(M), 2 * np.cos(M),
                               rtol=1e-6)
    with_name = tracer.vmap(lambda x: tracer.lax.psum(x, "i"), axis_name="i", spmd_axis_name=spmd)
    np.testing.assert_allclose(with_name(M), np.broadcast_to(M.sum(0), M.shape))
    with pytest.raises(TypeError, match="spmd_axis_name must be hashable"):
        tracer.vmap(tnp.sin, spmd_axis_name=["d"])


class _Device:
    """What jit reads of a jax Device (jax.devices()[0] is CpuDevice(id=0))."""

    def __init__(self, platform="cpu", id=0):
        self.platform, self.id = platform, id


class _Sharding:
    """What jit reads of a jax Sharding: its device_set."""

    def __init__(self, *devices):
        self.device_set = set(devices) or {_Device()}


ONE = _Sharding()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kw", [dict(in_shardings=ONE), dict(in_shardings=(ONE, None)),
                                dict(in_shardings=[None, ONE]), dict(out_shardings=ONE),
                                dict(in_shardings=None, out_shardings=(ONE,)),
                                dict(in_shardings=(ONE, ONE), out_shardings=ONE)])
def test_jit_single_device_shardings_place_nothing(kw, backend):
    """jax 0.10.2 on its one CPU device: the same values, under grad and vmap too."""
    if isinstance(kw.get("out_shardings"), tuple):
        f = tracer.jit(lambda x, y: (x * y + 1.0,), backend=backend, **kw)
        np.testing.assert_allclose(f(XS, XS)[0], XS * XS + 1, rtol=1e-6)
        return
    f = tracer.jit(lambda x, y: x * y + 1.0, backend=backend, **kw)
    np.testing.assert_allclose(f(XS, XS), XS * XS + 1, rtol=1e-6)
    np.testing.assert_allclose(f(XS, XS), XS * XS + 1, rtol=1e-6)
    assert f.cache_info().hits == 1 and f.cache_info().misses == 1   # checked per signature
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(f(x, x)))(XS), 2 * XS, rtol=1e-6)
    np.testing.assert_allclose(tracer.vmap(f)(M, M), M * M + 1, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_device_is_deprecated_and_places_nothing(backend):
    with pytest.warns(DeprecationWarning, match="device argument is deprecated"):
        f = tracer.jit(lambda x: tnp.sin(x) * 2, device=_Device(), backend=backend)
    np.testing.assert_allclose(f(XS), np.sin(XS) * 2, rtol=1e-6)
    np.testing.assert_allclose(tracer.grad(lambda x: tnp.sum(f(x)))(XS), 2 * np.cos(XS),
                               rtol=1e-6)
    np.testing.assert_allclose(tracer.vmap(f)(M), np.sin(M) * 2, rtol=1e-6)


def test_jit_shardings_take_pytree_prefixes_as_jax():
    f = tracer.jit(lambda d, n: d["a"] * n, static_argnums=1,
                   in_shardings=({"a": None, "b": ONE},), out_shardings=None)
    np.testing.assert_allclose(f({"a": XS, "b": XS}, 2), 2 * XS)
    out = tracer.jit(lambda x: (x, {"k": x}), out_shardings=(ONE, {"k": ONE}))(XS)
    np.testing.assert_allclose(out[1]["k"], XS)


def test_eval_shape_reports_the_out_shardings_as_jax():
    shapes = tracer.jit(lambda x: (x, {"k": x[0]}), out_shardings=(None, {"k": ONE})
                        ).eval_shape(XS)
    assert shapes[0].sharding is None and shapes[1]["k"].sharding is ONE
    assert shapes[1]["k"].shape == XS.shape[1:]
    assert tracer.jit(lambda x: x * 2, out_shardings=ONE).eval_shape(XS).sharding is ONE


@pytest.mark.filterwarnings("ignore:jit. the device argument:DeprecationWarning")
def test_jit_placement_misuse_is_an_error_as_in_jax():
    f2 = lambda x, y: x + y      # noqa: E731
    with pytest.raises(ValueError, match=r"in_shardings must be a pytree prefix of the "
                                         r"positional arguments, but at in_shardings it is a "
                                         r"tuple of length 1 where the positional arguments "
                                         r"have a tuple of length 2"):
        tracer.jit(f2, in_shardings=(ONE,))(XS, XS)
    with pytest.raises(ValueError, match=r"at in_shardings\[0\] it is a dict with keys "
                                         r"\['a'\] where the positional arguments have a dict "
                                         r"with keys \['a', 'b'\]"):
        tracer.jit(lambda d: d["a"], in_shardings=({"a": None},))({"a": XS, "b": XS})
    with pytest.raises(ValueError, match="tuple of length 2 where the positional arguments "
                                         "have a tuple of length 1"):
        tracer.jit(lambda x, n: x * n, static_argnums=1, in_shardings=(None, None))(XS, 2)
    with pytest.raises(ValueError, match=r"out_shardings must be a pytree prefix of the "
                                         r"results.*one entry per result"):
        tracer.jit(lambda x: (x, x), out_shardings=(None, None, None))(XS)
    with pytest.raises(ValueError, match=r"does not support keyword arguments \(y\) when "
                                         r"in_shardings is specified"):
        tracer.jit(f2, in_shardings=(None, None))(XS, y=XS)
    np.testing.assert_allclose(tracer.jit(f2, in_shardings=None)(XS, y=XS), 2 * XS)
    with pytest.raises(TypeError, match="in_shardings leaf specifications are expected to "
                                        "be shardings, PartitionSpecs or None.*'cpu'"):
        tracer.jit(f2, in_shardings="cpu")
    with pytest.raises(TypeError, match="out_shardings leaf specifications"):
        tracer.jit(f2, out_shardings=(3,))
    for spec in (tracer.P(), tracer.P("x")):       # jax: RuntimeError, no mesh in context
        with pytest.raises(RuntimeError, match="has no mesh context"):
            tracer.jit(f2, in_shardings=spec)
        with pytest.raises(RuntimeError, match="out_shardings has the PartitionSpec"):
            tracer.jit(f2, out_shardings=spec)
    with pytest.raises(ValueError, match=r"places arrays on 2 device\(s\).*one CPU device"):
        tracer.jit(f2, in_shardings=_Sharding(_Device(id=0), _Device(id=1)))
    with pytest.raises(ValueError, match=r"platform\(s\) \['gpu'\]"):
        tracer.jit(f2, device=_Device("gpu"))
    with pytest.raises(TypeError, match="device must be a device"):
        tracer.jit(f2, device="cpu")
    with pytest.raises(ValueError, match="when device is specified on jit, in_shardings "
                                         "should not be"):
        tracer.jit(f2, device=_Device(), in_shardings=ONE)
    with pytest.raises(ValueError, match="out_shardings should not be"):
        tracer.jit(f2, device=_Device(), out_shardings=ONE)


def test_jit_takes_jax_devices_and_shardings():
    jax = pytest.importorskip("jax")
    dev = jax.devices("cpu")[0]
    sharding = jax.sharding.SingleDeviceSharding(dev)
    mesh = jax.sharding.Mesh(np.array([dev]), ("x",))
    named = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    f = tracer.jit(lambda x, y: x * y, in_shardings=(sharding, named), out_shardings=named)
    np.testing.assert_allclose(f(XS, XS), XS * XS)
    with pytest.warns(DeprecationWarning):
        g = tracer.jit(tnp.sin, device=dev)
    np.testing.assert_allclose(g(XS), np.sin(XS), rtol=1e-6)
    with pytest.raises(RuntimeError, match="has no mesh context"):
        tracer.jit(tnp.sin, in_shardings=jax.sharding.PartitionSpec())


def test_the_signatures_hold_jax_parameters():
    """Every parameter of jax 0.10.2's; the ones added here with jax's default where it
    is a plain value (jax marks unspecified shardings and the removed `concrete` with
    sentinels; None stands for both)."""
    import inspect
    jax = pytest.importorskip("jax")
    pairs = [(tracer.jit, jax.jit, {"device", "in_shardings", "out_shardings"}),
             (tracer.vmap, jax.vmap, {"spmd_axis_name", "sum_match"}),
             (tracer.checkpoint, jax.checkpoint, {"static_argnames", "concrete"}),
             (custom_vjp.__init__, jax.custom_vjp.__init__, {"nondiff_argnums",
                                                             "nondiff_argnames"}),
             (custom_jvp.__init__, jax.custom_jvp.__init__, {"nondiff_argnames"})]
    for ours, theirs, added in pairs:
        mine = inspect.signature(ours).parameters
        for k, p in inspect.signature(theirs).parameters.items():
            assert k in mine, (theirs, k)
            plain = isinstance(p.default, (type(None), bool, int, str, tuple))
            if k in added and k != "concrete":      # ours: a private sentinel
                assert mine[k].default == (p.default if plain else None), (theirs, k)


@pytest.mark.parametrize("backend", BACKENDS)
def test_with_sharding_constraint_on_one_device_is_the_identity(backend):
    """jax.lax.with_sharding_constraint: one CPU device's sharding (or a prefix of the
    values of them) leaves x as it is, traced or not; what jit's in_shardings refuse, it
    refuses."""
    wsc = tracer.lax.with_sharding_constraint
    f = tracer.jit(lambda x: wsc(x, ONE) * 2, backend=backend)
    np.testing.assert_array_equal(f(XS), XS * 2)
    pair = (XS, M)
    assert wsc(pair, (ONE, None)) is pair
    with pytest.raises(ValueError, match="pytree prefix of the values"):
        wsc(pair, (ONE,))
    with pytest.raises(ValueError, match="2 device"):
        wsc(XS, _Sharding(_Device(), _Device(id=1)))
    with pytest.raises(NotImplementedError, match="PartitionSpec"):
        wsc(XS, tracer.P("x"))
