"""The pure pieces of the request-overhead caches (compat/request_overhead.py), without moto:
the method names found per class, the policy text parsed once, the random strings drawn at once."""

from __future__ import annotations

import random
import string

from embedded_aws.compat.request_overhead import get_random_string, method_names, policy_document_text


class _Base:
    def inherited(self) -> None: ...


class _Response(_Base):
    attribute = 1

    def action(self) -> None: ...

    @staticmethod
    def helper() -> None: ...


def test_method_names_are_the_classes_functions_inherited_ones_included():
    """What moto's method_names_from_class answers: functions only, not other attributes."""
    names = method_names(_Response)
    assert {"action", "helper", "inherited"} <= names
    assert "attribute" not in names


def test_the_policy_text_is_the_document_or_the_records_document():
    """A document string, or a managed policy's record holding one, is parsed from its text;
    anything else goes to moto's own constructor (None)."""
    assert policy_document_text('{"Version": "2012-10-17"}') == '{"Version": "2012-10-17"}'
    assert policy_document_text({"policy_document": "{}"}) == "{}"
    assert policy_document_text({"policy_document": {"Statement": []}}) is None
    assert policy_document_text(None) is None


def test_random_strings_have_the_asked_length_and_alphabet():
    """Length, digits or not, and lower case as MotoRandom.get_random_string's arguments ask."""
    source = random.Random(7)
    text = get_random_string(source, 52)
    assert len(text) == 52
    assert set(text) <= set(string.ascii_letters + string.digits)
    assert set(get_random_string(source, 200, include_digits=False)) <= set(string.ascii_letters)
    lower = get_random_string(source, 200, lower_case=True)
    assert lower == lower.lower()
    assert len(get_random_string(source)) == 20


def test_random_strings_follow_the_seed():
    """Drawn from the given source only, so a seeded moto draws the same strings every run."""
    assert get_random_string(random.Random(1), 30) == get_random_string(random.Random(1), 30)
