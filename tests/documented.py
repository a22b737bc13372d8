"""The shell blocks of the README and docs/, and a clean shell to run them in as a new user would.

Every ```sh block is preceded by a marker saying which test runs it as written
(`<!-- run by tests/e2e/test_x.py ... -->`, or `<!-- run by .ci/run ... -->` for the README's
first two commands, which CI runs on a fresh clone) or why none can (`<!-- not run by the
tests: ... -->`); tests/unit/test_docs.py fails on a block without one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"(?:<!-- (?P<marker>[^>]*?) -->\n)?```sh\n(?P<body>.*?)```", re.DOTALL)
# What a fresh machine has: the system's Python and Node, make, bash, coreutils; no global AWS
# CLI, pytest or pyenv (the test asserts that this PATH finds none of them).
BARE_PATH = "/usr/bin:/bin"
MARK = "@@@"


@dataclass(frozen=True)
class Block:
    document: str
    line: int  # of the opening fence
    marker: str | None
    commands: tuple[str, ...]  # one per command; a trailing backslash joins lines

    @property
    def runner(self) -> str | None:
        """The file that runs this block (a test module, or .ci/run), from its marker."""
        found = re.match(r"run by (tests/\S+\.py|\.ci/run)", self.marker or "")
        return found[1] if found else None

    @property
    def bare_commands(self) -> list[str]:
        """The commands without their trailing comments."""
        return [re.sub(r"\s+#.*$", "", command) for command in self.commands]


def blocks(document: str) -> list[Block]:
    text = (ROOT / document).read_text()
    found = []
    for match in FENCE.finditer(text):
        commands, pending = [], ""
        for line in match["body"].splitlines():
            pending += line
            if pending.endswith("\\"):
                pending += "\n"
                continue
            if pending.strip():
                commands.append(pending)
            pending = ""
        found.append(
            Block(document, text.count("\n", 0, match.start("body")), match["marker"], tuple(commands))
        )
    return found


def all_blocks() -> list[Block]:
    return [block for document in DOCUMENTS for block in blocks(document)]


def block_starting(document: str, first_word: str, runner: str) -> Block:
    """The block of `document` run by `runner` whose first command starts with `first_word`."""
    (found,) = [b for b in blocks(document) if b.runner == runner and b.commands[0].startswith(first_word)]
    return found


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A login-less environment with only BARE_PATH: nothing of this process's venv, PATH or AWS_*."""
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": BARE_PATH, "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb", **extra}


def which(command: str, env: dict[str, str]) -> str | None:
    return shutil.which(command, path=env["PATH"])


@dataclass(frozen=True)
class Ran:
    command: str
    rc: int
    output: str  # stdout and stderr, in order
    ended: float  # epoch seconds


def run_in_one_shell(
    commands: list[str], env: dict[str, str], timeout: float = 600, env_dump: Path | None = None
) -> list[Ran]:
    """Run `commands` as written, one after another, in one `bash` (so what one exports the next
    sees), each one's exit status and output recorded. With `env_dump`, the shell's environment
    at the end is written there (NUL-separated) for a later shell."""
    lines = ["exec 2>&1"]
    for number, command in enumerate(commands):
        lines += [f"echo '{MARK} {number}'", command, f'echo "{MARK} {number} rc=$? at=$(date +%s.%N)"']
    if env_dump is not None:
        lines.append(f"env -0 > '{env_dump}'")
    done = subprocess.run(
        ["bash", "-c", "\n".join(lines)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        timeout=timeout,
    )
    found = []
    for number, command in enumerate(commands):
        section = re.search(
            rf"^{MARK} {number}\n(.*?)^{MARK} {number} rc=(\d+) at=([\d.]+)$",
            done.stdout,
            re.DOTALL | re.MULTILINE,
        )
        assert section, f"command {number} ({command!r}) did not run to its end:\n{done.stdout[-3000:]}"
        found.append(Ran(command, int(section[2]), section[1], float(section[3])))
    return found


def read_env_dump(path: Path) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in path.read_text().split("\0") if "=" in item)
    return {key: value for key, value in pairs if key not in ("_", "SHLVL", "PWD", "OLDPWD")}


def bare_path_premise(env: dict[str, str]) -> None:
    """The clean shell really is a fresh machine's: Python 3.11+ and Node, no aws or pytest."""
    assert which("aws", env) is None and which("pytest", env) is None, "BARE_PATH holds an aws or pytest"
    python = which("python3", env)
    assert python, "no python3 on BARE_PATH"
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info >= (3, 11))"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert version.stdout.strip() == "True", version
    assert which("node", env) and which("npm", env) and which("make", env)
    assert "pyenv" not in os.path.realpath(python)
