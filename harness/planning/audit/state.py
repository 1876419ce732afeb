"""Audits of the state a change meets: the faults a ``--state`` argument names.

A ``--state`` value is a state file, a live topology dump (audited against the
design, its differences turned into faults and its wrong-rail cables moved on
the design) or faults written inline; this module tells them apart.
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


def live_state(fabric: Fabric, value: str | None) -> tuple[Fabric, list[Fault], list[str]]:
    """The fabric a ``--state`` value leaves, its faults, and notes on what is not modelled.

    The value is sniffed: a file that is a topology dump (any format
    :func:`~harness.importers.sniff_format` knows) is compared with ``fabric``
    and its differences become faults, its NICs cabled to the wrong rail's leaf
    are moved there on the design (:func:`~harness.planning.audit.rewire.rewired`:
    NCCL still uses them for their rail, over the spines), and the fabric
    returned is that re-cabled design; any other file is a state file (a YAML
    list of faults); a value that is no file but reads as faults
    (``"kill su02/leaf-r1"``) is parsed as for ``--change``.  None: no faults.
    The fabric returned is ``fabric`` itself unless a cable was moved.

    >>> from harness.fabric.presets import preset
    >>> f = preset("seed-a800")
    >>> live, faults, notes = live_state(f, "kill spine-05")
    >>> live is f, faults[0].kind.value
    (True, 'kill')
    """
    if value is None:
        return fabric, [], []
    path = Path(value)
    if not path.exists():  # a FIFO or a directory: the reader says so
        if re.search(r"[\s:{\[;@]", value):  # not a file name: faults as for --change
            return fabric, list(parse_faults(value, "--state")), []
        msg = (
            f"--state {value}: no such file; give a state file, a topology dump or faults "
            "such as 'kill su02/leaf-r1'"
        )
        raise ScenarioError(msg)
    from harness.importers import sniff_format
    from harness.inputs.files import read_text

    if sniff_format(path, read_text(path, "state")) is None:
        return fabric, load_state_file(path), []
    from harness.importers import load_dump
    from harness.planning.audit.diff import diff_fabrics
    from harness.planning.audit.rewire import movable
    from harness.planning.audit.rewire import rewired

    report = diff_fabrics(load_dump(path), fabric)
    faults, notes = faults_from_audit(fabric, report)
    notes += [
        f"{w.nic} (rail {w.nic_rail}) is cabled to {w.leaf} (rail {w.leaf_rail}): modelled "
        f"cabled there (NCCL sends its rail-{w.nic_rail} traffic across the spines)"
        for w in report.wrong_rail
        if movable(fabric, w)
    ]
    return rewired(fabric, report.wrong_rail), faults, notes


def state_faults(fabric: Fabric, value: str | None) -> tuple[list[Fault], list[str]]:
    """The faults a ``--state`` value puts on the fabric :func:`live_state` returns, and notes.

    >>> from harness.fabric.presets import preset
    >>> state_faults(preset("seed-a800"), "kill spine-05")[0][0].kind.value
    'kill'
    """
    return live_state(fabric, value)[1:]
