"""Training: PPO self-play on the batched engine (to come)."""
