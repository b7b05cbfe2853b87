"""What the host offers this process now: the CPUs it may use, and how many of them are
idle. jit's background compiles, the llvm backend's library compiles beside a module and
the parts a long module is cut into all pay only with cores of their own (on a busy host
another thread only takes a share of the caller's cores), so all ask here."""
import math
import os


def cores():
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not Linux
        return os.cpu_count() or 1


def idle_cores():
    """How many cores work started now would have to itself beside the caller's thread:
    the CPUs this process may use less half of one, less the load average (runnable
    threads, the caller's included: at least 1), rounded up."""
    return max(0, math.ceil(cores() - 0.5 - max(os.getloadavg()[0], 1.0)))


def idle_core():
    """Whether work started now has a core of its own beside the caller's thread."""
    return idle_cores() >= 1
