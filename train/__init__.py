"""Training scripts (``python -m startups_env.train.selfplay``). Nothing in ``startups_env`` or ``agents``
imports this package."""
