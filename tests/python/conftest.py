"""Hypothesis profiles: "ci" (deterministic, no deadline) when the CI
environment variable is set, else "dev" (Hypothesis' defaults); "long" runs
5000 examples a test, to hunt. Pick one by hand with
pytest --hypothesis-profile=NAME."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200, print_blob=True)
settings.register_profile("dev")
settings.register_profile("long", deadline=None, max_examples=5000)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
