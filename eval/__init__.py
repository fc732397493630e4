"""Evaluation: the duplicate-deal arena, reports and export (to come)."""
