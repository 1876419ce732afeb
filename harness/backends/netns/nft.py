"""Packet loss with nftables: a flaky link's random loss (the kernel here has no netem), and a
hung switch that forwards nothing.

This kernel is built without ``CONFIG_NET_SCH_NETEM`` and without the tc
``gact`` action, so neither ``tc qdisc ... netem loss`` nor a tc filter can
drop a random fraction of a link's packets.  It has nftables with the
``netdev`` family (``CONFIG_NF_TABLES_NETDEV``) and ``numgen``
(``CONFIG_NFT_NUMGEN``): a table in the *receiving* end's namespace with a
chain on that interface's ingress hook drops each arriving packet with the
stated probability, before anything else sees it::

    table netdev <run-id>_loss<n> {
      chain ingress {
        type filter hook ingress device "<ifname>" priority 0; policy accept;
        numgen random mod 10000 < <loss x 10000> counter drop
      }
    }

One table per (fault, receiving end): overlapping faults on one end are two
chains on its hook, each drawing its own number, so their losses compound
independently as the model's do, and reverting one deletes only its table.
Every table is written to the run's ledger (kind ``nft-table``, with its
namespace and device) before ``nft`` runs; ``nft`` itself runs inside that
namespace only, started through :func:`~harness.backends.netns.spawn.spawn`
(recorded in the ledger before it runs).  A table lives in its namespace and
dies with it, so teardown -- and ``harness clean`` after a crash -- has nothing
else to remove.  After each change the kernel's ruleset is read back: a table
that is not listed on exactly that device with exactly that threshold is an
error, never a silent pass.

A **hung** switch (``hang``) gets one ``inet`` table in its namespace that drops
everything, IPv4 and IPv6, before routing and on the way out, so the switch
forwards nothing and answers nothing while its links keep carrier::

    table inet <run-id>_hang<n> {
      chain prerouting { type filter hook prerouting priority -300; policy drop; }
      chain output { type filter hook output priority -300; policy drop; }
    }

It is ledgered, created, read back (both chains listed with ``policy drop``) and
deleted the same way.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from harness.backends.ledger import Entry
from harness.backends.netns.emulation import Emulation
from harness.backends.netns.spawn import spawn
from harness.backends.run_claims import NETNS_RUN_DIR
from harness.errors import BackendError

MODULUS = 10_000  # numgen's range: the loss is realized to 0.01 %
NFT_TIMEOUT_S = 20.0
LEDGER_KIND = "nft-table"
_TABLE_RE = re.compile(r"^table netdev (\S+) \{$", re.MULTILINE)
_INET_RE = re.compile(r"^table inet (\S+) \{$", re.MULTILINE)
HANG_HOOKS = ("prerouting", "output")  # a hung switch: nothing in, nothing out


def nft_unavailable() -> str | None:
    """Why loss cannot be realized here (``None``: it can)."""
    if shutil.which("nft") is None:
        return "flaky links and hung switches need nft (apt-get install nftables)"
    return None


def threshold(loss: float) -> int:
    """The numgen threshold for a loss fraction: ``numgen random mod 10000 < N``.

    >>> threshold(0.05), threshold(0.0001), threshold(0.99999)
    (500, 1, 9999)
    """
    return min(MODULUS - 1, max(1, round(loss * MODULUS)))


def table_text(table: str, ifname: str, loss: float) -> str:
    """The nft script that creates one loss table on ``ifname``'s ingress.

    >>> print(table_text("hab12c_loss1", "p3", 0.05))
    table netdev hab12c_loss1 {
      chain ingress {
        type filter hook ingress device "p3" priority 0; policy accept;
        numgen random mod 10000 < 500 counter drop
      }
    }
    <BLANKLINE>
    """
    return (
        f"table netdev {table} {{\n"
        "  chain ingress {\n"
        f'    type filter hook ingress device "{ifname}" priority 0; policy accept;\n'
        f"    numgen random mod {MODULUS} < {threshold(loss)} counter drop\n"
        "  }\n"
        "}\n"
    )


def parse_tables(listing: str) -> dict[str, tuple[str, int]]:
    """``nft list ruleset netdev`` -> {table: (device, threshold)} of the loss tables in it.

    >>> text = '''table netdev hx_loss1 {
    ... \\tchain ingress {
    ... \\t\\ttype filter hook ingress device "p2" priority filter; policy accept;
    ... \\t\\tnumgen random mod 10000 < 250 counter packets 3 bytes 180 drop
    ... \\t}
    ... }'''
    >>> parse_tables(text)
    {'hx_loss1': ('p2', 250)}
    """
    out: dict[str, tuple[str, int]] = {}
    starts = list(_TABLE_RE.finditer(listing))
    for i, m in enumerate(starts):
        body = listing[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(listing)]
        dev = re.search(r'hook ingress device "?([^";\s]+)"?', body)
        rule = re.search(rf"numgen random mod {MODULUS} < (\d+) counter .*drop", body)
        out[m.group(1)] = (dev.group(1) if dev else "", int(rule.group(1)) if rule else -1)
    return out


def hang_text(table: str) -> str:
    """The nft script that makes a namespace drop every packet it receives or sends.

    >>> print(hang_text("hab12c_hang1"), end="")
    table inet hab12c_hang1 {
      chain prerouting { type filter hook prerouting priority -300; policy drop; }
      chain output { type filter hook output priority -300; policy drop; }
    }
    """
    chains = "".join(
        f"  chain {hook} {{ type filter hook {hook} priority -300; policy drop; }}\n"
        for hook in HANG_HOOKS
    )
    return f"table inet {table} {{\n{chains}}}\n"


def parse_hang_tables(listing: str) -> dict[str, frozenset[str]]:
    """``nft list ruleset inet`` -> {table: the hooks it drops everything on}.

    >>> text = '''table inet hx_hang1 {
    ... \\tchain prerouting {
    ... \\t\\ttype filter hook prerouting priority raw; policy drop;
    ... \\t}
    ... \\tchain output {
    ... \\t\\ttype filter hook output priority raw; policy drop;
    ... \\t}
    ... }'''
    >>> sorted(parse_hang_tables(text)["hx_hang1"])
    ['output', 'prerouting']
    """
    out: dict[str, frozenset[str]] = {}
    starts = list(_INET_RE.finditer(listing))
    for i, m in enumerate(starts):
        body = listing[m.end() : starts[i + 1].start() if i + 1 < len(starts) else len(listing)]
        hooks = re.findall(r"type filter hook (\w+) priority [^;]+; policy drop;", body)
        out[m.group(1)] = frozenset(hooks)
    return out


@dataclass(frozen=True, slots=True)
class HangTable:
    """The table that makes switch namespace ``ns`` (plan index) forward nothing."""

    ns: int
    table: str


@dataclass(frozen=True, slots=True)
class LossTable:
    """One loss table: in namespace ``ns`` (plan index), on ``ifname``, at ``loss``."""

    ns: int
    ifname: str
    table: str
    loss: float


class LossRules:
    """Creates, verifies and deletes the loss tables of one emulation."""

    def __init__(self, emu: Emulation) -> None:
        self.emu = emu
        self._serial = 0

    def _run(self, ns: int, argv: list[str], script: str = "") -> str:
        """Run ``nft ARGV`` inside the emulation's namespace ``ns``; its output."""
        emu = self.emu
        ledger = emu.ledger
        if ledger is None:
            msg = "the emulation is not up"
            raise BackendError(msg)
        name = emu.built.namespaces[ns].name
        ledger.refuse_unowned("netns", name)  # only ever inside the run's own namespaces
        proc = spawn(
            str(NETNS_RUN_DIR / name),
            ["nft", *argv],
            lambda pid: ledger.track_process(
                pid, f"nft {' '.join(argv)} in {name}", ["nft", *argv]
            ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = proc.communicate(script.encode(), timeout=NFT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            msg = f"nft {' '.join(argv)} in {name} did not finish in {NFT_TIMEOUT_S:g} s"
            raise BackendError(msg) from None
        if proc.returncode != 0:
            text = err.decode(errors="replace").strip().splitlines()
            msg = f"nft {' '.join(argv)} in {name} failed: {text[0] if text else proc.returncode}"
            raise BackendError(msg)
        return out.decode(errors="replace")

    def listed(self, ns: int) -> dict[str, tuple[str, int]]:
        """The loss tables the kernel lists in namespace ``ns``: {table: (device, threshold)}."""
        return parse_tables(self._run(ns, ["list", "ruleset", "netdev"]))

    def add(self, wanted: Sequence[tuple[int, str, float]]) -> tuple[LossTable, ...]:
        """Drop ``loss`` of what arrives on each (namespace, ifname); the tables made."""
        emu = self.emu
        assert emu.ledger is not None
        tables = []
        for ns, ifname, loss in wanted:
            self._serial += 1
            tables.append(LossTable(ns, ifname, f"{emu.ledger.run_id}_loss{self._serial}", loss))
        emu.ledger.record_many([_entry(emu, t) for t in tables])  # before nft makes them
        for ns in sorted({t.ns for t in tables}):
            mine = [t for t in tables if t.ns == ns]
            self._run(ns, ["-f", "-"], "".join(table_text(t.table, t.ifname, t.loss) for t in mine))
            listed = self.listed(ns)
            for t in mine:
                got = listed.get(t.table)
                if got != (t.ifname, threshold(t.loss)):
                    msg = (
                        f"loss table {t.table} in {emu.built.namespaces[ns].name}: the kernel "
                        f"lists {got} (device, threshold), expected {(t.ifname, threshold(t.loss))}"
                    )
                    raise BackendError(msg)
        return tuple(tables)

    def remove(self, tables: Sequence[LossTable]) -> None:
        """Delete these tables and check that the kernel no longer lists them."""
        for ns in sorted({t.ns for t in tables}):
            mine = [t for t in tables if t.ns == ns]
            script = "".join(f"delete table netdev {t.table}\n" for t in mine)
            self._run(ns, ["-f", "-"], script)
            left = set(self.listed(ns)) & {t.table for t in mine}
            if left:
                msg = (
                    f"loss tables {', '.join(sorted(left))} are still listed in "
                    f"{self.emu.built.namespaces[ns].name} after deleting them"
                )
                raise BackendError(msg)

    def hang(self, namespaces: Sequence[int]) -> tuple[HangTable, ...]:
        """Make each of these namespaces drop everything (a hung switch); the tables made."""
        emu = self.emu
        assert emu.ledger is not None
        tables = []
        for ns in namespaces:
            self._serial += 1
            tables.append(HangTable(ns, f"{emu.ledger.run_id}_hang{self._serial}"))
        emu.ledger.record_many([  # before nft makes them
            Entry(LEDGER_KIND, t.table, {"netns": emu.built.namespaces[t.ns].name,
                                         "family": "inet"})
            for t in tables
        ])  # fmt: skip
        for t in tables:
            self._run(t.ns, ["-f", "-"], hang_text(t.table))
            got = self.hanging(t.ns).get(t.table)
            if got != frozenset(HANG_HOOKS):
                msg = (
                    f"hang table {t.table} in {emu.built.namespaces[t.ns].name}: the kernel lists "
                    f"{sorted(got) if got is not None else None} as dropping everything, expected "
                    f"{list(HANG_HOOKS)}"
                )
                raise BackendError(msg)
        return tuple(tables)

    def hanging(self, ns: int) -> dict[str, frozenset[str]]:
        """The hang tables the kernel lists in namespace ``ns``: {table: hooks dropping all}."""
        return parse_hang_tables(self._run(ns, ["list", "ruleset", "inet"]))

    def unhang(self, tables: Sequence[HangTable]) -> None:
        """Delete these hang tables and check that the kernel no longer lists them."""
        for t in tables:
            self._run(t.ns, ["-f", "-"], f"delete table inet {t.table}\n")
            if t.table in self.hanging(t.ns):
                msg = (
                    f"hang table {t.table} is still listed in "
                    f"{self.emu.built.namespaces[t.ns].name} after deleting it"
                )
                raise BackendError(msg)


def _entry(emu: Emulation, t: LossTable) -> Entry:
    name = emu.built.namespaces[t.ns].name
    return Entry(LEDGER_KIND, t.table, {"netns": name, "device": t.ifname, "loss": t.loss})
