"""Inputs, the first stage: every file and value the harness reads goes through here.

* :mod:`harness.inputs.files` -- regular files only (a FIFO, a directory or a
  device is refused as such, never blocks), size limits, UTF-8 without NUL
  bytes (bad bytes reported with line and column);
* :mod:`harness.inputs.yaml` -- safe, bounded YAML (no unknown tags, no
  duplicate keys, bounded nesting and alias expansion) with a position for
  every key;
* :mod:`harness.inputs.values` -- typed checks of single values (wrong types,
  booleans where numbers belong, negative or non-finite numbers, values past a
  stated limit), shared by the loaders and the CLI;
* :mod:`harness.inputs.checker` -- the problem collector every loader builds
  on (problems located at ``file:line:column``, names, did-you-mean, simple
  type hints), and :mod:`harness.inputs.json_schema` the pieces the JSON
  Schemas of the input files are made of.

The contract: bad input is a :class:`~harness.errors.ScenarioError` (exit 2)
whose problems carry ``file:line:column`` and the key, never a traceback or a
hang.  The limits are documented in ``docs/scenario-format.md``.

Modules:

``checker``      Rules for checking any input file: located problems, names, did-you-mean, type
                 hints.
``cli_args``     Types for the command-line values of ``harness sweep`` and ``harness risk``.
``durations``    Durations as scenario files write them: ``5s``, ``500ms``, ``2m``, ``1h`` or
                 seconds.
``files``        Read one input file as text, safely.
``hostlist``     Slurm hostlist expressions, both ways.
``json_schema``  JSON Schema building blocks for input files: simple type hints as schemas,
                 names, $refs.
``lazy``         A package's re-exported names imported on first use (PEP 562), for every
                 package ``__init__`` that re-exports.
``location``     Where an input came from: the file, line and column a scenario or fabric
                 reference was read at.
``suggest``      Did-you-mean suggestions, closest match first.
``values``       Typed checks of single input values.
``xml``          Bounded XML with a line for every element.
``yaml``         Safe, bounded YAML with a position for every key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.inputs.files import MAX_DUMP_BYTES
    from harness.inputs.files import MAX_YAML_BYTES
    from harness.inputs.files import read_bytes
    from harness.inputs.files import read_text
    from harness.inputs.yaml import MAX_ALIAS_NODES
    from harness.inputs.yaml import MAX_DEPTH
    from harness.inputs.yaml import YamlDoc
    from harness.inputs.yaml import read_yaml
    from harness.inputs.yaml import read_yaml_file
    from harness.inputs.yaml import read_yaml_list

#: Each re-exported name and the module that holds it, imported on first use (PEP 562):
#: importing one module of the package does not import the others.
_EXPORTS: dict[str, str] = {
    "MAX_ALIAS_NODES": "harness.inputs.yaml",
    "MAX_DEPTH": "harness.inputs.yaml",
    "MAX_DUMP_BYTES": "harness.inputs.files",
    "MAX_YAML_BYTES": "harness.inputs.files",
    "YamlDoc": "harness.inputs.yaml",
    "read_bytes": "harness.inputs.files",
    "read_text": "harness.inputs.files",
    "read_yaml": "harness.inputs.yaml",
    "read_yaml_file": "harness.inputs.yaml",
    "read_yaml_list": "harness.inputs.yaml",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_DUMP_BYTES",
    "MAX_YAML_BYTES",
    "YamlDoc",
    "read_bytes",
    "read_text",
    "read_yaml",
    "read_yaml_file",
    "read_yaml_list",
]
