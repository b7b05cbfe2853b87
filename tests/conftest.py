import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

if os.environ.get("TRACER_TEST_CHECK_SHARING") == "1":
    import sharing_check
    sharing_check.install()
