"""The Laws of Chess as data and pure functions (rules-spec §5–§7).

* :mod:`boardd.core.laws.codes`: the code table (codes, articles per edition, severities, confidence).
* :mod:`boardd.core.laws.penalties`: categories, illegal-move penalties, flag rulings.
* :mod:`boardd.core.laws.positions`: can-mate, dead positions, draws.
"""
