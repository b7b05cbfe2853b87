"""ONNX rules of the collectives (psum, all_gather, ... over a named axis): ONNX has no
positions to communicate between, so each raises, saying what to export instead."""
from ir.errors import KernelError


def _unexportable(kernel):
    def export(g, inputs, attrs):
        raise KernelError(f"to_onnx: {kernel} over axis {attrs['axis_name']!r} is a "
                          f"collective between positions of a named axis, which ONNX cannot "
                          f"express; export the function outside vmap(axis_name=)/shard_map "
                          f"or per position")
    return export


RULES = {k: _unexportable(k) for k in ("psum", "pmax", "pmin", "all_gather", "psum_scatter",
                                         "ppermute", "all_to_all", "axis_index")}
