"""What Python's conversions of a traced value do (bool, int, float, index, complex, item,
tolist, numpy.asarray): under an eager transform whose inputs are concrete, the value it
stands for (tracer.concrete); else an error in JAX's words first (its classes are
tracer.errors'), then ours: the value's type, the user's line and what to write instead.
Also the leaked-tracer error, which names where the value was made."""
import operator

from ir.errors import (ConcretizationError, DTypeError, TracerArrayConversionError,
                       TracerBoolConversionError, TracerIntegerConversionError,
                       UnexpectedTracerError)
from ir.types import dtype_kind
from tracer.sources import user_source

_ASTYPE = "To change its dtype, try using `x.astype({})` instead. "


class ValueConversions:
    """Tracer's conversion methods (a mixin: Tracer has the slots and _check_live)."""
    __slots__ = ()

    def __copy__(self):
        """A traced value is immutable: a copy (copy.copy, copy.deepcopy, as of a pytree
        holding it) is the value itself, as for JAX's tracers."""
        return self

    def __deepcopy__(self, memo):
        return self

    def _concretize(self, what, hint="", error=ConcretizationError, allowed=True,
                    no_gradient=False, jax=None):
        """The value this tracer stands for, when its trace was called with concrete
        inputs (eager grad, vjp, jvp...); else the error saying what to write instead,
        opening with "{what}() of a traced value", after JAX's opening phrase `jax` (its
        "{}" is "traced array with shape float32[3]") if given.
        `no_gradient`: a conversion JAX refuses for a value that carries a gradient."""
        subject = f"{what}() of a traced value"
        if jax is None and error is ConcretizationError:
            jax = "Abstract tracer value encountered where concrete value is expected: {}."
        if jax:
            subject = jax.format(f"traced array with shape {jax_type(self.aval)}") + " " + subject
        known = self._trace.known if allowed else None
        if known is not None:
            self._check_live()
        if known is not None and no_gradient and known.carries_gradient(self):
            raise error(
                f"{subject} {self.aval} at {user_source(3)} that carries a "
                f"gradient under grad/vjp/jvp: the Python number would silently drop it. "
                f"Keep it an array (x.astype changes its dtype), or convert "
                f"tracer.lax.stop_gradient(x) if it is meant as a constant; int(), bool() "
                f"and comparisons (if x < 2:) of it work.")
        value = None if known is None else known.value(self)
        if value is None:
            why = ("its value is not known while tracing abstractly (jit, make_graph, vmap, "
                   "lax control flow)" if allowed else
                   "NumPy would get a constant that carries no gradient")
            raise error(
                f"{subject} {self.aval} at {user_source(3)}: {why}. {hint}"
                f"Use tracer.numpy.where for data-dependent choices, tracer.lax.cond/switch "
                f"for branches and tracer.lax.while_loop/fori_loop for loops, or mark the "
                f"argument static, e.g. jit(f, static_argnums=(0,)).")
        return value

    def __bool__(self):
        return bool(self._concretize("bool", error=TracerBoolConversionError,
                                     jax="Attempted boolean conversion of {}."))

    def __int__(self):
        return int(self._concretize("int", _ASTYPE.format("int")))

    def __float__(self):
        return float(self._concretize("float", _ASTYPE.format("float"), no_gradient=True))

    def __index__(self):
        if self.shape or dtype_kind(self.dtype) not in "iu":
            raise DTypeError(
                f"Only integer scalar arrays can be converted to a scalar index. index() of "
                f"a traced value {self.aval} at {user_source(2)}: Python needs an int here "
                f"(a list index, range(n), hex(n)...); convert an integer scalar, e.g. "
                f"x.astype(int) or x[0], or use it as an array index (x[i] takes a traced i).")
        return operator.index(self._concretize(
            "index", "Python needs an int here (a list index, range(n), hex(n)...). ",
            TracerIntegerConversionError,
            jax="The __index__() method was called on {}."))

    def __complex__(self):
        return complex(self._concretize(
            "complex", "There are no complex dtypes here, so where JAX would say to try "
            "using `x.astype(complex)`, keep the value real. ", no_gradient=True))

    def item(self, *args):
        return self._concretize("item").item(*args)

    def tolist(self):
        return self._concretize("tolist", no_gradient=True).tolist()

    def __array__(self, dtype=None, copy=None):
        self._concretize("numpy.asarray", "If a NumPy function got it, call the tracer.numpy "
                         "function of the same name; for a Python number (outside jit) use "
                         "float(x), int(x) or x.item(). ", TracerArrayConversionError,
                         allowed=False, jax="The numpy.ndarray conversion method __array__() "
                                            "was called on {}.")


def jax_type(aval):
    """The type as JAX spells it: float32[4,3] for f32[4,3]."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def made_at(x):
    """The source line of the node that made tracer `x`, None for a trace's input."""
    return next((n.source for n in x._trace.nodes if x._var in n.outputs), None)


def leaked_error(x):
    """JAX's UnexpectedTracerError, in its words first: a leaked tracer."""
    made = made_at(x)
    made = (f"It was created on line {made}. " if made else
            "It was an argument of the traced function. "
            if x._var in x._trace.invars else "")
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer. A leaked tracer: a traced value {x.aval} escaped "
        f"the function it was traced in (e.g. saved to global state or an outer list, or "
        f"handed to another thread) and was used after that trace ended or outside it. "
        f"{made}Return it from the function instead (its type in JAX's spelling: "
        f"{jax_type(x.aval)}).")
