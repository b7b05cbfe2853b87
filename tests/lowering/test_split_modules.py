"""A long module is cut into parts compiled at the same time: every entry lands in one
part with what it reaches, the parts load as one module, and the disk cache keeps them."""
import ctypes

import llvmlite.binding as llvm
import pytest

from lowering.llvm import split, target


def module(n, tag=0):
    """n entries @e<k> returning k + tag, each through an internal @h<k> that calls a shared
    internal @twice; @e0 also calls @e1 (so they must stay together)."""
    lines = ["declare i64 @llvm.abs.i64(i64, i1)",
             "define internal i64 @twice(i64 %x) {\n  %y = add i64 %x, %x\n  ret i64 %y\n}"]
    for k in range(n):
        lines.append(f"define internal i64 @h{k}(i64 %x) {{\n  %t = call i64 @twice(i64 %x)\n"
                     f"  %y = sub i64 %t, %x\n  ret i64 %y\n}}")
        extra = "  %z = call i64 @e1()\n" if k == 0 else ""
        lines.append(f'define i64 @"e{k}"() {{\n{extra}  %r = call i64 @h{k}(i64 {k + tag})\n'
                     f"  ret i64 %r\n}}")
    lines.append("attributes #0 = { nounwind }")
    return "\n".join(lines) + "\n"


def entries(text):
    return {line.split("@")[1].split("(")[0].strip('"') for line in text.split("\n")
            if line.startswith("define i64")}


@pytest.fixture
def short_parts(monkeypatch):
    monkeypatch.setattr(split, "PART_S", 10 * split.LINE_S)     # ten lines pay for a part
    monkeypatch.setattr(target, "idle_cores", lambda: 3)        # on an idle host


def test_each_entry_in_one_part_with_what_it_reaches(short_parts):
    text = module(12)
    parts = split.parts(text, 3)
    assert len(parts) == 3
    seen = [entries(p) for p in parts]
    assert sorted(e for s in seen for e in s) == sorted(entries(text))
    assert any({"e0", "e1"} <= s for s in seen)         # e0 calls e1: one part
    for p in parts:
        llvm.parse_assembly(p).verify()                 # complete: no undefined callee


def test_what_is_not_cut(short_parts):
    assert split.parts(module(12), 1) == [module(12)]
    assert split.parts(module(1), 4) == [module(1)]     # one group of entries
    with_global = "@g = internal global i64 0\n" + module(12)
    assert split.parts(with_global, 4) == [with_global]


def test_parts_load_as_one_module_and_come_back_from_disk(short_parts, monkeypatch, tmp_path):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TRACER_DISK_CACHE", raising=False)
    text = module(12, tag=7_000_011)
    before = target.stats["compiled"]
    loaded = target.load(text)
    assert target.stats["compiled"] == before + 1
    for k in range(12):
        assert loaded.function(f"e{k}", ctypes.c_int64)() == k + 7_000_011
    key = loaded.key
    blob = target.caches.read(str(tmp_path), key + ".o")
    assert blob.startswith(target._PARTS) and len(target._unpack(blob)) >= 2
    del loaded
    monkeypatch.setattr(target, "_recent", target.caches.Lru(0))
    target._live.pop(key, None)
    hits = target.stats["disk_hits"]
    again = target.load(text)
    assert target.stats["disk_hits"] == hits + 1
    assert again.function("e11", ctypes.c_int64)() == 11 + 7_000_011
