"""``harness import DUMP -o FILE``: a dump's fabric as a fabric file every command reads.

The committed production-style plane with its five planted departures
(ibsim + OpenSM + ibnetdiscover) is imported; the file must read back into
the same fabric (elements, cables, ports, rates, server specs), and
``harness show`` and ``harness risk`` must accept it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.fabric.fabric_file import load_fabric_file
from harness.fabric.model import Fabric
from harness.importers import load_dump
from tests.importers.conftest import DUMPS

DUMP = DUMPS / "prod_hdr_broken.ibnetdiscover"


def shape(f: Fabric) -> tuple[object, ...]:
    links = sorted((f.link_id(i), float(f.link_capacity[i]), int(f.link_lanes[i]))
                   for i in range(f.n_links))  # fmt: skip
    specs = sorted((f.ids[s], f.node_spec(int(s))) for s in f.servers.tolist())
    switches = sorted((f.ids[i], int(f.ports[i]), int(f.rail[i]), int(f.su[i]))
                      for i in [*f.leaves.tolist(), *f.spines.tolist()])  # fmt: skip
    return tuple(links), tuple((i, s.gpus, s.rails, s.nic_gbps) for i, s in specs), tuple(switches)


def test_import_writes_a_fabric_file_that_reads_back_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fabric.yaml"
    assert main(["import", str(DUMP), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"wrote prod_hdr_broken to {out}: 16 server(s), 16 leaves, 3 spines" in said
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# imported from {DUMP} by harness import\n# note: ")
    assert shape(load_fabric_file(out)) == shape(load_dump(DUMP))


def test_show_and_risk_accept_the_imported_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "plane.out.gz"
    dump.write_bytes(gzip.compress(DUMP.read_bytes()))
    out = tmp_path / "fabric.yaml"
    assert main(["import", str(dump), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spines"] == 3
    code = main(["risk", str(out), "--change", "drain A10-P1-IBSPINE-01", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["fabric"] == "plane"
    assert doc["change"] == ["drained A10-P1-IBSPINE-01"]
    assert doc["ok"] is True
