"""JAX's ahead-of-time stages of a jitted function, and the shape-only helpers beside them.

    traced = jit(f).trace(*args)      # Traced: .jaxpr (the traced ir.Graph), .out_info
    lowered = jit(f).lower(*args)     # Lowered: .as_text(), .graph, .compile()
    compiled = lowered.compile()      # Compiled: called with the same kinds of arguments

Arguments may be arrays, scalars or anything with `.shape` and `.dtype`
(`ShapeDtypeStruct`). `jit(f).lower` is the jit cache's own entry, so it is compiled once
with the function's calls. Static arguments are fixed by `trace`/`lower`: a Compiled takes
only the dynamic ones (as in JAX), checks their pytree, shapes and dtypes against those it
was compiled for, and raises a TypeError naming each mismatch.
"""
import numpy as np

from ir.errors import ArgumentError, ArgumentValueError, CompilerOptionError
from tracer.core import Tracer
from tracer.pytree import LEAF, flatten, unflatten
from tracer.tree_util import PyTreeDef
from tracer.signature import Call, donated_leaves, leaf_aval, leaf_names


class ShapeDtypeStruct:
    """An array's shape and dtype without data, as `jax.ShapeDtypeStruct`: what
    `eval_shape` returns, and an argument `trace`, `lower` and `eval_shape` accept."""
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type=False, sharding=None):
        if dtype is None:       # np.dtype(None) would be float64: JAX's ValueError
            raise ArgumentValueError(f"ShapeDtypeStruct: dtype must be specified, got None "
                                     f"(shape {shape!r}); pass one, e.g. np.float32")
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape and
                self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    @classmethod
    def of(cls, aval):
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)


class ArgInfo:
    """One argument leaf of a stage: its `shape`, `dtype` and whether it is `donated`."""
    __slots__ = ("_aval", "donated")

    def __init__(self, aval, donated):
        self._aval, self.donated = aval, donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self):
        return f"ArgInfo({self._aval}, donated={self.donated})"


def block_until_ready(x):
    """`x` itself, as `jax.block_until_ready`: every result is finished when it is
    returned here (NumPy arrays, which cannot gain JAX's `.block_until_ready()` method)."""
    return x


# JAX's options are XLA's: the names it documents beside XLA's own `xla_*` flags
JAX_OPTIONS = frozenset({"exec_time_optimization_effort", "memory_fitting_effort",
                         "optimization_level", "memory_fitting_level"})


def check_compiler_options(options, where):
    """`options` checked as JAX's `compiler_options`: a dict of XLA's option names (`xla_*`
    and JAX_OPTIONS) to bool, int, float or str values. They tune XLA, which no backend
    here is: accepted so code written for JAX runs, recorded, with no effect on the code.
    Any other name is a CompilerOptionError (a RuntimeError, as JAX's JaxRuntimeError "No
    such compile option", and a ValueError)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ArgumentError(f"{where}: compiler_options must be a dict of option names to "
                            f"values, got {type(options).__name__}")
    for name, value in options.items():
        if not isinstance(name, str) or not (name.startswith("xla_") or name in JAX_OPTIONS):
            raise CompilerOptionError(
                f"{where}: No such compile option: {name!r}. compiler_options takes XLA's "
                f"options (xla_* and {', '.join(sorted(JAX_OPTIONS))}), which this project's "
                f"backends accept and ignore; its own code generator's settings are "
                f"lowering.settings")
        if not isinstance(value, (bool, int, float, str)):
            raise ArgumentError(f"{where}: compiler option {name!r} must be a bool, int, "
                                f"float or str, got {type(value).__name__}")
    return dict(options)


class _Stage:
    """What every stage knows of one signature: `args_info` (a pytree of ArgInfo over
    (dynamic positional arguments, dynamic keyword arguments)), `in_tree`, `out_tree`,
    `out_info` (a pytree of ShapeDtypeStruct) and `fun_name`."""

    def __init__(self, jitted, args, kwargs):
        call = Call(f"jit({jitted.__name__})", jitted.fun, args, kwargs,
                    jitted.static_argnums, jitted.static_argnames)
        self._avals = [leaf_aval(x, jitted.__name__) for x in call.leaves]
        dyn_args, dyn_kw = unflatten(call.tree, call.leaves)
        _, self._in_td = flatten((tuple(dyn_args), dyn_kw))
        self.in_tree = PyTreeDef(self._in_td)
        self._names = leaf_names(jitted.fun, args, call.static, dyn_kw)
        donated = set(donated_leaves(call, jitted.donate_argnums, jitted.donate_argnames,
                                     jitted.static_argnames))
        self.args_info = unflatten(self._in_td, [ArgInfo(a, i in donated)
                                                  for i, a in enumerate(self._avals)])
        self.fun_name = jitted.__name__

    @property
    def in_avals(self):
        return unflatten(self._in_td, self._avals)

    @property
    def donate_argnums(self):
        """The donated leaves' numbers, in the order of `in_tree`."""
        return tuple(i for i, a in enumerate(flatten(self.args_info)[0]) if a.donated)

    def _out(self, graph, out_td, f0_out):
        """The results' types; `f0_out`: their float0 leaves, which are no graph outputs."""
        self._out_td, self.out_tree, self._f0_out = out_td, PyTreeDef(out_td), f0_out
        self._out_avals = graph.out_avals
        f0_info = {i: ShapeDtypeStruct(x.shape, x.dtype) for i, x in f0_out.values.items()}
        self.out_info = unflatten(out_td, f0_out.merge(
            [ShapeDtypeStruct.of(a) for a in graph.out_avals], f0_info))


class Traced(_Stage):
    """`jit(f).trace(*args, **kwargs)`: the traced graph (`jaxpr`, as JAX names it, or
    `graph`) and the result's `out_info`; `lower()` lowers it for the jitted backend."""

    def __init__(self, jitted, args, kwargs):
        leaves, _, call = jitted._signature(args, kwargs)
        graph, out_tree, _, _, (_, f0_out) = jitted._trace(call or args, leaves)
        graph.out_tree = out_tree
        super().__init__(jitted, args, kwargs)
        self._jitted, self._args, self._kwargs = jitted, args, kwargs
        self.jaxpr = self.graph = graph
        self._out(graph, out_tree, f0_out)

    def lower(self):
        return self._jitted.lower(*self._args, **self._kwargs)


class Lowered(_Stage):
    """`jit(f).lower(*args, **kwargs)`: the backend's program for this signature.
    `graph` is the optimized graph it was made from, `as_text()` its code, `compile()` a
    Compiled; attributes of the backend's program (`steps`, `run`, ...) read through."""

    def __init__(self, jitted, args, kwargs, entry):
        super().__init__(jitted, args, kwargs)
        self.program = jitted._lower(entry)
        self.graph, self._traced = self.program.graph, entry.traced
        self._backend = jitted.backend or "llvm"
        self._out(entry.traced, entry.out_tree, entry.float0[1])

    def __getattr__(self, name):
        if name.startswith("__") or name == "program":
            raise AttributeError(name)
        return getattr(self.program, name)

    def __repr__(self):
        return f"<Lowered {self.fun_name}: {self.program!r}>"

    def compiler_ir(self, dialect=None):
        """The object `as_text(dialect)` prints: the backend's program (None, or the
        backend's name), the optimized graph ("hlo") or the graph as traced ("stablehlo")."""
        backend = self._backend
        irs = {None: self.program, backend: self.program, "hlo": self.graph,
               "stablehlo": self._traced}
        if dialect not in irs:
            raise ArgumentValueError(
                f"jit({self.fun_name}).lower(...).as_text: unknown dialect {dialect!r}; "
                f"this backend has None or {backend!r} (its code), 'hlo' (the optimized "
                f"graph, as XLA's HLO is its optimized graph) and 'stablehlo' (the graph as "
                f"traced, the compiler's input, as JAX's StableHLO is XLA's)")
        return irs[dialect]

    def as_text(self, dialect=None, *, debug_info=False):
        """The program's code (LLVM IR on llvm), or a graph's text: see compiler_ir.
        `debug_info` is JAX's; the text here has no source locations to add."""
        ir = self.compiler_ir(dialect)
        return ir.as_text() if ir is self.program else str(ir)

    def cost_analysis(self):
        """{'flops', 'bytes accessed'} estimated from the optimized graph: see cost."""
        return cost(self.graph)

    def compile(self, compiler_options=None):
        """A Compiled for this signature (the same program: jit compiled it already);
        `compiler_options` as jit's."""
        where = f"jit({self.fun_name}).lower(...).compile"
        return Compiled(self, check_compiler_options(compiler_options, where))


class Compiled:
    """`jit(f).lower(*args).compile()`: called with the lowered call's dynamic arguments
    (static ones were fixed by `lower`), of the same pytree structure, shapes and dtypes
    (a Python scalar may stand for any dtype it converts to, as in a jitted call)."""

    def __init__(self, lowered, options):
        self._lowered = lowered
        self.compiler_options = options
        for name in ("in_tree", "out_tree", "args_info", "out_info", "fun_name",
                     "in_avals", "donate_argnums", "program"):
            setattr(self, name, getattr(lowered, name))
        self._in_td, self._out_td = lowered._in_td, lowered._out_td

    def __call__(self, *args, **kwargs):
        leaves, tree = flatten((args, kwargs))
        where = f"compiled {self.fun_name}"
        if tree != self._in_td:
            raise ArgumentError(
                f"{where}: Function compiled with input pytree does not match the input "
                f"pytree it was called with: compiled for {self.in_tree}, called with "
                f"{PyTreeDef(tree)}; pass the dynamic arguments it was "
                f"lowered with (static ones are fixed), or lower it again")
        mismatches = []
        for i, (x, want) in enumerate(zip(leaves, self._lowered._avals)):
            if isinstance(x, Tracer):
                raise ArgumentError(
                    f"{where}: Cannot apply transformations to a function lowered and "
                    f"compiled for a particular signature. Detected argument of Tracer "
                    f"type {type(x).__name__} (argument leaf {i}); transform the jitted "
                    f"function instead")
            got = leaf_aval(x, where)
            if got.shape != want.shape or got.dtype != want.dtype and not (
                    got.weak_type and np.result_type(want.dtype, x) == want.dtype):
                mismatches.append(f"Argument {self._lowered._names[i]!r} compiled with "
                                  f"{_typename(want)} and called with {_typename(got)}")
        if mismatches:
            raise ArgumentError(f"{where}: Argument types differ from the types for which "
                                f"this computation was compiled. The mismatches are:\n"
                                + "\n".join(mismatches))
        outs = self._lowered._f0_out.merge(self.program.run(leaves))
        return outs[0] if self._out_td == LEAF else unflatten(self._out_td, outs)

    def as_text(self):
        return self.program.as_text()

    def cost_analysis(self):
        return self._lowered.cost_analysis()

    def memory_analysis(self):
        """{'argument_size_in_bytes', 'output_size_in_bytes'} of one call."""
        return {"argument_size_in_bytes": _nbytes(self._lowered._avals),
                "output_size_in_bytes": _nbytes(self._lowered._out_avals)}

    def runtime_executable(self):
        """The backend's program (its `run(leaves)` runs it)."""
        return self.program

    def __repr__(self):
        return f"<Compiled {self.fun_name}: {self.program!r}>"


def _nbytes(avals):
    return sum(a.size * a.dtype.itemsize for a in avals)


def _typename(aval):
    """float32[2,3], as JAX names a type in its messages."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def cost(graph):
    """{'flops', 'bytes accessed'} of one run of `graph`, estimated: one flop per output
    element of each node (a matmul's 2*K, K its contracted length), those of its regions
    for a node that has some (a scan's body `length` times); the bytes its top-level
    nodes read and write."""
    nbytes = sum(v.aval.size * v.aval.dtype.itemsize
                 for n in graph.nodes for v in (*n.inputs, *n.outputs))
    return {"flops": _flops(graph), "bytes accessed": float(nbytes)}


def _flops(graph):
    total = 0.0
    for n in graph.nodes:
        if n.regions:
            times = dict(n.attr_items).get("length", 1) if n.kernel == "scan" else 1
            total += times * sum(_flops(g) for g in n.regions)
        else:
            k = 2 * n.inputs[0].aval.shape[-1] if n.kernel == "matmul" else 1
            total += k * sum(v.aval.size for v in n.outputs)
    return total


def check_valued(name, leaves):
    """An ArgumentError naming the first leaf of a jitted call that is a shape and dtype
    without values (a ShapeDtypeStruct): it traces, but cannot run."""
    for k, x in enumerate(leaves):
        if isinstance(x, ShapeDtypeStruct):
            raise ArgumentError(f"jit({name}): argument leaf {k} is a {x}, a shape and dtype "
                                f"without values, which cannot run: pass an array, or use "
                                f"jit({name}).eval_shape(...), .trace(...) or .lower(...) "
                                f"for abstract arguments") from None
