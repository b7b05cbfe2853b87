"""Exporter table (kernel name, format) -> exporter.

Exporting a graph to another runtime's format is one more per-kernel table, like the
kernel and gradient registries: a user kernel becomes exportable by registering an
exporter, and a built-in one can be overridden the same way. The built-in ONNX exporters
are registered by lowering.onnx, whose docstring gives the protocol: an ONNX exporter is
`fn(g, inputs, attrs)`, building nodes with `g.op(op_type, *inputs, **attributes)` and
returning the name of each output.
"""
from ir.errors import ArgumentError, KernelNotFoundError
from registry.versioned import VersionedTable, check_kernel_name, did_you_mean


def _check_exporter(kernel, format, fn):
    check_kernel_name(kernel, "register_exporter")
    if not isinstance(format, str) or not format:
        raise ArgumentError(f"register_exporter({kernel!r}): format must be a non-empty "
                            f"string, got {format!r}")
    if not callable(fn):
        raise ArgumentError(f"register_exporter({kernel!r}, {format!r}): fn must be "
                            f"callable, got {type(fn).__name__}")


def missing_exporter(kernel, format, why=None):
    """The error for a kernel with no exporter to `format`; `why` says why it has none
    (a backend knows which of its kernels cannot be expressed in the format)."""
    have = [k for k, f in list(EXPORTERS.entries) if f == format]
    return KernelNotFoundError(
        f"no {format!r} exporter for kernel {kernel!r}."
        f"{f' It cannot be exported: {why}.' if why else did_you_mean(kernel, have)} "
        f"Register one with registry.register_exporter({kernel!r}, {format!r}, fn), "
        f"where fn(g, inputs, attrs) builds the nodes with "
        f"g.op(op_type, *inputs, **attributes) and returns the name of each output "
        f"(see lowering.onnx).")


# (kernel, format) -> exporter; register_exporter adds or replaces how a kernel is written
# in a format (e.g. "onnx")
EXPORTERS = VersionedTable(missing_exporter, _check_exporter)
register_exporter, unregister_exporter = EXPORTERS.register, EXPORTERS.unregister
get_exporter, has_exporter, exporters = EXPORTERS.get, EXPORTERS.has, EXPORTERS.keys


class OnnxOperator:
    """The ONNX exporter of a kernel that is one ONNX operator applied to its inputs."""

    def __init__(self, op_type, **attributes):
        self.op_type, self.attributes = op_type, attributes

    def __call__(self, g, inputs, attrs):
        return g.op(self.op_type, *inputs, **self.attributes)

    def __repr__(self):
        args = [repr(self.op_type)] + [f"{k}={v!r}" for k, v in self.attributes.items()]
        return f"OnnxOperator({', '.join(args)})"
