"""DynamoDB: atomic conditional writes, ItemCount without a scan, throttling metrics for injected faults."""
