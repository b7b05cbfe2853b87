"""What the host offers this process now: the CPUs it may use, and whether one of them is
idle. jit's background compiles and the llvm backend's library compiles beside a module
both pay only with a core of their own, so both ask here."""
import os


def cores():
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not Linux
        return os.cpu_count() or 1


def idle_core():
    """Whether work started now has a core of its own beside the caller's thread: the load
    average (runnable threads, the caller's included: at least 1) is under the CPUs this
    process may use minus half of one. On a busy host a second thread only takes a share
    of the caller's cores."""
    return max(os.getloadavg()[0], 1.0) < cores() - 0.5
