"""JAX's error names (`jax.errors`) for the situations this project detects.

Code written for JAX keeps working: `from tracer.errors import UnexpectedTracerError`
and `except` it. Each name is the class this project raises in that situation (its own
hierarchy, ir/errors.py: every class is a TracerError), derived from the built-ins JAX's
is:

=============================  ====================================  ===================
JAX's name                     raised for                            also catches as
=============================  ====================================  ===================
ConcretizationTypeError        a traced value where a Python value   TypeError
                               is needed: int(), float(), item(),
                               a data-dependent result shape
                               (ConcretizationError)
TracerBoolConversionError      bool() of a traced value (`if x:`)    ConcretizationTypeError
TracerIntegerConversionError   a traced integer scalar used as a     ConcretizationTypeError
                               Python int (`__index__`)
TracerArrayConversionError     numpy.asarray() / __array__() of a    ConcretizationTypeError
                               traced value
UnexpectedTracerError          a leaked tracer: a traced value used  TypeError
                               after its trace ended or outside it
NonConcreteBooleanIndexError   a traced boolean mask as an index     IndexError
JaxRuntimeError                an unknown name in jit's              RuntimeError,
                               compiler_options (CompilerOptionError) ValueError
=============================  ====================================  ===================

JAX's TracerIntegerConversionError and TracerArrayConversionError are not
ConcretizationTypeErrors; here they are (they were ConcretizationErrors before they had
JAX's names), so `except ConcretizationTypeError` catches a little more than in JAX.
JAX's other names (JAXTypeError, JAXIndexError, KeyReuseError ...) have no counterpart.
"""
from ir.errors import (CompilerOptionError, ConcretizationError, NonConcreteBooleanIndexError,
                       TracerArrayConversionError, TracerBoolConversionError,
                       TracerIntegerConversionError, UnexpectedTracerError)

ConcretizationTypeError = ConcretizationError
JaxRuntimeError = CompilerOptionError     # JAX's is XLA's runtime error, raised for more

__all__ = ["ConcretizationTypeError", "JaxRuntimeError", "NonConcreteBooleanIndexError",
           "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError"]
