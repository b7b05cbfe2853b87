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
