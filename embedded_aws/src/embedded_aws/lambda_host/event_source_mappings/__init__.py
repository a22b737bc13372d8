"""SQS event source mappings as the Lambda service runs them: the poller, the records it builds, FilterCriteria and scaling."""
