"""One exception hierarchy for the whole project.

It lives at the bottom layer so every package (ir, registry, lowering, tracer) raises
the same classes; `tracer` re-exports them. Each class also derives from the builtin
exception a Python user would expect (TypeError, ValueError, LookupError), so existing
`except` clauses keep working.
"""


class TracerError(Exception):
    """Base class of every error this project raises on purpose."""


class ShapeError(TracerError, ValueError):
    """Operand shapes that an op cannot combine (broadcasting, axes, matmul dims)."""


class OutOfBoundsError(ShapeError, IndexError):
    """An index outside its axis (static indices when traced, any index when run)."""


class DTypeError(TracerError, TypeError):
    """An unsupported or mismatched dtype."""


class ArgumentError(TracerError, TypeError):
    """A non-array argument where an array is needed, or a bad static argument."""


class KernelNotFoundError(TracerError, LookupError):
    """No implementation registered for (kernel, backend)."""


class BackendNotFoundError(TracerError, LookupError):
    """An unknown backend name."""


class ShapeRuleNotFoundError(TracerError, LookupError):
    """A kernel was traced but has no registered shape rule."""


class GradientNotFoundError(TracerError, LookupError):
    """A kernel on the differentiated path has no registered gradient."""


class GradientError(TracerError, ValueError):
    """A gradient function (or `grad` call) produced or got something malformed."""


class ConcretizationError(TracerError, TypeError):
    """A traced value was used where a concrete Python value is needed."""


class KernelError(TracerError, RuntimeError):
    """A kernel implementation raised or returned something its shape rule disallows."""


class IRError(TracerError, ValueError):
    """A malformed graph (found by `Graph.verify`)."""


class CodegenError(TracerError, RuntimeError):
    """The LLVM backend could not lower or compile a graph."""
