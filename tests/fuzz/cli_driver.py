"""Run harness CLI commands in one process under a memory limit; print one JSON line each.

Usage: ``python cli_driver.py LIMIT_MB < commands.json`` where the input is a JSON
list of argv lists.  Each result: ``{"argv", "code", "stderr", "seconds"}``.  The
address-space limit (RLIMIT_AS) holds for the whole run, so a runaway allocation
ends in ``MemoryError`` (reported as code 1 with a traceback), not in swapping.
"""

from __future__ import annotations

import contextlib
import io
import json
import resource
import sys
import time


def main() -> None:
    limit = int(sys.argv[1]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    commands = json.load(sys.stdin)
    from harness.cli import main as harness

    for argv in commands:
        err, out = io.StringIO(), io.StringIO()
        start = time.perf_counter()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = harness(argv)
        except BaseException as exc:
            import traceback

            code = 1
            err.write("Traceback (in the driver)\n" + "".join(traceback.format_exception(exc)))
        took = time.perf_counter() - start
        line = {"argv": argv, "code": code, "stderr": err.getvalue(), "seconds": took}
        sys.__stdout__.write(json.dumps(line) + "\n")
        sys.__stdout__.flush()


if __name__ == "__main__":
    main()
