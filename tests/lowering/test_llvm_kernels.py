"""Each built-in kernel as a one-node graph (and fused behind an elementwise producer)
under the llvm backend against its numpy kernel, for attrs the ops rarely produce (pad
with interior, multi-axis rev, strided slices, 2-d take indices, scatter_add, ...)."""
import numpy as np
import pytest

from ir import Graph, Node, ShapedArray, Var
from lowering.llvm import compile_graph
from lowering.numpy_kernels import IMPLS
from registry import infer_avals

R = np.random.default_rng(0)
X = R.normal(size=(3, 4, 5))
IDX = np.array([[2, 0, 3], [1, 1, 3]])

CASES = [  # (kernel, inputs, attrs)
    ("pad", [X], dict(lo=(1, 0, 2), hi=(0, 2, 1), interior=(1, 0, 2))),
    ("pad", [X[:, :0]], dict(lo=(1, 1, 0), hi=(0, 1, 1), interior=(0, 1, 0))),
    ("rev", [X], dict(axes=(0, 2))),
    ("slice", [X], dict(start=(1, 0, 1), limit=(3, 4, 5), step=(1, 3, 2))),
    ("transpose", [X], dict(perm=(2, 0, 1))),
    ("broadcast_to", [X[:, :1]], dict(shape=(2, 3, 4, 5))),
    ("reshape", [X], dict(shape=(4, 15))),
    ("concatenate", [X, X[:, :2], X[:, :0]], dict(axis=1)),
    ("take", [X, IDX], dict(axis=1)),
    ("take", [X, np.array(2)], dict(axis=2)),
    ("scatter_add", [R.normal(size=(3, 2, 3, 5)), IDX], dict(axis=1, size=4)),
    ("reduce_sum", [X], dict(axes=(0, 2))),
    ("reduce_prod", [X], dict(axes=(1,))),
    ("reduce_max", [X], dict(axes=(0, 1))),
    ("reduce_min", [X], dict(axes=(1, 2))),
    ("argmax", [X], dict(axis=1)),
    ("argmin", [X], dict(axis=0)),
    ("matmul", [X, R.normal(size=(3, 5, 2))], {}),
    ("select", [X > 0, X, -X], {}),
]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


def _cast(xs, dtype, kernel):
    out = []
    for k, x in enumerate(xs):
        index = (kernel in ("take", "scatter_add") and k == 1) or x.dtype == np.bool_
        out.append(x if index else (x * 3).astype(dtype))
    return out


def _graph(kernel, xs, attrs, fuse):
    invars = [Var(ShapedArray(x.shape, x.dtype)) for x in xs]
    nodes, ins = [], list(invars)
    if fuse and xs[0].dtype != np.bool_:       # an elementwise producer to fuse: x + x
        doubled = Var(invars[0].aval)
        nodes.append(Node("add", [invars[0], invars[0]], [doubled]))
        ins[0] = doubled
    outs = [Var(a) for a in infer_avals(kernel, [v.aval for v in ins], attrs)]
    nodes.append(Node(kernel, ins, outs, attrs))
    return Graph(invars, outs, nodes), nodes


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_kernel_matches_numpy_kernel(case, dtype, fuse):
    kernel, xs, attrs = case
    if kernel == "matmul" and dtype == np.bool_ and fuse:
        pytest.skip("no bool producer to fuse")
    xs = _cast(xs, dtype, kernel)
    graph, nodes = _graph(kernel, xs, attrs, fuse)
    args = list(xs)
    if len(nodes) == 2:
        args[0] = IMPLS["add"](xs[0], xs[0])
    want = np.asarray(IMPLS[kernel](*args, **attrs))
    got = compile_graph(graph).run(xs)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol)
