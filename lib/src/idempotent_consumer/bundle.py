"""A worker's deployment package: the team's handler directory with the handler library
(guarded_consumer) beside it, staged once per content in a directory of its own that the
function's asset is made from. The package holds only Python source: what the handler imports,
the library, and nothing of CDK."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import guarded_consumer

LIBRARY = Path(guarded_consumer.__file__).resolve().parent
LIBRARY_PACKAGE = LIBRARY.name


def library_files() -> dict[str, str]:
    """The handler library's modules by their path in a deployment package."""
    return {f"{LIBRARY_PACKAGE}/{path.name}": path.read_text() for path in sorted(LIBRARY.glob("*.py"))}


def _source_files(handler_directory: Path) -> dict[str, bytes]:
    files = {
        str(path.relative_to(handler_directory)): path.read_bytes()
        for path in sorted(handler_directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    clash = sorted(name for name in files if name.split("/", 1)[0] == LIBRARY_PACKAGE)
    if clash:
        raise ValueError(
            f"handler directory {handler_directory} has its own {clash[0]}: the construct bundles {LIBRARY_PACKAGE}"
        )
    return {**files, **{name: text.encode() for name, text in library_files().items()}}


def stage(handler_directory: Path) -> Path:
    """A directory holding the handler's files and the library, named after their content: the
    same sources give the same directory (and asset hash) in every synth."""
    if not (handler_directory / "app.py").is_file():
        raise ValueError(f"handler directory {handler_directory} has no app.py (the handler is app.handler)")
    files = _source_files(handler_directory)
    digest = hashlib.sha256()
    for name, content in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    target = Path(tempfile.gettempdir()) / f"idempotent-consumer-{digest.hexdigest()[:24]}"
    if target.is_dir():
        return target
    # Written beside the target and renamed into place: a concurrent synth sees all or nothing.
    building = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
    for name, content in files.items():
        path = building / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    try:
        os.rename(building, target)
    except OSError:  # another synth put the same content there first
        shutil.rmtree(building, ignore_errors=True)
    return target
