"""Operating a deployed consumer: read-only views shared by the demo, tests and the live view."""
