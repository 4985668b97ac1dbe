"""Readiness: single probes from the host (`probe`), their polling (`polling`), and waiting on a
started container until it is ready or exits (`readiness`)."""
