"""`tracer.tree`: jax.tree's short names for tracer.tree_util's functions
(`tracer.tree.map(f, params)`)."""
from tracer.tree_util import (all_leaves, tree_all as all, tree_flatten as flatten,  # noqa: F401
                              tree_flatten_with_path as flatten_with_path,
                              tree_leaves as leaves,
                              tree_leaves_with_path as leaves_with_path, tree_map as map,
                              tree_map_with_path as map_with_path, tree_reduce as reduce,
                              tree_structure as structure, tree_transpose as transpose,
                              tree_unflatten as unflatten)

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "structure", "transpose", "unflatten"]
