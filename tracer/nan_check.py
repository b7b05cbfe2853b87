"""JAX's jax_debug_nans / jax_debug_infs: with one on, an eager op or a jitted call whose
float results hold a NaN (an Inf) raises FloatingPointError in JAX's words, "invalid
value (nan) encountered in ...", so the bad value is caught where it appears instead of
surfacing steps later.

A jitted call is compiled as a whole, so its outputs tell only that some node made one;
as JAX de-optimizes, the call's graph is then re-run node by node on the numpy backend
to name the first node that produced it (its kernel and the user's source line).

Off, nothing runs: eager ops read `ON` once per op; jitted calls, whose cached path reads
nothing, are sent down their slow path (as disable_jit does) only while a check is on.

`tracer.debug_nans(on)` and `tracer.debug_infs(on)` (tracer.config's jax_debug_nans and
jax_debug_infs flags, as JAX's top-level names are its) call `set_checking`.
"""
import numpy as np

from ir import Literal
from ir.types import dtype_kind
from tracer import jit_disabled
from tracer.sources import user_source

_KINDS = {"nan": np.isnan, "inf": np.isinf}
_on = {"nan": False, "inf": False}
ON = [False]            # either check on: read by tracer.core's eager ops and jit's calls


def set_checking(kind, on):
    """Turn the "nan" (jax_debug_nans) or "inf" (jax_debug_infs) check on or off."""
    if kind not in _KINDS:
        raise ValueError(f"nan_check.set_checking(kind, on): kind must be 'nan' or "
                         f"'inf', got {kind!r}")
    _on[kind] = bool(on)
    was, ON[0] = ON[0], _on["nan"] or _on["inf"]
    if ON[0] != was:        # every jitted call takes the slow path, which checks
        jit_disabled.slow_path(ON[0])


def checking(kind):
    """Whether the "nan" or "inf" check is on."""
    return _on[kind]


def _bad(values):
    """'nan' or 'inf' if a checked kind occurs in the float arrays `values`, else None."""
    for v in values:
        a = np.asarray(v)
        if dtype_kind(a.dtype) == "f":
            for kind, test in _KINDS.items():
                if _on[kind] and test(a).any():
                    return kind
    return None


def check_eager(name, out):
    """After eager kernel `name` ran: raise on a NaN/Inf result, naming the user's line."""
    kind = _bad(out if isinstance(out, (tuple, list)) else (out,))
    if kind:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name} (at "
                                 f"{user_source()})")


def check_call(what, graph, args, outs=None):
    """After `graph` (of `what`, e.g. "jit(f)") ran on `args` giving `outs`: raise on a
    NaN/Inf result, naming the first node that makes one when re-run node by node.
    Without `outs` (an eager transform's graph, which JAX would run op by op), every
    node's results are checked, not just the graph's."""
    kind = "nan" if outs is None else _bad(outs)
    if kind is None:
        return
    from ir.passes import inline_calls
    from lowering.interpreter import run_node
    g = inline_calls(graph)
    env = {id(v): c for v, c in zip(g.constvars, g.consts)}
    env.update((id(v), a) for v, a in zip(g.invars, args))
    for n in g.nodes:
        vals = run_node(n, [x.value if type(x) is Literal else env[id(x)]
                            for x in n.inputs])
        env.update((id(o), v) for o, v in zip(n.outputs, vals))
        found = _bad(vals)
        if found:
            raise FloatingPointError(
                f"invalid value ({found}) encountered in {what}: its first node to produce "
                f"one, re-run node by node on the numpy backend, is {n.kernel!r} created "
                f"at {n.source or 'an unknown line'}")
    if outs is None:
        return
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in {what}. Because debug_nans and/or "
        f"debug_infs is set, the de-optimized function (its graph node by node on the "
        f"numpy backend) was run in an attempt to get a more precise error message. "
        f"However, the de-optimized function did not produce invalid values during its "
        f"execution: the compiled code's optimizations may have made them, or they are "
        f"inputs or constants returned as they are (like jit(lambda x: tnp.nan)).")

