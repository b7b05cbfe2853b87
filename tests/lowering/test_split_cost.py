"""When a module is cut: by LLVM's estimated time (lowering.llvm.split.seconds) against
what a part adds (PART_S), not by a line count a model lands just under: a deep MLP's
step module of 4,999 lines (~0.7 s of LLVM) compiled on one core of two."""
import math

from lowering.llvm import split
from test_split_modules import module

_LINES = 9      # lines of function bodies an entry of module() adds


def _module_of(seconds):
    return module(math.ceil(seconds / split.LINE_S / _LINES))


def test_cut_in_two_when_each_half_pays_for_itself():
    text = _module_of(2 * split.PART_S * 1.05)
    assert text.count("\n") < 5000
    assert len(split.parts(text, 2)) == 2
    assert len(split.parts(text, 4)) == 2       # not more parts than pay


def test_not_cut_when_a_part_would_not_pay():
    text = _module_of(2 * split.PART_S * 0.9)
    assert split.parts(text, 2) == [text]
