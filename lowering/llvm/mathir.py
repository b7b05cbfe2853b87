"""A minimal builder of straight-line LLVM IR text for lowering.llvm.mathlib.

mathlib's functions are generated for float and double from one description, so they are
written against this small typed API (values carry their type; Python numbers take the
type of the other operand and are emitted as exact hex literals) instead of llvmlite.ir.
Every float instruction gets FAST_MATH: no nnan/ninf, so NaN and inf flow as in NumPy.
A Builder with `lanes` > 1 emits the same code on vectors of that many lanes (the vector
variants of a math library, which LoopVectorize calls).
"""
import struct
from collections import namedtuple

import numpy as np

FAST_MATH = "nsz arcp contract afn"
# float type -> (numpy type, same-width int type, mantissa bits, exponent bias, suffix)
TYPES = {"float": (np.float32, "i32", 23, 127, "f32"), "double": (np.float64, "i64", 52, 1023, "f64")}


def _const(v, ty):
    """LLVM literal of v as ty: floats as the exact 64-bit hex of the ty-rounded value."""
    if ty in TYPES:
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(TYPES[ty][0](v))))[0]
    return str(int(v))


Value = namedtuple("Value", "ref ty")  # an SSA value: its IR reference and its type


class Builder:
    """Appends instructions to one function body. Operands are Values or Python numbers,
    which take the type of the first Value operand."""

    def __init__(self, lanes=1):
        self.lines, self.lanes = [], lanes

    def t(self, ty):
        """The LLVM type of a value of element type `ty`."""
        return ty if self.lanes == 1 else f"<{self.lanes} x {ty}>"

    def _emit(self, rhs, ty):
        ref = f"%v{len(self.lines)}"
        self.lines.append(f"  {ref} = {rhs}")
        return Value(ref, ty)

    def c(self, v, ty):
        return Value(_const(v, ty) if self.lanes == 1 else f"splat ({ty} {_const(v, ty)})", ty)

    def _typed(self, *xs):
        ty = next(x.ty for x in xs if isinstance(x, Value))
        return ty, [x if isinstance(x, Value) else self.c(x, ty) for x in xs]

    def op(self, opcode, a, b):
        ty, (a, b) = self._typed(a, b)
        flags = f" {FAST_MATH}" if ty in TYPES else ""
        return self._emit(f"{opcode}{flags} {self.t(ty)} {a.ref}, {b.ref}", ty)

    def add(self, a, b): return self.op("fadd", a, b)
    def sub(self, a, b): return self.op("fsub", a, b)
    def mul(self, a, b): return self.op("fmul", a, b)
    def div(self, a, b): return self.op("fdiv", a, b)

    def neg(self, a):
        return self._emit(f"fneg {FAST_MATH} {self.t(a.ty)} {a.ref}", a.ty)

    def call(self, fn, *xs):
        ty, xs = self._typed(*xs)
        t = self.t(ty)
        args = ", ".join(f"{t} {x.ref}" for x in xs)
        suffix = TYPES[ty][4] if self.lanes == 1 else f"v{self.lanes}{TYPES[ty][4]}"
        return self._emit(f"call {FAST_MATH} {t} @llvm.{fn}.{suffix}({args})", ty)

    def fma(self, a, b, c): return self.call("fma", a, b, c)

    def two_sum(self, a, b):
        """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        return s, self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))

    def cmp(self, pred, a, b):
        ty, (a, b) = self._typed(a, b)
        return self._emit(f"{'fcmp' if ty in TYPES else 'icmp'} {pred} {self.t(ty)} {a.ref}, "
                          f"{b.ref}", "i1")

    def sel(self, cond, a, b):
        ty, (a, b) = self._typed(a, b)
        t = self.t(ty)
        return self._emit(f"select {self.t('i1')} {cond.ref}, {t} {a.ref}, {t} {b.ref}", ty)

    def cast(self, opcode, a, ty):
        return self._emit(f"{opcode} {self.t(a.ty)} {a.ref} to {self.t(ty)}", ty)

    def bits(self, a): return self.cast("bitcast", a, TYPES[a.ty][1])

    def to_int32(self, a):  # fptosi of NaN/inf is poison: freeze it (the lane is NaN anyway)
        return self._emit(f"freeze {self.t('i32')} {self.cast('fptosi', a, 'i32').ref}", "i32")

    def to_float(self, k, ty):  # small integer -> float (i64 -> double has no AVX2 instruction)
        return self.cast("sitofp", self.cast("trunc", k, "i32") if k.ty != "i32" else k, ty)

    def pow2(self, k, ty):
        """2**k for an i32 k in the normal exponent range of ty."""
        _, ity, mant, bias, _ = TYPES[ty]
        k = self.cast("sext", k, ity) if ity != "i32" else k
        return self.cast("bitcast", self.op("shl", self.op("add", k, bias), mant), ty)

    def poly(self, x, cs):
        """cs[0] + x*(cs[1] + x*(...)) by Horner with fma (coefficients: numbers or values)."""
        acc = cs[-1] if isinstance(cs[-1], Value) else self.c(cs[-1], x.ty)
        for c in reversed(cs[:-1]):
            acc = self.fma(acc, x, c)
        return acc
