"""Audits of the state a change meets: the faults a ``--state`` argument names.

A ``--state`` value is a state file, a live topology dump (audited against the
design, its differences turned into faults) or faults written inline; this
module tells them apart.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.errors import ScenarioError
from harness.fabric.model import Fabric
from harness.faults.fault import Fault
from harness.faults.state_file import load_state_file
from harness.faults.text import parse_faults
from harness.planning.audit.faults import faults_from_audit


def state_faults(fabric: Fabric, value: str | None) -> tuple[list[Fault], list[str]]:
    """The faults a ``--state`` value puts on ``fabric``, and notes on what is not modelled.

    The value is sniffed: a file that is a topology dump (any format
    :func:`~harness.importers.sniff_format` knows) is compared with ``fabric``
    and its differences become faults; any other file is a state file (a YAML
    list of faults); a value that is no file but reads as faults
    (``"kill su02/leaf-r1"``) is parsed as for ``--change``.  None: no faults.

    >>> from harness.fabric.presets import preset
    >>> state_faults(preset("seed-a800"), "kill spine-05")[0][0].kind.value
    'kill'
    """
    if value is None:
        return [], []
    path = Path(value)
    if not path.exists():  # a FIFO or a directory: the reader says so
        if re.search(r"[\s:{\[;@]", value):  # not a file name: faults as for --change
            return list(parse_faults(value, "--state")), []
        msg = (
            f"--state {value}: no such file; give a state file, a topology dump or faults "
            "such as 'kill su02/leaf-r1'"
        )
        raise ScenarioError(msg)
    from harness.importers import sniff_format
    from harness.inputs.files import read_text

    if sniff_format(path, read_text(path, "state")) is None:
        return load_state_file(path), []
    from harness.importers import load_dump
    from harness.planning.audit.diff import diff_fabrics

    live = load_dump(path)
    return faults_from_audit(fabric, diff_fabrics(live, fabric))
