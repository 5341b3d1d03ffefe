"""sapsam: a gRPC game service for Chinese poker with a verifiable event log."""

__version__ = "0.1.0"
