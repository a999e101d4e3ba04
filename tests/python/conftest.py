"""Hypothesis profiles: "ci" (deterministic, no deadline) when the CI
environment variable is set, else "dev" (Hypothesis' defaults). Pick one by
hand with pytest --hypothesis-profile=NAME."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200, print_blob=True)
settings.register_profile("dev")
settings.load_profile("ci" if os.environ.get("CI") else "dev")
