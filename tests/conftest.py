"""Shared test settings: Hypothesis profiles and paths.

Profiles (HYPOTHESIS_PROFILE): ``dev`` (default, quick: 100 examples per property), ``ci``
(what tests/run.sh selects: 300 examples per property, three times Hypothesis' default, run over
the pytest-xdist workers) and ``thorough`` (1,000 examples, for a longer run before a release:
``HYPOTHESIS_PROFILE=thorough bash tests/run.sh``). A test that sets its own ``max_examples``
keeps it in every profile. Failing examples are kept in Hypothesis' example database and tried
first on the next run.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
