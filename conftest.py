"""Root conftest: registers the suite's plugins (pytest takes ``pytest_plugins`` only here).

* ``tests.support.hypothesis_profile``: hypothesis without its per-example deadline;
* ``tests.support.tools``: ``needs_tools`` and ``privileged`` tests skip with the install
  hint where a program (or root) is missing, and fail where ``CI=true``;
* ``tests.support.alone``: under ``pytest -n N`` no other test runs beside an ``alone`` one;
* ``tests.support.doc_summary``: after the doc-example tests, which blocks were not run.

The scenario-file plugin (``harness.pytest_plugin``) is loaded through its
``pytest11`` entry point, which ``pip install -e .`` registers; listing it in
``pytest_plugins`` here too would register it twice.
"""

from __future__ import annotations

pytest_plugins = [
    "tests.support.hypothesis_profile",
    "tests.support.tools",
    "tests.support.alone",
    "tests.support.doc_summary",
]
