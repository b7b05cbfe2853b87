"""lowering.llvm's modules import one another without a circle (function-level imports
included): the group emitters (rows, epilogues) and the kernel emitters build on the
emit context (lowering.llvm.emit), and codegen imports them, never the other way round.
No module imports or reads another's private names. The package's __init__, which
assembles the others, is left out."""
import lowering.llvm
from module_imports import assert_no_circle, imports, private_names


def test_no_import_circle_inside_lowering_llvm():
    assert_no_circle(imports(lowering.llvm))


def test_no_module_imports_or_reads_private_names():
    assert not private_names(imports(lowering.llvm))
