"""Training: from nothing to a shipped policy.

``ppo`` (PPO self-play on the batched engine, readable top to bottom) with its ``config`` (the
validated training settings), ``imitation`` (a warm start that plays like a heuristic bot) and
``opponents`` (the league filling the seats); ``distill`` (policy improvement from card values:
collecting labelled decisions by teacher, fitting them by loss); ``recipe`` (PPO stages and
improvement rounds as one resumable config); ``belief`` (the belief model the search players deal
their worlds by). Commands: ``hearts train``, ``hearts distill``, ``hearts recipe``, ``hearts
belief`` (``hearts_app``); ``docs/training.md``.
"""
