"""The math library as shared functions: a module calling math functions more than
settings.share_at times, or any inside a loop body, calls one precompiled copy of each
instead of inlining a copy per call (lowering.llvm.mathlib's `declare`), because every inlined copy
is optimized and vectorized anew by LLVM.
"""
import functools
import re

import numpy as np

from lowering.llvm import caches, mathlib
from lowering.settings import settings

# A module calling math functions more than settings.share_at times calls one precompiled
# copy of each instead: a library module per function and dtype, compiled once per process (and
# disk-cached) and linked by lowering.llvm.target, with vector variants that LoopVectorize
# calls (vector-function-abi-variant). Inlined, every call is a copy that LLVM optimizes
# and vectorizes anew (a 64-op chain with 16 tanh: ~80 ms of LLVM time; calling the
# library, 12 ms, the library itself ~15 ms once), but a call costs 6-11% of run time
# against inlined code (9 tanh, or 3 each of sin, exp, tanh, over 4M floats), so small
# modules keep inlining. Except inside a loop body, whose compile time is what a loop's
# user waits for: its groups run on the carry's small static shape, which LLVM unrolls
# fully, so one call there can be several vectorized copies. W10's loop (one tanh on 64
# floats, 4 copies for AVX-512) compiles in 24 instead of 29 ms of CPU calling the
# library (AVX2: 26 instead of 30), and runs 6% slower on AVX-512, 13% faster on AVX2.
_LANES = {"avx512": (16, 8, 4), "avx2": (8, 4), "sse": (4,)}   # float32 lanes per ISA
_SYMBOLS = {f"tracer.{name}.{suffix}": (name, np.dtype(dtype)) for name in mathlib.FUNCTIONS
            for dtype, suffix in ((np.float32, "f32"), (np.float64, "f64"))}


_SOURCE = caches.source_digest("mathlib.py", "trig.py", "mathir.py", "mathlib_shared.py")
_DECLARED = re.compile(r'^declare [^\n]*@"?(tracer\.\w+\.f(?:32|64))"?\(', re.M)
# a function's name and body; lowering.llvm.control names the body of a loop (or of a
# checkpoint) `<kernel>.body` and the groups inside it `<kernel>.body.g<k>`
_FUNCTION = re.compile(r'^define [^\n]*?@"?([\w.]+)"?\((.*?)^}$', re.S | re.M)


def module_texts(texts, module_text, isa):
    """`texts` (symbol -> IR text pasted into a module) with the math functions declared
    instead, to be called in their library, if `module_text` calls them more than
    settings.share_at times or any inside a loop body; `isa` (cpu.Cpu.isa) decides the
    widths of their vector variants."""
    math = [sym for sym in texts if sym in _SYMBOLS]
    if not math or not _shares(module_text, [f'@"{sym}"(' for sym in math]):
        return texts
    shared = [_shared(*_SYMBOLS[sym], isa) for sym in math]
    variants = [f"ptr @{v}" for _, symbols, _ in shared for v in symbols[1:]]
    # unused until LoopVectorize calls them, the variants' declarations are kept alive
    used = (f"@llvm.compiler.used = appending global [{len(variants)} x ptr] "
            f"[{', '.join(variants)}], section \"llvm.metadata\"\n")
    return {**texts, **{sym: d for sym, (d, _, _) in zip(math, shared)}, "llvm.compiler.used": used}


def _shares(module_text, calls):
    """Whether `module_text` makes more than settings.share_at of `calls` (each is also
    declared once), or any inside a loop body."""
    if sum(module_text.count(call) - 1 for call in calls) > settings.share_at:
        return True
    return any(call in m.group(2) for m in _FUNCTION.finditer(module_text)
               if ".body" in m.group(1) for call in calls)


def libraries(module_text):
    """The math functions `module_text` calls in their library (declared, not defined)."""
    return [sym for sym in _DECLARED.findall(module_text) if sym in _SYMBOLS]


def library(symbol, isa):
    """(the symbols it defines, its identity, a function making its module text) of the
    library of math function `symbol` on `isa`. The identity (function, ISA, this
    package's mathlib source) keys its cache entries, so that a process finding it on
    disk does not generate its text."""
    name, dt = _SYMBOLS[symbol]
    return _symbols(symbol, dt, isa), f"{symbol} {isa} {_SOURCE}", lambda: _shared(
        name, dt, isa)[2]


def _lanes(dt, isa):
    return [n * 4 // dt.itemsize for n in _LANES[isa]]


def _symbols(symbol, dt, isa):
    """The scalar function's symbol, then its vector variants' (`<symbol>.v<n>`)."""
    return [symbol] + [f"{symbol}.v{n}" for n in _lanes(dt, isa)]


@functools.lru_cache(maxsize=None)
def _shared(name, dt, isa):
    """(declarations, symbols, library text) of function `name` for `dt` on `isa`: the
    scalar function and its variants on <n x T> (`<symbol>.v<n>`)."""
    ty, params, symbol = mathlib.signature(name, dt)
    lanes = _lanes(dt, isa)
    variants = ",".join(f"_ZGV_LLVM_N{n}{'v' * len(params)}_{symbol}({symbol}.v{n})"
                        for n in lanes)
    heads = [(1, f"{ty} @{symbol}", f'{mathlib.ATTRS} "vector-function-abi-variant"="{variants}"')] + [
        (n, f"<{n} x {ty}> @{symbol}.v{n}", mathlib.ATTRS) for n in lanes]
    declarations = "".join(
        f"declare {head}({', '.join([ty if n == 1 else f'<{n} x {ty}>'] * len(params))}) "
        f"{attrs}\n" for n, head, attrs in heads)
    library = "".join(mathlib.define(name, ty, params, n, head) for n, head, _ in heads)
    return declarations, _symbols(symbol, dt, isa), library
