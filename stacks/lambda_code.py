"""The one way this project loads its Lambda code into a Python process: `lambda` is a keyword,
so lambda/<source>/ is not a package. Each file is loaded once per process, under one name: a
handler module as `<source>_app`, every other file under its own name, as the Lambda runtime
imports it beside the handler (`import order_rules`); the handler library (guarded_consumer) is
an installed package, imported as such. Two loaders would make two copies of
the worker, and two of each of its exception types."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

LAMBDA_SOURCE = Path(__file__).resolve().parent.parent / "lambda"


def _load(path: Path, name: str) -> ModuleType:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"{path} is not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def load_module(source: str, name: str) -> ModuleType:
    """lambda/<source>/<name>.py, a module the handler imports by its own name."""
    return _load(LAMBDA_SOURCE / source / f"{name}.py", name)


def load_lambda(source: str) -> ModuleType:
    """lambda/<source>/app.py, after the modules beside it, each loaded under its own name: they
    import each other by those names, in whatever order they need, as the runtime imports them."""
    for path in sorted((LAMBDA_SOURCE / source).glob("*.py")):
        if path.name != "app.py":
            _load_beside(source, path.stem)
    return _load(LAMBDA_SOURCE / source / "app.py", f"{source}_app")


def _load_beside(source: str, name: str) -> ModuleType:
    """load_module, with the modules `name` imports from beside it loaded first (on demand)."""
    directory = str(LAMBDA_SOURCE / source)
    sys.path.insert(0, directory)
    try:
        return load_module(source, name)
    finally:
        sys.path.remove(directory)


def load_handler(directory: Path) -> ModuleType:
    """`directory/app.py` of any function (a team's worker for `ops dlq --handler`), with the
    modules beside it importable by their own names while it loads."""
    directory = directory.resolve()
    if directory == (LAMBDA_SOURCE / directory.name).resolve():
        return load_lambda(directory.name)
    sys.path.insert(0, str(directory))
    try:
        return _load(directory / "app.py", f"handler_{directory.name}_app")
    finally:
        sys.path.remove(str(directory))


def load_worker() -> ModuleType:
    """The deployed worker (lambda/worker/app.py): its parser and duplicate rule, for the tools
    that must judge messages exactly as it does."""
    return load_lambda("worker")


def package_files(source: str) -> dict[str, str]:
    """The function's package as the construct bundles it, path by path: every source file of
    lambda/<source>/, and for the worker the handler library beside them (for tests that deploy
    it by hand)."""
    files = {path.name: path.read_text() for path in sorted((LAMBDA_SOURCE / source).glob("*.py"))}
    if source == "worker":
        from idempotent_consumer.bundle import library_files

        files.update(library_files())
    return files
