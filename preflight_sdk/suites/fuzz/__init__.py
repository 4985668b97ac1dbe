"""`runner: fuzz`: a service fuzzed from its OpenAPI contract by Schemathesis, within a time budget.

`explore` is the blocking part (Schemathesis and Hypothesis in a worker thread); `runner` turns
what it found into the suite's cases.
"""

from .runner import EXTRA, run_fuzz_suite

__all__ = ["EXTRA", "run_fuzz_suite"]
