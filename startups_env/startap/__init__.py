"""*Стартап* (Mosigra, 2011): the rules of docs/startap.md, the project's own card set, a
batch simulator and its observation. The PettingZoo env is
:mod:`startups_env.envs.startap_aec`."""
