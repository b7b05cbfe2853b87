"""TRACER_CPU names a CPU: every feature LLVM's model of it has is checked against the host
before its code runs, so code the host cannot run raises CodegenError, never SIGILL."""
import platform

import pytest

from fresh import run_script
from lowering.llvm import cpu

pytestmark = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                                reason="x86 CPU names")

HALF = r"""
import numpy as np, tracer
from ir.errors import CodegenError
a = np.linspace(1, 2, 1000).astype(np.float16)
try:
    tracer.jit(lambda a, b: a * b + a / b)(a, a[::-1].copy())
    print("ran")
except CodegenError as e:
    print(e)
"""


def test_features_come_from_llvm_not_a_table():
    """Features beyond the AVX-512 foundation (sapphirerapids' float16 arithmetic, Zen 4's
    bfloat16 dot products) are known, and none a CPU lacks."""
    spr, zen4 = cpu.Cpu("sapphirerapids"), cpu.Cpu("znver4")
    assert spr.has("avx512fp16") and spr.has("amx-tile") and spr.has("avx512f")
    assert zen4.has("avx512bf16") and not zen4.has("avx512fp16")
    v3 = cpu.Cpu("x86-64-v3")
    assert v3.has("avx2") and v3.has("fma") and not v3.has("avx512f") and v3.isa == "avx2"
    levels = [cpu.implied_features(name) for name in ("x86-64-v3", "x86-64-v4", "sapphirerapids")]
    assert levels[0] < levels[1] < levels[2]


def test_float16_code_for_a_cpu_the_host_lacks_is_refused_not_run():
    """sapphirerapids' float16 arithmetic is AVX512-FP16 instructions: a host without them
    died of SIGILL (exit -4) when only the AVX-512 foundation was checked."""
    if cpu._HOST.get("avx512fp16"):
        pytest.skip("this host has AVX512-FP16")
    out = run_script(HALF, TRACER_CPU="sapphirerapids")
    assert "TRACER_CPU='sapphirerapids' needs" in out and "avx512fp16" in out, out
