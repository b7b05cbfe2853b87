"""Jitted functions (and custom_vjp functions) pickle as the function and options they
were made from, never as compiled code, so map-style work can go to a process pool: an
@jit function by its name, as pickle sends functions; a lambda or local function fails as
pickle fails for it."""
import functools
import multiprocessing
import pickle

import numpy as np
import pytest

import tracer
import tracer.numpy as tnp

X = np.linspace(-1.0, 1.0, 16)


@tracer.jit(backend="numpy")
def energy(x, scale):
    return tnp.sum(tnp.tanh(x * scale))


def power(x, n):
    return x ** n


cube = tracer.jit(power, static_argnums=1, donate_argnums=0)


@tracer.custom_vjp
def soft(x):
    return tnp.tanh(x)


soft.defvjp(lambda x: (tnp.tanh(x), x), lambda x, ct: (ct * 2.0,))


def test_a_process_pool_maps_jitted_functions():
    scales = [0.5, 1.0, 2.0]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        swept = pool.map(functools.partial(energy, X), scales)
        powers = pool.starmap(cube, [(X, 2), (X, 3)])
    np.testing.assert_allclose(swept, [energy(X, s) for s in scales], rtol=1e-12)
    np.testing.assert_allclose(powers, [X ** 2, X ** 3], rtol=1e-12)


def test_options_travel_and_compiled_code_does_not():
    cube(X.copy(), 3)
    assert cube.cache_info().size == 1
    data = pickle.dumps(cube)
    assert len(data) < 300 and b"power" in data       # the function's name, no code
    copy = pickle.loads(data)
    # here, the copy is jit of the same function with the same options: as every jit(f) of
    # one f in a process, it shares the signature cache; another process starts empty
    assert copy is not cube and copy.cache_info().size == 1
    assert (copy.static_argnums, copy.donate_argnums, copy.backend) == ((1,), (0,), None)
    np.testing.assert_allclose(copy(X.copy(), 3), X ** 3)
    numpy_copy = pickle.loads(pickle.dumps(tracer.jit(power, static_argnames="n",
                                                      backend="numpy")))
    assert numpy_copy.backend == "numpy" and numpy_copy.static_argnums == (1,)


def test_decorated_functions_pickle_by_name():
    assert len(pickle.dumps(energy)) < 100
    assert pickle.loads(pickle.dumps(energy)) is energy
    assert pickle.loads(pickle.dumps(soft)) is soft
    jitted = pickle.loads(pickle.dumps(tracer.jit(soft, backend="numpy")))
    assert tracer.grad(jitted)(0.3) == 2.0


def test_lambdas_and_local_functions_fail_naming_them():
    with pytest.raises((pickle.PicklingError, AttributeError), match="<lambda>"):
        pickle.dumps(tracer.jit(lambda x: x))

    def local(x):
        return x
    with pytest.raises((pickle.PicklingError, AttributeError), match="local"):
        pickle.dumps(tracer.jit(local))
