"""examples/bench_isa.py: the benchmark caps its peers (NumPy, OpenBLAS, XLA, glibc) at the
ISA tracer compiled for, by re-executing itself, and refuses to run if NumPy ignored it."""
import os
import subprocess
import sys

import pytest

from fresh import ROOT, run_script

sys.path.insert(0, os.path.join(ROOT, "examples"))
import bench_isa  # noqa: E402

_CAP = ("import sys; sys.path.insert(0, 'examples'); import bench_isa; "
        "bench_isa.restrict_peers('{isa}', 'avx512'); print('\\n'.join(bench_isa.check_peers()))")


def _numpy_above(isa):
    return [n for n, on in bench_isa._numpy_dispatch().items()
            if on and bench_isa._numpy_level(n) > bench_isa.RANK[isa]]


def test_settings_keep_what_the_user_set(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    env = bench_isa.settings("avx2")
    assert env["XLA_FLAGS"] == "--xla_dump_to=/tmp/x --xla_cpu_max_isa=AVX2"
    assert env["GLIBC_TUNABLES"].startswith("glibc.cpu.hwcaps=-AVX512F,")
    assert env["OPENBLAS_CORETYPE"] == "Haswell"
    names = env["NPY_DISABLE_CPU_FEATURES"].split()
    assert all(bench_isa._numpy_level(n) == bench_isa.RANK["avx512"] for n in names)


@pytest.mark.parametrize("isa", ["avx2", "sse"])
def test_reexecuted_process_has_capped_numpy(isa):
    """Caps below 'avx512' re-execute the command line; on any host the new process's
    NumPy then dispatches to nothing above `isa` (the script's own check says so)."""
    out = run_script(_CAP.format(isa=isa))
    assert f"peers capped at {isa}: NPY_DISABLE_CPU_FEATURES=" in out
    assert "OPENBLAS_CORETYPE=" in out and "--xla_cpu_max_isa=" in out
    assert "checked: NumPy dispatches to" in out


def test_uncapped_numpy_is_refused():
    """A process marked as capped whose NumPy still runs wider loops stops with a message."""
    if not _numpy_above("sse"):
        pytest.skip("this host's NumPy dispatches to nothing above SSE")
    env = dict(os.environ, PYTHONPATH=ROOT, TRACER_BENCH_PEERS_ISA="sse")
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    done = subprocess.run([sys.executable, "-c", _CAP.format(isa="sse")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "were not kept to sse" in done.stderr and "--peers-on-host" in done.stderr
