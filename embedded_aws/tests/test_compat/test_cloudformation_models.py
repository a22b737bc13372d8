"""compat/cloudformation_models.py: moto's CloudFormation classmethods still run, with our hook
before or after, and the hook sees what moto was given."""

from __future__ import annotations

from typing import Any

from embedded_aws.compat.cloudformation_models import after_create, after_update, before_delete


def _model() -> Any:  # a stand-in for a moto model class, which the patches take as Any
    calls: list = []

    class Model:
        log = calls

        @classmethod
        def create_from_cloudformation_json(
            cls, resource_name, cloudformation_json, account_id, region_name, **kwargs
        ):
            calls.append(("moto create", resource_name, cloudformation_json, kwargs))
            return cls()

        @classmethod
        def update_from_cloudformation_json(
            cls, original_resource, new_resource_name, cloudformation_json, account_id, region_name
        ):
            calls.append(("moto update", new_resource_name, cloudformation_json))
            return original_resource

        @classmethod
        def delete_from_cloudformation_json(cls, resource_name, cloudformation_json, account_id, region_name):
            calls.append(("moto delete", resource_name))

    return Model


def test_the_hook_runs_after_moto_create_with_its_resource_and_extra_arguments():
    """Custom resources read StackId and ResourceType from moto's extra arguments."""
    model = _model()
    after_create(
        model, lambda resource, json, account, region, kwargs: model.log.append(("hook", resource, kwargs))
    )
    made = model.create_from_cloudformation_json("r", {"Properties": {}}, "123", "us-east-1", StackId="s")
    assert model.log == [
        ("moto create", "r", {"Properties": {}}, {"StackId": "s"}),
        ("hook", made, {"StackId": "s"}),
    ]


def test_update_gives_moto_the_prepared_template_and_the_hook_sees_it_too():
    """The Lambda patch zips inline code before moto's update and reads settings after it."""
    model = _model()
    original = object()
    after_update(
        model,
        lambda resource, json, account, region, kwargs: model.log.append(("hook", resource, json)),
        prepare=lambda cls, json: {**json, "prepared": cls is model},
    )
    assert model.update_from_cloudformation_json(original, "r", {}, "123", "us-east-1") is original
    assert model.log == [("moto update", "r", {"prepared": True}), ("hook", original, {"prepared": True})]


def test_the_hook_runs_before_moto_delete():
    """A role's managed policies are detached before moto deletes the role."""
    model = _model()
    before_delete(model, lambda name, account, region: model.log.append(("hook", name, account, region)))
    model.delete_from_cloudformation_json("r", {}, "123", "us-east-1")
    assert model.log == [("hook", "r", "123", "us-east-1"), ("moto delete", "r")]
