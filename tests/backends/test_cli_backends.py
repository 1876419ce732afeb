"""Which backends the command line offers, and runs in which nothing ran (through the CLI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import harness.backends
from harness.backends import REGISTRY
from harness.backends import available_backends
from harness.backends import describe_unavailable
from harness.cli import main

REPO = Path(__file__).resolve().parents[2]

MODEL_ONLY = """\
name: model-only
description: Runs on the model backend only (the default).
fabric:
  preset: seed-a800
steps:
  - inject: {kill: spine-05}
  - expect:
      jobs_lost: 0
"""


@pytest.fixture
def model_only(tmp_path: Path) -> Path:
    path = tmp_path / "model-only.yaml"
    path.write_text(MODEL_ONLY)
    return path


@pytest.fixture
def only_model_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pretend every backend but the model is unavailable, whatever this machine has."""

    def unavailable(name: str) -> str | None:
        return None if name == "model" else f"{name} needs what this test machine lacks"

    monkeypatch.setattr(harness.backends, "unavailable", unavailable)
    return


@pytest.fixture
def netns_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pretend netns is available (the model-only scenario never reaches it)."""
    monkeypatch.setattr(harness.backends, "unavailable", lambda name: None)
    return


def test_the_model_is_always_available() -> None:
    assert available_backends()[0] == "model"
    for line in describe_unavailable():
        name, _, why = line.partition(": ")
        assert name in {b.name for b in REGISTRY}
        assert why


@pytest.mark.usefixtures("only_model_here")
def test_help_offers_only_available_backends(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--backend {model}" in out
    assert "not available here: netns: netns needs what this test machine lacks" in out
    assert "{model,netns" not in out


@pytest.mark.usefixtures("only_model_here")
def test_an_unavailable_backend_is_bad_input_listing_the_available(
    model_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(model_only), "--backend", "netns"]) == 2
    err = capsys.readouterr().err
    assert "backend 'netns' is not available here: netns needs what this test machine lacks" in err
    assert "(available here: model)" in err


def test_an_unknown_backend_is_bad_input_listing_the_available(
    model_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(model_only), "--backend", "no-such-backend"]) == 2
    err = capsys.readouterr().err
    assert "unknown backend 'no-such-backend'" in err
    assert f"(available here: {', '.join(available_backends())})" in err
    assert main(["run", str(REPO / "scenarios"), "--backend", "no-such-backend"]) == 2


@pytest.mark.usefixtures("netns_here")
def test_nothing_ran_is_an_error_unless_allowed(
    model_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(model_only), "--backend", "netns"]) == 2
    captured = capsys.readouterr()
    assert "note: skipped model-only: runs on model, not on backend netns" in captured.err
    assert "error: nothing ran: 1 scenario skipped for backend netns" in captured.err
    assert "(pass --allow-empty to accept that)" in captured.err
    assert "0 passed, 0 failed, 0 errors, 1 skipped" in captured.out
    assert main(["run", str(model_only), "--backend", "netns", "--allow-empty"]) == 0


def test_a_tag_that_matches_nothing_is_an_error(
    model_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(REPO / "scenarios"), "--tag", "no-such-tag"]) == 2
    err = capsys.readouterr().err
    assert "error: nothing ran: no scenario in" in err
    assert "matched --tag no-such-tag (pass --allow-empty to accept that)" in err
    assert main(["run", str(model_only), "--tag", "nope", "--allow-empty", "--quiet"]) == 0


def test_sample_takes_a_count_or_all(model_only: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(model_only), "--sample", "all", "--seed", "3", "-q"]) == 0
    assert main(["run", str(model_only), "--sample", "0"]) == 2
    assert "--sample takes a positive number of pairs or 'all', not '0'" in capsys.readouterr().err
