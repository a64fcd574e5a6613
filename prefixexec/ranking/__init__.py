"""Leaderboards: many systems ranked by success and by prefix executability (spec/leaderboard.md)."""

from __future__ import annotations

from .core import BY, METRICS, PREFIX_METRICS, TITLES, LeaderboardOptions, leaderboard_document

__all__ = ["BY", "METRICS", "PREFIX_METRICS", "TITLES", "LeaderboardOptions", "leaderboard_document"]
