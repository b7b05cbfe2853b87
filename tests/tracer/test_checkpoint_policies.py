"""tracer.checkpoint's policy=, static_argnums= and prevent_cse=, tracer.checkpoint_policies
and tracer.checkpoint_name: every policy gives the values and gradients of the plain
function (eagerly, jitted on both backends, under vmap, to second order), and saves
exactly what it names while the backward recomputes the rest (as jax.checkpoint does)."""
import logging
import warnings
from collections import Counter

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp
from ir import dce
from tracer import (checkpoint, checkpoint_name, checkpoint_policies as cp, grad, jit,
                    make_graph, vmap)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))
W = RNG.normal(size=(4, 4)) * 0.5
XS = RNG.normal(size=(2, 3, 4))


def f(x, w):
    h = tnp.tanh(x @ w)
    a = checkpoint_name(h, "a")
    return tnp.sum(tnp.exp(a) @ w)


POLICIES = {
    "none": None,
    "everything_saveable": cp.everything_saveable,
    "nothing_saveable": cp.nothing_saveable,
    "dots_saveable": cp.dots_saveable,
    "checkpoint_dots": cp.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": cp.dots_with_no_batch_dims_saveable,
    "checkpoint_dots_with_no_batch_dims": cp.checkpoint_dots_with_no_batch_dims,
    "save_only_these_names": cp.save_only_these_names("a"),
    "save_any_names_but_these": cp.save_any_names_but_these("b"),
    "save_from_both_policies": cp.save_from_both_policies(cp.dots_saveable,
                                                          cp.save_only_these_names("a")),
    "custom": lambda prim, *avals, **attrs: prim.name == "tanh",
}


def native(fun, backend=None):
    """jit(fun) on `backend`; a kernel falling back to its numpy impl is an error."""
    j = jit(fun, backend=backend)

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return j(*args)
    return run


def close(got, want):
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_gives_the_plain_values_and_gradients(name):
    g = checkpoint(f, policy=POLICIES[name])
    want = grad(f, argnums=(0, 1))(X, W)
    np.testing.assert_allclose(g(X, W), f(X, W))
    close(grad(g, argnums=(0, 1))(X, W), want)
    close(native(grad(g, argnums=(0, 1)))(X, W), want)
    close(native(grad(g, argnums=(0, 1)), "numpy")(X, W), want)
    per = vmap(grad(g, argnums=(0, 1)), in_axes=(0, None))(XS, W)
    close(per, [np.stack(v) for v in zip(*[grad(f, argnums=(0, 1))(x, W) for x in XS])])
    np.testing.assert_allclose(tracer.hessian(g)(X, W), tracer.hessian(f)(X, W), rtol=1e-10,
                               atol=1e-12)
    tracer.check_grads(g, (X, W), order=2)


def structure(policy, fun=f, *args):
    """(top-level kernels of make_graph(grad), kernels producing the remat's outputs)."""
    g = make_graph(grad(checkpoint(fun, policy=policy), argnums=(0, 1)))(*(args or (X, W)))
    top = Counter(n.kernel for n in g.nodes)
    saved = []
    for node in (n for n in g.nodes if n.kernel == "remat"):
        body = node.attrs["body"]
        made_by = {id(o): n.kernel for n in body.nodes for o in n.outputs}
        saved += [made_by[id(v)] for v in body.outvars]
    return top, sorted(saved)


def test_nothing_saveable_recomputes_the_whole_forward_in_the_backward():
    for policy in (None, cp.nothing_saveable):
        top, saved = structure(policy)
        assert saved == []                        # the forward's output is not needed
        assert (top["tanh"], top["checkpoint_name"], top["exp"]) == (1, 1, 1)
        assert top["matmul"] == 5                 # 4 of the backward, 1 recomputed


def test_everything_saveable_recomputes_nothing():
    top, saved = structure(cp.everything_saveable)
    assert saved == ["exp", "tanh"]               # what the backward reads
    assert top["tanh"] == top["exp"] == top["checkpoint_name"] == 0
    assert top["matmul"] == 4


def test_dots_saveable_saves_the_dot_and_recomputes_the_rest():
    for policy in (cp.dots_saveable, cp.dots_with_no_batch_dims_saveable):
        top, saved = structure(policy)
        assert saved == ["matmul"]
        assert (top["tanh"], top["checkpoint_name"], top["exp"]) == (1, 1, 1)
        assert top["matmul"] == 4


def test_dots_with_no_batch_dims_does_not_save_a_batched_matmul():
    def batched(x, w):
        return tnp.sum(tnp.sin(tnp.matmul(x, tnp.broadcast_to(w, (2, 4, 4)))))
    _, saved = structure(cp.dots_saveable, batched, XS, W)
    assert saved == ["matmul"]
    top, saved = structure(cp.dots_with_no_batch_dims_saveable, batched, XS, W)
    assert saved == [] and top["sin"] == 0 and top["cos"] == 1


def test_save_only_these_names_saves_exactly_the_named_value():
    top, saved = structure(cp.save_only_these_names("a"))
    assert saved == ["checkpoint_name"]
    assert top["exp"] == 1 and top["checkpoint_name"] == 0
    assert top["tanh"] == 1                       # tanh's gradient reads its own output
    assert structure(cp.save_only_these_names("b"))[1] == []
    assert structure(cp.save_any_names_but_these("b"))[1] == ["checkpoint_name"]
    assert structure(cp.save_any_names_but_these("a"))[1] == []
    both = cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("a"))
    assert structure(both)[1] == ["checkpoint_name", "matmul"]


def test_the_policy_survives_vmap():
    g = make_graph(vmap(checkpoint(f, policy=cp.dots_saveable), in_axes=(0, None)))(XS, W)
    (node,) = [n for n in g.nodes if n.kernel == "remat"]
    assert node.attrs["policy"] is cp.dots_saveable

    def loss(xs, w):
        return tnp.sum(vmap(checkpoint(f, policy=cp.dots_saveable), in_axes=(0, None))(xs, w))
    gg = make_graph(grad(loss))(XS, W)
    (node,) = [n for n in gg.nodes if n.kernel == "remat"]
    assert len(node.outputs) == 1 and "matmul" in node.attrs["body"].kernels()
    close([grad(loss)(XS, W)], [grad(lambda xs, w: tnp.sum(vmap(f, in_axes=(0, None))(
        xs, w)))(XS, W)])


def test_an_unread_output_of_a_checkpoint_is_pruned():
    def two(x):
        return tnp.sin(x), tnp.cos(x)
    g = dce(make_graph(lambda x: checkpoint(two)(x)[0])(X))
    (node,) = [n for n in g.nodes if n.kernel == "remat"]
    assert node.attrs["body"].kernels() == {"sin"} and len(node.outputs) == 1


def test_static_argnums_pass_python_values():
    def power(x, n):
        out = x
        for _ in range(n - 1):                    # needs a Python int
            out = out * x
        return out
    for nums in (1, (1,), (-1,)):
        g = checkpoint(power, static_argnums=nums)
        np.testing.assert_allclose(g(2.0, 3), 8.0)
        np.testing.assert_allclose(grad(lambda x: g(x, 3))(2.0), 12.0)
        np.testing.assert_allclose(native(grad(lambda x: g(x, 4)))(2.0), 32.0)
    kw = checkpoint(lambda x, n, *, scale: power(x, n) * scale, static_argnums=1)
    np.testing.assert_allclose(grad(lambda x, s: kw(x, 2, scale=s))(2.0, 3.0), 12.0)
    np.testing.assert_allclose(grad(checkpoint(power, static_argnums=1))(2.0, 3), 12.0)
    with pytest.raises(tracer.ArgumentError, match="argument 1 is in static_argnums"):
        grad(checkpoint(power, static_argnums=1), argnums=(0, 1))(2.0, 3.0)  # n traced
    with pytest.raises(tracer.ArgumentError, match="static_argnums"):
        grad(checkpoint(lambda *a: a[0] * 2, static_argnums=5))(2.0, 3)
    with pytest.raises(tracer.ArgumentError, match="static_argnums"):
        checkpoint(power, static_argnums="n")


def test_prevent_cse_is_accepted_and_the_recomputation_stays():
    for prevent in (True, False):
        top, _ = structure(None, checkpoint(f, prevent_cse=prevent))
        assert top["tanh"] == 1


@pytest.mark.parametrize("make", [checkpoint, tracer.remat])
def test_prevent_cse_of_another_type_is_jaxs_type_error(make):
    for bad, name in [(1, "int"), (None, "NoneType")]:
        with pytest.raises(TypeError, match=r"^prevent_cse must be a bool or tuple of bools, "
                                            rf"got type\(prevent_cse\)=<class '{name}'>$"):
            make(f, prevent_cse=bad)
    close(grad(make(f, prevent_cse=(True, False)), (0, 1))(X, W), grad(f, (0, 1))(X, W))


def test_a_bad_policy_is_a_clear_error():
    with pytest.raises(TypeError, match="policy must be None or a hashable callable"):
        checkpoint(f, policy="dots_saveable")

    class Unhashable:
        __hash__ = None

        def __call__(self, prim, *avals, **attrs):
            return True
    with pytest.raises(TypeError, match="hashable callable"):
        checkpoint(f, policy=Unhashable())
    with pytest.raises(tracer.ArgumentError, match="returned 'yes' for kernel 'matmul'"):
        grad(checkpoint(f, policy=lambda prim, *a, **k: "yes"), argnums=(0, 1))(X, W)


def test_checkpoint_name_is_an_identity_everywhere():
    tree = {"a": X, "b": (W,)}
    out = checkpoint_name(tree, "n")
    np.testing.assert_array_equal(out["a"], X)
    assert out["b"][0] is not W
    g = make_graph(lambda x: checkpoint_name(x, "n") * 2)(X)
    assert [(n.kernel, n.attrs) for n in g.nodes][0] == ("checkpoint_name", {"name": "n"})
    for run in (native(lambda x: checkpoint_name(x * 2, "n") + 1),
                native(lambda x: checkpoint_name(x * 2, "n") + 1, "numpy")):
        np.testing.assert_allclose(run(X), X * 2 + 1)
    np.testing.assert_allclose(grad(lambda x: tnp.sum(checkpoint_name(x, "n") ** 2))(X), 2 * X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # batched as one node, not by a loop
        np.testing.assert_allclose(vmap(lambda x: checkpoint_name(x, "n") * 2)(XS), XS * 2)
        kernels = make_graph(vmap(lambda x: checkpoint_name(x, "n")))(XS).kernels()
    assert kernels == {"checkpoint_name"}
    with pytest.raises(TypeError, match="name must be a str"):
        checkpoint_name(X, 3)


def test_remat_is_checkpoint():
    assert tracer.remat is tracer.checkpoint


def test_onnx_export_of_a_policy_checkpoint_and_checkpoint_name():
    ort = pytest.importorskip("onnxruntime")
    loss = grad(checkpoint(f, policy=cp.save_only_these_names("a")), argnums=(0, 1))
    model = tracer.export.to_onnx(loss, X, W)
    session = ort.InferenceSession(model.SerializeToString())
    names = [i.name for i in session.get_inputs()]
    close(session.run(None, dict(zip(names, (X, W)))), grad(f, argnums=(0, 1))(X, W))


def test_checkpoint_name_keeps_a_graph_cacheable():
    from lowering.llvm.graph_cache import key_of
    from lowering.llvm.program import optimize
    g = optimize(make_graph(lambda x: checkpoint_name(x * 2, "n") + 1)(X))
    assert "checkpoint_name" in g.kernels() and key_of(g) is not None


def test_checkpoint_called_outside_differentiation_gives_its_function_arrays():
    """A Python scalar argument reaches the function as an array (x.sum() works), as
    under differentiation and in JAX; static arguments stay as given."""
    f = tracer.checkpoint(lambda x, n: x.sum() * n, static_argnums=1)
    assert f(3.0, 2) == 6.0 and tracer.grad(f)(3.0, 2) == 2.0


def test_the_residuals_a_gradient_keeps_are_logged(caplog):
    """JAX's DEBUG line (WARNING with jax_log_checkpoint_residuals): the inputs the
    recomputed nodes read, and the outputs the policy saves."""
    def f(x):
        return tnp.cos(tnp.sin(x).sum())
    x = np.arange(3.0)
    logs = []
    for policy in (None, lambda *_, **__: True, lambda p, *_, **__: str(p) == "cos"):
        with caplog.at_level(logging.DEBUG, logger="tracer.checkpoint"):
            caplog.clear()
            tracer.grad(tracer.checkpoint(f, policy=policy))(x)
        logs.append(caplog.text)
    assert "saving inputs with shapes:\n  f64[3]" in logs[0] and "intermediates" not in logs[0]
    assert "saving inputs" not in logs[1] and " sin " in logs[1] and " cos " in logs[1]
    assert "saving inputs with shapes" in logs[2] and "and saving these intermediates:\n" \
        "  f64[] output of cos from" in logs[2]
    caplog.clear()
    with tracer.config.log_checkpoint_residuals(True), caplog.at_level(logging.WARNING):
        tracer.grad(tracer.checkpoint(f))(x)
    assert "remat-decorated function saving inputs" in caplog.text
