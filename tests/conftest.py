"""Shared test settings: Hypothesis profiles and paths.

Profiles: ``dev`` (default, quick) and ``ci`` (the README's test command selects it with
HYPOTHESIS_PROFILE=ci: enough examples to matter).
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
