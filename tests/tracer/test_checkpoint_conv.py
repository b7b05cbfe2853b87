"""checkpoint_policies.dots_saveable saves convolutions as jax.checkpoint's does (JAX saves
dot_general and conv_general_dilated outputs), and dots_with_no_batch_dims_saveable does
not (JAX saves only a dot_general without batch dimensions there)."""
from collections import Counter

import numpy as np

from tracer import checkpoint, checkpoint_policies as cp, grad, lax, make_graph
from tracer import numpy as tnp

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 5, 5, 3))
W = RNG.normal(size=(3, 3, 3, 4)) * 0.3


def net(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO",
                                                                          "NHWC"))
    return tnp.sum(tnp.sin(y))


def structure(policy):
    """(top-level kernels of the gradient's graph, kernels producing the remat's outputs)."""
    g = make_graph(grad(checkpoint(net, policy=policy), argnums=(0, 1)))(X, W)
    saved = []
    for node in (n for n in g.nodes if n.kernel == "remat"):
        made_by = {id(o): n.kernel for n in node.attrs["body"].nodes for o in n.outputs}
        saved += [made_by[id(v)] for v in node.attrs["body"].outvars]
    return Counter(n.kernel for n in g.nodes), sorted(saved)


def test_dots_saveable_saves_the_convolution():
    top, saved = structure(cp.dots_saveable)
    assert saved == ["conv"]
    assert top["conv"] == 2             # the two gradient convolutions; none recomputed
    want = grad(net, argnums=(0, 1))(X, W)
    for got, ref in zip(grad(checkpoint(net, policy=cp.dots_saveable), argnums=(0, 1))(X, W),
                        want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_dots_with_no_batch_dims_saveable_recomputes_the_convolution():
    top, saved = structure(cp.dots_with_no_batch_dims_saveable)
    assert saved == [] and top["conv"] == 3
