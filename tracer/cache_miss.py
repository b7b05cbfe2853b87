"""jax_explain_cache_misses: why a jitted call traced again, in JAX's words and format, so
that a JAX user reads it as JAX's. Every build of a jitted function records its key's
parts (Seen); a miss while the flag is on compares its key with each recorded one and
logs one WARNING to the `tracer.compile` logger naming the closest one's differences."""
import logging

from ir import ShapedArray
from tracer.pytree import flatten, num_leaves, unflatten
from tracer.signature import Call, leaf_names
from tracer.sources import _PKG_DIRS, user_source

WEAK_HINT = "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
_CONTEXT_NAMES = ("jax_numpy_rank_promotion", "jax_default_matmul_precision")
_DEFAULT_CONTEXT = ("allow", None)
_callsites = set()          # call sites that logged a never-seen function
logger = logging.getLogger("tracer.compile")     # tracer.compile_log's


class Seen:
    """One cache key's parts: trace context, pytree, static values, leaf types, names."""
    __slots__ = ("context", "tree", "statics", "types", "names")

    def __init__(self, fun, key, call):
        if len(key) == 3 and isinstance(key[1], str):      # jit's (key, "trace context", ctx)
            key, self.context = key[0], key[2]
        else:
            self.context = _DEFAULT_CONTEXT
        if isinstance(call, Call):
            self.tree, self.statics, self.types = key[0], key[1], key[2:]
            args, static, kwargs = call.args, call.static, call.dyn_kw
        else:
            args, static, kwargs = list(call), (), {}
            self.tree, self.statics, self.types = flatten([args, {}])[1], (), key
        self.names = leaf_names(fun, args, static, kwargs)


def explain(fun, name, seen, new, changed=None):
    """Log why `fun` (jit-named `name`) missed its cache with key parts `new`, given the
    `seen` ones of its earlier builds; `changed`: the kernels re-registered since."""
    code = getattr(fun, "__code__", None)
    if code is not None and code.co_filename.startswith(_PKG_DIRS):
        return                                  # one of tracer's own jitted helpers
    callsite = user_source(3) or "<unknown>"
    src = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    if not seen:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{src}")
        if callsite in _callsites:
            lines.append("  but seen another function defined on the same line; maybe the "
                         "function is\n  being re-defined repeatedly, preventing caching?")
        _callsites.add(callsite)
    else:
        lines.append(f"  for {name}{src}")
        if changed:
            lines.append(f"  the entry was rebuilt: {', '.join(changed)} re-registered "
                         f"since it was traced")
        else:
            lines.append("  all previously seen cache keys differ. For the closest "
                         "previous key:")
            lines.append("  " + min(_diff(new, old) for old in seen)[-1])
    logger.warning("\n".join(lines))


def _diff(new, old):
    """(severity, number of differences, explanation) of two keys, as JAX's
    diff_tracing_cache_keys: the lowest severity names the closest key."""
    if new.context != old.context:
        diffs = [f"  * {n} differs: now {a} and before {b}" for n, a, b in
                 zip(_CONTEXT_NAMES, new.context, old.context) if a != b]
        return (0, len(diffs), "Tracing context doesn't match, e.g. due to config or "
                "context manager.\n" + "\n".join(diffs))
    if new.tree != old.tree:
        return (1, 1, f"different input pytree:\n  * now {_structure(new.tree)} and "
                f"before {_structure(old.tree)}")
    if new.statics != old.statics:
        return (2, 1, f"different value of static args:\n  * now {new.statics} and before "
                f"{old.statics}")
    if new.types != old.types:
        diffs, weak = [], False
        for n, a, b in zip(new.names, new.types, old.types):
            if a != b:
                both_weak = a[:2] == b[:2]
                weak |= both_weak
                diffs.append(f"  * at {n}, now {_type(a, both_weak)} and before "
                             f"{_type(b, both_weak)}")
        return (3, len(diffs), "different input types:\n" + "\n".join(diffs) +
                (WEAK_HINT if weak else ""))
    return (4, 0, "the same key as an entry evicted from the cache (more signatures than "
                  "the jitted function's cache_size)")


def _type(leaf, show_weak):
    text = str(ShapedArray(*leaf[:2]))
    return f"{text}{{weak_type={len(leaf) > 2}}}" if show_weak else text


def _structure(tree):
    """A pytree structure with `*` for its leaves: [[*, (*, *)], {'y': *}]."""
    return str(unflatten(tree, ["*"] * num_leaves(tree))).replace("'*'", "*")
