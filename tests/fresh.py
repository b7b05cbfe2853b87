"""Run a script in a fresh Python process, for what only a new process shows: the disk
cache seen by a second process, fork, and crashes that must fail a test, not kill pytest."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_script(script, *args, cache=None, timeout=120, **env):
    """The stdout of `python -c script *args` run from the checkout (with TRACER_CACHE_DIR
    set to `cache` if given); a non-zero exit, a crash included, fails the calling test."""
    env = dict(os.environ, PYTHONPATH=ROOT, **env)
    env.pop("TRACER_DUMP_DIR", None)
    if cache is not None:
        env["TRACER_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (f"exit status {done.returncode}\n{done.stdout[-2000:]}\n"
                                  f"{done.stderr[-3000:]}")
    return done.stdout


LOOP_FUNCTION = """
define void @f{k}(ptr noalias %a, ptr noalias %b, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pa = getelementptr float, ptr %a, i64 %i
  %x = load float, ptr %pa
  %y = fmul float %x, {k}.0
  %w = call float @llvm.sqrt.f32(float %y)
  %pb = getelementptr float, ptr %b, i64 %i
  store float %w, ptr %pb
  %i1 = add i64 %i, 1
  %c = icmp ult i64 %i1, %n
  br i1 %c, label %loop, label %out
out:
  ret void
}}"""


def loops_module(count):
    """LLVM IR of `count` small loop functions (f0, f1, ...): a module whose compile takes
    long enough for a test to end a process, or cut a module, while LLVM works on it."""
    return "declare float @llvm.sqrt.f32(float)\n" + "".join(
        LOOP_FUNCTION.format(k=k) for k in range(count))
