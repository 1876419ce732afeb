"""A storage bond's hash set on an explicit server, run through ``python -m harness run``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

FABRIC = """\
name: bond-explicit
tiers: 2
nodes:
  - {id: n1, model: a800, overrides: {rails: 2, bond_hash: HASH}}
  - {id: n2, model: a800, overrides: {rails: 2, storage_nics: 0}}
switches:
  - {id: leaf-r0, kind: leaf, rail: 0, ports: 8}
  - {id: leaf-r1, kind: leaf, rail: 1, ports: 8}
  - {id: spine1, kind: spine, ports: 8}
  - {id: st-sw, kind: storage-switch, ports: 8}
  - {id: store, kind: storage}
links:
  - {a: n1/nic0, b: leaf-r0, kind: access, gbps: 200}
  - {a: n2/nic0, b: leaf-r0, kind: access, gbps: 200}
  - {a: n1/nic1, b: leaf-r1, kind: access, gbps: 200}
  - {a: n2/nic1, b: leaf-r1, kind: access, gbps: 200}
  - {a: leaf-r0, b: spine1, kind: leaf-spine, gbps: 200, a_port: 5, count: 2}
  - {a: leaf-r1, b: spine1, kind: leaf-spine, gbps: 200, a_port: 5, count: 2}
  - {a: n1/stor0, b: st-sw, kind: storage, gbps: 25}
  - {a: n1/stor1, b: st-sw, kind: storage, gbps: 25}
  - {a: st-sw, b: store, kind: storage, gbps: 100}
"""

SCENARIO = """\
- name: explicit-layer3-4
  description: the server's layer3+4 bond spreads its 8 streams 4 and 4 over 25G members
  fabric: {file: fabric.yaml}
  jobs:
    - {name: train, nodes: [n1]}
  checkpoint: {size_gb: 4.9}
  steps:
    - expect:
        bond_streams: {node: n1, member: n1/stor0, is: 4}
        checkpoint_sync_stall_s: 0.784
    - inject: {cut: "st-sw:3--store:1"}
    - expect:
        storage_gbps: {node: n1, is: 0}      # no uplink: the members carry nothing...
        bond_streams: {node: n1, member: n1/stor1, is: 4}  # ...yet the bond still hashes
        checkpoint_sync_stall_s: "> 1e9"     # so the write never ends
"""


def _run(tmp_path: Path, bond_hash: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "fabric.yaml").write_text(FABRIC.replace("HASH", bond_hash), encoding="utf-8")
    (tmp_path / "bond.yaml").write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "harness", "run", str(tmp_path / "bond.yaml")],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def test_an_explicit_server_takes_its_bond_hash(tmp_path: Path) -> None:
    done = _run(tmp_path, "layer3+4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout


def test_an_unknown_bond_hash_is_bad_input_naming_the_choices(tmp_path: Path) -> None:
    done = _run(tmp_path, "layer3-4")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "layer2, layer2+3, layer3+4" in done.stdout + done.stderr
