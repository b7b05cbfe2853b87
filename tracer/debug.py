"""`tracer.debug`, as `jax.debug`: `print(fmt, *args, **kwargs)` and `callback(fn, *args,
**kwargs)`, host calls that run each time the program runs (tracer.callbacks)."""
from tracer.callbacks import debug_callback as callback, debug_print as print

__all__ = ["callback", "print"]
