"""The input layer's YAML: safe, bounded, duplicate keys refused, every key placed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ScenarioError
from harness.faults.state_file import load_jobs
from harness.faults.state_file import load_state_file
from harness.inputs.yaml import MAX_ALIAS_NODES
from harness.inputs.yaml import read_yaml
from harness.inputs.yaml import read_yaml_list

BOMB = """\
a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def problems(text: str, path: str = "f.yaml") -> list[str]:
    return [str(p) for p in read_yaml(text, path).problems]


def raised(text: str, path: str = "f.yaml") -> list[str]:
    with pytest.raises(ScenarioError) as info:
        read_yaml(text, path)
    return [str(p) for p in info.value.problems]


def test_positions_of_keys_and_values() -> None:
    doc = read_yaml("a:\n  b: [1, {c: 2}]\n", "f.yaml")
    assert doc.data == {"a": {"b": [1, {"c": 2}]}}
    assert doc.position(("a", "b", 1, "c")) == (2, 14)
    assert doc.position(("a", "b", 1, "c"), key=True) == (2, 11)


def test_duplicate_keys_are_refused_at_every_depth() -> None:
    assert problems("- {kill: spine-05, kill: spine-06}\n") == [
        "f.yaml:1:20: [[0].kill] duplicate key 'kill' (also on line 1); YAML keeps only the "
        "last one, so remove or rename one of them"
    ]
    assert len(problems("a:\n  b: {x: 1, x: 2}\n  b: 3\n")) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- !!python/object/apply:os.system ['true']\n",
         "f.yaml:1:3: [[0]] unknown tag '!!python/object/apply:os.system'"),
        ("a: !!python/name:os.system x\n", "f.yaml:1:4: [a] unknown tag '!!python/name:os.system'"),
        ("a: !custom {x: 1}\n", "f.yaml:1:4: [a] unknown tag '!custom'"),
        ("a: !!int notanumber\n", "f.yaml:1:4: [a] cannot read this value as !!int"),
        ("a: !!float x\n", "f.yaml:1:4: [a] cannot read this value as !!float"),
    ],
)  # fmt: skip
def test_unknown_tags_and_unreadable_values(text: str, expected: str) -> None:
    (problem,) = problems(text)
    assert problem.startswith(expected)


def test_an_alias_bomb_is_stopped_early() -> None:
    (problem,) = raised(BOMB)
    assert problem == (
        f"f.yaml:1:1: aliases ('*name') expand this document by more than {MAX_ALIAS_NODES:,} "
        "nodes (an alias bomb?); write the values out or use fewer aliases"
    )


def test_ordinary_aliases_still_work() -> None:
    doc = read_yaml("base: &b {gbps: 200}\nlinks: [*b, *b]\n", "f.yaml")
    assert doc.data["links"] == [{"gbps": 200}, {"gbps": 200}]


def test_deep_nesting_is_refused_with_its_place() -> None:
    assert raised("[" * 5000 + "]" * 5000) == [
        "f.yaml:1:65: the document is nested more than 64 levels deep; simplify it"
    ]
    assert raised("a:\n" + "".join("  " * i + "- \n" for i in range(1, 80)))[0].startswith(
        "f.yaml:"
    )


def test_syntax_errors_have_a_place() -> None:
    (problem,) = raised("a: [1, 2\nb: 3\n")
    assert problem.startswith("f.yaml:2:2: YAML syntax error")


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- {kill: spine-05, kill: spine-06}\n", ":1:20: [[0].kill] duplicate key 'kill'"),
        ("- !!python/object/apply:os.system ['true']\n", ":1:3: [[0]] unknown tag"),
        ("- kill: !!int notanumber\n", ":1:9: [[0].kill] cannot read this value as !!int"),
        ("[" * 5000, ":1:65: the document is nested more than 64 levels deep"),
        ("- {1: 2}\n", ":1:3: unknown fault kind '1'"),
        ("- {1: 2, kill: x}\n", ":1:3: an inject step takes exactly one fault"),
        (BOMB.replace("a:", "- a:", 1).replace("\nb", "\n  b").replace("\nc", "\n  c")
         .replace("\nd", "\n  d").replace("\ne", "\n  e").replace("\nf", "\n  f")
         .replace("\ng", "\n  g").replace("\nh", "\n  h").replace("\ni", "\n  i"),
         ":1:1: aliases ('*name') expand this document by more than"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", ":1:1: the state file is not UTF-8 text (byte 0x89"),
        ("kill: spine-05\n", ":1:1: a state file is a YAML list, e.g. '- kill: su02/leaf-r1'"),
    ],
)  # fmt: skip
def test_hostile_state_files(tmp_path: Path, text: str | bytes, expected: str) -> None:
    path = write(tmp_path, "state.yaml", text)
    with pytest.raises(ScenarioError) as info:
        load_state_file(path)
    assert str(info.value.problems[0]).startswith(f"{path}{expected}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- {name: a, nodes: x, name: b}\n", ":1:23: [[0].name] duplicate key 'name'"),
        ("- !!python/object:harness.fabric.jobs.JobSpec {}\n", ":1:3: [[0]] unknown tag"),
        ("- {name: a, nodes: !!binary aGk=}\n", ":1:3: job 'a' needs nodes"),
        ("- {1: 2}\n", ":1:3: unknown job key '1'"),
    ],
)
def test_hostile_jobs_files(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "jobs.yaml", text)
    with pytest.raises(ScenarioError) as info:
        load_jobs(str(path))
    assert str(info.value.problems[0]).startswith(f"{path}{expected}")


def test_read_yaml_list_requires_a_list(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", "{a: 1}\n")
    with pytest.raises(ScenarioError, match=r"x.yaml:1:1: a thing file is a YAML list, e.g. '- a'"):
        read_yaml_list(path, "thing", "- a")
