from __future__ import annotations

pytest_plugins = ["harness.pytest_plugin"]
