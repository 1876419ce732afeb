"""The real training job of the netns backend: torch.distributed over gloo, one rank per server.

Run as ``python -m harness.backends.netns.job_worker RUN_ID LEDGER_ROOT``, this
module is a *fork server*: it imports torch once (seconds on a loaded host) and
then, for every ``start`` command read from stdin (one JSON object a line),
forks a rank.  The fork writes its PID and start time to the run's ledger
before the rank runs (the rank waits on a pipe until then), and replies with
the PID on stdout.  The rank:

1. enters its server's network namespace (``setns``) and asks to be killed when
   the fork server dies (``PR_SET_PDEATHSIG``);
2. meets the other ranks through a ``TCPStore`` on rank 0's rail-0 address (the
   fabric's own addresses, nothing else);
3. makes one gloo process group per rail, its device bound to that rail's
   interface (``r0``, ``r1``...), with the job's NCCL-equivalent ``timeout`` as
   the process-group timeout;
4. all-reduces a tensor split across the rails in a loop (every rail's
   all-reduce in flight at once, as NCCL stripes a collective over the rails),
   checks the sum, "computes" for ``compute`` seconds (a sleep: a training step
   between all-reduces, which also keeps eight ranks within two cores), and
   appends progress lines (JSON: iterations, the time of the
   last one) to its progress file every ``heartbeat`` seconds;
5. on an error writes how it ended (``timeout`` when gloo timed out waiting,
   else ``error``), with the time of its last completed iteration, and exits 1.

Closing stdin ends the fork server, which kills its ranks first.  torch is
imported here only, never by the harness core (it is the optional ``torch``
extra).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import TextIO

from harness.backends.netns.spawn import die_with_parent
from harness.backends.netns.spawn import enter_netns

HEARTBEAT_S = 0.2
COMPUTE_S = 0.05


@dataclass(frozen=True, slots=True)
class RankConfig:
    """What one rank of one job needs (sent by the backend as JSON)."""

    job: str
    generation: int
    rank: int
    world: int
    netns: str  # /run/netns/NAME of the rank's server
    interfaces: tuple[str, ...]  # one per rail: the gloo device of that rail's group
    store_host: str  # rank 0's rail-0 address
    store_port: int
    timeout: float  # seconds: the process-group (and rendezvous) timeout
    elements: int  # float32 elements all-reduced per iteration (split across rails)
    progress: str  # file the rank appends its progress lines to
    log: str  # the rank's stdout and stderr
    compute: float = COMPUTE_S  # seconds of "compute" between all-reduces (bounds the CPU)
    heartbeat: float = HEARTBEAT_S

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> RankConfig:
        """Read a rank's configuration back from its JSON form."""
        raw = dict(raw)
        raw["interfaces"] = tuple(raw["interfaces"])
        return cls(**raw)

    def to_json(self) -> dict[str, Any]:
        """The configuration as a JSON-ready dict."""
        return asdict(self)


def _emit(out: TextIO, event: str, **data: Any) -> None:
    out.write(json.dumps({"event": event, "t": time.monotonic(), **data}) + "\n")
    out.flush()


def _ended(err: BaseException) -> str:
    text = str(err).lower()
    return "timeout" if "timed out" in text or "timeout" in text else "error"


def run_rank(cfg: RankConfig) -> int:
    """One rank, in its namespace: rendezvous, one gloo group per rail, all-reduce forever."""
    import importlib
    from datetime import timedelta

    import torch

    # the private gloo options are not in torch's type stubs: typed as Any
    dist: Any = importlib.import_module("torch.distributed")
    ProcessGroupGloo = dist.ProcessGroupGloo
    torch.set_num_threads(1)
    timeout = timedelta(seconds=cfg.timeout)
    with open(cfg.progress, "a", buffering=1) as out:
        _emit(out, "start", rank=cfg.rank, pid=os.getpid())
        last = time.monotonic()
        done = 0
        try:
            store = dist.TCPStore(cfg.store_host, cfg.store_port, cfg.world, cfg.rank == 0, timeout)
            groups = []
            for r, ifname in enumerate(cfg.interfaces):
                opts = ProcessGroupGloo._Options()
                opts._timeout = timeout
                opts._devices = [ProcessGroupGloo.create_device(interface=ifname)]
                opts._threads = 1
                prefix = dist.PrefixStore(f"{cfg.job}/{cfg.generation}/rail{r}/", store)
                groups.append(ProcessGroupGloo(prefix, cfg.rank, cfg.world, opts))
            per_rail = max(1, cfg.elements // max(1, len(groups)))
            tensors = [torch.ones(per_rail) for _ in groups]
            last = time.monotonic()
            _emit(out, "ready", it=0, last=last)
            beat = last
            while True:
                works = [g.allreduce([t]) for g, t in zip(groups, tensors, strict=True)]
                for w in works:
                    w.wait()
                for r, t in enumerate(tensors):
                    if float(t[0]) != cfg.world or float(t[-1]) != cfg.world:
                        msg = f"rail {r}: all-reduce summed to {float(t[0])}, not {cfg.world}"
                        raise RuntimeError(msg)
                    t.fill_(1.0)
                done += 1
                time.sleep(cfg.compute)
                last = time.monotonic()
                if last - beat >= cfg.heartbeat:
                    _emit(out, "progress", it=done, last=last)
                    beat = last
        except Exception as err:
            detail = " ".join(str(err).split())[:300]
            _emit(out, _ended(err), it=done, last=last, detail=f"rank {cfg.rank}: {detail}")
            return 1


# -- the fork server -------------------------------------------------------------------------
def _fork_rank(cfg: RankConfig, record: Callable[[int], None]) -> int:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the rank
        code = 1
        try:
            os.close(w)
            die_with_parent(signal.SIGKILL)
            go = os.read(r, 1)
            os.close(r)
            if go == b"g":
                fd = os.open(cfg.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.close(fd)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.close(null)
                enter_netns(cfg.netns)
                code = run_rank(cfg)
        except BaseException:  # a rank never returns into the fork server's loop
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(r)
    try:
        record(pid)
        os.write(w, b"g")
    finally:
        os.close(w)
    return pid


_reaped: set[int] = set()


def _reap(_signum: int = 0, _frame: object = None) -> None:
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            _reaped.add(pid)


def serve(run_id: str, root: Path) -> int:
    """Read ``start`` commands from stdin, fork ranks; on end-of-file kill them and exit."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch  # imported once here, shared by every fork
    import torch.distributed  # noqa: F401

    from harness.backends.ledger import Ledger
    from harness.backends.processes import process_start_ticks

    ledger = Ledger(run_id, root)
    ranks: dict[int, int | None] = {}
    signal.signal(signal.SIGCHLD, _reap)
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    try:
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd.get("op") != "start":
                continue
            cfg = RankConfig.from_json(cmd["rank"])

            def record(pid: int, cfg: RankConfig = cfg) -> None:
                ledger.track_process(pid, f"gloo rank {cfg.rank} of job {cfg.job}")

            pid = _fork_rank(cfg, record)
            ranks[pid] = process_start_ticks(pid)
            print(json.dumps({"pid": pid, "start_ticks": ranks[pid]}), flush=True)
    finally:  # a PID not reaped yet is still our child (a zombie at worst): safe to kill
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        left = [pid for pid in ranks if pid not in _reaped]
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1], Path(sys.argv[2])))
