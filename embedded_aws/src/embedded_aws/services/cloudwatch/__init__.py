"""CloudWatch: alarms evaluated and metrics published, what moto stores but never does (service.py runs it)."""
