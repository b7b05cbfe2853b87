"""The graph cache's key holds each node's kernel family: the family steers code
generation (a reduction fuses with its producer), so a graph whose kernel was declared in
another family must not reuse the code compiled before."""
import numpy as np

import registry
import tracer
import tracer.numpy as tnp
from lowering.llvm import graph_cache


def test_redeclaring_a_family_changes_the_key():
    g = tracer.make_graph(lambda x: tnp.sum(tnp.exp(x), axis=1))(np.ones((4, 8), np.float32))
    before = graph_cache.key_of(g)
    assert before is not None
    registry.declare_family("reduce_sum", "index_map")
    try:
        assert graph_cache.key_of(g) != before
    finally:
        registry.declare_family("reduce_sum", "reduction")
    assert graph_cache.key_of(g) == before
