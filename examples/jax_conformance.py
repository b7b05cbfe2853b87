"""JAX's own test files run against this project, as a new user would write them.

Each file is taken from a JAX git repository (tag jax-v0.10.2 by default, matching the
installed jax), written to a temporary directory with its imports of the user-facing
names rewritten to a shim module (``import jax`` -> ``import conform_shim as jax``,
``from jax import lax``, ``import jax.numpy as jnp`` ...), and run twice with pytest:

- ``jax`` mode: the shim hands out JAX's own objects (the baseline);
- ``tracer`` mode: ``jax.numpy``, ``jax.lax``, ``jax.random``, ``jax.tree_util``,
  ``jax.tree``, ``jax.checkpoint_policies``, ``jax.nn``, ``jax.eval_shape``,
  ``jax.ShapeDtypeStruct``, ``jax.block_until_ready``, ``jax.disable_jit``,
  ``jax.device_put``/``device_get`` and the transforms (jit, grad, vmap, vjp, jvp,
  linearize, linear_transpose, jacobian, custom_gradient, ...), ``jax.debug``,
  ``jax.pure_callback``, ``jax.scipy``, ``jax.clear_caches``, ``jax.checking_leaks``,
  ``jax.check_tracer_leaks``, ``jax.debug_nans``, ``jax.debug_infs``, and the config flags tracer.config implements
  (``jax.config`` and ``from jax._src import config``: their values, ``update``, ``_read``
  and context managers such as ``config.explain_cache_misses``; ``jax.log_compiles``,
  ``jax.explain_cache_misses``, ``jax.numpy_rank_promotion``,
  ``jax.default_matmul_precision``, ``jax.legacy_prng_key``, ``jax.default_prng_impl``;
  ``jax_enable_x64`` stays JAX's, as the files read it to pick expected values)
  are tracer's, also as ``jax._src.api.<name>`` (api_test calls them there); a name tracer
  lacks raises AttributeError. ``jax.errors`` (and ``from jax.errors import ...``) gives
  tracer.errors' class where it has one, else JAX's. Everything else (``jax._src``,
  JAX's other config flags, ``jax.make_jaxpr`` ...) stays JAX's, as do JAX's test
  utilities, except that ``jtu.check_grads`` (also the public ``jax.test_util.check_grads``)
  and ``JaxTestCase._CompileAndCheck`` use tracer's check_grads and jit (they are the user-facing transforms, called for the test;
  check_grads takes JAX's positional order, modes before atol and rtol, and its per-dtype
  tolerance dicts).

A test *touches* the project's names if, while it runs under JAX, it reads a routed name
from the shim or calls a function taken from it. Per file the report gives those tests,
how many pass under JAX, how many of these pass under tracer and the ratio, then the most
frequent causes of failure (exception type and the start of its message) of the tests
JAX passes and tracer fails. A test passes only if pytest says it passed. `outside` counts
the misses whose cause is one of OUTSIDE's (what ../shared/API.md does not promise:
complex dtypes, results that are jax.Array objects, JAX's own tracers or internals
meeting tracer's; JAX's typed keys and other PRNG implementations), and the misses that
pass under tracer when the file runs again with ``JAX_ENABLE_X64=1`` (their expectations
follow JAX's 32-bit default, while tracer's dtypes are NumPy's, i.e. JAX's with x64 on);
`within` is the ratio to JAX's passes without them (--list tags each).

Needs jax and absl-py installed (neither is a dependency of the project). Run:

    python examples/jax_conformance.py [--repo /work/.mirror/jax-ml+jax/repo]
        [--ref jax-v0.10.2] [--files lax_test random_test ...] [-k EXPR] [--top 25] [--list]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

FILES = ('lax_control_flow_test', 'batching_test', 'api_test', 'lax_numpy_reducers_test',
         'lax_autodiff_test', 'random_test', 'lax_test')

SHIM = r'''
"""Routes JAX's user-facing names to tracer (CONFORM_MODE=tracer) or to JAX."""
import functools, os, types
import jax

MODE = os.environ.get('CONFORM_MODE', 'jax')
TOUCHED = [False]
ROUTED = {'jit', 'grad', 'value_and_grad', 'vjp', 'jvp', 'vmap', 'jacfwd', 'jacrev',
          'hessian', 'linearize', 'checkpoint', 'remat', 'custom_vjp', 'custom_jvp',
          'checkpoint_policies', 'tree_util', 'numpy', 'lax', 'random', 'nn', 'float0',
          'eval_shape', 'ShapeDtypeStruct', 'block_until_ready', 'errors', 'tree',
          'linear_transpose', 'disable_jit', 'device_put', 'device_get', 'jacobian',
          'custom_gradient', 'debug', 'pure_callback', 'scipy', 'config',
          'log_compiles', 'explain_cache_misses', 'numpy_rank_promotion',
          'default_matmul_precision', 'legacy_prng_key', 'default_prng_impl',
          'clear_caches', 'checking_leaks', 'check_tracer_leaks', 'debug_nans',
          'debug_infs', 'no_tracing', 'no_execution', 'allow_f16_reductions'}
# jax_enable_x64 stays JAX's: the files read it to pick expected values (seeds, dtypes)
# for JAX's default x64-off mode, whose seeds and key values tracer follows
UNROUTED_FLAGS = {'jax_enable_x64'}


class Config:
    """jax.config and jax._src.config in tracer mode: the flags tracer.config implements
    (their values, update, _read and context managers) are tracer's, the rest JAX's."""

    def _tracer_flag(self, name):
        import tracer
        flags = tracer.config.FLAGS
        full = name if name.startswith('jax_') else 'jax_' + name
        return full in flags and full not in UNROUTED_FLAGS and full

    def update(self, name, value):
        from jax._src import config
        if self._tracer_flag(name):
            TOUCHED[0] = True
            import tracer
            return tracer.config.update(name, value)
        return config.update(name, value)

    def _read(self, name):
        from jax._src import config
        if self._tracer_flag(name):
            import tracer
            return tracer.config._read(name)
        return config._read(name)

    def __getattr__(self, name):
        from jax._src import config
        if not name.startswith('_') and self._tracer_flag(name):
            TOUCHED[0] = True
            import tracer
            return getattr(tracer.config, name)
        return getattr(config, name)


def _target(name):
    if MODE == 'jax':
        import importlib
        try:
            return importlib.import_module('jax.' + name)
        except ImportError:
            return getattr(jax, name)
    import tracer
    return getattr(tracer, name)


class Namespace:
    """A module seen through the shim: reads and calls of its names mark the test."""

    def __init__(self, module, label):
        self._module, self._label, self._cache = module, label, {}

    def __getattr__(self, name):
        TOUCHED[0] = True
        if name in self._cache:
            return self._cache[name]
        try:
            value = getattr(self._module, name)
        except AttributeError:
            raise AttributeError(f'{self._label} has no attribute {name!r}') from None
        if isinstance(value, types.ModuleType):
            value = Namespace(value, f'{self._label}.{name}')
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
            value = _recording(value)
        self._cache[name] = value
        return value

    def __dir__(self):
        return dir(self._module)


def _recording(fun):
    @functools.wraps(fun)
    def call(*args, **kwargs):
        TOUCHED[0] = True
        return fun(*args, **kwargs)
    return call


_CACHE = {}


class Internal:
    """JAX's internal module that the public names come from (jax._src.api): the test
    files call `api.jit`, `api.linearize` ... as `jax.jit`, so routed names are routed."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        return __getattr__(name) if name in ROUTED else getattr(self._module, name)


class Errors:
    """jax.errors in tracer mode: tracer.errors' class where it has one, else JAX's (a
    test naming an error tracer lacks still imports). Reading one touches nothing."""

    def __getattr__(self, name):
        import jax.errors
        import tracer.errors
        return getattr(tracer.errors, name, None) or getattr(jax.errors, name)


def config_module():
    """`from jax._src import config` (rewritten to this module), routed."""
    from jax._src import config
    return Config() if MODE == 'tracer' else config


def error_name(name):
    """A name of `from jax.errors import ...` (rewritten to this module), routed."""
    import jax.errors
    return getattr(Errors() if MODE == 'tracer' else jax.errors, name)


def _jax_errors():
    import importlib                     # (`import jax.errors` here would make jax local)
    return importlib.import_module('jax.errors')


def __getattr__(name):
    if name == 'core_Tracer':            # the rewritten core.Tracer
        TOUCHED[0] = True
        import tracer
        return tracer.Tracer if MODE == 'tracer' else jax.core.Tracer
    if name not in ROUTED:
        if not hasattr(jax, name) and hasattr(_jax_errors(), name):
            return error_name(name)      # `from jax.errors import X` was rewritten to here
        return getattr(jax, name)
    if name == 'errors':
        return Errors() if MODE == 'tracer' else _jax_errors()
    if name == 'config':
        return Config() if MODE == 'tracer' else jax.config
    if name not in _CACHE:
        label = ('tracer.' if MODE == 'tracer' else 'jax.') + name
        try:
            value = _target(name)
        except AttributeError:
            raise AttributeError(f'tracer has no attribute {name!r}') from None
        if isinstance(value, types.ModuleType):
            value = Namespace(value, label)
        elif callable(value) and not isinstance(value, type) and not hasattr(
                value, 'get_global'):           # (a config flag keeps its attributes)
            value = _recording(value)
        _CACHE[name] = value
    TOUCHED[0] = True
    return _CACHE[name]
'''

PLUGIN = r'''
"""Records each test's outcome, failure cause and whether it touched the shim."""
import inspect, json, os
import pytest
import conform_shim

RESULTS = {}


def pytest_configure(config):
    if conform_shim.MODE != 'tracer':
        return
    import jax
    import tracer
    from jax._src import test_util as jtu

    def compile_and_check(self, fun, args_maker, *, check_dtypes=True, tol=None,
                          rtol=None, atol=None, check_cache_misses=True):
        args = args_maker()
        self.assertAllClose(fun(*args), tracer.jit(fun)(*args), check_dtypes=check_dtypes,
                            atol=atol or tol, rtol=rtol or tol)
    def check_grads(f, args, order, modes=('fwd', 'rev'), atol=None, rtol=None, eps=None):
        import numpy as np
        dtype = np.result_type(*jax.tree_util.tree_leaves(args))
        atol, rtol = (jtu.tolerance(dtype, t) if isinstance(t, dict) else t  # per-dtype
                      for t in (atol, rtol))
        tracer.check_grads(f, args, order, atol=atol, rtol=rtol, modes=modes, eps=eps)
    import jax.test_util
    jtu.JaxTestCase._CompileAndCheck = compile_and_check
    jtu.check_grads = check_grads  # JAX's positional order: modes before atol, rtol
    jax.test_util.check_grads = check_grads  # the public name (lax_autodiff_test's import)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    conform_shim.TOUCHED[0] = False
    try:
        source = inspect.getsource(item.obj)
    except (TypeError, OSError):
        source = ''
    # whether the test reads the lowered program's text (XLA's HLO in JAX), or counts
    # JAX's internal events (jtu.count_*: its traces, lowerings, compiles, device_puts)
    RESULTS[item.nodeid] = {'outcome': 'passed', 'cause': None,
                            'hlo': 'as_text(' in source or 'compiler_ir(' in source,
                            'counts': 'jtu.count_' in source}
    yield
    RESULTS[item.nodeid]['touched'] = conform_shim.TOUCHED[0]


def pytest_runtest_logreport(report):
    entry = RESULTS.setdefault(report.nodeid, {'outcome': 'passed', 'cause': None})
    if entry['outcome'] != 'passed' or report.passed:
        return
    entry['outcome'] = 'skipped' if report.skipped else 'failed'
    if report.failed:
        crash = getattr(report.longrepr, 'reprcrash', None)
        entry['cause'] = (crash.message if crash else str(report.longrepr)).splitlines()[0]


def pytest_sessionfinish(session):
    with open(os.environ['CONFORM_OUT'], 'w') as f:
        json.dump(RESULTS, f)
'''

IMPORTS = [
    (re.compile(r'^(\s*)import jax\s*$', re.M), r'\1import conform_shim as jax'),
    (re.compile(r'^(\s*)import jax\.(numpy|lax|random) as (\w+)', re.M),
     r'\1from conform_shim import \2 as \3'),
    (re.compile(r'^(\s*)from jax import ', re.M), r'\1from conform_shim import '),
    # JAX's error names: tracer.errors' classes in tracer mode (the shim's error_name)
    (re.compile(r'^(\s*)from jax\.errors import ', re.M), r'\1from conform_shim import '),
    # jax._src.core's error classes are jax.errors' (the same objects): routed as those
    (re.compile(r'\bcore\.(ConcretizationTypeError|UnexpectedTracerError|'
                r'TracerBoolConversionError|TracerIntegerConversionError|'
                r'TracerArrayConversionError)\b'), r'jax.errors.\1'),
    # core.Tracer, the class of traced values (public as jax.core.Tracer): tracer.Tracer
    (re.compile(r'\bcore\.Tracer\b'), r'jax.core_Tracer'),
    # jax._src.config: tracer.config's flags in tracer mode (the shim's Config)
    (re.compile(r'^(\s*)from jax\._src import config\s*$', re.M),
     r'\1from conform_shim import config_module as _config_module; config = _config_module()'),
    # jax._src.api is the module jax's public transforms are defined in
    (re.compile(r'^(\s*)(from jax\._src import api\b.*)$', re.M),
     r'\1\2\n\1from conform_shim import Internal as _Internal; api = _Internal(api)'),
    # `import jax.x` binds the real jax: keep the submodule import, not the binding.
    (re.compile(r'^(\s*)import (jax\.[\w.]+)\s*$', re.M), r'\1import \2 as _jax_submodule'),
]


def rewrite(source):
    """The test file's source with its user-facing jax imports taken from the shim."""
    for pattern, replacement in IMPORTS:
        source = pattern.sub(replacement, source)
    return source


def run(workdir, name, mode, keyword, tests=(), x64=False):
    """{nodeid: {outcome, cause, touched}} of one file run under one mode (only `tests`,
    node ids, if given; with `x64`, in JAX's 64-bit mode)."""
    out = os.path.join(workdir, f'{name}.{mode}{".x64" * x64}.json')
    env = dict(os.environ, CONFORM_MODE=mode, CONFORM_OUT=out,
               PYTHONPATH=workdir + os.pathsep + os.environ.get('PYTHONPATH', ''),
               **({'JAX_ENABLE_X64': '1'} if x64 else {}))
    cmd = [sys.executable, '-m', 'pytest', *(tests or [os.path.join(workdir, name + '.py')]),
           '-q', '-p', 'conform_plugin', '-p', 'no:cacheprovider', '-p', 'no:benchmark']
    if keyword:
        cmd += ['-k', keyword]
    subprocess.run(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    if not os.path.exists(out):
        return {}
    with open(out) as f:
        return json.load(f)


# Causes of a miss that lie outside what this project promises (../shared/API.md), each
# with the reason: a test failing only for one of these needs JAX itself, not tracer.
class _KeyShaped:
    """NumPy's reshape error for an array of two uint32 words per element of the shape
    asked: a test treating a key array as JAX's typed keys (one element per key)."""

    @staticmethod
    def search(cause):
        m = re.search(r"cannot reshape array of size (\d+) into shape \(([\d, ]*)\)", cause)
        if m is None:
            return None
        shape = [int(d) for d in m.group(2).replace(" ", "").split(",") if d]
        return int(m.group(1)) == 2 * int(np.prod(shape))


_KEYS = ("JAX's typed keys and other PRNG implementations (API.md: keys are uint32 arrays of "
         "shape (2,), threefry2x32)")
OUTSIDE = [
    ("complex dtypes (API.md's dtypes have none)",
     re.compile(r"complex(64|128)|no complex dtypes|returns a complex array")),
    ("results are numpy.ndarray, not jax.Array (API.md)",
     re.compile(r"'numpy\.\w+' object has no attribute '(block_until_ready|is_deleted|at|"
                r"unsafe_buffer_pointer|aval|sharding|devices?|platform|addressable_\w+)'|"
                r"not an instance of <class 'jax[\w.]*\.(Array|ArrayImpl|Tracer)'>|"
                r"does not start with 'Array'")),
    ("JAX's tracers given to tracer's functions (by jax.make_jaxpr, jax internals)",
     re.compile(r"(DynamicJaxpr|Jaxpr|Linearize|Batch|JVP)Tracer|"
                r"(^|jax\.errors\.|[^.\w])TracerArrayConversionError")),
    ("tracer's values given to JAX's internals (its primitives, eval_jaxpr, core)",
     re.compile(r"problematic value is of type <class 'tracer\.|"
                r"Argument 'Tracer<[^>]*>' of type '?<class 'tracer\.")),
    ("JAX's internal objects (primitives, jaxprs, tokens, executables, the C++ cache)",
     re.compile(r"has no attribute '(\w+_p|create_token|jaxpr|as_hlo_text|_\w+|func|with_refs|"
                r"opaque_residuals|args_res)'")),
    (_KEYS, re.compile(r"PRNG implementation '\w+' is not available")),
    (_KEYS, _KeyShaped),
]


class _OtherImplKey:
    """A key of another PRNG implementation's shape (rbg's (4,), ...) asked for by the
    test that selects each implementation by JAX's config (`jax.default_prng_impl`)."""

    @staticmethod
    def search(cause, test):
        return ("::test_default_prng_selection" in test and
                re.match(r"AssertionError: Tuples differ: \(2,\) != \(\d+,\)", cause or ""))


X64 = ("JAX's 32-bit default (jax_enable_x64 off); tracer's dtypes are NumPy's, as JAX's "
       "with x64 on, and the test passes under tracer with JAX_ENABLE_X64=1")


# Test classes whose every test is about JAX's typed key arrays (random_test's: "Key
# arrays involve a Python key array type, backed by an underlying uint32 base array ...")
TYPED_KEY_CLASSES = ("::KeyArrayTest::", "::JnpWithKeyArrayTest::")
# api_test's TracebackTest asserts the number of stack frames JAX's own implementation
# puts between a transform and the user's function ("We expect the particular
# `expected_depth` constants in these tests to change from time to time")
STACK_DEPTHS = ("JAX's own stack depths (TracebackTest counts the frames of JAX's "
                "implementation)")
STACK_DEPTH_CLASS = "::TracebackTest::"
HLO = ("XLA's HLO text (the test asserts on `lower().as_text()`, which is LLVM IR or the "
       "graph here: tracer does not compile with XLA)")
COUNTS = ("JAX's internal event counters (jtu.count_*: JAX's own traces, lowerings, "
          "compiles and device_puts, which tracer's calls never reach)")


def outside(cause, test="", hlo=False, counts=False):
    """The OUTSIDE reason of a miss's cause (or of its test's class), or None; `hlo` and
    `counts`: the test reads the lowered program's text or JAX's internal counters, and it
    failed an assertion."""
    if any(c in test for c in TYPED_KEY_CLASSES) or _OtherImplKey.search(cause, test):
        return _KEYS
    if STACK_DEPTH_CLASS in test:
        return STACK_DEPTHS
    if (cause or "").startswith("AssertionError") and (hlo or counts):
        return HLO if hlo else COUNTS
    return next((why for why, pattern in OUTSIDE if pattern.search(cause or "")), None)


def cause_key(cause):
    """Exception type and the start of its message, with numbers and quoted names kept."""
    return (cause or 'failed without a message')[:90]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repo', default='/work/.mirror/jax-ml+jax/repo')
    parser.add_argument('--ref', default='jax-v0.10.2')
    parser.add_argument('--files', nargs='*', default=list(FILES))
    parser.add_argument('-k', dest='keyword', default=None)
    parser.add_argument('--top', type=int, default=25)
    parser.add_argument('--list', action='store_true',
                        help='print each test JAX passes and tracer fails, with its cause')
    args = parser.parse_args()
    causes, reasons = collections.Counter(), collections.Counter()
    totals = [0, 0, 0, 0]
    with tempfile.TemporaryDirectory() as workdir:
        with open(os.path.join(workdir, 'conform_shim.py'), 'w') as f:
            f.write(SHIM)
        with open(os.path.join(workdir, 'conform_plugin.py'), 'w') as f:
            f.write(PLUGIN)
        print(f'{"file":26} {"touch":>6} {"jax":>6} {"tracer":>6} {"ratio":>6} '
              f'{"outside":>8} {"within":>7}')
        for name in args.files:
            source = subprocess.run(
                ['git', '-C', args.repo, 'show', f'{args.ref}:tests/{name}.py'],
                check=True, capture_output=True, text=True).stdout
            with open(os.path.join(workdir, name + '.py'), 'w') as f:
                f.write(rewrite(source))
            under_jax = run(workdir, name, 'jax', args.keyword)
            under_tracer = run(workdir, name, 'tracer', args.keyword)
            touched = [t for t, r in under_jax.items() if r.get('touched')]
            jax_pass = [t for t in touched if under_jax[t]['outcome'] == 'passed']
            both = [t for t in jax_pass if under_tracer.get(t, {}).get('outcome') == 'passed']
            passed = set(both)
            misses = {t: (under_tracer.get(t) or {}).get('cause') or 'not run under tracer'
                      for t in jax_pass if t not in passed}
            reads = {t: (r.get('hlo'), r.get('counts')) for t, r in under_tracer.items()}
            x64 = passes_with_x64(workdir, name, args.keyword, [
                t for t, c in misses.items() if not outside(c, t, *reads.get(t, ()))])
            out = []
            for t, cause in misses.items():
                causes[cause_key(cause)] += 1
                why = X64 if t in x64 else outside(cause, t, *reads.get(t, ()))
                out += [t] if why else []
                reasons[why or 'within the contract'] += 1
                if args.list:
                    print(f'  {t}: {cause}{f"  [outside: {why}]" if why else ""}',
                          flush=True)
            row = (touched, jax_pass, both, out)
            print(_row(name, *map(len, row)), flush=True)
            for i, n in enumerate(row):
                totals[i] += len(n)
    print(_row('total', *totals))
    print('\nmisses by whether API.md promises what the test needs:')
    for why, count in reasons.most_common():
        print(f'{count:5}  {why}')
    print('\nmost frequent causes of a test JAX passes failing under tracer:')
    for cause, count in causes.most_common(args.top):
        print(f'{count:5}  {cause}')


def passes_with_x64(workdir, name, keyword, tests):
    """Those of `tests` that pass under tracer when JAX runs in its 64-bit mode: their
    expectations follow JAX's x64 flag, off by default, while tracer's dtypes are NumPy's
    (a 64-bit int from a Python int, 64-bit requests kept), i.e. JAX's with x64 on."""
    if not tests:
        return set()
    under = run(workdir, name, 'tracer', keyword, tests, x64=True)
    return {t for t in tests if under.get(t, {}).get('outcome') == 'passed'}


def _row(name, touched, jax_pass, both, out):
    """A file's counts, the ratio to JAX's passes, and that ratio leaving out the tests
    that fail under tracer only for a cause outside the contract (OUTSIDE)."""
    within = jax_pass - out
    return (f'{name:26} {touched:6} {jax_pass:6} {both:6} {both / max(jax_pass, 1):6.1%} '
            f'{out:8} {both / max(within, 1):7.1%}')


if __name__ == '__main__':
    main()
