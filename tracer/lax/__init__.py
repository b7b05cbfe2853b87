"""jax.lax for CPU. Structured control flow: each primitive is one node holding its
sub-graphs (regions), run eagerly by a Python loop over a graph traced once, interpreted
the same way under jit, and differentiable in both modes to any order (while_loop in
reverse mode too). The rest of jax.lax's names (lax_*.py modules) are compositions of
existing kernels with jax.lax's strict rules: operands of one dtype, no implicit
broadcasting beyond scalars and size-1 dimensions.

    tracer.lax.fori_loop(0, 100, lambda i, x: x * 0.9 + i, x0)
    tracer.lax.scan(lambda h, x: (tnp.tanh(h @ W + x), h), h0, xs)
    tracer.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
"""
from tracer.lax.bitcast import bitcast_convert_type
from tracer.lax.collectives import (all_gather, all_to_all, axis_index, axis_size, pmax,
                                    pmean, pmin, ppermute, psum, psum_scatter)
from tracer.lax.cond import cond, switch
from tracer.lax.conv import conv_general_dilated
from tracer.lax.indexing import dynamic_index, dynamic_update_index, stop_gradient
from tracer.lax.loops import fori_loop, while_loop
from tracer.lax.scan import map, scan
from tracer.lax.window import reduce_window
from tracer.jit_placement import with_sharding_constraint
from tracer.lax.lax_elementwise import *  # noqa: F401,F403  (jax.lax's elementwise ops)
from tracer.lax.lax_shapes import *  # noqa: F401,F403
from tracer.lax.lax_slicing import *  # noqa: F401,F403
from tracer.lax.lax_gather import *  # noqa: F401,F403
from tracer.lax.lax_dot import *  # noqa: F401,F403
from tracer.lax.lax_reductions import *  # noqa: F401,F403
from tracer.lax.lax_sorting import *  # noqa: F401,F403
from tracer.lax.lax_special import *  # noqa: F401,F403
from tracer.lax.lax_incomplete import *  # noqa: F401,F403
from tracer.lax.lax_conv import *  # noqa: F401,F403
from tracer.lax import (lax_conv, lax_dot, lax_elementwise, lax_gather, lax_incomplete,
                        lax_reductions, lax_shapes, lax_slicing, lax_sorting, lax_special)
from tracer.lax import scatters  # noqa: F401  (registers the kernel of x.at[...] updates)
from tracer.lax import linalg  # noqa: F401  (jax.lax.linalg's solves and Cholesky)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "stop_gradient",
           "dynamic_index", "dynamic_update_index", "conv_general_dilated", "reduce_window",
           "bitcast_convert_type", "with_sharding_constraint"]
__all__ += [name for m in (lax_elementwise, lax_shapes, lax_slicing, lax_gather, lax_dot,
                           lax_reductions, lax_sorting, lax_special, lax_incomplete, lax_conv)
            for name in m.__all__]
__all__ += ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
            "all_to_all", "axis_index", "axis_size"]
