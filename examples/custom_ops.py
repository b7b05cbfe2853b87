"""Custom ops, the three ways of the TensorFlow.js guide.

(a) an op defined with existing ops;
(b) a new kernel: one registry.define_kernel call + an op calling run_kernel; it works
    eagerly, traced (its node names the new kernel), under jit, grad, vmap (batched, no
    loop) and ONNX export;
(c) replacing a built-in kernel's implementation changes results eagerly and under jit.

The new kernel also gets an `llvm` scalar body, which fuses into its neighbours' loop:
the lowered LLVM IR has one loop computing `softplus(x) * 2 + 1`, no temporaries.

Run:  python examples/custom_ops.py
"""
import numpy as np

import registry
import tracer
import tracer.numpy as tnp
from lowering.llvm import ScalarKernel


# (a) An op made of existing ops: nothing to register; it traces, differentiates, jits.
def squared_difference(a, b):
    d = tnp.subtract(a, b)
    return d * d


# (b) A new kernel, declared in one call. The shape rule gets one object per input with
# .shape and .dtype; the llvm impl is a scalar body, emitted with llvmlite's IRBuilder.
def softplus_llvm(ctx, x):
    """max(x, 0) + log1p(exp(-|x|))"""
    b = ctx.b
    tail = ctx.math("log1p", ctx.math("exp", b.fneg(ctx.intrinsic("fabs", x))))
    zero = ctx.const(0.0)
    return b.fadd(b.select(b.fcmp_ordered(">", x, zero), x, zero), tail)


# family="elementwise" is what batches it under vmap (one batched node, no loop) and lets
# onnx name the ONNX operator it is exported as; the scalar body fuses into neighbours.
registry.define_kernel(
    "softplus", shape=lambda x: x, numpy=lambda x: np.logaddexp(x.dtype.type(0), x),
    family="elementwise", llvm=ScalarKernel(softplus_llvm, cost=20), onnx="Softplus",
    gradient=lambda dy, inputs, outputs, attrs: (dy * tracer.nn.sigmoid(inputs[0]),))


def softplus(x):
    return tracer.run_kernel("softplus", [tnp.asarray(x)])


def main():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([0.5, 2.5, 1.0], np.float32)
    print("(a) squared_difference:", squared_difference(a, b))
    print(tracer.make_graph(squared_difference)(a, b))

    x = np.array([-2.0, 0.0, 3.0], np.float32)
    print("\n(b) softplus eager:", softplus(x))
    print("    softplus jit:  ", tracer.jit(softplus, backend="numpy")(x))
    print("    grad of sum(softplus):", tracer.grad(lambda v: tnp.sum(softplus(v)))(x))
    print(tracer.make_graph(lambda v: softplus(v) * 2)(x))
    print("    vmap of softplus: one batched softplus node, no loop")
    print(tracer.make_graph(tracer.vmap(softplus))(np.stack([x, -x])))
    print(registry.describe("softplus"))
    try:
        from tracer.export import to_onnx
        print("    ONNX nodes:", [n.op_type for n in to_onnx(softplus, x).graph.node])
    except ImportError:
        print("    (onnx is not installed: no ONNX export)")
    fused = tracer.jit(lambda v: softplus(v) * 2 + 1)
    print("    llvm jit:", fused(x), " vs numpy:", 2 * np.logaddexp(0, x) + 1)
    lowered = fused.lower(x)
    print("    the optimized graph: softplus is inside one fusion group")
    print(lowered.graph)
    print("    its LLVM IR (one loop: the softplus body is inlined between the loads and the"
          " multiply-add):")
    print(lowered.as_text())

    # (c) Replace the built-in `max` kernel with a NaN-ignoring one (np.fmax). The numpy
    # backend is used here; an llvm override is registered the same way (see softplus).
    f = tracer.jit(lambda u, v: tnp.maximum(u, v), backend="numpy")
    u = np.array([np.nan, 1.0]); v = np.array([0.0, 2.0])
    print("\n(c) maximum before override:", tnp.maximum(u, v), "jit:", f(u, v))
    original = registry.get_kernel("max", "numpy")
    registry.register_kernel("max", "numpy", np.fmax)
    try:
        print("    maximum after override: ", tnp.maximum(u, v), "jit:", f(u, v))
    finally:
        registry.register_kernel("max", "numpy", original)
    print("    restored:               ", tnp.maximum(u, v), "jit:", f(u, v))


if __name__ == "__main__":
    main()
