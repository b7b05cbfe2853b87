"""Epilogue fusion (lowering/llvm/epilogues.py): conv and matmul take the elementwise loops
after them (bias, activation) into their own group, which runs them per chunk of output
rows. Results must equal the numpy backend on every dtype, odd row counts, split across
threads or not, under grad; consumers that read the kernel's output at other elements
(or are not elementwise) stay separate. Run with TRACER_CPU=avx2 too (tile heights differ)."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import ShapedArray
from lowering.llvm import KernelEmitter
from lowering.settings import settings
from tracer import lax, nn
from tracer.tree_util import tree_leaves

RNG = np.random.default_rng(0)
DN = ("NHWC", "HWIO", "NHWC")


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)


def conv_bias_relu(x, w, b):
    return nn.relu(conv(x, w) + b)


def dense_bias_tanh(x, w, b):
    return tnp.tanh(x @ w + b)


def data(shapes, dtype):
    return [(RNG.standard_normal(s) * (4 if np.dtype(dtype).kind in "iu" else 1)).astype(dtype)
            for s in shapes]


def merged(f, *args):
    """The kernels whose groups took an epilogue: shown as a fusion of that kernel whose
    body also reads the kernel's output."""
    out = []
    for n in tracer.jit(f).lower(*args).graph.nodes:
        if n.kernel == "fusion":
            body = n.attrs["body"].nodes
            made = {id(o) for m in body if m.kernel == n.attrs["kind"] for o in m.outputs}
            if any(id(x) in made for m in body for x in m.inputs):
                out.append(n.attrs["kind"])
    return out


def check(f, *args):
    got, want = tracer.jit(f)(*args), tracer.jit(f, backend="numpy")(*args)
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        tol = {np.float16: 2e-2, np.float32: 1e-4, np.float64: 1e-11}.get(w.dtype.type, 0)
        scale = np.abs(w).max(initial=1.0)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request, monkeypatch):
    """Compile for 1 or 2 threads; with 2, every group that can be split is."""
    monkeypatch.setenv("TRACER_NUM_THREADS", str(request.param))
    monkeypatch.setattr(settings, "parallel_ns", 0)
    return request.param


CONV = [((2, 9, 9, 3), (3, 3, 3, 16), (16,)),       # 162 rows: partial tiles and GRAIN pieces
        ((1, 13, 11, 1), (3, 3, 1, 37), (37,)),     # panel edge: O = 32 + 5
        ((3, 40, 40, 2), (3, 3, 2, 8), (8,))]       # 4800 rows: several chunks
DENSE = [((37, 5), (5, 16), (16,)), ((300, 70), (70, 130), (130,)), ((3, 1), (1, 3), (3,))]


@pytest.mark.parametrize("shapes, dtype", [(CONV[0], np.float32), (CONV[0], np.float16),
                                           (CONV[1], np.float64), (CONV[1], np.int32),
                                           (CONV[2], np.float32)])
def test_conv_bias_relu_is_one_group(threads, shapes, dtype):
    args = data(shapes, dtype)
    assert merged(conv_bias_relu, *args) == ["conv"]
    check(conv_bias_relu, *args)
    if threads == 2:        # the pack step and one split call: one parallel step, not two
        assert tracer.jit(conv_bias_relu).lower(*args).steps == ["parallel"]


@pytest.mark.parametrize("shapes, dtype", [(DENSE[0], np.float32), (DENSE[1], np.float64),
                                           (DENSE[2], np.float32)])
def test_matmul_bias_tanh_is_one_group(threads, shapes, dtype):
    args = data(shapes, dtype)
    assert merged(dense_bias_tanh, *args) == ["matmul"]
    check(dense_bias_tanh, *args)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16])
def test_integer_matmul_epilogue(threads, dtype):
    args = data(DENSE[1], dtype)
    f = lambda x, w, b: tnp.maximum(x @ w + b, 3) * 2       # noqa: E731
    assert merged(f, *args) == ["matmul"]
    check(f, *args)


def test_grad_through_fused_layers(threads):
    x, w1, b1, w2, b2 = data([(4, 12, 12, 2), (3, 3, 2, 8), (8,), (1152, 10), (10,)], np.float64)

    def loss(w1, b1, w2, b2):
        h = conv_bias_relu(x, w1, b1)
        return tnp.sum(dense_bias_tanh(tnp.reshape(h, (4, -1)), w2, b2) ** 2)
    check(tracer.value_and_grad(loss, argnums=(0, 1, 2, 3)), w1, b1, w2, b2)
    # the forward conv's output (the pre-activation) is needed again by the gradient
    assert "conv" in merged(tracer.value_and_grad(loss), w1, b1, w2, b2)


def test_returned_kernel_output_and_several_epilogue_values(threads):
    x, w, b = data(CONV[0], np.float32)

    def f(x, w, b):
        y = conv(x, w)
        z = y + b
        return y, tnp.exp(-z * z), nn.relu(z) + y
    assert merged(f, x, w, b) == ["conv"]
    check(f, x, w, b)


@pytest.mark.parametrize("consumer", [
    lambda y: tnp.transpose(y, (0, 2, 1, 3)) + 1,     # same shape (H = W), other elements
    lambda y: tnp.transpose(y, (0, 2, 1, 3)),         # the same, as a loop of its own
    lambda y: y[::-1] * 2,                             # other rows
    lambda y: tnp.sum(y, axis=(0, 1, 2)),             # a reduction over rows
], ids=["transpose", "bare-transpose", "reverse", "reduction"])
def test_consumers_reading_other_elements_are_not_merged(threads, consumer):
    x, w, b = data(CONV[0], np.float32)
    f = lambda x, w, b: consumer(conv(x, w))         # noqa: E731
    assert merged(f, x, w, b) == []
    check(f, x, w, b)


def test_empty_batch_is_not_merged():
    x, w, b = data([(0, 5), (5, 16), (16,)], np.float32)
    assert merged(dense_bias_tanh, x, w, b) == []
    check(dense_bias_tanh, x, w, b)


@pytest.mark.parametrize("epilogue, rows", [(False, True), (True, True), (True, False)])
def test_user_kernel_merges_only_when_it_declares_epilogues(threads, epilogue, rows):
    """A user kernel (y[i, j] = 2 x[i, j]) followed by an elementwise loop: merged only
    with epilogue=True and rows as its work items (without a parallel hook: one item)."""
    name = f"test_epilogue_user_{epilogue}_{rows}"

    def body(ctx, ins, outs):
        (x,), (out,) = ins, outs
        lo, hi = (ctx.start, ctx.end) if rows else (0, out.aval.shape[0])
        with ctx.loop(lo, hi) as i, ctx.loop(0, out.aval.shape[1]) as j:
            out.store([i, j], ctx.b.fmul(x.read([i, j]), ctx.const(2.0)))
    registry.register_shape_rule(name, lambda x: ShapedArray(x.shape, x.dtype))
    registry.register_kernel(name, "numpy", lambda x: 2 * x)
    registry.register_kernel(name, "llvm", KernelEmitter(
        body, parallel=(lambda ins, outs: outs[0].shape[0]) if rows else None,
        epilogue=epilogue))
    try:
        f = lambda x: tnp.sin(tracer.run_kernel(name, [x + 1.0])) - x      # noqa: E731
        x = data([(45, 19)], np.float32)[0]
        assert merged(f, x) == [name] * (epilogue and rows)
        check(f, x)
    finally:
        for backend in ("llvm", "numpy"):
            registry.unregister_kernel(name, backend)
        registry.unregister_shape_rule(name)


def test_epilogue_inside_a_loop_body(threads):
    """Regions (control.py) merge too, and size the kernel's scratch for the merged group."""
    x, w, b = data(DENSE[1], np.float32)
    m = data([(130, 130)], np.float32)[0] * 0.1
    def f(x, w, b):
        return lax.fori_loop(0, 3, lambda i, h: dense_bias_tanh(h, m, b), x @ w)
    check(f, x, w, b)
    prog = tracer.jit(f).lower(x, w, b)
    assert "python" not in prog.steps


def test_every_layers_update_is_its_weight_gradients_epilogue(threads):
    """An SGD step of a 3-layer MLP: each `w - lr * dw` becomes the epilogue of the matmul
    making `dw`, not only the last layer differentiated (the others' updates came after
    the whole backward pass, each a pass of its own reading `dw` and `w` back), and each
    `(1 - h**2) * dx` the epilogue of the matmul making `dx` (it came after the next
    matmul): all 8 matmuls take an epilogue."""
    x, y, *params = data([(6, 20), (6, 20), (20, 20), (20,), (20, 20), (20,), (20, 20), (20,)],
                         np.float32)

    def loss(params):
        h = x
        for w, b in zip(params[::2], params[1::2]):
            h = dense_bias_tanh(h, w, b)
        return tnp.mean((h - y) ** 2)

    def step(params):
        grads = tracer.grad(loss)(params)
        return [p - 0.1 * g for p, g in zip(params, grads)]
    check(step, params)
    graph = tracer.jit(step).lower(params).graph
    maker = {id(o): n for n in graph.nodes for o in n.outputs}
    weights = [maker[id(v)] for v in graph.outvars[::2]]
    assert all(n.kernel == "fusion" and n.attrs["kind"] == "matmul" for n in weights)
    assert [n.attrs.get("kind") for n in graph.nodes if n.kernel == "fusion"].count("matmul") == 8
    assert "matmul" not in [n.kernel for n in graph.nodes]


def test_adams_update_is_its_weight_gradients_epilogue(threads):
    """Adam with bias correction: each weight's new moments and new value are made in the
    epilogue of the matmul making its gradient, the bias corrections (scalars of the step
    count, computed after the backward pass in program order) running first."""
    x, y, *params = data([(6, 20), (6, 20), (20, 20), (20,), (20, 20), (20,)], np.float32)

    def loss(params):
        h = x
        for w, b in zip(params[::2], params[1::2]):
            h = dense_bias_tanh(h, w, b)
        return tnp.mean((h - y) ** 2)

    def step(params, m, v, t):
        g = tracer.grad(loss)(params)
        m = [0.9 * a + 0.1 * b for a, b in zip(m, g)]
        v = [0.999 * a + 0.001 * b * b for a, b in zip(v, g)]
        lr = 0.01 * tnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        return [p - lr * a / (tnp.sqrt(b) + 1e-8) for p, a, b in zip(params, m, v)], m, v
    zeros = [np.zeros_like(p) for p in params]
    args = (params, zeros, [z + 0.5 for z in zeros], np.float32(3))
    check(step, *args)
    graph = tracer.jit(step).lower(*args).graph
    maker = {id(o): n for n in graph.nodes for o in n.outputs}
    made = [maker[id(v)] for part in range(3) for v in graph.outvars[4 * part:4 * part + 4:2]]
    assert all(n.kernel == "fusion" and n.attrs["kind"] == "matmul" for n in made), \
        [n.attrs.get("kind", n.kernel) for n in made]


@pytest.mark.parametrize("kernel", ["matmul", "conv"])
def test_an_output_nothing_else_reads_is_kept_in_chunks(threads, kernel):
    """A kernel output read only by its epilogue (the pre-activation of tanh(x @ w + b))
    gets no buffer of the program's: each thread writes its chunks of it into a buffer on
    its stack. One read later (returned, or read by another group) keeps its buffer."""
    shapes = {"matmul": DENSE[1], "conv": CONV[2]}[kernel]
    x, w, b = data(shapes, np.float32)
    layer = dense_bias_tanh if kernel == "matmul" else conv_bias_relu

    def roots(f):
        node, = [n for n in tracer.jit(f).lower(x, w, b).graph.nodes if n.kernel == "fusion"
                 and n.attrs["kind"] == kernel]
        return len(node.outputs)
    assert roots(layer) == 1
    check(layer, x, w, b)
    product = (lambda x, w: x @ w) if kernel == "matmul" else conv
    both = lambda x, w, b: (layer(x, w, b), product(x, w))        # noqa: E731
    assert roots(both) == 2
    check(both, x, w, b)
