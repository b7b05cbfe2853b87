"""The one dispatch path and the tracer.

`run_kernel(name, inputs, attrs)`: if no input is a `Tracer`, look up the active
backend's kernel and run it on NumPy arrays; otherwise apply the kernel's shape rule and
emit a node into the innermost trace among the inputs. Evaluating a graph is just
`run_kernel` per node, so evaluating on tracers inlines the graph into the outer trace:
that is why jit, grad, vjp and jvp compose without special cases.

Threads: the trace stack and the kernel records of jit builds are per thread, so threads
may trace and call transformed functions at once; a traced value used outside the trace
(or thread) that made it is a "leaked tracer" error. The active backend is process-wide.
"""
import contextlib
import threading

import numpy as np

import registry
from ir import (Graph, Literal, Node, ShapedArray, Var, aval_of, check_dtype, dtype_kind,
                scalar_array)
from ir.graph import is_region
from ir.passes import effectful, inline_calls, reads_axis
from ir.errors import ArgumentError, DTypeError, KernelError, TracerError
from lowering.interpreter import own
from registry.shape_rules import apply_shape_rule, infer_avals
from registry.tables import KERNELS
from tracer import leak_check, nan_check
from tracer.float0s import float0
from tracer.sources import user_source
from tracer.value_conversions import ValueConversions, leaked_error

_impls = KERNELS.entries       # (kernel, backend) -> impl, read on hot paths

_state = {"backend": "numpy"}
_nans_on = nan_check.ON      # tracer.nan_check's switch, read once per eager op


class _ThreadList(threading.local):
    """A list whose contents belong to the calling thread: a trace is built by one
    thread, so another thread's traces and records must be invisible to it. This module
    uses `.items`; the list methods serve code that treats it as a plain list."""

    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def append(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def remove(self, x):
        self.items.remove(x)


_stack = _ThreadList()        # this thread's active traces, innermost last
_collectors = _ThreadList()   # sets recording the kernels this thread's jit builds touch


def note_kernel(name):
    for c in _collectors.items:
        c.add(name)


@contextlib.contextmanager
def recording_kernels():
    """Collect the names of the kernels emitted (or whose gradients are consulted) by this
    thread while the block runs: what a jit cache entry depends on."""
    touched = set()
    _collectors.append(touched)
    try:
        yield touched
    finally:
        _collectors.pop()    # LIFO; not remove(): equal sets would match


# ---- eager ----------------------------------------------------------------------------

def set_backend(name):
    """Select the backend that eager ops and eager grad/vjp/jvp run on.

    Process-wide, not per thread: it is configuration, set once, and a per-thread choice
    would make a worker thread silently run on another backend than the thread that
    configured it. jit uses its own `backend` argument (default llvm)."""
    _state["backend"] = registry.check_backend(name)


def get_backend():
    return _state["backend"]


def native(arr):
    """`arr` in the machine's byte order: big-endian data (FITS, network files) is
    converted where it enters, since kernels and compiled code read native numbers only."""
    return arr if arr.dtype.isnative else arr.astype(arr.dtype.newbyteorder("="))


def as_array(x, where="run_kernel"):
    """A supported-dtype NumPy array (or scalar) from a concrete value, else ArgumentError."""
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        arr = x
    elif isinstance(x, (bool, int, float)):
        arr = scalar_array(x, where)
    else:
        try:
            arr = np.asarray(x)
        except TracerError:
            raise
        except Exception as e:
            raise ArgumentError(f"{where}: cannot convert {type(x).__name__} to an array "
                                f"({type(e).__name__}: {e})") from None
    arr = native(arr)
    if arr.dtype == float0:
        raise DTypeError(f"{where}: float0s do not support any operations by design: a "
                         f"float0 array is the tangent of an int or bool value and holds no "
                         f"data; leave it out, or use zeros of a numeric dtype instead")
    if dtype_kind(arr.dtype) in "OUSV":    # objects, strings, bytes, records: not numbers
        raise ArgumentError(f"{where}: expected an array or a number: {str(x)[:60]!r} of "
                            f"type {type(x)} is not a valid JAX type")
    check_dtype(arr.dtype, where)
    return arr


def _describe(values):
    return ", ".join(str(aval_of(v)) for v in values)


def run_eager(name, arrays, attrs, backend=None):
    """Run one kernel on concrete arrays on `backend` (default: the active one)."""
    backend = backend or _state["backend"]
    eager = registry.tables.backend_eager(backend)
    impl = None if eager is not None else (_impls.get((name, backend))
                                           or registry.get_kernel(name, backend))
    try:
        out = eager(name, arrays, attrs) if eager is not None else impl(*arrays, **attrs)
    except TracerError:
        raise
    except Exception as e:
        raise KernelError(f"kernel {name!r} on backend {backend!r} failed for inputs "
                          f"({_describe(arrays)}) attrs {attrs}: {type(e).__name__}: {e}") from e
    return out


def _eager(name, inputs, attrs):
    """Validate with the shape rule (if any) first, so bad inputs get the same error as
    under tracing, then run, then check the kernel kept the rule's promise."""
    arrays = [as_array(x, name) for x in inputs]
    want = None
    if name in registry.tables.SHAPE_RULES.entries:
        want = infer_avals(name, [ShapedArray(a.shape, a.dtype) for a in arrays], attrs)
    out = run_eager(name, arrays, attrs)
    if _nans_on[0]:
        nan_check.check_eager(name, out)
    if want is not None:
        outs = out if isinstance(out, tuple) else (out,)
        got = tuple(ShapedArray(np.shape(o), np.asarray(o).dtype) for o in outs)
        if got != want:
            raise KernelError(f"kernel {name!r} on backend {_state['backend']!r} returned "
                              f"{list(got)} but its shape rule says {list(want)}")
    if isinstance(out, tuple):       # results never alias the arguments (nor each other)
        return tuple(own(out, arrays))
    return own([out], arrays)[0]


# ---- tracing --------------------------------------------------------------------------

def _frozen_copy(arr):
    """A read-only private copy: a traced constant must not change when the caller later
    mutates the array it came from, nor be mutated through a view a program returns."""
    out = np.array(arr)
    out.flags.writeable = False
    return out


class Trace:
    """Collects the nodes of one graph being built."""

    def __init__(self, level, known=None):
        self.level = level
        self.known = known      # tracer.concrete.Known: the inputs' values, if concrete
        self.nodes = []
        self.invars = []
        self.capvars, self.captured = [], []   # outer tracers used here, and their vars
        self.constvars, self.consts = [], []
        self._lifted = {}
        self._broadcasts = {}   # (dtype, bytes, shape) -> tracer: see broadcast_scalar

    def new_input(self, aval):
        v = Var(aval)
        self.invars.append(v)
        return Tracer(self, v)

    def lift(self, x):
        """The graph value (Var or Literal) for any input of a node."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._var
            if x._trace.level > self.level:
                raise leaked_error(x)
            check_live(x)
            key = id(x)
            if key not in self._lifted:
                v = Var(x.aval.strip_weak())
                self.capvars.append(v)
                self.captured.append(x)
                self._lifted[key] = (v, x)
            return self._lifted[key][0]
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
            return Literal(scalar_array(x, "run_kernel"))
        arr = as_array(x)
        if arr.ndim == 0:
            return Literal(arr)
        key = id(x)
        if key not in self._lifted:
            v = Var(ShapedArray(arr.shape, arr.dtype))
            self.constvars.append(v)
            self.consts.append(_frozen_copy(arr))
            self._lifted[key] = (v, x)
        return self._lifted[key][0]

    def emit(self, name, inputs, attrs, source=None):
        vals, avals = [], []
        for x in inputs:        # (a loop: on 3.11 a comprehension costs a call)
            v = x._var if type(x) is Tracer and x._trace is self else self.lift(x)
            vals.append(v)
            avals.append(v.aval)
        avals, multi = apply_shape_rule(name, avals, attrs)
        outs = tuple(map(Var, avals))
        self.nodes.append(Node(name, vals, outs, attrs, source or user_source(3)))
        note_kernel(name)
        if multi:
            return tuple([Tracer(self, o) for o in outs])
        return Tracer(self, outs[0])

    def broadcast_scalar(self, x, shape):
        """A broadcast_to node of 0-d constant `x`, one per value and shape in this trace:
        an op with a Python scalar needs one each time (W7's chain: 48 of its 128 nodes,
        each traced at the cost of the op itself), and CSE would merge them anyway."""
        key = (x.dtype.str, x.tobytes(), shape)
        out = self._broadcasts.get(key)
        if out is None:
            out = self._broadcasts[key] = self.emit("broadcast_to", [x], {"shape": shape})
        return out

    def to_graph(self, outs):
        outvars = [self.lift(o) for o in outs]
        return Graph(self.invars + self.capvars, outvars, self.nodes,
                     self.constvars, self.consts)


class Tracer(ValueConversions):
    """A value inside a function being traced: it knows its type, not its data; what
    Python's conversions of it do is tracer.value_conversions'."""
    __slots__ = ("_trace", "_var", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, trace, var):
        self._trace = trace
        self._var = var

    aval = property(lambda self: self._var.aval)
    shape = property(lambda self: self._var.aval.shape)
    dtype = property(lambda self: self._var.aval.dtype)
    ndim = property(lambda self: len(self._var.aval.shape))
    size = property(lambda self: self._var.aval.size)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d traced value")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"Tracer<{self.aval}>"

    def __hash__(self):
        return id(self)

    def _check_live(self):
        check_live(self)


def current_trace():
    """This thread's innermost active trace, or None."""
    return _stack.items[-1] if _stack.items else None


def check_live(x):
    """Raise unless tracer `x` belongs to a trace that is active in this thread."""
    stack, level = _stack.items, x._trace.level
    if level >= len(stack) or stack[level] is not x._trace:
        raise leaked_error(x)


def innermost_trace(inputs):
    """The trace to emit into for these inputs (None: all concrete), checked active."""
    found = None
    for x in inputs:
        if isinstance(x, Tracer) and (found is None or x._trace.level > found._trace.level):
            found = x
    if found is None:
        return None
    check_live(found)
    return found._trace


def run_kernel(name, inputs, attrs=None):
    """Dispatch kernel `name` (like TensorFlow.js's `engine().runKernel`).

    Concrete inputs run the active backend's impl; traced inputs emit a node. Returns an
    array (or tuple of arrays for multi-output kernels) or the matching tracers.
    """
    if not isinstance(inputs, (list, tuple)):
        raise ArgumentError(f"run_kernel({name!r}, inputs, attrs): inputs must be a list or "
                            f"tuple of arrays, got {type(inputs).__name__}")
    if attrs is not None and not isinstance(attrs, dict):
        raise ArgumentError(f"run_kernel({name!r}, inputs, attrs): attrs must be a dict, got "
                            f"{type(attrs).__name__}")
    attrs = attrs or {}
    trace = innermost_trace(inputs)
    if trace is None:
        if _stack.items and attrs and _effects(name, attrs):   # runs when the trace's
            return _stack.items[-1].emit(name, inputs, attrs)  # program does, not now
        return _eager(name, inputs, attrs)
    return trace.emit(name, inputs, attrs)


def _effects(name, attrs):
    """Whether a node of `name` with `attrs` has a side effect (a loop whose body calls
    tracer.debug.print) or reads a named axis (a loop whose body calls lax.axis_index):
    traced on constants, it is still emitted, not run while tracing."""
    return registry.has_effects(name) or any(
        effectful(m) or reads_axis(m) for v in attrs.values() if is_region(v)
        for g in (v if type(v) is tuple else (v,)) for m in g.nodes)


class new_trace:
    """Context manager pushing a fresh trace on the stack; `known`, if given, is what the
    trace knows of its inputs' values (a tracer.concrete.Known)."""

    def __init__(self, known=None):
        self.known = known

    def __enter__(self):
        kind = leak_check.watching(Trace) if leak_check.ON[0] else Trace
        self.trace = kind(len(_stack.items), self.known)
        _stack.items.append(self.trace)
        return self.trace

    def __exit__(self, exc_type, *exc):
        _stack.items.pop()
        if type(self.trace) is not Trace and exc_type is None:
            leak_check.check(self.trace)


def trace_flat(fun, in_avals, known=None):
    """Trace `fun(*tracers) -> list of values` to a Graph.

    Returns (graph, captured): the graph's inputs are the explicit inputs followed by
    one input per outer-trace value that `fun` closed over; `captured` lists those values.
    `known`: a tracer.concrete.Known of the arguments `fun` stands for, when the caller
    has them (an eager transform), so Python control flow on traced values sees theirs.
    """
    with new_trace(known) as t:     # (no local holds the outputs: see tracer.leak_check)
        graph = t.to_graph(fun(*[t.new_input(a) for a in in_avals]))
    return graph, list(t.captured)


def inline(graph, args, trace, attrs_of=None, given=None):
    """Emit graph's nodes into `trace` on `args`; returns the value environment: id(var)
    -> value, and id(node) -> the tuple of all outputs emitted for that node.

    `attrs_of(node)`, if given, gives the attrs to emit each node with: autodiff asks for
    forms that return more outputs (the node's own first). `given` maps id(node) to
    that node's outputs computed elsewhere (a checkpoint's saved residuals): such a node
    is not emitted. Nodes are emitted even when all their inputs are constants, so a
    broadcast literal stays a node instead of becoming a baked-in array (folding is the
    optimizer's job)."""
    env = {id(v): c for v, c in zip(graph.constvars, graph.consts)}
    env.update((id(v), a) for v, a in zip(graph.invars, args))
    for n in graph.nodes:
        out = given.get(id(n)) if given else None
        if out is None:
            out = trace.emit(n.kernel, [x.value if type(x) is Literal else env[id(x)]
                                        for x in n.inputs],
                             n.attrs if attrs_of is None else attrs_of(n), n.source)
        out = env[id(n)] = out if isinstance(out, tuple) else (out,)
        for o, val in zip(n.outputs, out):
            env[id(o)] = val
    return env


def read(env, x):
    return x.value if type(x) is Literal else env[id(x)]


def eval_graph(graph, args, trace=None):
    """Evaluate a graph on concrete values with the active backend's kernels (a call's
    sub-graph is inlined, so its kernels run there too), or on tracers by inlining it into
    their trace (or into `trace`, if given). This is where every transform's concrete
    primals enter a graph, so they become arrays here: Python scalars (weakly typed in the
    graph), NumPy scalars, array likes and big-endian arrays are valid arguments of every
    transform, as in JAX."""
    trace = trace or innermost_trace(args)
    if trace is None:
        from lowering.interpreter import evaluate
        args = [x if type(x) is np.ndarray and x.dtype.isnative else as_array(x, "eval_graph")
                for x in args]
        outs = evaluate(inline_calls(graph), args, _state["backend"])
        if _nans_on[0]:
            nan_check.check_call("a transformed function (grad, vjp, jvp...)", graph, args)
        return outs
    env = inline(graph, args, trace)
    return [read(env, v) for v in graph.outvars]
