"""The three forms of an `llvm`-backend kernel impl, and what they are given.

Register any of them with `registry.register_kernel(name, "llvm", impl)`; a plain callable
is taken as a scalar body. Each impl emits LLVM IR with llvmlite's `ir.IRBuilder` (`ctx.b`)
at the point where the code generator needs the kernel's value, so what an impl emits is
part of the module text: re-registering an impl changes the text, hence the cache key.

* `ScalarKernel(body)` — elementwise (inputs and output of one shape). `body(ctx, *xs,
  **attrs)` gets one register value per input (i1 for bool, i32, i64, float, double) and
  returns the output's register value. It is emitted inside whatever loop consumes the
  node, so chains of scalar kernels fuse into one loop with no temporaries.
* `IndexMap(body)` — a gather: `body(ctx, index, read, **attrs)` gets the output position
  `index` (an `Index`) and `read(i, index_i)`, which emits input i's value at a position of
  input i's shape; it returns the output value. broadcast_to, reshape, transpose, slice,
  rev, pad and take are index maps, so they too disappear into their consumer's loop.
* `KernelEmitter(body)` — a whole kernel (reductions, matmul, scatter, concatenate).
  `body(ctx, ins, outs, **attrs)` emits complete loops: `ins` are `Operand`s (`.aval`,
  `.read(multi)`; with `fuse_inputs=True` a read inlines the input's elementwise producers,
  otherwise inputs are contiguous buffers with `.ptr`), `outs` are `Buffer`s (`.aval`,
  `.ptr`, `.store(multi, v)`, `.load(multi)`). With a `parallel` hook giving N work
  items, the body must do only items [ctx.start, ctx.end) so that calls can be split
  across threads (default: one item, never split). See the class for the other hooks.

`ctx` (see emit.Ctx) offers: `b` (the builder), `in_avals`/`out_avals` (with
`in_dtypes`, `out_dtype`, `out_aval`), `start`/`end`/`scratch` (whole kernels), `const(value,
dtype=None)`, `math(name, *xs)` (exp log log1p expm1 sin cos tanh erf pow, vectorizable),
`intrinsic(base, *xs)`, `convert(x, from, to)`, `external(symbol, ret, args, text)` (call
a function defined by LLVM IR text pasted into the module; `ctx.unique(stem)` makes module-
unique symbols), `fail_if(cond, message, error=KernelError)` (the call raises
error(message) after the kernel returns; clamp so the kernel stays in bounds),
`loop(start, end)` and `nest(shape, parallel=False)` (context managers yielding loop
indices), `index(shape, multi=|flat=)`, `slot(init)` (a mutable local) and `FAST`.
"""
from ir.errors import CodegenError
from lowering.llvm.irutil import i64


class ScalarKernel:
    """An elementwise kernel body that fuses into its neighbours' loop (see module doc).

    `cost` is a rough per-element cost (an add is 1, a transcendental ~20): the fuser
    materializes an expensive value rather than recompute it for several consumers."""
    kind = "scalar"

    def __init__(self, body, cost=1):
        self.body, self.cost = body, cost

    def emit(self, ctx, *xs, **attrs):
        return self.body(ctx, *xs, **attrs)

    def __repr__(self):
        return f"ScalarKernel({getattr(self.body, '__name__', self.body)})"


class IndexMap:
    """A gather-style kernel: output element = f(inputs at computed positions).

    `flat_ok(in_avals, out_aval, **attrs)` says whether the map works from the output's
    flat index alone (reshape does), which keeps the fused loop one flat loop."""
    kind = "map"
    cost = 0

    def __init__(self, body, flat_ok=None):
        self.body, self._flat_ok = body, flat_ok

    def flat_ok(self, in_avals, out_aval, attrs):
        return bool(self._flat_ok and self._flat_ok(in_avals, out_aval, **attrs))

    def emit(self, ctx, index, read, **attrs):
        return self.body(ctx, index, read, **attrs)

    def __repr__(self):
        return f"IndexMap({getattr(self.body, '__name__', self.body)})"


class KernelEmitter:
    """A whole-kernel emitter: emits the complete loops of one node (see module doc).

    Optional hooks, each called with (in_avals, out_avals, **attrs): `parallel` -> number
    of independent work items; `scratch` -> bytes of a per-call scratch buffer (`ctx.scratch`);
    `work` -> estimated nanoseconds per call (decides whether to split across threads;
    None: the default estimate, from the arithmetic of its fused reads);
    `grain` -> split pieces start on multiples of this many items (None: the default).
    `prepare(ctx, ins, outs, **attrs)`, if given, is emitted as its own function that runs
    per call before the work items (e.g. packing an operand into the scratch), on its own
    `prepare_items` work items (default 1; split across threads as the work items are).
    `epilogue=True` declares that the kernel has one output whose row i (out.reshape(-1,
    C)[i]) is work item i, written only by that item: the elementwise loops after it (bias,
    activation) may then run in its group, on each chunk of rows it has just written
    (lowering.llvm.epilogues)."""
    kind = "kernel"

    def __init__(self, body, fuse_inputs=True, parallel=None, scratch=None, work=None,
                 prepare=None, epilogue=False, grain=None, prepare_items=None):
        self.body, self.fuse_inputs, self.prepare = body, fuse_inputs, prepare
        self.epilogue = epilogue
        self._hooks = {"parallel": parallel, "scratch": scratch, "work": work, "grain": grain,
                       "prepare_items": prepare_items}

    def hook(self, name, in_avals, out_avals, attrs, default):
        fn = self._hooks[name]
        return fn(in_avals, out_avals, **attrs) if fn else default

    def emit(self, ctx, ins, outs, **attrs):
        return self.body(ctx, ins, outs, **attrs)

    def __repr__(self):
        return f"KernelEmitter({getattr(self.body, '__name__', self.body)})"


class NumpyInProgram(KernelEmitter):
    """The llvm impl of a kernel that runs its NumPy kernel inside the compiled program on
    purpose (LAPACK): like a kernel with no llvm impl, but declared, so no fallback
    warning. `native(node)` is the hook control flow (a region that needs Python) and
    convolution (shapes its emitter leaves to NumPy) also use."""

    def __init__(self, reason):
        super().__init__(None)
        self.reason = reason

    def native(self, node):
        return False

    def __repr__(self):
        return f"NumpyInProgram({self.reason!r})"


def as_impl(kernel, impl):
    """The protocol object of kernel's registered llvm impl (a plain callable is a scalar
    body)."""
    if getattr(impl, "kind", None) in ("scalar", "map", "kernel"):
        return impl
    if callable(impl):
        return ScalarKernel(impl)
    raise CodegenError(f"the llvm impl of kernel {kernel!r} is a {type(impl).__name__}; "
                       f"register a ScalarKernel, IndexMap, KernelEmitter (lowering.llvm) "
                       f"or a callable scalar body")


def strides(shape):
    """Row-major element strides."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


class Index:
    """A position in an array of static `shape`: its flat (row-major) offset and its
    per-axis coordinates, i64 values each computed on first use from the other. `key`
    identifies the position for memoizing values emitted at it."""
    __slots__ = ("b", "shape", "_flat", "_multi", "key")

    def __init__(self, b, shape, flat=None, multi=None):
        self.b, self.shape = b, tuple(shape)
        self._flat, self._multi = flat, (list(multi) if multi is not None else None)
        if multi is not None and len(self._multi) != len(self.shape):
            raise ValueError(f"index of rank {len(self._multi)} for shape {self.shape}")
        self.key = ("f", id(flat)) if flat is not None else \
            ("m",) + tuple(id(v) for v in self._multi)

    @property
    def flat(self):
        if self._flat is None:
            b, acc = self.b, None
            for v, s, d in zip(self._multi, strides(self.shape), self.shape):
                if d != 1:
                    term = v if s == 1 else b.mul(v, i64(s), flags=("nuw", "nsw"))
                    acc = term if acc is None else b.add(acc, term, flags=("nuw", "nsw"))
            self._flat = i64(0) if acc is None else acc
        return self._flat

    @property
    def multi(self):
        if self._multi is None:
            b, out = self.b, []
            for s, d in zip(strides(self.shape), self.shape):
                if d == 1:
                    out.append(i64(0))
                    continue
                q = self._flat if s == 1 else b.udiv(self._flat, i64(s))
                outer = all(x == 1 for x in self.shape[:len(out)])   # flat < size: q < d
                out.append(q if outer else b.urem(q, i64(d)))
            self._multi = out
        return self._multi
