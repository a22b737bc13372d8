"""Speed with the same answers: work moto's server repeats per request, cached (HTTP keep-alive
is the server's: embedded_aws/server/keep_alive.py)."""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import string
from typing import Any

from embedded_aws.compat.registry import T, declare, install

# moto's modules that import `camelcase_to_underscores` and are loaded when the patches are
# applied (the registry imports every target's module first); the ones moto loads later, for
# services the emulator does not patch, keep the uncached function.
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


def method_names(clazz: type) -> frozenset[str]:
    """The names of the functions a class has, its inherited ones included (what moto's
    `method_names_from_class` finds, cached per class by the patch)."""
    return frozenset(name for name, _ in inspect.getmembers(clazz, predicate=inspect.isfunction))


def policy_document_text(policy: Any) -> str | None:
    """The JSON text of the document an IAMPolicy is made from (a document, or a managed policy's
    record holding one), or None when it is made from something else."""
    if isinstance(policy, str):
        return policy
    if isinstance(policy, dict) and isinstance(policy.get("policy_document"), str):
        document: str = policy["policy_document"]
        return document
    return None


def get_random_string(
    self: Any, length: int = 20, include_digits: bool = True, lower_case: bool = False
) -> str:
    """MotoRandom.get_random_string with one `choices` call from `self` (a random.Random) instead
    of one `choice` per character."""
    pool = string.ascii_letters + (string.digits if include_digits else "")
    text = "".join(self.choices(pool, k=length))
    return text.lower() if lower_case else text


def generate_receipt_handle() -> str:
    """An SQS receipt handle (185 lowercase letters) from moto's seedable random source."""
    from moto.moto_api._internal import mock_random

    return "".join(mock_random.choices(string.ascii_lowercase, k=185))


def _list_moto_modules_once() -> None:
    """`list_of_moto_modules` lists moto's package folder and stats every entry (about 150),
    twice per request, under the dispatcher's global lock."""
    from moto import backends

    modules = frozenset(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules


def _cache_method_names() -> None:
    """`method_names_from_class` runs `inspect.getmembers` over the whole response class to find
    out whether the action has a handler method."""
    from moto.core import responses

    responses.method_names_from_class = functools.cache(method_names)  # type: ignore[attr-defined,assignment]  # imported there, not exported; a set stands for its list


def _cache_policy_documents() -> None:
    """IAM policy documents are parsed from JSON for every request and every policy: parsed
    documents are kept per document text (a changed policy is a new text). IAMPolicy only reads
    its parsed document (access_control.py, policy_conditions.py)."""
    from moto.iam import access_control

    parse = functools.lru_cache(maxsize=1024)(json.loads)
    policy_init = access_control.IAMPolicy.__init__

    def iam_policy_init(self: Any, policy: Any) -> None:
        text = policy_document_text(policy)
        if text is not None:
            self._policy_json = parse(text)
        else:
            policy_init(self, policy)

    install(access_control.IAMPolicy, "__init__", iam_policy_init)


def _share_one_loader() -> None:
    """moto loads each service's botocore model with a new Loader, and every new Loader lists
    botocore's data folder again (a stat per service and version, some 2,000); one Loader lists
    it once. The models themselves are cached by moto (`get_service_model`)."""
    from moto.core import loaders
    from moto.core import utils as core_utils

    loader = loaders.create_loader()

    def load_service_model(service_name: str, model_name: str) -> dict[str, Any]:
        return loader.load_service_model(service_name, model_name)  # type: ignore[no-any-return]

    core_utils._load_service_model = load_service_model


def _cache_camelcase() -> None:
    """A pure string function moto calls for every action name and every queue attribute, one
    character at a time; the modules that imported it get the cached one."""
    from moto.core import utils

    cached = functools.lru_cache(maxsize=4096)(utils.camelcase_to_underscores)
    for name in CAMELCASE_IMPORTERS:
        module: Any = importlib.import_module(name)  # each imported the function by name
        module.camelcase_to_underscores = cached


def _draw_random_strings_at_once() -> None:
    """Request ids (52 characters) and SQS receipt handles (185) are drawn one random.choice per
    character; one random.choices call draws the same strings from moto's (seedable) random source."""
    from moto.moto_api._internal.moto_random import MotoRandom
    from moto.sqs import models as sqs_models
    from moto.sqs import utils as sqs_utils

    install(MotoRandom, "get_random_string", get_random_string)
    sqs_utils.generate_receipt_handle = generate_receipt_handle
    if getattr(sqs_models, "generate_receipt_handle", None) is not None:
        sqs_models.generate_receipt_handle = generate_receipt_handle  # type: ignore[attr-defined]  # imported there, not exported


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
    cached here, with the same result as before (each step's docstring says what it saves)."""
    _list_moto_modules_once()
    _cache_method_names()
    _cache_policy_documents()
    _share_one_loader()
    _cache_camelcase()
    _draw_random_strings_at_once()
