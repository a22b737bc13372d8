"""Lambda event source mappings refused where AWS refuses them (moto stores them without a word)."""

from __future__ import annotations

from typing import Any


def patch_event_source_mapping_rules() -> None:
    """CreateEventSourceMapping and UpdateEventSourceMapping refuse, as AWS does, what moto
    stores without a word: a batch size over 10 without a batching window of at least 1 s, a
    window outside 0-300 s or on a FIFO queue, FilterCriteria that are not valid (more than
    five filters, a pattern that is not a JSON object), and (at create) a queue whose visibility
    timeout is shorter than the function's timeout; and, a local limit, filter rules the
    Lambda host does not implement (lambda_host/event_source_mappings/filters.py), which would otherwise drop
    messages unfiltered. InvalidParameterValueException, as for AWS's own checks."""
    from moto.awslambda.exceptions import InvalidParameterValueException
    from moto.awslambda.models import LambdaBackend

    from embedded_aws.lambda_host.event_source_mappings.filters import FilterError, compile_filters

    def check(settings: dict[str, Any], source_arn: str) -> None:
        if ":sqs:" not in source_arn:
            return
        batch_size = int(settings.get("BatchSize") or 10)
        window = settings.get("MaximumBatchingWindowInSeconds")
        if window is not None and not 0 <= int(window) <= 300:
            raise InvalidParameterValueException("MaximumBatchingWindowInSeconds must be between 0 and 300")
        if source_arn.endswith(".fifo") and window:
            raise InvalidParameterValueException("Batching window is not supported for FIFO queues")
        if batch_size > 10 and not window:
            raise InvalidParameterValueException(
                "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10"
            )
        try:
            compile_filters(settings.get("FilterCriteria"))
        except FilterError as error:
            raise InvalidParameterValueException(f"Invalid filter pattern definition: {error}") from None

    create = LambdaBackend.create_event_source_mapping
    update = LambdaBackend.update_event_source_mapping

    def visibility_covers_timeout(self: Any, spec: dict[str, Any]) -> None:
        """At create only (AWS does not check an update or a later change of either timeout)."""
        from moto.sqs.models import sqs_backends

        source_arn = spec.get("EventSourceArn") or ""
        try:
            _, _, _, region, account, queue_name = source_arn.split(":", 5)
            queue = sqs_backends[account][region].get_queue(queue_name)
            function = self.get_function(spec["FunctionName"])
        except Exception:  # noqa: BLE001 - moto's own create reports a missing queue or function
            return
        visibility, timeout = int(queue.visibility_timeout), int(function.timeout)
        if visibility < timeout:
            raise InvalidParameterValueException(
                f"Queue visibility timeout: {visibility} seconds is less than Function timeout: {timeout} seconds"
            )

    def create_event_source_mapping(self: Any, spec: dict[str, Any]) -> Any:
        check(spec, spec.get("EventSourceArn") or "")
        if ":sqs:" in (spec.get("EventSourceArn") or ""):
            visibility_covers_timeout(self, spec)
        return create(self, spec)

    def update_event_source_mapping(self: Any, uuid: str, spec: dict[str, Any]) -> Any:
        esm = self.get_event_source_mapping(uuid)
        if esm is not None:
            current = {
                "BatchSize": esm.batch_size,
                "MaximumBatchingWindowInSeconds": esm.max_batch_window,
                "FilterCriteria": esm.filter_criteria,
            }
            check({**current, **spec}, esm.event_source_arn)
        return update(self, uuid, spec)

    LambdaBackend.create_event_source_mapping = create_event_source_mapping
    LambdaBackend.update_event_source_mapping = update_event_source_mapping
