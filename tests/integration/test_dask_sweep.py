"""Sweeps sharded over a real Dask cluster give the rows of a local run."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from distributed import LocalCluster

from harness.cli import main
from harness.fabric.jobs import JobSpec
from harness.planning.sweep import SweepResult
from harness.planning.sweep import SweepSpec
from harness.planning.sweep import run_sweep
from harness.reporting.sweep_files import row

SPEC = SweepSpec("seed-a800", (JobSpec(per_su=True),))


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """Two worker processes of one thread each; closed when the module is done."""
    # Loopback only, and a free port for the scheduler's HTTP server: with no address it
    # falls back to the fixed 8787 and warns (an error here) when another run holds it.
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def rows(result: SweepResult) -> list[dict[str, object]]:
    return [row(result, c) for c in result.cases]


def test_dask_sweep_same_rows_as_local(scheduler: str) -> None:
    local = run_sweep(SPEC)
    remote = run_sweep(SPEC, scheduler=scheduler)
    assert rows(remote) == rows(local)
    assert (len(remote.cases), remote.disconnecting, remote.job_losing) == (2460, 0, 1640)
    assert remote.exact_cases == local.exact_cases


def test_dask_sweep_reports_progress(scheduler: str) -> None:
    seen: list[tuple[int, int]] = []
    spec = SweepSpec("seed-a800", (JobSpec(per_su=True),), categories=("switches",))
    run_sweep(spec, scheduler=scheduler, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (60, 60)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_cli_sweep_on_a_scheduler(scheduler: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "seed-a800", "--scheduler", scheduler, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["cases"], doc["disconnecting"], doc["job_losing"]) == (2460, 0, 1640)
    assert main(["sweep", "seed-a800", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == doc["rows"]
