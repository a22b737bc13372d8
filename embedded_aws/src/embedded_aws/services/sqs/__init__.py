"""SQS: one consumer per received message, fewer queue scans, message move tasks, AWS/SQS metrics."""
