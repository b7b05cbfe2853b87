"""Work in threads whose failures fail the test: an exception in a plain Thread is only
printed, so a test that starts threads must carry their failures back."""
import threading


def in_thread(fun):
    """Start fun in a thread; returns join(), which re-raises its failure."""
    errors = []

    def body():
        try:
            fun()
        except BaseException as e:     # noqa: B036 (re-raised by join)
            errors.append(e)
    thread = threading.Thread(target=body)
    thread.start()

    def join():
        thread.join()
        if errors:
            raise errors[0]
    return join


def run_threads(work, n):
    """Run work(i) for i < n, each in a thread of its own, started together; re-raise the
    first failure."""
    start = threading.Barrier(n)
    joins = [in_thread(lambda i=i: (start.wait(), work(i))) for i in range(n)]
    for join in joins:
        join()
