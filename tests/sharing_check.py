"""A check of codegen's call keys (graph_cache.call_key) against the code itself: each
call a key forwarded must be one whose code text sharing finds equal. Every compile of a
test session runs it under TRACER_TEST_CHECK_SHARING=1 (tests/conftest.py); the module
is then emitted twice."""
from lowering.llvm import codegen

unchecked_emit_program = codegen.emit_program


def check(sched, mb):
    """Raise AssertionError if `mb` (emitted with keys) forwards a call to one whose code
    differs, emitting `sched` again without keys."""
    plain = unchecked_emit_program(sched).forwarded
    for name, first in mb.forwarded.items():
        if plain.get(name, name) != plain.get(first, first):
            raise AssertionError(f"calls {name} and {first} of one key emit different code")


def checked_emit_program(sched, key=None):
    mb = unchecked_emit_program(sched, key)
    if key is not None:
        check(sched, mb)
    return mb


def install():
    codegen.emit_program = checked_emit_program
