"""Importers: fabrics read from real dumps (or one server's topology).

==================  ==========================================
format              reads
==================  ==========================================
ibnetdiscover       ``ibnetdiscover`` output, ibsim net files
simai               SimAI ns-3 topology files
containerlab        ``*.clab.yml``
nvidia-smi          ``nvidia-smi topo -m`` (one server)
nccl-topo           NCCL topology XML (one server)
netq                NetQ topology graph JSON (LLDP)
==================  ==========================================

:func:`load_dump` reads any of them, sniffing the format when it is not given.
Each reader has its module (``ibnetdiscover``, ``simai``, ``containerlab``,
``nvsmi``, ``nccl``, ``netq``; ``node`` turns one server's topology into a
fabric).  The network readers share: ``text`` (a dump read as text),
``records`` (switches, NICs, cables as the file states them), ``rules``
(:class:`InferenceRules`), ``names``, ``inference`` and ``hosts`` (roles,
rails, SUs, servers from names and wiring) and ``build`` (the fabric built
from the records).
The running jobs of a scheduler (``squeue --json``, ``squeue -o '%i|%j|%N'``
text, ``kubectl get pods -o json``) are read for ``--jobs`` by
:func:`harness.importers.jobs.load_jobs` (``jobs``, ``scheduler``,
``squeue_json``, ``squeue_text``, ``kube_pods``, ``node_map``).
Fabrics go out to other tools through :mod:`harness.exporters`;
:func:`~harness.planning.audit.diff.diff_fabrics` compares an imported fabric with
its design.  Inference rules: ``docs/importers.md``.

Modules:

``build``          Building a network from parsed records: inferred servers, switches and cables
                   as a Fabric.
``containerlab``   Fabrics from containerlab topology files (``*.clab.yml``): nodes and links
                   read back.
``hosts``          Which HCAs make up which server.
``ibnetdiscover``  Fabrics from ``ibnetdiscover`` output and ibsim net files: records, ports,
                   cables read back.
``inference``      Inference from parsed records: servers and their rails, switch roles, SUs,
                   leaf rails.
``jobs``           ``--jobs``: the jobs file, or the scheduler's own view of the running jobs.
``kube_pods``      A saved ``kubectl get pods -o json``: training jobs as the pods that run them.
``name_map``       Node name maps: OpenSM's ``node-name-map`` file, node GUID -> the name a site
                   gave it.
``names``          Names in dumps: the sort order of numbered names, and element ids made from
                   free text.
``nccl``           NCCL topology XML (``NCCL_TOPO_FILE`` / ``NCCL_TOPO_DUMP_FILE``): one server.
``netq``           NVIDIA NetQ topology graph JSON: import.
``node``           What is inside one server, as ``nvidia-smi topo -m`` or NCCL's XML shows it.
``node_map``       Scheduler node names to the fabric's servers: the stated rule and
                   ``--node-map`` files.
``nvsmi``          ``nvidia-smi topo -m`` output: one server's GPU/NIC layout.
``records``        Parsed records: a network file's switches, host NICs and cables, as the file
                   states them.
``rules``          Inference rules: the knobs by which an importer tells roles, rails and SUs
                   from names.
``scheduler``      Jobs as a scheduler sees them, turned into the jobs the analysis runs.
``simai``          SimAI (ns-3) topology files, as written by SimAI's ``gen_Topo_Template.py``.
``squeue_json``    A saved ``squeue --json``: the running jobs of a Slurm cluster and their
                   nodes.
``squeue_text``    ``squeue -h -o '%i|%j|%N'`` text: job id | job name | node list, one job a
                   line.
``text``           Dump text: a dump file read as text, safely, for every importer.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Literal
from typing import get_args

from harness.errors import Problem
from harness.errors import ScenarioError
from harness.inputs.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.fabric.model import Fabric
    from harness.importers.build import notes_of
    from harness.importers.containerlab import load_containerlab
    from harness.importers.ibnetdiscover import load_ibnetdiscover
    from harness.importers.ibnetdiscover import parse_ibnetdiscover
    from harness.importers.nccl import load_nccl_topo
    from harness.importers.netq import load_netq
    from harness.importers.node import NodeTopology
    from harness.importers.node import fabric_from_node
    from harness.importers.nvsmi import load_nvidia_smi_topo
    from harness.importers.rules import InferenceRules
    from harness.importers.simai import load_simai
    from harness.importers.simai import simai_ids

DumpFormat = Literal["ibnetdiscover", "simai", "containerlab", "nvidia-smi", "nccl-topo", "netq"]
FORMATS: tuple[str, ...] = get_args(DumpFormat)

#: Re-exported names and their modules, imported on first use (PEP 562): reading one
#: format (or ``kube_pods``' job labels for ``--help``) does not import every importer.
_EXPORTS: dict[str, str] = {
    "InferenceRules": "harness.importers.rules",
    "NodeTopology": "harness.importers.node",
    "fabric_from_node": "harness.importers.node",
    "load_containerlab": "harness.importers.containerlab",
    "load_ibnetdiscover": "harness.importers.ibnetdiscover",
    "load_nccl_topo": "harness.importers.nccl",
    "load_netq": "harness.importers.netq",
    "load_nvidia_smi_topo": "harness.importers.nvsmi",
    "load_simai": "harness.importers.simai",
    "notes_of": "harness.importers.build",
    "parse_ibnetdiscover": "harness.importers.ibnetdiscover",
    "simai_ids": "harness.importers.simai",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "FORMATS",
    "DumpFormat",
    "InferenceRules",
    "NodeTopology",
    "fabric_from_node",
    "load_containerlab",
    "load_dump",
    "load_ibnetdiscover",
    "load_nccl_topo",
    "load_netq",
    "load_nvidia_smi_topo",
    "load_simai",
    "notes_of",
    "parse_ibnetdiscover",
    "simai_ids",
    "sniff_format",
]

_IB_HEADER = re.compile(r'^(Switch|Hca|Ca)\s+\d+\s+"[^"]+"', re.MULTILINE)


def sniff_format(path: str | Path, text: str | None = None) -> DumpFormat | None:
    """Guess a dump's format from its name and content; None when unsure."""
    from harness.importers.ibnetdiscover import is_ports_report
    from harness.importers.netq import looks_like_netq
    from harness.importers.text import dump_name
    from harness.importers.text import read_text

    p = str(path)
    if text is None:
        text = read_text(p, "dump")
    name = dump_name(p).lower()
    head = text.lstrip()[:4096]
    if name.endswith((".clab.yml", ".clab.yaml")):
        return "containerlab"
    if head.startswith("<?xml") or head.startswith("<system"):
        return "nccl-topo" if "<system" in head else None
    if _IB_HEADER.search(text) or is_ports_report(text):
        return "ibnetdiscover"
    if looks_like_netq(text):
        return "netq"
    if re.search(r"^\s*(\x1b\[[0-9;]*m)?\s*GPU0\b", text, re.MULTILINE) and "Legend" in text:
        return "nvidia-smi"
    lines = [ln.split() for ln in text.splitlines()[:2]]
    if (len(lines) == 2 and len(lines[0]) in (5, 6) and all(t.isdigit() for t in lines[0][:5])
            and lines[1] and all(t.isdigit() for t in lines[1])):  # fmt: skip
        return "simai"
    if re.search(r"^topology:\s*$", text, re.MULTILINE) and re.search(r"^\s+nodes:", text, re.M):
        return "containerlab"
    return None


def load_dump(
    path: str | Path, fmt: str | None = None, *, rules: InferenceRules | None = None
) -> Fabric:
    """Read a network dump (or a one-server topology) into a :class:`Fabric`.

    ``fmt`` is one of :data:`FORMATS`; when None it is sniffed from the file.
    Raises :class:`ScenarioError` naming the file when the format is unknown
    or cannot be told, or when the file is malformed.
    """
    from harness.importers.containerlab import load_containerlab
    from harness.importers.ibnetdiscover import load_ibnetdiscover
    from harness.importers.nccl import load_nccl_topo
    from harness.importers.netq import load_netq
    from harness.importers.node import fabric_from_node
    from harness.importers.nvsmi import load_nvidia_smi_topo
    from harness.importers.simai import load_simai

    p = str(path)
    if fmt is None:
        fmt = sniff_format(p)
        if fmt is None:
            msg = (
                "cannot tell the format of this file; pass fmt= one of "
                f"{', '.join(FORMATS)} (e.g. harness audit --format ibnetdiscover)"
            )
            raise ScenarioError(Problem(msg, path=p, line=1))
    if fmt not in FORMATS:
        near = difflib.get_close_matches(fmt, FORMATS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        msg = f"unknown dump format {fmt!r}{hint} (known: {', '.join(FORMATS)})"
        raise ScenarioError(Problem(msg, path=p))
    if fmt == "ibnetdiscover":
        return load_ibnetdiscover(p, rules)
    if fmt == "simai":
        return load_simai(p)
    if fmt == "containerlab":
        return load_containerlab(p, rules)
    if fmt == "netq":
        return load_netq(p, rules)
    if fmt == "nvidia-smi":
        return fabric_from_node(load_nvidia_smi_topo(p), name=Path(p).stem)
    return fabric_from_node(load_nccl_topo(p), name=Path(p).stem)
