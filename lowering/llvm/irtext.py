"""Function bodies as LLVM IR text, for the generated kernels of lowering.llvm.matmul and
lowering.llvm.conv: fresh SSA names, i64 arithmetic that folds Python ints (so one
generator serves sizes known when generating and sizes given at run time), counted loops,
masked loads and stores, and the conversions of half floats to and from the type computed
in."""
import itertools
import re

SHORT = {"float": "f32", "double": "f64", "half": "f16"}    # intrinsic name suffixes
BYTES = {"half": 2, "bf16": 2, "float": 4, "double": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
         "ptr": 8}
_ATTRS = 'nounwind "no-trapping-math"="true"'
KEPT = "!llvm.loop !KEPT"      # marks a loop LLVM must not unroll (see kept_loops)


class Body:
    """Lines of one function body: fresh SSA names, i64 arithmetic that folds Python ints,
    counted loops, and loads/stores of the operands' memory type `mem` (`mload`,
    `mstore`, `mgep`) converting from/to the type `elem` computed in."""

    def __init__(self, elem, mem=None, unrolled=True):
        self.elem, self.lines, self.count, self.block = elem, [], 0, "%entry"
        self.latch = "" if unrolled else f", {KEPT}"     # on each loop's back edge
        self.mem = mem or elem
        self.mty = "i16" if self.mem == "bf16" else self.mem     # its LLVM type

    def fresh(self, stem="t"):
        self.count += 1
        return f"%{stem}{self.count}"

    def __call__(self, text, stem="t"):
        """Emit `%new = text` and return %new."""
        name = self.fresh(stem)
        self.lines.append(f"  {name} = {text}")
        return name

    def emit(self, text):
        self.lines.append(f"  {text}")

    def label(self, name):
        self.lines.append(f"{name[1:]}:")
        self.block = name

    def add(self, x, y):
        if isinstance(x, int) and isinstance(y, int):
            return x + y
        return x if y == 0 else y if x == 0 else self(f"add nuw nsw i64 {x}, {y}")

    def mul(self, x, y):
        if isinstance(x, int) and isinstance(y, int):
            return x * y
        if 0 in (x, y) or 1 in (x, y):
            return 0 if 0 in (x, y) else y if x == 1 else x
        return self(f"mul nuw nsw i64 {x}, {y}")

    def div(self, x, y, up=False):
        """x // y (rounded up if `up`) of non-negative i64 operands, y > 0."""
        if up:
            x = self.add(x, y - 1) if isinstance(y, int) else self(f"sub nsw i64 {self.add(x, y)}, 1")
        return x // y if isinstance(x, int) and isinstance(y, int) else self(f"udiv i64 {x}, {y}")

    def clamp(self, fn, x, y):
        """llvm.smin / llvm.smax of two i64 operands."""
        if isinstance(x, int) and isinstance(y, int):
            return (min if fn == "smin" else max)(x, y)
        return self(f"call i64 @llvm.{fn}.i64(i64 {x}, i64 {y})")

    def mask(self, width, count):
        """The `lanes` of a masked load or store: the first `count` (an i64 operand) of
        `width` lanes; a constant count stays an int (a constant mask)."""
        if isinstance(count, int):
            return None if count >= width else count
        one = self(f"insertelement <{width} x i64> poison, i64 {count}, i64 0")
        splat = self(f"shufflevector <{width} x i64> {one}, <{width} x i64> poison, "
                     f"<{width} x i32> zeroinitializer")
        lanes = ", ".join(f"i64 {j}" for j in range(width))
        return self(f"icmp slt <{width} x i64> <{lanes}>, {splat}")

    def load(self, ty, ptr, lanes=None):
        """Load `ty`; given `lanes`, only the first `lanes` elements of vector `ty` (the rest 0)."""
        align = BYTES[_scalar(ty)]          # claim no more than the element size
        if lanes is None:
            return self(f"load {ty}, ptr {ptr}, align {align}")
        suffix, mask = self._masked(ty, lanes)
        return self(f"call {ty} @llvm.masked.load.{suffix}.p0(ptr align {align} {ptr}, {mask}, "
                    f"{ty} zeroinitializer)")

    def store(self, ty, x, ptr, lanes=None):
        """Store `ty`; given `lanes`, only the first `lanes` elements of vector `ty`."""
        align = BYTES[_scalar(ty)]
        if lanes is None:
            self.emit(f"store {ty} {x}, ptr {ptr}, align {align}")
            return
        suffix, mask = self._masked(ty, lanes)
        self.emit(f"call void @llvm.masked.store.{suffix}.p0({ty} {x}, ptr align {align} {ptr}, "
                  f"{mask})")

    @staticmethod
    def _masked(ty, lanes):
        """("v16f32", "<16 x i1> <i1 true, ...>") for vector type `ty` = "<16 x float>";
        `lanes` is a count or a mask value (Body.mask)."""
        width = int(ty[1:].split(" x")[0])
        bits = lanes if isinstance(lanes, str) else "<" + ", ".join(
            ["i1 true"] * lanes + ["i1 false"] * (width - lanes)) + ">"
        return f"v{width}{SHORT.get(_scalar(ty), _scalar(ty))}", f"<{width} x i1> {bits}"

    def gep(self, base, index, ty=None):
        """Pointer to element `index` of `base` (elements of `ty`, default the compute type)."""
        if index == 0:
            return base
        return self(f"getelementptr inbounds {ty or self.elem}, ptr {base}, i64 {index}", "p")

    def mgep(self, base, index):
        return self.gep(base, index, self.mty)

    def mload(self, width, ptr, lanes=None):
        """Load `width` (None: one) memory elements as the compute type."""
        x = self.load(_vec(width, self.mty), ptr, lanes)
        if self.mem == self.elem:
            return x
        ty, i32 = _vec(width, self.elem), _vec(width, "i32")
        if self.mem == "half":
            return self(f"fpext {_vec(width, 'half')} {x} to {ty}")
        wide = self(f"zext {_vec(width, 'i16')} {x} to {i32}")
        return self(f"bitcast {i32} {self(f'shl {i32} {wide}, {_splat(width, 16)}')} to {ty}")

    def mstore(self, width, x, ptr, lanes=None):
        """Store `width` (None: one) compute values rounded to the memory type (bfloat16:
        to nearest even, NaN kept NaN)."""
        f32, i32 = _vec(width, "float"), _vec(width, "i32")
        if self.mem == "half":
            x = self(f"fptrunc {f32} {x} to {_vec(width, 'half')}")
        elif self.mem == "bf16":
            bits = self(f"bitcast {f32} {x} to {i32}")
            odd = self(f"and {i32} {self(f'lshr {i32} {bits}, {_splat(width, 16)}')}, "
                       f"{_splat(width, 1)}")
            rounded = self(f"add {i32} {bits}, {self(f'add {i32} {odd}, {_splat(width, 0x7FFF)}')}")
            nan = self(f"fcmp uno {f32} {x}, {x}")
            quiet = self(f"or {i32} {bits}, {_splat(width, 0x400000)}")
            pick = self(f"select {_vec(width, 'i1')} {nan}, {i32} {quiet}, {i32} {rounded}")
            top = self(f"lshr {i32} {pick}, {_splat(width, 16)}")
            x = self(f"trunc {i32} {top} to {_vec(width, 'i16')}")
        self.store(_vec(width, self.mty), x, ptr, lanes)

    def loop(self, lo, hi, body):
        """for i in range(lo, hi): body(i)   (lo, hi: i64 operands; the range may be empty)."""
        if isinstance(lo, int) and isinstance(hi, int) and hi <= lo:
            return
        head, inner, done = self.fresh("head"), self.fresh("body"), self.fresh("done")
        i, nxt, pre = self.fresh("i"), self.fresh("i"), self.block
        self.emit(f"br label {head}")
        self.label(head)
        phi = len(self.lines)
        self.lines.append(None)  # the phi, filled in once the latch block is known
        self.emit(f"br i1 {self(f'icmp slt i64 {i}, {hi}')}, label {inner}, label {done}")
        self.label(inner)
        body(i)
        self.emit(f"{nxt} = add nuw nsw i64 {i}, 1")
        self.emit(f"br label {head}{self.latch}")
        self.lines[phi] = f"  {i} = phi i64 [ {lo}, {pre} ], [ {nxt}, {self.block} ]"
        self.label(done)

    def branches(self, flag, emit):
        """emit(True) if the i1 `flag` is set, else emit(False), then join."""
        yes, no, done = self.fresh("yes"), self.fresh("no"), self.fresh("joined")
        self.emit(f"br i1 {flag}, label {yes}, label {no}")
        for label, value in ((yes, True), (no, False)):
            self.label(label)
            emit(value)
            self.emit(f"br label {done}")
        self.label(done)

    def text(self, header, attrs=""):
        return "\n".join([f"define {header} {attrs} {_ATTRS} {{", "entry:", *self.lines,
                          "  ret void", "}", ""])


def kept_loops(text):
    """Module `text` with each loop marked KEPT given loop metadata of its own (LLVM wants
    a distinct node per loop) that disables unrolling it."""
    ids = itertools.count(1)
    text = re.sub("!KEPT", lambda _: f"!{next(ids)}", text)
    count = next(ids) - 1
    return "\n".join([text, '!0 = !{!"llvm.loop.unroll.disable"}',
                       *(f"!{i} = distinct !{{!{i}, !0}}" for i in range(1, count + 1)), ""])


def _scalar(ty):
    """The element type of IR type `ty` ("<16 x half>" -> "half")."""
    return ty[1:-1].split(" x ")[1] if ty.startswith("<") else ty


def _vec(width, elem):
    return elem if width is None else f"<{width} x {elem}>"


def _splat(width, value):
    """An i32 constant, splat over `width` lanes (None: a scalar)."""
    return f"{value}" if width is None else f"splat (i32 {value})"
