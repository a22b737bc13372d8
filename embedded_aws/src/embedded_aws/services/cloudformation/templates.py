"""Template bodies read as CloudFormation reads them: a JSON template as JSON.

moto's CloudFormation code parses every template with PyYAML's pure-Python loader and falls back
to JSON only when that raises. A JSON template is (nearly) YAML, so it always takes the slow path:
about 0.13 s of CPU for the stack's 39 kB template, several times per deploy. Where PyYAML reads
JSON differently (it keeps `1e5` as a string, refuses `"\\/"`), JSON's answer is AWS's.
"""

from __future__ import annotations

import json
from typing import Any

from embedded_aws.compat.registry import T, declare


class JsonFirst:
    """Stands in for the `yaml` module in moto's CloudFormation modules: `load` tries JSON first
    when the body looks like a JSON object, everything else is PyYAML's own."""

    def __init__(self, yaml: Any) -> None:
        self._yaml = yaml

    def __getattr__(self, name: str) -> Any:
        return getattr(self._yaml, name)

    def load(self, stream: Any, Loader: Any) -> Any:  # PyYAML's own keyword names
        if isinstance(stream, (str, bytes)) and stream.lstrip()[:1] in ("{", b"{"):
            try:
                return json.loads(stream)
            except ValueError:
                pass  # not JSON after all: PyYAML decides, as before
        return self._yaml.load(stream, Loader=Loader)


@declare(
    "cloudformation.json-templates",
    "a JSON template is parsed as JSON, not by PyYAML's pure-Python loader first",
    T("moto.cloudformation.models:yaml"),
    T("moto.cloudformation.responses:yaml"),
)
def patch_json_templates() -> None:
    import yaml
    from moto.cloudformation import models, responses

    models.yaml = responses.yaml = JsonFirst(yaml)  # type: ignore[attr-defined]  # their import, not re-exported
