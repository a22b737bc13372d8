"""The patch registry (embedded_aws/compat/): the installed moto fits every declared patch, each
target has one owner, and a moto that moved refuses to start with one line naming what changed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from packaging.requirements import Requirement

from embedded_aws.compat.patches import REGISTRY
from embedded_aws.compat.registry import (
    SUPPORTED_MOTO,
    IncompatibleMoto,
    Patch,
    Registry,
    Target,
    changed,
    declare,
    declared,
    install,
    state,
)

DISTRIBUTION = Path(__file__).resolve().parents[2]
# Two fresh interpreters that import moto whole: started with the long modules, not after them.
pytestmark = [pytest.mark.long_wait(10)]


def test_the_installed_moto_fits_every_patch():
    """What `EmbeddedAWS.start` checks before it changes anything: run first on an upgrade."""
    assert REGISTRY.problems() == []


def test_every_target_belongs_to_one_patch():
    """All wrappers of one moto attribute are composed in one place, so their order is written
    down instead of depending on which module was applied first."""
    assert REGISTRY.duplicate_targets() == {}


def test_the_package_declares_the_moto_range_the_registry_checks():
    project = tomllib.loads((DISTRIBUTION / "pyproject.toml").read_text())["project"]
    (moto,) = [Requirement(line) for line in project["dependencies"] if Requirement(line).name == "moto"]
    assert moto.specifier == Requirement(f"moto{SUPPORTED_MOTO}").specifier


def test_every_patch_says_why_and_what_it_touches():
    assert [p.name for p in REGISTRY.patches if not p.reason or not p.targets] == []
    assert len({p.name for p in REGISTRY.patches}) == len(REGISTRY.patches)


def test_every_patch_changes_exactly_what_it_declares():
    """Applied in a fresh interpreter (moto patched for good there): every declared target is
    replaced, no attribute of a moto or werkzeug module or class that no patch declares is
    rebound, added or removed, and undo puts every one back as it was."""
    script = (
        "import json, sys\n"
        "from embedded_aws.compat.patches import REGISTRY, Context\n"
        "from embedded_aws.compat.registry import attributes, changed\n"
        "from embedded_aws.services.cloudwatch.service import LocalCloudWatch\n"
        "REGISTRY.problems()\n"  # imports every target's module, so the snapshot holds them
        "loaded = set(sys.modules)\n"
        "before = attributes()\n"
        "REGISTRY.apply(Context(port=1, host=None, cloudwatch=LocalCloudWatch()))\n"
        "after = attributes()\n"
        "declared = REGISTRY.declared_targets()\n"
        "unchanged = REGISTRY.unchanged_targets()\n"
        "REGISTRY.undo()\n"
        "print(json.dumps({\n"
        "    'undeclared': sorted(changed(before, after) - declared),\n"
        "    'unchanged': unchanged,\n"
        "    'not undone': sorted(changed(before, attributes())),\n"
        "    'loaded by apply': sorted(m for m in set(sys.modules) - loaded if m.startswith(('moto', 'werkzeug'))),\n"
        "    'problems after undo': REGISTRY.problems(),\n"
        "}))\n"
    )
    assert _last_json_line(script) == {
        "undeclared": [],
        "unchanged": [],
        "not undone": [],
        "loaded by apply": [],  # a module loaded by apply would have no snapshot to compare with
        "problems after undo": [],
    }


def test_every_private_name_of_moto_the_package_uses_is_declared():
    """A private name the package uses but does not define (`queue._messages`,
    `response._get_param`, `self._headers` in a function installed into a moto class) is moto's or
    botocore's internal, and each such one is declared by a patch (replaced, read, or state checked
    on a new object): the start-up check covers every internal the emulator touches, not only
    those it replaces. The package's own are its functions, classes and names, and what the
    methods of its classes set on `self`."""
    own: set[str] = set()
    used: dict[str, str] = {}
    for where, tree in _sources():
        methods = {
            id(member)
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            for member in node.body
            if isinstance(member, ast.FunctionDef)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                own.add(node.name)
                if id(node) in methods:
                    own.update(
                        target.attr
                        for target in ast.walk(node)
                        if isinstance(target, ast.Attribute)
                        and isinstance(target.ctx, ast.Store)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                    )
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                own.add(node.id)
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                used.setdefault(node.attr, f"{where}:{node.lineno}")
    assert {name: where for name, where in used.items() if name not in own | _declared_names()} == {}


# Set on a model by moto's parse_and_create_resource after it is made, so no new object shows
# them: an import binds a model with them (test_imports.py deploys through it).
SET_AFTER_CREATE = {"logical_resource_id", "cf_resource_type"}


def test_every_attribute_the_package_sets_on_an_object_not_its_own_is_declared():
    """An attribute written on anything but `self` or the package's own objects (its classes'
    attributes, its thread-locals) is moto's or botocore's state, or one a patch adds to moto's
    objects: each is declared (`state`, with `adds` for the added ones), since a write to a name
    moto renamed would be lost without an error."""
    own: set[str] = set()
    written: dict[str, str] = {}
    for where, tree in _sources():
        thread_locals = {
            target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) in ("threading.local", "local")
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                own.update(
                    member.attr if isinstance(member, ast.Attribute) else member.target.id  # type: ignore[union-attr]
                    for member in ast.walk(node)
                    if (
                        isinstance(member, ast.Attribute)
                        and isinstance(member.ctx, ast.Store)
                        and _on(member, "self")
                    )
                    or (isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name))
                )
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and not node.attr.startswith("__")
            ) and not _on(node, "self", "cls", *thread_locals):
                written.setdefault(node.attr, f"{where}:{node.lineno}")
    allowed = own | _declared_names() | SET_AFTER_CREATE
    assert {name: where for name, where in written.items() if name not in allowed} == {}


def _sources() -> Iterator[tuple[str, ast.Module]]:
    """Each module of the package, by its path under src/embedded_aws/, parsed."""
    source = DISTRIBUTION / "src" / "embedded_aws"
    for path in sorted(source.rglob("*.py")):
        yield str(path.relative_to(source)), ast.parse(path.read_text(), filename=str(path))


def _declared_names() -> set[str]:
    """The attribute each declared target names (the last part of its path), of every patch."""
    return {
        target.path.partition(":")[2].rpartition(".")[2] for p in REGISTRY.patches for target in p.targets
    }


def _on(node: ast.Attribute, *names: str) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id in names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_a_moto_object_missing_a_declared_attribute_refuses_the_start_naming_it():
    """The state a patch reads is checked on a new moto object before anything is patched: a
    moto whose queues no longer keep `_messages` refuses the emulator's start in one line naming
    it, and leaves moto as it was."""
    script = (
        "import json\n"
        "from moto.sqs.models import Queue, SQSBackend\n"
        "made = Queue.__init__\n"
        "def without_messages(self, *args, **kwargs):\n"
        "    made(self, *args, **kwargs)\n"
        "    del self._messages\n"
        "Queue.__init__ = without_messages\n"
        "receive = SQSBackend.receive_message\n"
        "from embedded_aws.compat.registry import IncompatibleMoto\n"
        "from embedded_aws.server.emulator import EmbeddedAWS\n"
        "try:\n"
        "    EmbeddedAWS(port=1).start(host=None)\n"
        "except IncompatibleMoto as refused:\n"
        "    print(json.dumps({'refused': str(refused), 'unchanged': SQSBackend.receive_message is receive}))\n"
    )
    answer = _last_json_line(script)
    assert answer["unchanged"] and "\n" not in answer["refused"]
    assert answer["refused"].startswith(
        "embedded-aws cannot patch this moto: patch sqs.message-calls: "
        "moto.sqs.models:Queue._messages is not set on a new Queue"
    )


def test_state_is_checked_on_a_new_object_and_a_failing_constructor_is_named():
    def made() -> Subject:
        return Subject()

    def broken() -> Subject:
        raise TypeError("__init__() missing 1 required positional argument: 'region'")

    assert state(f"{MODULE}:Subject.kept", made).problem() is None
    assert (
        state(f"{MODULE}:Subject.gone", made).problem()
        == f"{MODULE}:Subject.gone is not set on a new Subject"
    )
    assert state(f"{MODULE}:Subject.kept", broken).problem() == (
        f"{MODULE}:Subject.kept: a new Subject cannot be made to check it "
        "(__init__() missing 1 required positional argument: 'region')"
    )


def _last_json_line(script: str) -> Any:
    """What `script`, run in a fresh interpreter, printed last (as JSON); it must exit 0."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_changed_names_what_was_rebound_added_or_removed():
    """The comparison the test above relies on: identity, not equality, and both directions."""
    same, other = [1], [1]
    before = {"m:kept": same, "m:rebound": same, "m:removed": same}
    after = {"m:kept": same, "m:rebound": other, "m:added": same}
    assert changed(before, after) == {"m:rebound", "m:removed", "m:added"}


def test_undo_of_an_inherited_method_leaves_the_subclass_inheriting():
    """A patch that sets a method on a subclass that inherited it is undone by deleting it from
    the subclass, so the subclass follows its base again."""

    def apply(context):
        install(Child, "method", lambda self, a, b: "patched")

    registry = Registry(
        [Patch("child", "a test", (Target(f"{MODULE}:Child.method", ("self", "a", "b")),), apply)], ">=0"
    )
    registry.apply("context")
    assert "method" in vars(Child) and registry.unchanged_targets() == []
    registry.undo()
    assert "method" not in vars(Child) and Child().method(1, 2) == "original"


def test_a_patch_that_changes_what_it_does_not_declare_is_refused_naming_it():
    """A patch writes only the attributes it declares, so the start-up check covers every change:
    one that sets another is refused while it is applied, in one line naming the attribute."""

    def apply(context):
        install(Subject, "method", lambda self, a, b: "patched")
        install(Subject, "undeclared", lambda self: "sneaked in")

    registry = Registry([Patch("subject", "a test", (Target(f"{MODULE}:Subject.method"),), apply)], ">=0")
    with pytest.raises(
        TypeError, match=r"^patch subject changes Subject.undeclared, which it does not declare$"
    ):
        registry.apply("context")
    registry.undo()
    assert Subject().method(1, 2) == "original" and not hasattr(Subject, "undeclared")


class Subject:
    def __init__(self):
        self.kept = "state"

    def method(self, a, b):
        return "original"


class Child(Subject):
    pass


def _registry(*targets: Target, supported: str = ">=0", applied: list | None = None) -> Registry:
    def apply(context):
        (applied if applied is not None else []).append(context)
        install(Subject, "method", lambda self, a, b: "patched")
        install(Subject, "added", lambda self: "added")  # a patch may add a method

    return Registry([Patch("subject", "a test", targets, apply)], supported)


MODULE = __name__


def test_a_changed_signature_refuses_at_start_with_one_line_and_changes_nothing():
    applied: list = []
    registry = _registry(Target(f"{MODULE}:Subject.method", ("self", "a", "c")), applied=applied)
    with pytest.raises(IncompatibleMoto) as refused:
        registry.apply("context")
    message = str(refused.value)
    assert "\n" not in message
    assert f"patch subject: {MODULE}:Subject.method takes (self, a, b), expected (self, a, c)" in message
    assert applied == [] and Subject.method(Subject(), 1, 2) == "original"


def test_a_missing_target_and_a_moto_outside_the_range_are_named():
    registry = _registry(
        Target(f"{MODULE}:Subject.gone"), Target(f"{MODULE}:Subject.method", adds=True), supported="<1"
    )
    problems = registry.problems()
    assert problems[0].startswith("moto ") and "embedded-aws supports moto<1" in problems[0]
    assert problems[1:] == [
        f"patch subject: {MODULE}:Subject.gone is gone",
        f"patch subject: moto now has {MODULE}:Subject.method: the patch adding it may be obsolete",
    ]
    with pytest.raises(IncompatibleMoto, match=r"\(and 2 more: python -m embedded_aws.compat\)$"):
        registry.apply("context")


def test_apply_once_in_order_then_undo():
    applied: list = []
    registry = _registry(
        Target(f"{MODULE}:Subject.method", ("self", "a", "b")),
        Target(f"{MODULE}:Subject.added", adds=True),
        applied=applied,
    )
    registry.apply("context")
    registry.apply("again")
    assert applied == ["context"] and registry.applied == ["subject"]
    assert Subject.method(Subject(), 1, 2) == "patched" and registry.problems() == []
    assert registry.unchanged_targets() == []
    registry.undo()
    assert Subject.method(Subject(), 1, 2) == "original" and not hasattr(Subject, "added")


def test_every_declared_patch_is_in_the_applied_order():
    """A function declared with @declare anywhere in the package but left out of patches.py's
    `declared(...)` would never be applied: every one is listed."""
    import importlib
    import pkgutil

    import embedded_aws
    from embedded_aws.compat import registry

    for module in pkgutil.walk_packages(embedded_aws.__path__, "embedded_aws."):
        if not module.name.startswith(("embedded_aws.lambda_host", "embedded_aws.compat.__main__")):
            importlib.import_module(module.name)
    package = [patch for function, patch in registry._DECLARED.items() if function.__module__ != __name__]
    assert sorted(patch.name for patch in package) == sorted(p.name for p in REGISTRY.patches)


def test_a_declared_function_is_called_with_the_context_fields_it_uses():
    """`uses` names (dotted) fields of the context; the function itself is returned unchanged."""
    calls: list = []

    def record(history, port):
        calls.append((history, port))

    decorated = declare(
        "recorder", "a test", Target(f"{MODULE}:Subject.method"), uses=("cloudwatch.history", "port")
    )(record)
    (patch,) = declared(record)
    patch.apply(SimpleNamespace(port=1, cloudwatch=SimpleNamespace(history="h")))
    assert decorated is record and calls == [("h", 1)]
    assert patch.name == "recorder" and patch.when("any context")


def test_an_undeclared_function_is_named_in_one_line():
    """patches.py listing a function no @declare describes fails at import, naming it."""

    def stray():
        pass

    with pytest.raises(TypeError, match=r"^not declared with @declare: .*stray$"):
        declared(stray)
