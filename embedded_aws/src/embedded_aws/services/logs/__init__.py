"""CloudWatch Logs: query definitions, metric filters and embedded-metric-format extraction."""
