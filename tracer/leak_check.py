"""JAX's leak checker (`jax.checking_leaks()`, the flag jax_check_tracer_leaks): with it
on, a trace that ends while one of its traced values is still referenced from outside
(a global list, a closure cell, an attribute) raises at once, naming where the value was
made and what holds it, instead of failing later where the leaked value is used.

Every trace (jit, make_graph, grad/vjp/jvp, vmap, lax bodies, checkpoint, custom rules)
is begun by tracer.core.new_trace, which reads the switch once: with it off, nothing
else runs. With it on, the trace is a `Watched` one, keeping a weak reference to each
tracer it makes; when it ends without an exception, after gc, the tracers still alive
that something other than the trace itself or a frame (a function's local) refers to
are reported. Values a function returns are not leaks: the trace has become a graph by then
and nothing outside holds them.
"""
import contextlib
import functools
import gc
import inspect
import types
import weakref

from tracer.value_conversions import made_at

_CODE = (type, types.ModuleType, types.FrameType, types.CodeType, types.BuiltinFunctionType)
ON = [False]            # the switch: read once per trace by tracer.core.new_trace


def set_checking(on):
    """Turn leak checking on or off for every trace begun afterwards (tracer.config's
    jax_check_tracer_leaks)."""
    ON[0] = bool(on)


def checking():
    return ON[0]


@contextlib.contextmanager
def checking_leaks():
    """As jax.checking_leaks(): leak checking on within the block, restored after."""
    before = ON[0]
    ON[0] = True
    try:
        yield
    finally:
        ON[0] = before


@functools.cache
def watching(trace_class):
    """`trace_class` that keeps a weak reference to every tracer it makes (cached: one
    subclass, made on first use)."""

    class Watched(trace_class):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.made = []

        def new_input(self, aval):
            out = super().new_input(aval)
            self.made.append(weakref.ref(out))
            return out

        def __repr__(self):     # JAX's name for a trace that stages ops into a graph
            return f"DynamicJaxprTrace (a graph traced at level {self.level})"

        def emit(self, *args, **kwargs):
            out = super().emit(*args, **kwargs)
            self.made.extend(map(weakref.ref, out if isinstance(out, tuple) else (out,)))
            return out

    return Watched


def check(trace):
    """Raise if any tracer `trace` made outlives it (called as it ends, without error)."""
    trace._broadcasts.clear()       # the trace's own cache of its tracers
    gc.collect()                    # what only a cycle keeps alive cannot be used
    alive = []
    for ref in trace.made:
        if ref() is not None:
            alive.append(ref())
    if not alive:
        return
    own = _owned(trace, type(alive[0]))
    own.add(id(alive))
    leaked = [t for t in alive if _outsiders(t, own)]
    if leaked:
        ignore = own | {id(leaked)}
        lines = "\n\n".join([_describe(t, ignore) for t in leaked])
        raise Exception(f"Leaked trace {trace!r}. Leaked tracer(s):\n\n{lines}\n\nA traced "
                        f"value must leave its function only by being returned: keep no "
                        f"reference to it in global state, an outer list or object, or a "
                        f"closure that outlives the call.")


def _outsiders(x, ignore):
    """What refers to `x` other than the objects in `ignore` (ids) and frames."""
    return [r for r in gc.get_referrers(x)
            if id(r) not in ignore and type(r) is not types.FrameType]


def _owned(trace, tracer_class):
    """ids of the trace and of what it holds (its nodes, lists, Known, the closures of
    the functions its nodes keep: a custom rule's), not entering tracers (an outer
    trace's, which it captured) nor modules and classes (everything is reachable from
    them)."""
    seen, todo = set(), [trace]
    while todo:
        x = todo.pop()
        if id(x) in seen or isinstance(x, _CODE) or type(x) is tracer_class:
            continue
        seen.add(id(x))
        if type(x) is types.FunctionType:     # not its globals: the module's
            todo.extend((x.__closure__ or ()) + (x.__defaults__ or ()))
        else:
            todo.extend(r for r in gc.get_referents(x) if gc.is_tracked(r))
    return seen


def _describe(tracer, ignore):
    """JAX's description of a leaked tracer: where it was made, then a chain of what
    refers to it (one referrer each step, as JAX's _why_alive)."""
    made = made_at(tracer)     # (not a generator here: its closure would refer to it)
    where = (f"was created on line:\n  {made}" if made else
             "was an argument of the traced function")
    lines = [f"{tracer!r}\nThis Tracer with object id {id(tracer)} {where}"]
    child, seen = tracer, set(ignore)
    while id(child) not in seen and type(child) is not types.ModuleType and len(lines) < 9:
        seen.add(id(child))
        parents = _outsiders(child, seen)
        seen.add(id(parents))
        if not parents:
            break
        parent = _collapse(parents[0], ignore)
        lines.append(f"<{type(child).__name__} {id(child)}> is referred to by "
                     f"{_container(parent, child)}")
        child = parent
    return "\n".join(lines)


def _collapse(parent, ignore):
    """A namespace's owner for its __dict__, a function for its closure cell."""
    up = _outsiders(parent, ignore)
    if type(parent) is dict:
        owner = next((r for r in up if getattr(r, "__dict__", None) is parent), None)
        return parent if owner is None else owner
    if type(parent) is types.CellType:
        closures = [r for r in up if type(r) is tuple]
        fns = [f for c in closures for f in gc.get_referrers(c)
               if type(f) is types.FunctionType and f.__closure__ is c]
        return fns[0] if fns else parent
    return parent


def _container(parent, child):
    """How `parent` holds `child`, in JAX's spelling: <list 1>[0], <A 2>.dct, a
    function's closed-over variable, a module's global."""
    name = f"<{type(parent).__name__} {id(parent)}>"
    if type(parent) is types.ModuleType:
        keys = [k for k, v in vars(parent).items() if v is child]
        return f"global {keys[0]!r} of module {parent.__name__}" if keys else parent.__name__
    if type(parent) is types.FunctionType:
        closure = inspect.getclosurevars(parent)
        keys = [k for k, v in {**closure.nonlocals, **closure.globals}.items() if v is child]
        if keys:
            return f"{name} ({parent.__name__}) closed-over variable {keys[0]}"
    if isinstance(getattr(parent, "__dict__", None), dict):
        keys = [k for k, v in vars(parent).items() if v is child]
        if keys:
            return f"{name}.{keys[0]}"
    if isinstance(parent, (list, tuple)):
        idx = [i for i, x in enumerate(parent) if x is child]
        if idx:
            return f"{name}[{idx[0]}]"
    if isinstance(parent, dict):
        keys = [k for k, v in parent.items() if v is child]
        if keys:
            return f"{name}[{keys[0]!r}]"
    return name
