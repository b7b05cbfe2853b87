"""Transcendental functions as LLVM IR text (PLACEHOLDER: uses LLVM intrinsics, which the
backend scalarizes into libm calls; to be replaced by vectorizable polynomial IR)."""
import numpy as np

FUNCTIONS = ("exp", "log", "log1p", "expm1", "sin", "cos", "tanh", "erf", "pow")

_ATTRS = "alwaysinline nounwind willreturn memory(none) \"no-trapping-math\"=\"true\""
_FM = "nsz arcp contract afn"


def _ty(dtype):
    dt = np.dtype(dtype)
    if dt == np.float32:
        return "float", "f32"
    if dt == np.float64:
        return "double", "f64"
    raise TypeError(f"mathlib: no {dt} version; expected float32 or float64")


def declare(name: str, dtype) -> tuple[str, str]:
    """(symbol, ir_text): ir_text defines `define internal <T> @<symbol>(<T> %x)` (pow
    takes `(<T> %x, <T> %y)`), T = float for float32, double for float64; it is
    self-contained and is pasted once per module. It uses intrinsics without declaring
    them (LLVM 22 declares intrinsics implicitly; explicit declarations elsewhere in the
    module still parse), so several texts can share one module."""
    if name not in FUNCTIONS:
        raise KeyError(f"mathlib: unknown function {name!r}; known: {FUNCTIONS}")
    t, s = _ty(dtype)
    sym = f"tracer.{name}.{s}"
    one = "0x3FF0000000000000"
    decls, body = [], []
    if name in ("exp", "log", "sin", "cos", "pow"):
        decls.append(f"declare {t} @llvm.{name}.{s}({t}{', ' + t if name == 'pow' else ''})")
        args = f"{t} %x, {t} %y" if name == "pow" else f"{t} %x"
        body.append(f"%r = call {_FM} {t} @llvm.{name}.{s}({args})")
    elif name in ("log1p", "expm1", "tanh"):
        intr = {"log1p": "log", "expm1": "exp", "tanh": "tanh"}[name]
        decls.append(f"declare {t} @llvm.{intr}.{s}({t})")
        if name == "log1p":
            body += [f"%a = fadd {_FM} {t} %x, {one}", f"%r = call {_FM} {t} @llvm.log.{s}({t} %a)"]
        elif name == "expm1":
            body += [f"%a = call {_FM} {t} @llvm.exp.{s}({t} %x)", f"%r = fsub {_FM} {t} %a, {one}"]
        else:
            body.append(f"%r = call {_FM} {t} @llvm.tanh.{s}({t} %x)")
    else:  # erf: Abramowitz-Stegun 7.1.26 (~1e-7 abs), odd extension
        decls += [f"declare {t} @llvm.exp.{s}({t})", f"declare {t} @llvm.fabs.{s}({t})"]
        c = [float(np.float32(v)) if s == "f32" else v for v in
             (0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)]
        h = [_hex(v) for v in c]
        body += [f"%ax = call {t} @llvm.fabs.{s}({t} %x)",
                 f"%d = call {_FM} {t} @llvm.fma.{s}({t} {h[0]}, {t} %ax, {t} {one})",
                 f"%q = fdiv {_FM} {t} {one}, %d",
                 f"%p4 = call {_FM} {t} @llvm.fma.{s}({t} {h[5]}, {t} %q, {t} {h[4]})",
                 f"%p3 = call {_FM} {t} @llvm.fma.{s}({t} %p4, {t} %q, {t} {h[3]})",
                 f"%p2 = call {_FM} {t} @llvm.fma.{s}({t} %p3, {t} %q, {t} {h[2]})",
                 f"%p1 = call {_FM} {t} @llvm.fma.{s}({t} %p2, {t} %q, {t} {h[1]})",
                 f"%p0 = fmul {_FM} {t} %p1, %q",
                 f"%x2 = fmul {_FM} {t} %ax, %ax", f"%nx2 = fneg {_FM} {t} %x2",
                 f"%e = call {_FM} {t} @llvm.exp.{s}({t} %nx2)",
                 f"%pe = fmul {_FM} {t} %p0, %e", f"%y = fsub {_FM} {t} {one}, %pe",
                 f"%r = call {t} @llvm.copysign.{s}({t} %y, {t} %x)"]
        decls += [f"declare {t} @llvm.fma.{s}({t}, {t}, {t})", f"declare {t} @llvm.copysign.{s}({t}, {t})"]
    params = f"{t} %x, {t} %y" if name == "pow" else f"{t} %x"
    lines = [f"define internal {t} @{sym}({params}) #{_ATTR_GROUP} {{"] + \
        ["  " + b for b in body] + [f"  ret {t} %r", "}"]
    return sym, "\n".join(lines).replace(f"#{_ATTR_GROUP}", _ATTRS) + "\n"


_ATTR_GROUP = "ATTRS"


def _hex(v: float) -> str:
    import struct
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", float(v)))[0]
