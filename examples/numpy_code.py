"""Plain NumPy code, traced: jit and grad of a function written with `import numpy as np`.

NumPy's own functions dispatch to tracer.numpy when they get traced values
(`__array_ufunc__` / `__array_function__`), so a model written for NumPy runs unchanged
under tracer.jit and tracer.grad; eagerly it is still ordinary NumPy.

Run:  python examples/numpy_code.py
"""
import numpy as np

import tracer


def log_likelihood(params, x, y):
    """A logistic regression's mean log-likelihood, in plain NumPy."""
    w, b = params["w"], params["b"]
    z = np.dot(x, w) + b
    log_p = -np.logaddexp(0.0, -z)              # log sigmoid(z)
    log_q = -np.logaddexp(0.0, z)               # log (1 - sigmoid(z))
    return np.mean(y * log_p + (1 - y) * log_q) - 0.01 * np.sum(np.square(w))


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 3))
    true_w = np.array([1.5, -2.0, 0.5])
    y = (x @ true_w + 0.3 * rng.standard_normal(200) > 0).astype(np.float64)
    params = {"w": np.zeros(3), "b": np.array(0.0)}

    eager = log_likelihood(params, x, y)                 # ordinary NumPy
    step = tracer.jit(tracer.value_and_grad(log_likelihood))
    value, grads = step(params, x, y)
    print(f"eager NumPy value {eager:.6f}, traced value {float(value):.6f}")
    fd = (log_likelihood({"w": params["w"] + [1e-6, 0, 0], "b": params["b"]}, x, y)
          - log_likelihood({"w": params["w"] - [1e-6, 0, 0], "b": params["b"]}, x, y)) / 2e-6
    print(f"d/dw0: traced gradient {grads['w'][0]:.6f}, finite difference {fd:.6f}")
    for _ in range(200):                                 # gradient ascent, jitted
        value, grads = step(params, x, y)
        params = {k: params[k] + 0.5 * grads[k] for k in params}
    print(f"after 200 steps: log-likelihood {float(value):.4f}, w = {np.round(params['w'], 2)}")
    print("the graph of the plain-NumPy function:")
    print(tracer.make_graph(log_likelihood)(params, x, y))


if __name__ == "__main__":
    main()
