"""Custom gradients: the three ways of the TensorFlow.js guide, plus JAX's custom_vjp.

(1) a new kernel gets its gradient with registry.register_gradient;
(2) a built-in kernel's gradient is overridden (a clipped gradient for `exp`);
(3) tracer.custom_grad, like tf.customGrad: the function returns (value, grad_fn);
(4) tracer.custom_vjp, like jax.custom_vjp: f.defvjp(fwd, bwd).

Every rule is written with tracer.numpy ops, so it also works under jit, in forward mode
(jvp) and to second order; check_grads verifies each against finite differences.

Run:  python examples/custom_gradients.py
"""
import numpy as np

import registry
import tracer
import tracer.numpy as tnp
from tracer import check_grads, custom_grad, custom_vjp, grad, jit, jvp

X = np.array([-2.0, -0.5, 1.0, 3.0])


# (1) A new kernel, log(cosh(x)), computed stably by NumPy; its gradient is tanh.
registry.register_shape_rule("logcosh", lambda x: x)
registry.register_kernel("logcosh", "numpy", lambda x: np.logaddexp(x, -x) - np.log(2.0))
registry.register_gradient("logcosh", lambda dy, inputs, outputs, attrs:
                           (dy * tnp.tanh(inputs[0]),))


def logcosh(x):
    return tracer.run_kernel("logcosh", [tnp.asarray(x, np.float64)])


def new_kernel():
    print("(1) a new kernel with a registered gradient: logcosh")
    print("    grad of sum(logcosh(x)):", grad(lambda x: tnp.sum(logcosh(x)))(X))
    print("    jvp (same registration):", jvp(logcosh, (X,), (np.ones(4),))[1])
    print("    second derivative:      ",
          grad(lambda x: tnp.sum(grad(lambda z: tnp.sum(logcosh(z)))(x)))(X))
    check_grads(logcosh, (X,), order=2)
    print("    check_grads(order=2): ok")


# (2) Override a built-in kernel's gradient, then restore it.
def clipped_exp_gradient(dy, inputs, outputs, attrs):
    return (tnp.clip(dy * outputs, -1.0, 1.0),)


def override():
    print("\n(2) overriding the gradient of the built-in `exp` with a clipped one")
    f = jit(grad(lambda x: tnp.sum(tnp.exp(x))))
    print("    before:     ", f(X))
    saved = registry.get_gradient("exp")
    registry.register_gradient("exp", clipped_exp_gradient)
    try:
        print("    clipped:    ", f(X), "(the jit cache noticed the new rule)")
    finally:
        registry.register_gradient("exp", saved)
    print("    restored:   ", f(X))


# (3) tf.customGrad's own example: value x^2, gradient dy * |x|.
@custom_grad
def square_with_abs_grad(x):
    return x * x, lambda dy: dy * tnp.abs(x)


def custom_grad_example():
    print("\n(3) custom_grad (tf.customGrad): value x*x, gradient dy*|x|")
    print("    value:      ", square_with_abs_grad(X))
    print("    grad:       ", grad(lambda x: tnp.sum(square_with_abs_grad(x)))(X))
    print("    jit(grad):  ", jit(grad(lambda x: tnp.sum(square_with_abs_grad(x))))(X))
    print("    jvp:        ", jvp(square_with_abs_grad, (X,), (np.ones(4),))[1])
    print("    grad(grad): ", grad(lambda x: tnp.sum(grad(
        lambda z: tnp.sum(square_with_abs_grad(z)))(x)))(X), "(the derivative of |x|)")


# (4) jax.custom_vjp: a numerically stable gradient for log(1 + exp(x)).
@custom_vjp
def log1pexp(x):
    return tnp.log1p(tnp.exp(x))


log1pexp.defvjp(lambda x: (log1pexp.fun(x), x),
                lambda x, g: (g * tracer.nn.sigmoid(x),))


def custom_vjp_example():
    print("\n(4) custom_vjp: a stable gradient for log(1 + exp(x))")
    big = np.array([0.0, 10.0, 800.0])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = grad(lambda x: tnp.sum(tnp.log1p(tnp.exp(x))))(big)
    print("    autodiff at", big, ":", naive, "(exp overflows)")
    print("    custom_vjp at", big, ":", grad(lambda x: tnp.sum(log1pexp(x)))(big))
    check_grads(log1pexp, (X,), order=2)
    print("    check_grads(order=2) of the custom rule: ok")


if __name__ == "__main__":
    new_kernel()
    override()
    custom_grad_example()
    custom_vjp_example()
