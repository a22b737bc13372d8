"""`python -m embedded_aws.compat`: every patch of moto with its reason, and whether the installed
moto still fits them (exit status 1 if not)."""

from __future__ import annotations

import sys

from embedded_aws.compat.patches import REGISTRY


def main() -> int:
    for patch in REGISTRY.patches:
        print(f"{patch.name}: {patch.reason}" + (f" [moto: {patch.fixes_moto}]" if patch.fixes_moto else ""))
    problems = REGISTRY.problems()
    for problem in problems:
        print(f"PROBLEM {problem}", file=sys.stderr)
    print(
        f"{len(REGISTRY.patches)} patches, moto{REGISTRY.supported_moto}: "
        + ("fits" if not problems else f"{len(problems)} problem(s)")
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
