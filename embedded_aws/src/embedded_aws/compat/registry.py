"""The registry of changes to moto (and werkzeug) internals: each `Patch` declares what it
replaces, why, and what it expects to find there; `Registry.apply` checks moto's version and
every expectation first and refuses, in one line, before anything is changed.

A target is `module:Attribute.path`, resolved by importing the module and walking the path. An
expectation is the parameter names of a callable (compared with `inspect.signature`), or only
that the attribute exists. What a patch only reads is declared too (`reads`), and so is the state
moto keeps on its objects (`state`: `Queue._messages`), checked on an object made new for the
check, since a class does not show what its `__init__` sets. Each replaced target belongs to
exactly one patch: every wrapper of one moto method lives in one function, composed there in an
order one can read.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import inspect
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

# The moto releases the patches were checked against; embedded_aws/pyproject.toml declares the
# same range.
SUPPORTED_MOTO = ">=5.2.5,<5.3"


class IncompatibleMoto(RuntimeError):
    """moto (or werkzeug) is not what the patches were written against; one line says what."""


@dataclass(frozen=True)
class Target:
    """An attribute a patch replaces (or reads to wrap), and the parameters it must still take."""

    path: str  # "moto.sqs.models:SQSBackend.receive_message"
    parameters: tuple[str, ...] | None = None  # None: only that it exists
    adds: bool = False  # the patch adds what moto lacks: the attribute must not exist yet
    replaced: bool = True  # False: the patch relies on it (e.g. clears a cache) without replacing it
    # An attribute moto sets on each object: checked on the object this makes (a new one per check).
    made_by: Callable[[], Any] | None = None

    def owner_and_name(self) -> tuple[Any, str]:
        module, _, attributes = self.path.partition(":")
        owner: Any = importlib.import_module(module)
        *parents, name = attributes.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        return owner, name

    def problem(self, original: Any = None, made: dict[Callable[[], Any], Any] | None = None) -> str | None:
        """Why this target no longer fits (None when it does). `original`: what was there before
        the patch was applied (checked instead of the patched value). `made`: what each maker of
        state objects gave already (the object, or the error it raised), so one check makes each
        object once."""
        try:
            owner, name = self.owner_and_name()
        except (ImportError, AttributeError) as error:
            return f"{self.path} is gone ({error})"
        if self.made_by is not None:
            return self._state_problem(owner, name, self.made_by, {} if made is None else made)
        value = original if original is not None else inspect.getattr_static(owner, name, _MISSING)
        if self.adds:
            return (
                None
                if value is _MISSING
                else f"moto now has {self.path}: the patch adding it may be obsolete"
            )
        if value is _MISSING:
            return f"{self.path} is gone"
        if self.parameters is None:
            return None
        function: Any = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        try:
            found = tuple(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            return f"{self.path} is no longer a function"
        if found != self.parameters:
            return f"{self.path} takes ({', '.join(found)}), expected ({', '.join(self.parameters)})"
        return None

    def _state_problem(
        self, owner: type, name: str, made_by: Callable[[], Any], made_before: dict[Callable[[], Any], Any]
    ) -> str | None:
        if made_by not in made_before:  # (the object, or why it could not be made)
            try:
                made_before[made_by] = (made_by(), None)
            except Exception as error:  # noqa: BLE001 - whatever a changed constructor raises, named
                made_before[made_by] = (None, error)
        made, failure = made_before[made_by]
        if failure is not None:
            return f"{self.path}: a new {owner.__name__} cannot be made to check it ({failure})"
        if not isinstance(made, owner):
            return f"{self.path}: {made_by.__qualname__} makes no {owner.__name__}"
        present = inspect.getattr_static(made, name, _MISSING) is not _MISSING
        if self.adds and present:
            return f"moto now sets {self.path} on a new {owner.__name__}: the patch adding it may clash"
        if not self.adds and not present:
            return f"{self.path} is not set on a new {owner.__name__}"
        return None


_MISSING = object()

# The patch a registry is applying (a stack: applying is not re-entrant, but tests nest registries).
_APPLYING: list[Patch] = []


def install(owner: Any, name: str, value: Any) -> None:
    """Sets `owner.name` to `value`, as a patch replaces a method of a moto class (an assignment
    mypy refuses). While a registry applies a patch, the attribute must be one the patch declares
    it replaces, so a change nobody declared (and nobody checks against the next moto) is refused
    at start, naming it."""
    if _APPLYING:
        patch = _APPLYING[-1]
        declared = any(
            target.replaced and target.owner_and_name() == (owner, name) for target in patch.targets
        )
        if not declared:
            where = getattr(owner, "__qualname__", getattr(owner, "__name__", repr(owner)))
            raise TypeError(f"patch {patch.name} changes {where}.{name}, which it does not declare")
    setattr(owner, name, value)


@dataclass(frozen=True)
class Patch:
    """One change to moto. `apply(context)` makes it; `when(context)` says whether this run wants
    it (profiling, fault injection). `fixes_moto` is set when the change works around a bug or a
    gap in moto itself, in words fit for an upstream report; the others are speed or our own."""

    name: str
    reason: str
    targets: tuple[Target, ...]
    apply: Callable[[Any], None]
    fixes_moto: str = ""
    when: Callable[[Any], bool] = field(default=lambda context: True)


def T(path: str, *parameters: str, adds: bool = False) -> Target:
    """A target that must still take `parameters` (none given: only that it exists)."""
    return Target(path, tuple(parameters) if parameters else None, adds=adds)


def reads(path: str, *parameters: str) -> Target:
    """A method or class attribute of moto the patch calls or reads, and does not replace."""
    return Target(path, tuple(parameters) if parameters else None, replaced=False)


def state(path: str, made_by: Callable[[], Any], adds: bool = False) -> Target:
    """An attribute moto sets on each object of a class (`module:Class.attribute`) that the patch
    reads or writes; `made_by` makes a new object of that class to check it on. `adds`: the patch
    sets it on moto's objects itself, and a new object must not have it yet."""
    return Target(path, adds=adds, replaced=False, made_by=made_by)


def states(owner: str, made_by: Callable[[], Any], *names: str, adds: bool = False) -> tuple[Target, ...]:
    """`state` for several attributes of one class (`owner`: `module:Class`)."""
    return tuple(state(f"{owner}.{name}", made_by, adds=adds) for name in names)


_DECLARED: dict[Callable[..., None], Patch] = {}


def declare(
    name: str,
    reason: str,
    *targets: Target,
    fixes_moto: str = "",
    when: Callable[[Any], bool] | None = None,
    uses: tuple[str, ...] = (),
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declares the decorated function as the patch `name`: what it changes (`targets`), why, and
    the fields of the registry's context it is called with (`uses`, dotted: "cloudwatch.history").
    The function is returned unchanged; `declared` lists it where the order of patches is set."""

    def decorate(function: Callable[..., None]) -> Callable[..., None]:
        getters = [operator.attrgetter(field) for field in uses]

        def apply(context: Any) -> None:
            function(*(get(context) for get in getters))

        _DECLARED[function] = Patch(
            name, reason, targets, apply, fixes_moto, when if when is not None else _always
        )
        return function

    return decorate


def _always(context: Any) -> bool:
    return True


def declared(*functions: Callable[..., None]) -> list[Patch]:
    """The patches these functions were declared as (`@declare`), in the order given."""
    missing = [function.__qualname__ for function in functions if function not in _DECLARED]
    if missing:
        raise TypeError(f"not declared with @declare: {', '.join(missing)}")
    return [_DECLARED[function] for function in functions]


@contextlib.contextmanager
def applied(*functions: Callable[..., None], context: Any = None) -> Iterator[Registry]:
    """The patches these declared functions make, checked and applied for the duration of the
    block, then undone (in-process tests that need a few patches of a moto they share)."""
    registry = Registry(declared(*functions), SUPPORTED_MOTO)
    registry.apply(context)
    try:
        yield registry
    finally:
        registry.undo()


class Registry:
    """Patches in the order they are applied, and the moto releases they were checked against."""

    def __init__(self, patches: list[Patch], supported_moto: str) -> None:
        self.patches = patches
        self.supported_moto = SpecifierSet(supported_moto)
        # target path -> (owner, name, value as seen through the owner, value in the owner's own
        # __dict__): a method a class inherits is checked as inherited and, on undo, deleted from
        # the class again rather than copied into it.
        self._originals: dict[str, tuple[Any, str, Any, Any]] = {}
        self.applied: list[str] = []

    def problems(self) -> list[str]:
        """Every way the installed moto differs from what the patches expect (empty: all fit)."""
        found = []
        installed = importlib.metadata.version("moto")
        if Version(installed) not in self.supported_moto:
            found.append(f"moto {installed} is installed; embedded-aws supports moto{self.supported_moto}")
        made: dict[Callable[[], Any], Any] = {}
        for patch in self.patches:
            for target in patch.targets:
                original = self._originals.get(target.path)
                problem = target.problem(original[2] if original else None, made)
                if problem:
                    found.append(f"patch {patch.name}: {problem}")
        return found

    def duplicate_targets(self) -> dict[str, list[str]]:
        """Targets replaced by more than one patch (there should be none; many may read one)."""
        owners: dict[str, list[str]] = {}
        for patch in self.patches:
            for target in patch.targets:
                if target.replaced:
                    owners.setdefault(target.path, []).append(patch.name)
        return {path: names for path, names in owners.items() if len(names) > 1}

    def apply(self, context: Any) -> None:
        """Check, then apply every wanted patch once, in order. Refuses with one line, before any
        change, when moto is not what the patches expect."""
        if self.applied:
            return
        problems = self.problems()
        if problems:
            more = (
                f" (and {len(problems) - 1} more: python -m embedded_aws.compat)" if len(problems) > 1 else ""
            )
            raise IncompatibleMoto(f"embedded-aws cannot patch this moto: {problems[0]}{more}")
        for patch in self.patches:
            if not patch.when(context):
                continue
            for target in patch.targets:
                if target.made_by is not None:
                    continue  # on moto's objects, not its classes: nothing to put back
                owner, name = target.owner_and_name()
                own = vars(owner).get(name, _MISSING)
                seen = own if target.adds else inspect.getattr_static(owner, name)
                self._originals.setdefault(target.path, (owner, name, seen, own))
            _APPLYING.append(patch)
            try:
                patch.apply(context)
            finally:
                _APPLYING.pop()
            self.applied.append(patch.name)

    def declared_targets(self) -> set[str]:
        """The paths the applied patches declare."""
        return {
            target.path for patch in self.patches if patch.name in self.applied for target in patch.targets
        }

    def unchanged_targets(self) -> list[str]:
        """Declared targets that, after `apply`, are still what they were before: a patch that no
        longer does what it declares."""
        found = []
        for patch in self.patches:
            if patch.name not in self.applied:
                continue
            for target in patch.targets:
                if not target.replaced:
                    continue
                owner, name, before, _ = self._originals[target.path]
                if inspect.getattr_static(owner, name, _MISSING) is before:
                    found.append(f"{patch.name}: {target.path}")
        return found

    def undo(self) -> None:
        """Put every declared target back as it was before `apply` (for in-process tests)."""
        for owner, name, _, own in reversed(list(self._originals.values())):
            if own is not _MISSING:
                setattr(owner, name, own)
            elif name in vars(owner):
                delattr(owner, name)
        self._originals.clear()
        self.applied.clear()


def attributes(prefixes: tuple[str, ...] = ("moto", "werkzeug")) -> dict[str, Any]:
    """Every attribute of every loaded module under `prefixes`, and of every class such a module
    defines, by target path (`module:Class.name`): compared by identity before and after `apply`,
    what changed is what the patches changed."""
    import sys

    found: dict[str, Any] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(prefixes):
            continue
        for name, value in list(vars(module).items()):
            found[f"{module_name}:{name}"] = value
            if isinstance(value, type) and value.__module__ == module_name and value.__qualname__ == name:
                for attribute, member in list(vars(value).items()):
                    found[f"{module_name}:{name}.{attribute}"] = member
    return found


def changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The paths added, removed or bound to another object between two `attributes` snapshots."""
    return {
        path
        for path in before.keys() | after.keys()
        if before.get(path, _MISSING) is not after.get(path, _MISSING)
    }
