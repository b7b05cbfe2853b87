"""A process may end while a daemon thread (jit's background compile) waits for LLVM:
its exit must be clean, never an abort inside LLVM's code generator (whose static state
the exit destroys under a thread still using it)."""
import os
import subprocess
import sys

from fresh import loops_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r"""
import sys, threading, time
from lowering.llvm import target

text = sys.argv[2]
threading.Thread(target=target.load, args=(text,), daemon=True).start()
time.sleep(float(sys.argv[1]))
"""


def test_exit_while_a_daemon_thread_compiles_is_clean():
    env = dict(os.environ, PYTHONPATH=ROOT, TRACER_DISK_CACHE="0")
    for delay in ("0.3", "0.9", "1.5"):     # through parsing, optimizing, emitting
        out = subprocess.run([sys.executable, "-c", SCRIPT, delay, loops_module(150)], capture_output=True,
                             text=True, env=env, timeout=120)
        assert out.returncode == 0 and not out.stderr, (delay, out.returncode, out.stderr[-2000:])


def test_exit_waits_for_a_thread_inside_llvm(tmp_path):
    """What a daemon thread still does in LLVM here (loading code: quick) ends before the
    interpreter's exit goes on, and no thread enters LLVM after it."""
    marker = tmp_path / "left"
    script = f"""
import threading, time
from lowering.llvm import target

def inside():
    with target._gate:
        time.sleep(0.5)
        open({str(marker)!r}, "w").close()
threading.Thread(target=inside, daemon=True).start()
time.sleep(0.1)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert out.returncode == 0 and not out.stderr, out.stderr[-2000:]
    assert marker.exists(), "the process ended while a thread was inside LLVM"
