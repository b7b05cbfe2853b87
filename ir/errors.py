"""One exception hierarchy for the whole project.

It lives at the bottom layer so every package (ir, registry, lowering, tracer) raises
the same classes; `tracer` re-exports them. Each class also derives from the builtin
exception JAX raises in the same situation (TypeError, ValueError, IndexError,
NotImplementedError, LookupError), so `except` clauses written for JAX or NumPy keep working;
where NumPy and JAX raise different builtins, the class derives from both.
"""


class TracerError(Exception):
    """Base class of every error this project raises on purpose."""


class ShapeError(TracerError, ValueError):
    """A shape, axis or size an op cannot take (an axis out of range, an uneven split)."""


class ShapeMismatchError(ShapeError, TypeError):
    """Shapes an op cannot combine or produce: operands that do not broadcast, contract or
    concatenate, a reshape to another size, a transpose that is no permutation, a negative
    dimension. NumPy raises ValueError here and JAX TypeError (its shape checks are type
    checks), so this is both."""


class IndexingError(ShapeError, IndexError):
    """An index an array cannot take: more indices than axes, a second ellipsis."""


class NonConcreteBooleanIndexError(IndexingError):
    """A traced boolean mask used as an index (the result's shape would depend on the
    data), JAX's name."""


class OutOfBoundsError(IndexingError):
    """An index outside its axis (static indices when traced, any index when run)."""


class DTypeError(TracerError, TypeError):
    """An unsupported or mismatched dtype."""


class IntegerOverflowError(DTypeError, OverflowError):
    """A Python int that does not fit the integer dtype it must become (JAX's
    OverflowError)."""


class ArgumentError(TracerError, TypeError):
    """A non-array argument where an array is needed, or a bad static argument."""


class ArgumentValueError(ArgumentError, ValueError):
    """An argument of the right type whose value the call cannot take (static_argnums past
    the function's arguments, in_axes that do not match the arguments, an unhashable static
    argument): JAX raises ValueError."""


class CompilerOptionError(ArgumentValueError, RuntimeError):
    """A compile option XLA would reject (an unknown name): JAX raises JaxRuntimeError,
    a RuntimeError, when it compiles."""


class KernelNotFoundError(TracerError, LookupError, NotImplementedError):
    """No implementation registered for (kernel, backend)."""


class BackendNotFoundError(TracerError, LookupError):
    """An unknown backend name."""


class ShapeRuleNotFoundError(TracerError, LookupError, NotImplementedError):
    """A kernel was traced but has no registered shape rule."""


class GradientNotFoundError(TracerError, LookupError, NotImplementedError):
    """A kernel on the differentiated path has no registered gradient."""


class GradientError(TracerError, ValueError):
    """A gradient function (or `grad` call) produced or got something malformed."""


class GradientTypeError(GradientError, TypeError):
    """A transform applied to the wrong kind of function or arguments: grad of a non-scalar
    or non-float output, argnums naming no positional argument, tangents of another tree
    structure (JAX raises TypeError)."""


class ConcretizationError(TracerError, TypeError):
    """A traced value was used where a concrete Python value is needed."""


class TracerBoolConversionError(ConcretizationError):
    """bool() of a traced value (Python `if`/`while`/`and` on it), JAX's name."""


class TracerIntegerConversionError(ConcretizationError):
    """A traced value used as a Python int index (`__index__`), JAX's name."""


class TracerArrayConversionError(ConcretizationError):
    """A traced value converted to a NumPy array (`numpy.asarray`, `__array__`, a NumPy
    function given it), JAX's name."""


class UnexpectedTracerError(TracerError, TypeError):
    """A traced value used after the trace that made it ended, or outside it (saved to a
    global, handed to another thread): a leaked tracer, JAX's name."""


class KernelError(TracerError, RuntimeError):
    """A kernel implementation raised or returned something its shape rule disallows."""


class IRError(TracerError, ValueError):
    """A malformed graph (found by `Graph.verify`)."""


class CodegenError(TracerError, RuntimeError):
    """The LLVM backend could not lower or compile a graph."""
