"""The AWS CLI the project installs for the local run (`make setup`): AWS CLI v2, in `.tools/`.

Why v2: it honours `AWS_ENDPOINT_URL` for every service, so the README's plain `aws sqs ...`
lines reach the embedded AWS. AWS CLI v1 (PyPI's `awscli`, in maintenance until 2027-07-15)
pins SQS to its legacy host whatever the environment says (its `overridesslcommonname`
customization sets the endpoint unless `--endpoint-url` is given).

AWS ships v2 as a binary download, which these machines cannot reach; Debian packages it as pure
Python (`awscli` 2.x in forky, with its own botocore inside). So: the .deb from Debian, its
Python code unpacked into a venv of its own whose dependencies come from PyPI, and
`.tools/bin/aws`. That folder holds only `aws`: `make up` puts it first on PATH without
shadowing anything else. Idempotent; a failed download warns and leaves no marker, so the next
`make setup` tries again (README and docs lines then need a CLI v2 of the user's own).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from embedded_aws import download_debs
from local.paths import ROOT

TOOLS_DIR = ROOT / ".tools"
BIN_DIR = TOOLS_DIR / "bin"
ENV_DIR = TOOLS_DIR / "awscli"
MARKER = ENV_DIR / ".installed"
DEBIAN_SUITE = "forky"
# The .deb's Depends, by their PyPI names (groff only renders `aws help`).
PYPI_DEPENDENCIES = (
    "awscrt>=0.36",
    "colorama",
    "python-dateutil",
    "distro",
    "docutils",
    "jmespath",
    "prompt-toolkit",
    "ruamel.yaml",
    "urllib3",
    "wcwidth",
    "pyasn1",
)
LAUNCHER = """#!/bin/sh
# AWS CLI v2 for this project's local run (python -m local.aws_cli install).
exec "{python}" -m awscli "$@"
"""


def say(message: str) -> None:
    print(f"aws cli: {message}", file=sys.stderr, flush=True)


def aws() -> Path:
    """The project's `aws` command (it may not be installed yet)."""
    return BIN_DIR / "aws"


def version() -> str | None:
    """`aws --version` of the project's CLI, or None if it does not run."""
    try:
        done = subprocess.run([str(aws()), "--version"], capture_output=True, text=True, timeout=60)  # noqa: S603  the project's own aws CLI, no shell
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _pip(python: Path, *args: str) -> None:
    done = subprocess.run(  # noqa: S603  the CLI's venv pip on pinned packages, no shell
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if not line.startswith("WARNING")]
        raise RuntimeError(f"pip install failed: {lines[-1] if lines else done.returncode}")


def install() -> bool:
    """Set up `.tools/bin/aws`; True when it runs."""
    found = version() if MARKER.exists() else None
    if found:
        say(f"ready ({found})")
        return True
    say(f"installing AWS CLI v2 from Debian {DEBIAN_SUITE} into {TOOLS_DIR} (about 20 s, once)")
    try:
        TOOLS_DIR.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="awscli-", dir=TOOLS_DIR) as scratch:
            work = Path(scratch)
            (deb,) = download_debs(("awscli",), work, suite=DEBIAN_SUITE)
            subprocess.run(  # noqa: S603  unpacks the .deb just downloaded, no shell
                ["dpkg-deb", "-x", str(deb), str(work / "unpacked")],  # noqa: S607  Debian's dpkg-deb from PATH, as make's other steps use it
                check=True,
                capture_output=True,
                timeout=300,
            )
            shutil.rmtree(ENV_DIR, ignore_errors=True)
            venv.EnvBuilder(with_pip=True, clear=True).create(ENV_DIR)
            python = ENV_DIR / "bin" / "python"
            _pip(python, *PYPI_DEPENDENCIES)
            site = Path(
                subprocess.run(  # noqa: S603  the CLI venv's Python on a fixed snippet, no shell
                    [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.strip()
            )
            shutil.copytree(
                work / "unpacked" / "usr" / "lib" / "python3" / "dist-packages" / "awscli", site / "awscli"
            )
        BIN_DIR.mkdir(exist_ok=True)
        aws().write_text(LAUNCHER.format(python=python))
        aws().chmod(0o755)
        found = version()
        if not found or not found.startswith("aws-cli/2."):
            raise RuntimeError(f"the installed CLI does not run ({found})")
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as error:
        MARKER.unlink(missing_ok=True)
        say(
            f"warning: could not install AWS CLI v2 ({error}); `aws` in the docs needs a CLI v2 of your own "
            f"until `make setup` succeeds"
        )
        return False
    MARKER.write_text(found + "\n")
    say(found)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.aws_cli", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["install", "path"])
    args = parser.parse_args(argv)
    if args.command == "install":
        install()  # a failure is a warning, never a failed set-up
        return 0
    print(aws())
    return 0


if __name__ == "__main__":
    sys.exit(main())
