"""Which property changes replace a resource comes from CloudFormation's rules, not from a list
of one stack's types: the resource schemas' create-only properties (rendered into
services/cloudformation/create_only.py) and what the template reference adds to them."""

from __future__ import annotations

import create_only

from embedded_aws.services.cloudformation.change_sets import replacing
from embedded_aws.services.cloudformation.imports import IMPORTABLE


def test_the_module_is_the_rendered_schemas():
    assert create_only.MODULE.read_text() == create_only.render(), (
        "services/cloudformation/create_only.py differs from the installed schemas: "
        "run `python embedded_aws/tests/create_only.py`"
    )


def test_a_types_replacing_properties_are_cloudformations():
    assert {"TableName", "KeySchema", "LocalSecondaryIndexes"} <= replacing("AWS::DynamoDB::Table")
    assert replacing("AWS::SQS::Queue") == {"FifoQueue", "QueueName"}
    assert {"EventSourceArn", "StartingPosition"} <= replacing("AWS::Lambda::EventSourceMapping")
    # services the lab's stack does not use are covered the same way
    assert "BucketName" in replacing("AWS::S3::Bucket")
    assert replacing("Custom::Anything") == set()


def test_importable_types_name_the_identifier_their_schemas_name():
    """An import's identifier, and whether a template can hold it, are the type's schema's
    `primaryIdentifier` and `readOnlyProperties`, not this stack's choice."""
    schemas = create_only.type_schemas()
    for resource_type, importable in IMPORTABLE.items():
        schema = schemas[resource_type]
        assert schema["primaryIdentifier"] == [f"/properties/{importable.identifier}"], resource_type
        read_only = f"/properties/{importable.identifier}" in schema.get("readOnlyProperties", [])
        assert importable.read_only == read_only, resource_type
