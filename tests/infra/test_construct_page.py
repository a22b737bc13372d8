"""docs/construct.md as a team reads it: its install block run as written in a clean shell (a
fresh venv, the documented `pip install`), its two Python files written as named, its synth block
run as written; the app synthesizes with no error or warning annotation, and the construct it
made guards the page's key. (Its props table: tests/infra/test_consumer_construct.py.)"""

from __future__ import annotations

import json
import re

import pytest

from local.paths import NODE_BIN, ROOT
from tests.documented import blocks, clean_env, run_in_one_shell

# A long workload (a venv, an install, a synth in a fresh interpreter): scheduled with the first.
pytestmark = [pytest.mark.slow, pytest.mark.long_wait(90)]

PAGE = "docs/construct.md"
PYTHON_BLOCK = re.compile(r"```python\n# (?P<name>[\w/.]+)\n(?P<body>.*?)```", re.DOTALL)


def page_files() -> dict[str, str]:
    """The page's Python blocks by the file name on their first line."""
    return {m["name"]: m["body"] for m in PYTHON_BLOCK.finditer((ROOT / PAGE).read_text())}


def test_the_pages_app_is_complete_and_short():
    """The page's app is two files, named on their first lines, under 40 lines together."""
    files = page_files()
    assert set(files) == {"app.py", "handler/app.py"}
    assert sum(len(body.splitlines()) + 1 for body in files.values()) < 40


def test_the_pages_app_installs_and_synthesizes_in_a_fresh_venv(tmp_path):
    """The install block in a clean shell puts the distribution into a fresh venv (not this
    tree's copy); the synth block makes the page's app with no error or warning annotation, a
    table keyed on refund_id and a mapping of batch size 10."""
    home = tmp_path / "home"
    # The CDK runs on Node 22 or 24 (the page says so); pip skips compiling aws-cdk-lib's ~300
    # modules to bytecode (about 20 CPU-seconds; the install is the same otherwise).
    env = clean_env(home, PIP_COMPILE="0")
    env["PATH"] = f"{NODE_BIN}:{env['PATH']}"
    install, synth = [b for b in blocks(PAGE) if b.runner == "tests/infra/test_construct_page.py"]
    ran = run_in_one_shell(list(install.commands), env)
    assert [r.rc for r in ran] == [0, 0], ran[-1].output[-2000:]
    site = next((home / "team-venv" / "lib").glob("python3.*/site-packages"))
    assert (site / "idempotent_consumer" / "consumer.py").is_file()  # installed, not this tree's
    for name, body in page_files().items():
        (home / "team-app" / name).parent.mkdir(parents=True, exist_ok=True)
        (home / "team-app" / name).write_text(body)
    (done,) = run_in_one_shell(list(synth.commands), env)
    assert done.rc == 0, done.output[-2000:]

    out = home / "team-app" / "cdk.out"
    annotations = [
        (path, entry["type"], entry.get("data"))
        for path, entries in json.loads((out / "refunds.metadata.json").read_text()).items()
        for entry in entries
        if entry["type"] in ("aws:cdk:error", "aws:cdk:warning")
    ]
    assert annotations == []
    template = json.loads((out / "refunds.template.json").read_text())
    (table,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::DynamoDB::Table"]
    assert table["Properties"]["KeySchema"] == [{"AttributeName": "refund_id", "KeyType": "HASH"}]
    (mapping,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mapping["Properties"]["BatchSize"] == 10


def test_the_page_is_linked_from_the_readme_first_screen():
    """A team finds the page from the README's first screen."""
    first_screen = "\n".join((ROOT / "README.md").read_text().splitlines()[:30])
    assert "docs/construct.md" in first_screen
