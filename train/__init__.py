"""Training scripts (``python -m train.selfplay``). Nothing in ``startups_env`` or ``agents``
imports this package."""
