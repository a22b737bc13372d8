"""The pins: requirements.lock, what make installs, still satisfies every requirement it was
resolved from (an edit to requirements*.txt or embedded_aws/pyproject.toml without `make lock`
fails here), and renovate.json proposes the CDK's parts as one update."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def requirements(path: Path) -> list[Requirement]:
    """The requirement lines of a requirements file and of the files it includes with -r."""
    found = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            found += requirements(path.parent / line[3:].strip())
        elif line:
            found.append(Requirement(line))
    return found


def locked() -> dict[str, str]:
    pins = re.findall(
        r"^([A-Za-z0-9._-]+)==([^\s\\]+)", (ROOT / "requirements.lock").read_text(), re.MULTILINE
    )
    return {canonicalize_name(name): version for name, version in pins}


def test_the_lock_pins_every_requirement_within_its_range():
    """Each requirement (tests', the app's, the embedded AWS's) is pinned in the lock at a version
    its specifier allows, and every pin carries a hash."""
    project = tomllib.loads((ROOT / "embedded_aws" / "pyproject.toml").read_text())["project"]
    wanted = requirements(ROOT / "requirements-dev.txt") + [Requirement(d) for d in project["dependencies"]]
    pins = locked()
    outside = {
        str(r): pins.get(canonicalize_name(r.name))
        for r in wanted
        if not r.specifier.contains(pins.get(canonicalize_name(r.name), "0.0.0.dev0"), prereleases=True)
    }
    assert outside == {}
    blocks = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements.lock").read_text().split("\n\n", 1)[1])
    assert all("--hash=sha256:" in block for block in blocks if "==" in block)


def test_renovate_updates_the_cdk_parts_together():
    """aws-cdk-lib, the CDK CLI, constructs and cdk-nag come in one update (a CLI older than the
    library cannot read its cloud assembly; cdk-nag is built against the library), and each name
    in that group is a dependency of this project."""
    rules = json.loads((ROOT / "renovate.json").read_text())["packageRules"]
    (cdk,) = [rule for rule in rules if rule.get("groupName") == "AWS CDK"]
    npm = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    assert {"aws-cdk-lib", "aws-cdk", "cdk-nag"} <= set(cdk["matchPackageNames"])
    assert set(cdk["matchPackageNames"]) <= set(locked()) | set(npm)
