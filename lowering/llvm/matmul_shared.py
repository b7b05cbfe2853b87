"""Matmul as library functions: one compiled copy per dtype, taking its sizes and the
operands' storage (either may be stored transposed) at run time, that every matmul node
of every module calls (linked by lowering.llvm.target, compiled once per process and CPU
and kept in the disk cache, as the math library is). Emitted per node, each matmul's
register tiles were optimized and emitted by LLVM anew: ~100-200 ms a node, 72 in a
24-layer MLP's value_and_grad; one library per pair of transposes cost a transformer's
training step three libraries' compile time instead of one.

Its register tiles are public too: the conv library (lowering.llvm.conv_shared) gathers
its rows of A and calls them, through pointers a convolution node passes it.

A library's symbols name its dtype and a digest of the generating code, so that a cached
module never calls a library of another ABI.
"""
import re

import numpy as np
from llvmlite import ir

from lowering.llvm import caches, irutil, matmul
from lowering.settings import settings


_SOURCE = caches.source_digest("irtext.py", "matmul.py", "matmul_pack.py",
                               "matmul_shared.py")[:12]
_DTYPES = {dt.name: dt for dt in matmul.ELEMENT_TYPES}
_DECLARED = re.compile(r'^declare [^\n]*@"?(tracer\.mm\.' + _SOURCE +
                       r'\.\w+)\.(?:[nt][nt]|\d+xe\d+)"?\(', re.M)


def symbol(dtype, transpose_a=False, transpose_b=False):
    """The row function of the library for `dtype` and the operands' storage; its pack
    function is `<symbol>_pack` (see matmul.matmul_ir)."""
    matmul.tile_geometry(dtype)         # an unsupported dtype fails here, naming it
    return f"{_base(np.dtype(dtype))}.{'nt'[transpose_a]}{'nt'[transpose_b]}"


def tiles(dtype):
    """The library's public register tiles for `dtype`: every row size (of
    matmul.a_block's, reading A rows its stride apart) and vector count."""
    nv = matmul.tile_geometry(dtype)[3]
    return [matmul.tile_name(f"{_base(np.dtype(dtype))}.{r}", v)
            for r in matmul.a_block(dtype)[0] for v in range(1, nv + 1)]


def declare_tiles(module, dtype):
    """The library's tiles for `dtype` (tiles' order), declared in llvmlite `module`
    (their parameters those of matmul.TILE_PARAMS), for code that calls them."""
    types = {"ptr": irutil.PTR, "i64": irutil.I64, "i1": irutil.I1}
    params = [types[p.split()[0]] for p in matmul.TILE_PARAMS.split(", ")]
    return [irutil.intrinsic(module, name, ir.VoidType(), params) for name in tiles(dtype)]


def _base(dtype):
    return f"tracer.mm.{_SOURCE}.{dtype.name}"


def libraries(module_text):
    """The matmul libraries `module_text` calls (declared, not defined), one per dtype."""
    return list(dict.fromkeys(_DECLARED.findall(module_text)))


def library(name, isa):
    """(the symbols it defines, its identity, a function making its module text) of the
    matmul library `name` (of libraries()) on `isa`."""
    dtype = _DTYPES[name.split(".")[3]]
    return [f"{name}.{s}{tail}" for s in matmul.STORAGES for tail in ("", "_pack")] + \
        tiles(dtype), \
        f"{name} {isa} {settings.vector_bytes}", lambda: matmul.matmul_ir(name, dtype)
