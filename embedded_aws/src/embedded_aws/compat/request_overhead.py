"""Speed with the same answers: work moto's server repeats per request, cached (HTTP keep-alive
is the server's: embedded_aws/server/keep_alive.py)."""

from __future__ import annotations

import json
from typing import Any

from embedded_aws.compat.registry import T, declare

# moto's modules that import `camelcase_to_underscores` and are loaded when the patches are
# applied (the registry imports every target's module first); the ones moto loads later, for
# services this project does not use, keep the uncached function.
CAMELCASE_IMPORTERS = (
    "moto.core.utils",
    "moto.core.responses",
    "moto.ec2.models.instances",
    "moto.efs.models",
    "moto.sagemaker.models",
    "moto.sns.models",
    "moto.sns.responses",
    "moto.sqs.models",
)


@declare(
    "server.request-overhead",
    "per-request work whose answer never changes, cached",
    T("moto.backends:list_of_moto_modules"),
    T("moto.core.responses:method_names_from_class", "clazz"),
    T("moto.iam.access_control:IAMPolicy.__init__", "self", "policy"),
    *(T(f"{module}:camelcase_to_underscores", "argument") for module in CAMELCASE_IMPORTERS),
    T("moto.core.utils:_load_service_model", "service_name", "model_name"),
    T(
        "moto.moto_api._internal.moto_random:MotoRandom.get_random_string",
        "self",
        "length",
        "include_digits",
        "lower_case",
    ),
    T("moto.sqs.utils:generate_receipt_handle"),
    T("moto.sqs.models:generate_receipt_handle"),
)
def patch_request_overhead() -> None:
    """Work moto's server repeats on every request although its answer never changes; each is
    cached here, with the same result as before.

    - `list_of_moto_modules` lists moto's package folder and stats every entry (about 150),
      twice per request, under the dispatcher's global lock.
    - `method_names_from_class` runs `inspect.getmembers` over the whole response class to find
      out whether the action has a handler method.
    - every service model is loaded by a new botocore Loader, which lists botocore's data
      folder again.
    - IAM policy documents are parsed from JSON for every request and every policy: parsed
      documents are kept per document text (a changed policy is a new text).
    """
    import functools
    import inspect

    from moto import backends
    from moto.core import responses
    from moto.iam import access_control

    modules = frozenset(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules

    @functools.cache
    def method_names(clazz: type) -> frozenset[str]:
        return frozenset(name for name, _ in inspect.getmembers(clazz, predicate=inspect.isfunction))

    responses.method_names_from_class = method_names

    # IAMPolicy only reads its parsed document (access_control.py, policy_conditions.py).
    parse = functools.lru_cache(maxsize=1024)(json.loads)
    policy_init = access_control.IAMPolicy.__init__

    def iam_policy_init(self: Any, policy: Any) -> None:
        if isinstance(policy, str):
            self._policy_json = parse(policy)
        elif isinstance(policy, dict) and isinstance(policy.get("policy_document"), str):
            self._policy_json = parse(policy["policy_document"])
        else:
            policy_init(self, policy)

    access_control.IAMPolicy.__init__ = iam_policy_init

    # moto loads each service's botocore model with a new Loader, and every new Loader lists
    # botocore's data folder again (a stat per service and version, some 2,000); one Loader
    # lists it once. The models themselves are cached by moto (`get_service_model`).
    from moto.core import loaders
    from moto.core import utils as core_utils

    loader = loaders.create_loader()

    def load_service_model(service_name: str, model_name: str) -> dict[str, Any]:
        return loader.load_service_model(service_name, model_name)

    core_utils._load_service_model = load_service_model

    # A pure string function moto calls for every action name and every queue attribute, one
    # character at a time; the modules that imported it get the cached one.
    import importlib

    from moto.core import utils

    cached = functools.lru_cache(maxsize=4096)(utils.camelcase_to_underscores)
    for name in CAMELCASE_IMPORTERS:
        importlib.import_module(name).camelcase_to_underscores = cached

    # Request ids (52 characters) and SQS receipt handles (185) are drawn one random.choice
    # per character; one random.choices call draws the same strings from moto's (seedable)
    # random source.
    import string

    from moto.moto_api._internal import mock_random
    from moto.moto_api._internal.moto_random import MotoRandom
    from moto.sqs import models as sqs_models
    from moto.sqs import utils as sqs_utils

    def get_random_string(
        self: Any, length: int = 20, include_digits: bool = True, lower_case: bool = False
    ) -> str:
        pool = string.ascii_letters + (string.digits if include_digits else "")
        text = "".join(self.choices(pool, k=length))
        return text.lower() if lower_case else text

    MotoRandom.get_random_string = get_random_string

    def generate_receipt_handle() -> str:
        return "".join(mock_random.choices(string.ascii_lowercase, k=185))

    sqs_utils.generate_receipt_handle = generate_receipt_handle
    if getattr(sqs_models, "generate_receipt_handle", None) is not None:
        sqs_models.generate_receipt_handle = generate_receipt_handle
