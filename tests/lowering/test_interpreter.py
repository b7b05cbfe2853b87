"""The graph interpreter keeps only live values: each intermediate is dropped after its
last use (jit(backend="numpy") of a long chain on large arrays held every one of them)."""
import weakref

import numpy as np

import registry
import tracer
import tracer.numpy as tnp
from tracer import run_kernel


def test_each_value_is_dropped_after_its_last_use():
    made = []

    def doubled(x):
        out = x * 2
        made.append(weakref.ref(out))
        return out

    def live(x):                # how many of doubled's results are still referenced
        return np.full_like(x, sum(r() is not None for r in made))
    for name, impl in (("t_doubled", doubled), ("t_live", live)):
        registry.register_shape_rule(name, lambda x: x)
        registry.register_kernel(name, "numpy", impl)
    try:
        def f(x):
            for _ in range(3):
                x = run_kernel("t_doubled", [x])
            return run_kernel("t_live", [tnp.tanh(x)]), x * 0     # x: read by two nodes
        live_then, _ = tracer.jit(f, backend="numpy")(np.ones(4))
        assert len(made) == 3
        np.testing.assert_array_equal(live_then, 1.0)   # only the one read again later
    finally:
        for name in ("t_doubled", "t_live"):
            registry.unregister_kernel(name, "numpy")
