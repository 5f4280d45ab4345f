"""Two hands (R01, 4.1; R19, 7.5.4) and castling: the exemption of king and rook is for the shapes castling has.

Castling is a move of the king and a rook along the player's first rank (3.8.2, 4.4.1), made with one hand (4.1).
A king and a rook were exempt from the two-lifts signature R01 (a) whatever they were, and from the two-places
signature R01 (b) whenever their side kept any castling right: a king and *any* rook, put down anywhere, far apart
in one moment, raised nothing. Now only the king and a rook on the first rank (the right kept, or lost: an illegal
castling) are castling's pair (their lifts judged by R01 (c) in standard chess, T08; not at all in Chess960, R27),
and only their places on that castling's own squares (its king's and rook's start and castled squares and between:
a slide, the king on the rook's square, a castling finished on wrong squares of its own, Ruling 3) are one hand's.
See docs/chess960-castling.md, "Ruling 4"."""

from __future__ import annotations

import pytest

from tests.core import scenario
from tests.core.test_scenarios import Scn, run

#: standard chess, White to move, both castling rights (the b2-g2 pawns; a2, h2 empty)
RIGHTS = "r3k2r/pppppppp/8/8/8/8/1PPPPPP1/R3K2R w KQkq - 0 1"
#: Chess960 (king b1, rook a1 with its right; the other white rook on h3, off the first rank)
C960_A_ONLY = "rk5r/pppppppp/8/8/8/7R/PPPPPPPP/RK6 w Aha - 0 1"


def _codes(monkeypatch: pytest.MonkeyPatch, fen: str, events: str, *, chess960: bool = False) -> list[str]:
    monkeypatch.setitem(scenario.POSITIONS, "X", (fen, None))
    played = run(Scn("X", events, chess960=chess960))
    return [f.code for f in played.engine.irregularities]


@pytest.mark.parametrize(("events", "why"), [
    # king to d1 and the h1 rook off the back rank, both put down far apart in one moment (lifted in turn)
    ("0 L e1 · 600 L h1 · 1000 P d1 wK · 1100 P h3 wR · 1800 C W", "rook off the back rank"),
    # king to d1, the rook to g1: the king on the other side of its square from the castling's
    ("0 L e1 · 600 L h1 · 1000 P d1 wK · 1100 P g1 wR · 1800 C W", "king off the castling's squares"),
    # the a1 rook to a3 and the king to d1 (queenside right kept): the rook off the back rank
    ("0 L e1 · 600 L a1 · 1000 P d1 wK · 1080 P a4 wR · 1800 C W", "queenside rook off the back rank"),
])
def test_king_and_rook_put_down_far_apart_off_a_castlings_squares_are_two_hands(
        monkeypatch: pytest.MonkeyPatch, events: str, why: str) -> None:
    codes = _codes(monkeypatch, RIGHTS, events)
    assert "TWO_HANDS_SUSPECTED" in codes, why
    assert "TWO_HANDS_AT_PRESS" in codes, why


def test_the_same_swap_with_the_right_kept_is_a_castling_finished_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = _codes(monkeypatch, RIGHTS, "0 L e1 · 600 L h1 · 1000 P h1 wK · 1080 P e1 wR · 1800 C W")
    assert "TWO_HANDS_SUSPECTED" not in codes
    assert codes[:1] == ["ILLEGAL_MOVE"]


def test_chess960_king_and_a_rook_it_cannot_castle_with_lifted_together_far_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # R01 (a) exempts only the parts of one castling: the h3 rook is off the first rank
    codes = _codes(monkeypatch, C960_A_ONLY, "0 L b1 · 30 L h3 · 500 P c1 wK · 900 P h4 wR · 1500 C W",
                   chess960=True)
    assert "TWO_HANDS_SUSPECTED" in codes


def test_chess960_castling_pair_lifted_together_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # the a1 rook keeps its right: queenside castling (king c1, rook d1), both lifted in one scan: R27, nothing
    codes = _codes(monkeypatch, C960_A_ONLY, "0 L b1 · 30 L a1 · 500 P c1 wK · 900 P d1 wR · 1500 C W",
                   chess960=True)
    assert codes == []


def test_t08_castling_with_king_and_rook_lifted_together_is_still_two_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = _codes(monkeypatch, RIGHTS, "0 L e1 · 30 L h1 · 330 P g1 wK · 360 P f1 wR · 700 C W")
    assert codes == ["TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"]


def test_castling_with_one_hand_in_turn_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = _codes(monkeypatch, RIGHTS, "0 L e1 · 300 P g1 wK · 500 L h1 · 800 P f1 wR · 1300 C W")
    assert codes == []
