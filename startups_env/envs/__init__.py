"""Adapters of the simulator to RL libraries: :mod:`.aec` (PettingZoo AEC), :mod:`.vector`
(a batch with one learner seat per game, and a Stable-Baselines3 VecEnv), :mod:`.wrappers`
(AEC wrappers for other libraries), :mod:`.openspiel` (the game as an OpenSpiel game; needs
the ``openspiel`` extra)."""
