"""*Startups* (Oink Games): the game's rules engine, in one folder.

* :mod:`.rules`: constants, the action encoding and the frozen :class:`Rules`;
* :mod:`.queries`: quantities derived from a position, each written once;
* :mod:`.simulator`: the batch :class:`Simulator` over the :class:`State` of B games;
* :mod:`.numba_backend`: the compiled rules, proven equal to the numpy ones;
* :mod:`.observe`: what each seat may see, as a vector (written by both backends);
* :mod:`.history`: the public record of put-downs; :mod:`.render`: the table drawn.
"""
