"""Effectful nodes (registry.declare_effects) survive dce, cse and constant folding: a
side effect happens once per traced occurrence, even when its result is unused."""
import numpy as np
import pytest

import registry
import tracer
import tracer.numpy as tnp
from ir import cse, dce, fold_constants
from lowering.interpreter import run_node

KERNEL = "test_effect_log"
LOG = []


def _log(x):
    LOG.append(np.array(x))
    return np.array(x)


@pytest.fixture(autouse=True)
def effect_kernel():
    registry.register_shape_rule(KERNEL, lambda x: x)
    registry.register_kernel(KERNEL, "numpy", _log)
    registry.declare_effects(KERNEL)
    LOG.clear()
    yield
    registry.declare_effects(KERNEL, False)
    registry.unregister_kernel(KERNEL, "numpy")
    registry.unregister_shape_rule(KERNEL)


def log(x):
    return tracer.run_kernel(KERNEL, [x])


def kernels(g):
    return [n.kernel for n in g.nodes]


def test_dce_keeps_an_effect_whose_result_is_unused():
    g = tracer.make_graph(lambda x: (log(x), tnp.exp(x), -x)[2])(np.ones(3))
    assert kernels(dce(g)) == [KERNEL, "neg"]


def test_cse_keeps_each_occurrence_of_an_effect():
    g = tracer.make_graph(lambda x: (log(x), log(x), tnp.exp(x), tnp.exp(x)))(np.ones(3))
    assert kernels(cse(g)) == [KERNEL, KERNEL, "exp"]


def test_fold_constants_never_runs_an_effect():
    c = np.arange(3.0)

    def f(x):           # nodes on the constant c (eagerly they would just run)
        emit = tracer.core.current_trace().emit
        return x + emit(KERNEL, [c], {}) + emit("exp", [c], {})
    g = tracer.make_graph(f)(np.ones(3))
    folded = fold_constants(g, lambda n, vals: run_node(n, vals, "numpy"))
    assert kernels(folded) == [KERNEL, "add", "add"] and LOG == []


def test_a_region_holding_an_effect_is_not_dead():
    def f(x):
        tracer.lax.scan(lambda c, x: (c, log(x)), 0.0, x)
        return -x
    assert kernels(dce(tracer.make_graph(f)(np.ones(3)))) == ["scan", "neg"]


@pytest.mark.filterwarnings("ignore:kernel .test_effect_log. has no llvm impl")
@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_jit_runs_every_effect_once_per_call(backend):
    def f(x):
        log(x)
        log(x)
        return x + 1.0
    x = np.arange(3.0)
    np.testing.assert_array_equal(tracer.jit(f, backend=backend)(x), x + 1)
    assert len(LOG) == 2
    for v in LOG:
        np.testing.assert_array_equal(v, x)
