"""The generated matmul IR, compiled directly with llvmlite and checked against numpy.matmul:
odd shapes around the tile sizes, empty and unit dims, batches, split row ranges, wrapping
integers, and buffers flush against PROT_NONE guard pages (any stray access faults)."""
import ctypes
import itertools
import mmap
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

llvm = pytest.importorskip("llvmlite.binding")

from ir.errors import DTypeError, ShapeError  # noqa: E402
from lowering.llvm import matmul  # noqa: E402
from lowering.settings import settings as tracer_settings  # noqa: E402

DTYPES = [np.float32, np.float64, np.int32, np.int64]
_ROWS = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                         *[ctypes.c_int64] * 6)
_PACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 6)


class _Jit:
    def __init__(self):
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        triple = llvm.get_process_triple()
        self.tm = llvm.Target.from_triple(triple).create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
            opt=3, reloc="default", codemodel="jitdefault", jit=True)
        backing = llvm.parse_assembly("")
        backing.triple = triple
        self.ee = llvm.create_mcjit_compiler(backing, self.tm)
        self.count = itertools.count()
        self.kernels = {}

    def _kernel(self, dtype, **transposed):
        """The (pack, rows) ctypes functions of matmul_ir for dtype and the operands'
        storage; the library is compiled once per dtype and tile geometry (it takes its
        sizes and the storage at run time)."""
        key = (np.dtype(dtype), tracer_settings.vector_bytes)
        if key not in self.kernels:
            sym = f"mm{next(self.count)}"
            mod = llvm.parse_assembly(matmul.matmul_ir(sym, dtype))
            mod.triple, mod.data_layout = self.tm.triple, str(self.tm.target_data)
            mod.verify()
            pb = llvm.create_pass_builder(self.tm, llvm.create_pipeline_tuning_options(speed_level=3))
            pb.getModulePassManager().run(mod, pb)
            self.ee.add_object_file(llvm.ObjectFileRef.from_data(self.tm.emit_object(mod)))
            self.kernels[key] = sym
        sym = self.kernels[key] + "." + "".join(
            "nt"[transposed.get(f"transpose_{x}", False)] for x in "ab")
        address = self.ee.get_function_address
        return _PACK(address(sym + "_pack")), _ROWS(address(sym))

    def build_many(self, shapes, dtype, **transposed):
        """[(pack, rows)] per (batch, m, k, n): the kernel with that shape bound,
        pack(b, scratch) (its items packed in three pieces, the middle one ending past the
        last item, as split calls do) and rows(a, scratch, c, start, end)."""
        pack, rows = self._kernel(dtype, **transposed)

        def packed(b, s, batch, k, n):
            rows, items = matmul.pack_plan(batch, k, n, dtype, transposed.get("transpose_b", False))
            for lo, hi in ((items // 2, items + 5), (0, items // 3), (items // 3, items // 2)):
                pack(b, s, batch, k, n, rows, lo, hi)

        def bound(batch, m, k, n):
            return (lambda b, s: packed(b, s, batch, k, n),
                    lambda a, s, c, lo, hi: rows(a, s, c, lo, hi, batch, m, k, n))
        return [bound(*shape) for shape in shapes]

    def build(self, batch, m, k, n, dtype):
        return self.build_many([(batch, m, k, n)], dtype)[0]


@pytest.fixture(scope="module")
def jit():
    return _Jit()


def _operands(batch, m, k, n, dtype, seed=0):
    rng, dt = np.random.default_rng(seed), np.dtype(dtype)
    if dt.kind == "f":
        return tuple(rng.standard_normal(shape).astype(dt) for shape in ((batch, m, k), (batch, k, n)))
    big = np.iinfo(dt)  # full range: products and sums overflow and must wrap like NumPy's
    return tuple(rng.integers(big.min, big.max, shape, dtype=dt, endpoint=True)
                 for shape in ((batch, m, k), (batch, k, n)))


def _check(c, a, b):
    if c.dtype.kind in "iu":
        np.testing.assert_array_equal(c, np.matmul(a, b))
        return
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    bound = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
    eps = np.finfo(c.dtype).eps
    assert np.all(np.abs(c - ref) <= 4 * eps * bound + 1e-300), np.abs(c - ref).max()


def _run(fns, batch, m, k, n, dtype, cuts=(), transpose_a=False, transpose_b=False):
    """C via pack + the row function over consecutive ranges split at `cuts`; A and B
    are passed stored transposed as the flags say."""
    (pack, rows), (a, b) = fns, _operands(batch, m, k, n, dtype)
    stored_a, stored_b = (np.ascontiguousarray(x.swapaxes(1, 2)) if t else x
                          for x, t in ((a, transpose_a), (b, transpose_b)))
    c = np.full((batch, m, n), 7, dtype)  # garbage that must be overwritten, also when k == 0
    scratch = np.empty(matmul.scratch_bytes(batch, m, k, n, dtype), np.uint8)
    pack(stored_b.ctypes.data, scratch.ctypes.data)
    bounds = [0, *cuts, batch * m]
    for lo, hi in zip(bounds, bounds[1:]):
        rows(stored_a.ctypes.data, scratch.ctypes.data, c.ctypes.data, lo, hi)
    _check(c, a, b)


def _tile_sizes(dtype):
    _, vl, mr, nv = matmul.tile_geometry(dtype)
    return mr, vl * nv, matmul.KC_BYTES // np.dtype(dtype).itemsize


@pytest.mark.parametrize("dtype, transposed", [
    *((d, {}) for d in DTYPES),
    # A and B stored transposed (the flags act independently): A read in place (one
    # panel) or copied, B packed from its columns
    *((d, {"transpose_a": True, "transpose_b": True}) for d in (np.float32, np.float64))],
    ids=lambda x: np.dtype(x).name if not isinstance(x, dict) else "AtBt" if x else "")
@pytest.mark.parametrize("vector_bytes", [32, 64], ids=["avx2-tiles", "avx512-tiles"])
def test_edge_shapes(jit, dtype, vector_bytes, transposed, monkeypatch):
    # both tile geometries run on any x86-64 host (LLVM splits vectors wider than the CPU's)
    monkeypatch.setattr(tracer_settings, "vector_bytes", vector_bytes)
    mr, nr, kc = _tile_sizes(dtype)
    shapes = [(1, 0, 3, 5), (1, 3, 0, 5), (1, 3, 5, 0), (2, 0, 0, 0), (1, 1, 1, 1), (3, 1, 7, 1),
              (1, mr, 3, nr), (2, mr + 1, 5, nr + 1), (1, mr - 1, 2, nr - 1),
              (2, 2 * mr + 5, 9, 2 * nr + 3), (1, 5, kc + 1, 3), (2, 3, 2 * kc + 3, nr + 5)]
    for shape, fns in zip(shapes, jit.build_many(shapes, dtype, **transposed)):
        _run(fns, *shape, dtype, **transposed)
        # two chunks, cut inside a tile
        _run(fns, *shape, dtype, cuts=(shape[0] * shape[1] // 2 + 1,), **transposed)


@settings(max_examples=15, deadline=None)
@given(dtype=st.sampled_from(DTYPES), batch=st.integers(1, 3), m=st.integers(0, 40),
       k=st.integers(0, 40), n=st.integers(0, 70), cut=st.floats(0, 1))
def test_random_shapes_and_splits(jit, dtype, batch, m, k, n, cut):
    _run(jit.build(batch, m, k, n, dtype), batch, m, k, n, dtype, cuts=(int(cut * batch * m),))


def test_row_ranges_are_clipped_and_empty_ranges_write_nothing(jit):
    batch, m, k, n = 2, 5, 4, 3
    pack, rows = jit.build(batch, m, k, n, np.float64)
    a, b = _operands(batch, m, k, n, np.float64)
    c = np.full((batch, m, n), np.nan)
    scratch = np.empty(matmul.scratch_bytes(batch, m, k, n, np.float64), np.uint8)
    pack(b.ctypes.data, scratch.ctypes.data)
    for lo, hi in [(4, 4), (6, 3), (-5, -1), (10, 99)]:
        rows(a.ctypes.data, scratch.ctypes.data, c.ctypes.data, lo, hi)
    assert np.isnan(c).all()
    rows(a.ctypes.data, scratch.ctypes.data, c.ctypes.data, -3, 99)
    _check(c, a, b)


def test_concurrent_row_chunks(jit):
    batch, m, k, n = 2, 123, 77, 45
    pack, rows = jit.build(batch, m, k, n, np.float32)
    a, b = _operands(batch, m, k, n, np.float32)
    c = np.zeros((batch, m, n), np.float32)
    scratch = np.empty(matmul.scratch_bytes(batch, m, k, n, np.float32), np.uint8)
    pack(b.ctypes.data, scratch.ctypes.data)
    cuts = [0, 37, 130, 131, batch * m]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda r: rows(a.ctypes.data, scratch.ctypes.data, c.ctypes.data, *r),
                      zip(cuts, cuts[1:])))
    _check(c, a, b)


class _Guarded:
    """A buffer of `nbytes` flush against an inaccessible page (after it, or before it)."""
    PAGE = mmap.PAGESIZE
    _libc = ctypes.CDLL(None, use_errno=True)

    def __init__(self, nbytes, at_end):
        pages = -(-nbytes // self.PAGE)
        self.map = mmap.mmap(-1, (pages + 2) * self.PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        for page in (0, pages + 1):
            assert self._libc.mprotect(ctypes.c_void_p(base + page * self.PAGE), self.PAGE, 0) == 0
        self.offset = (pages + 1) * self.PAGE - nbytes if at_end else self.PAGE
        self.addr, self.nbytes = base + self.offset, nbytes

    def array(self, like):
        out = np.frombuffer(self.map, np.uint8, self.nbytes, self.offset).view(like.dtype)
        out[...] = like.ravel()
        return out.reshape(like.shape)


@pytest.mark.parametrize("panels", [1, 2])    # one panel reads A in place, two copy it
@pytest.mark.parametrize("at_end", [True, False], ids=["guard-after", "guard-before"])
@pytest.mark.parametrize("dtype, transposed", [*((d, False) for d in DTYPES),
                                               (np.float32, True), (np.int64, True)],
                         ids=lambda x: np.dtype(x).name if x not in (False, True)
                         else "AtBt" if x else "")
def test_no_access_outside_buffers(jit, dtype, at_end, panels, transposed):
    mr, nr, kc = _tile_sizes(dtype)
    # two K blocks: the second one reads C too
    batch, m, k, n = 2, mr + 3, kc + 5, (3, nr + 3)[panels - 1]
    pack, rows = jit.build_many([(batch, m, k, n)], dtype, transpose_a=transposed,
                                transpose_b=transposed)[0]
    a0, b0 = _operands(batch, m, k, n, dtype)
    if transposed:      # stored transposed; _check below multiplies the stored arrays back
        a0, b0 = (np.ascontiguousarray(x.swapaxes(1, 2)) for x in (a0, b0))
    c0 = np.zeros((batch, m, n), dtype)
    bufs = [_Guarded(x.nbytes, at_end) for x in (a0, b0, c0)]
    a, b, c = (g.array(x) for g, x in zip(bufs, (a0, b0, c0)))
    scratch = _Guarded(matmul.scratch_bytes(batch, m, k, n, dtype), at_end)
    pack(bufs[1].addr, scratch.addr)
    rows(bufs[0].addr, scratch.addr, bufs[2].addr, 0, 3)
    rows(bufs[0].addr, scratch.addr, bufs[2].addr, 3, batch * m)
    _check(c, *((x.swapaxes(1, 2) for x in (a, b)) if transposed else (a, b)))


def test_single_panel_reads_a_in_place():
    """With one panel of B (n <= NR) each element of A is read once, so copying A to the
    stack first would only double its reads: the kernel then calls the tiles reading A in
    place (`<rows>ix..`); half floats are still copied (widened)."""
    _, nr, _ = _tile_sizes(np.float32)
    text = matmul.matmul_ir("x", np.float32)
    assert f"icmp sle i64 %n, {nr}" in text and '@"x.1ix' in text
    assert "icmp sle i64 %n" not in matmul.matmul_ir("x", np.float16)


def test_narrow_remainder_computes_only_the_vectors_it_spans():
    """The remainder panel's width is known only at run time: a tile per count of vectors
    it spans (one vector's FMAs for n = 10 of AVX-512's 32-wide float32 panels, not two),
    picked by the width."""
    text = matmul.matmul_ir("x", np.float32)
    _, vl, _, nv = matmul.tile_geometry(np.float32)
    assert nv == 2 and re.search(rf"icmp ule i64 %t\d+, {vl}\n", text)
    for v in (1, 2):
        tile = text[text.index(f'define void @"x.1xe{v}"'):]
        tile = tile[:tile.index("\n}")]
        assert tile.count("@llvm.fma.") == v


def test_only_the_last_panel_masks_its_writes_of_c():
    """A tile's loads and stores of C are masked only where its columns are fewer than
    the tile's (masked stores are microcoded on AMD's cores), and then only in its last
    vector (the tile of as few vectors as cover the columns is the one called): each
    path (C stored, or added to) writes whole vectors but for that one."""
    text = matmul.matmul_ir("x", np.float32)
    _, vl, mr, nv = matmul.tile_geometry(np.float32)
    tile = text[text.index(f'define void @"x.{mr}xe{nv}"'):]
    tile = tile[:tile.index("\n}")]
    assert f"icmp slt i64 %cols, {nv * vl}" in tile
    plain = re.findall(rf"store <{vl} x float> %\w+, ptr %\w+", tile)
    masked = re.findall(r"@llvm\.masked\.store\.", tile)
    assert len(plain) == 2 * mr * nv and len(masked) == 2 * mr


def test_rejects_bad_dtype_and_shape():
    with pytest.raises(DTypeError, match="complex64"):
        matmul.matmul_ir("x", np.complex64)
    with pytest.raises(ShapeError, match="batch"):
        matmul.scratch_bytes(1, -1, 2, 2, np.float32)
