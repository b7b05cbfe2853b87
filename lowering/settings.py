"""`settings`: every TRACER_* environment variable and every knob of the llvm code
generator, in one object.

Each setting is declared once below with its default and meaning; `python -m
lowering.settings` prints them as a table. An environment variable is read when this
module is imported, or at each use where a process may change it (marked "read at each
use"); a bad value is an ArgumentError naming the variable, its value and what is valid.
Such settings follow the environment (assigning them is an error); knobs, and the
variables read at import, are plain attributes that tests may monkeypatch. A knob of
None takes the target CPU's value when lowering.llvm.cpu chooses the target.

lowering.llvm.graph_cache keys cached code on every setting marked `key` (`key()`), so a
knob declared here can never be left out of that key.
"""
import os

from ir.errors import ArgumentError

MAX_THREADS = 1024      # TRACER_NUM_THREADS' bound: past the largest hosts' CPU counts; each
                        # thread is a stack, and a million ran the process out of threads


def env_size(name, default, suffixes=False, low=0, high=None):
    """The integer from `low` to `high` (None: no bound) that environment variable `name`
    sets, or `default` when it is unset or empty; with `suffixes`, a K, M or G suffix
    multiplies it by 1024, 1024**2 or 1024**3. Anything else is an error naming the
    variable, its value and the valid range."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    scale = 1
    if suffixes and text[-1].upper() in "KMG":
        scale = 1024 ** ("KMG".index(text[-1].upper()) + 1)
        text = text[:-1]
    value = int(text) * scale if text.isascii() and text.isdigit() else None
    if value is None or value < low or high is not None and value > high:
        valid = (f"an integer from {low} to {high}" if high is not None else
                 "a non-negative integer" if low == 0 else f"an integer of at least {low}")
        raise ArgumentError(f"{name} must be {valid}"
                            f"{' (optionally with a K, M or G suffix)' if suffixes else ''}, "
                            f"got {os.environ[name]!r}; unset it for the default ({default})")
    return value


def _size(**bounds):
    return lambda name, default: env_size(name, default, **bounds)


def _switch(off, on):
    """A 0/1 variable; `off` and `on` say what each value means."""
    def parse(name, default):
        text = os.environ.get(name, "").strip()
        if text not in ("", "0", "1"):
            raise ArgumentError(f"{name} must be 0 ({off}) or 1 ({on}), got "
                                f"{os.environ[name]!r}")
        return default if not text else text == "1"
    return parse


def _text(name, default):
    return os.environ.get(name) or default


def _seconds(name, default):
    text = os.environ.get(name, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ArgumentError(f"{name} must be a positive number of seconds, got "
                            f"{os.environ[name]!r}; unset it for the default ({default})")
    return value


class Setting:
    """A knob: `default` until assigned. `key`: whether it may decide the code generated
    (True unless declared otherwise, so that nothing that does is left out)."""

    def __init__(self, default, meaning, key=True):
        self.default, self.meaning, self.key = default, meaning, key

    def __set_name__(self, owner, attr):
        self.attr = attr

    def read(self):
        return self.default


class Env(Setting):
    """The environment variable TRACER_<ATTR>, parsed by `parse(name, default)` at import."""

    def __init__(self, parse, default, meaning, key=True):
        super().__init__(default, meaning, key)
        self.parse = parse

    def __set_name__(self, owner, attr):
        self.attr, self.name = attr, "TRACER_" + attr.upper()

    def read(self):
        return self.parse(self.name, self.default)


class LiveEnv(Env):
    """Read at each use: the attribute is the variable's current value."""

    def __get__(self, obj, owner):
        return self if obj is None else self.read()

    def __set__(self, obj, value):
        raise AttributeError(f"settings.{self.attr} follows {self.name}: set the "
                             f"environment variable instead")


class Settings:
    """The declarations (class attributes); `settings`, below, is the one instance."""

    # ---- environment variables --------------------------------------------------------
    cpu = Env(_text, "host", "the CPU code is generated for: `host`, `avx2` (= `haswell`), "
              "`avx512` (= `skylake-avx512`) or an LLVM CPU name such as `znver3`")
    num_threads = LiveEnv(_size(low=1, high=MAX_THREADS), os.cpu_count() or 1,
                          f"threads for loops and kernels of over `parallel_ns` of estimated "
                          f"work (1 to {MAX_THREADS}; default: the CPU count)")
    cache_dir = LiveEnv(_text, os.path.join(os.path.expanduser("~"), ".cache", "tracer"),
                        "on-disk cache of compiled objects and graphs", key=False)
    disk_cache = LiveEnv(_switch("no disk cache", "the default"), True,
                         "0 disables the on-disk cache", key=False)
    disk_cache_size = LiveEnv(_size(suffixes=True), 1 << 30,
                              "cap of the on-disk cache in bytes (or with a K, M or G "
                              "suffix); least recently used entries are deleted first",
                              key=False)
    dump_dir = LiveEnv(_text, None, "write each module's IR, optimized IR and assembly there",
                       key=False)
    jit_cache_size = Env(_size(low=1), 128, "signatures kept per jitted function", key=False)
    code_cache_size = Env(_size(), 256, "compiled modules kept loaded when no program uses "
                          "them, and graph-cache entries kept in memory", key=False)
    eager_cache_size = Env(_size(), 1024, "one-kernel programs kept for eager ops on the "
                           "llvm backend", key=False)
    background_compile = LiveEnv(_size(), 100, "graphs of at least this many nodes may run "
                                 "their first calls interpreted while they compile (0: "
                                 "never)", key=False)
    log_compiles = Env(_switch("the default", "log every trace and compile"), False,
                       "1 logs every trace and compile of a jitted function to stderr",
                       key=False)
    collective_timeout = LiveEnv(_seconds, 300.0, "seconds a collective may wait for the "
                                 "other ranks before the MPI job is aborted", key=False)
    check_collectives = LiveEnv(_switch("the default", "check"), False,
                                "1 checks that every rank reached the same collective")
    # ---- knobs of the llvm code generator -----------------------------------------------
    parallel_ns = Setting(100_000, "a group estimated to take longer (ns) is split across "
                          "threads")
    shared_cost = Setting(8, "a shared value costlier than this is computed once in a loop")
    max_cost = Setting(400, "bound on the cost of one fused expression")
    max_depth = Setting(150, "bound on fused nesting")
    max_loop_nodes = Setting(256, "a loop of this many nodes takes no more roots")
    tiled_min = Setting(64, "loops transposing matrices at least this big walk them in tiles")
    transpose_tile = Setting(32, "a tiled loop's blocks: this many items square")
    share_at = Setting(8, "a module calling a transcendental more often calls the shared "
                       "precompiled library")
    reduce_splits = Setting(None, "chains of a max/min over an innermost axis (None: 4 "
                            "with 32 vector registers, else 1)")
    vector_bytes = Setting(None, "bytes of the vectors matmul and conv are tiled for "
                           "(None: the CPU's, 64 with AVX-512, else 32)")
    conv_row_chunk = Setting(16, "register tiles of conv output rows per chunk")
    long_row = Setting(256, "rows longer than this are walked by a loop, not unrolled")
    epilogue_chunk_bytes = Setting(64 * 1024, "kernel output per chunk that its epilogue "
                                   "loops read back from cache")
    epilogue_row_multiple = Setting(42, "epilogue chunks are whole multiples of this many "
                                    "rows (matmul register tiles)")

    def __init__(self):
        for s in self.declared():
            if not isinstance(s, LiveEnv):
                self.__dict__[s.attr] = s.read()

    @classmethod
    def declared(cls):
        return [v for v in vars(cls).values() if isinstance(v, Setting)]

    def key(self):
        """(name, value) of every setting that decides the code generated."""
        return tuple((s.attr, getattr(self, s.attr)) for s in self.declared() if s.key)

    @classmethod
    def table(cls):
        """The settings as a Markdown table (name, default, meaning)."""
        rows = [f"| `{getattr(s, 'name', 'settings.' + s.attr)}` | {s.default!r} | "
                f"{s.meaning}{' (read at each use)' if isinstance(s, LiveEnv) else ''} |"
                for s in cls.declared()]
        return "\n".join(["| setting | default | meaning |", "| --- | --- | --- |"] + rows)


settings = Settings()

if __name__ == "__main__":
    print(Settings.table())
