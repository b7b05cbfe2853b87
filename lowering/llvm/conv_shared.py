"""Convolution as library functions, and the `conv` kernel's nodes that call them: one
compiled copy per dtype and number of spatial dimensions, taking the node's geometry at
run time, that every conv node of every module calls (linked by lowering.llvm.target,
compiled once per process and CPU and kept in the disk cache, as matmul_shared's library
is). It calls the matmul library's register tiles through pointers the node passes, so
the two compile at the same time and neither waits for the other to be linked.

A library's symbols name its dtype and a digest of the generating code (which includes
the matmul tiles' layout of A), so that a cached module never calls one of another ABI.
"""
import re

import numpy as np
from llvmlite import ir

from ir.errors import DTypeError
from lowering.llvm import caches, conv, irutil, matmul, matmul_shared
from lowering.llvm.irutil import I64, PTR
from lowering.llvm.protocol import KernelEmitter
from lowering.settings import settings


_SOURCE = caches.source_digest("irtext.py", "matmul.py", "conv.py", "conv_shared.py")[:12]
_DTYPES = {dt.name: dt for dt in matmul.ELEMENT_TYPES}
_DECLARED = re.compile(r'^declare [^\n]*@"?(tracer\.conv\.' + _SOURCE +
                       r'\.\w+\.\d+d)\.(?:pack|rows)"?\(', re.M)


def symbol(dtype, rank):
    """The library for `dtype` and `rank` spatial dimensions: its functions are
    `<symbol>.pack` and `<symbol>.rows` (conv.conv_ir)."""
    matmul.tile_geometry(dtype)         # an unsupported dtype fails here, naming it
    return f"tracer.conv.{_SOURCE}.{np.dtype(dtype).name}.{rank}d"


def libraries(module_text):
    """The conv libraries `module_text` calls (declared, not defined)."""
    return list(dict.fromkeys(_DECLARED.findall(module_text)))


def library(name, isa):
    """(the symbols it defines, its identity, a function making its module text) of the
    conv library `name` (of libraries()) on `isa`."""
    *_, dtype, rank = name.split(".")
    dt, r = _DTYPES[dtype], int(rank[:-1])
    return [f"{name}.pack", f"{name}.rows"], f"{name} {isa} {settings.vector_bytes}", \
        lambda: conv.conv_ir(name, dt, r)


def _arrays(ctx, values, ty):
    """A pointer to `values` (i64s or functions) in an array on the stack of the node's
    function, stored at its entry."""
    return irutil.entry_slot(ctx.b, ir.Constant(ir.ArrayType(ty, len(values)), values))


def _prepare(ctx, ins, outs, **attrs):
    s = conv.shape([x.aval for x in ins], [o.aval for o in outs], **attrs)
    fn = irutil.intrinsic(ctx.b.module, symbol(s.dtype, len(s.osp)) + ".pack",
                          ir.VoidType(), [PTR, PTR, PTR])
    ctx.b.call(fn, [ins[1].ptr, ctx.scratch, _arrays(ctx, s.geometry(), I64)])


def _emit(ctx, ins, outs, **attrs):
    s = conv.shape([x.aval for x in ins], [o.aval for o in outs], **attrs)
    module = ctx.b.module
    tiles = matmul_shared.declare_tiles(module, s.dtype)     # the library's tiles it calls
    fn = irutil.intrinsic(module, symbol(s.dtype, len(s.osp)) + ".rows",
                          ir.VoidType(), [PTR, PTR, PTR, I64, I64, PTR, PTR])
    ctx.b.call(fn, [ins[0].ptr, ctx.scratch, outs[0].ptr, ctx.start, ctx.end,
                    _arrays(ctx, s.geometry(), I64), _arrays(ctx, tiles, PTR)])


class _ConvEmitter(KernelEmitter):
    """Native for numeric dtypes the matmul tiles support and non-empty shapes; other
    nodes run the NumPy kernel inside the program (on purpose: no warning)."""

    def native(self, node):
        try:
            s = conv.shape([x.aval for x in node.inputs], [o.aval for o in node.outputs],
                           **node.attrs)
        except DTypeError:      # a dtype the tiles lack: the NumPy kernel runs it
            return False
        return s.native()


def _work(in_avals, out_avals, **attrs):
    s = conv.shape(in_avals, out_avals, **attrs)
    return 2.0 * s.m * s.kdim * s.og * s.groups / 50.0      # ~50 flop/ns on one core


KERNELS = {"conv": _ConvEmitter(_emit, fuse_inputs=False, prepare=_prepare, work=_work,
                                parallel=lambda i, o, **a: conv.shape(i, o, **a).m,
                                scratch=lambda i, o, **a: conv.shape(i, o, **a).scratch(),
                                epilogue=True)}
