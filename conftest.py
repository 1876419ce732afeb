"""Root conftest: nothing to configure.

The scenario-file plugin (``harness.pytest_plugin``) is loaded through its
``pytest11`` entry point, which ``pip install -e .`` registers; listing it in
``pytest_plugins`` here too would register it twice.  Suite-wide test
conventions live in ``tests/conftest.py``.
"""

from __future__ import annotations
