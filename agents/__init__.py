"""Agents: the batched agent protocol, the random and heuristic bots, and trained policies (to come)."""
