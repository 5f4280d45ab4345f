"""Real-shaped FIDE TRF files for the tests: fixed columns written one field at a time.

The column positions are those of tournament-files.md, written here independently of the reader
(boardd.core.tournament) so that a test catches a reader that is off by one column.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TrfPlayer:
    rank: int
    name: str
    rating: int = 0
    fed: str = "NED"
    fide_id: str = ""
    title: str = ""
    sex: str = "m"
    #: per round: (opponent rank or 0, colour char, result char); None = blank block
    rounds: list[tuple[int, str, str] | None] = field(default_factory=list)


def _put(line: list[str], first: int, text: str) -> None:
    """Write *text* at 1-based column *first*, growing the line with blanks."""
    end = first - 1 + len(text)
    if len(line) < end:
        line.extend(" " * (end - len(line)))
    line[first - 1:end] = list(text)


def player_line(p: TrfPlayer, points: float = 0.0) -> str:
    line: list[str] = []
    _put(line, 1, "001")
    _put(line, 5, f"{p.rank:4d}")
    _put(line, 10, p.sex)
    _put(line, 11, f"{p.title:>3}")
    _put(line, 15, f"{p.name:<33}")
    _put(line, 49, f"{p.rating:4d}" if p.rating else "    ")
    _put(line, 54, f"{p.fed:<3}")
    _put(line, 58, f"{p.fide_id:>11}")
    _put(line, 70, "1990/01/01")
    _put(line, 81, f"{points:4.1f}")
    _put(line, 86, f"{p.rank:4d}")
    for index, block in enumerate(p.rounds):
        start = 92 + 10 * index
        if block is None:
            continue
        opp, colour, result = block
        _put(line, start, f"{opp:4d}" if opp else "0000")
        _put(line, start + 5, colour)
        _put(line, start + 7, result)
    return "".join(line).rstrip()


def trf_text(players: list[TrfPlayer], *, eol: str = "\r", event: str = "Test Open 2026") -> str:
    head = [f"012 {event}", "022 Wijk aan Zee", "032 NED", "042 2026/11/20", "052 2026/11/28",
            "102 IA Example, Arbiter", "122 90 min/40 moves + 30 min + 30 sec/move", "142 9", "222 5400+30",
            "### a comment line"]
    return eol.join(head + [player_line(p) for p in players]) + eol


def swiss(n_players: int, played_rounds: int, *, next_round: bool = True) -> list[TrfPlayer]:
    """*n_players* (even) who played *played_rounds* rounds, pairing 1-2, 3-4 ... shifted each round,
    plus round ``played_rounds + 1`` paired without results when *next_round*."""
    players = [TrfPlayer(rank=r, name=f"Player{r:03d}, Anna", rating=2700 - 7 * r, fide_id=str(1500000 + r))
               for r in range(1, n_players + 1)]
    rounds = played_rounds + (1 if next_round else 0)
    for rnd in range(rounds):
        order = list(range(1, n_players + 1))
        order = order[rnd % n_players:] + order[:rnd % n_players] if rnd else order
        for i in range(0, n_players, 2):
            a, b = order[i], order[i + 1]
            white, black = (a, b) if (rnd + i // 2) % 2 == 0 else (b, a)
            if rnd < played_rounds:
                res_w, res_b = ("1", "0") if (white + rnd) % 3 else ("=", "=")
            else:
                res_w = res_b = " "
            _set(players[white - 1], rnd, (black, "w", res_w))
            _set(players[black - 1], rnd, (white, "b", res_b))
    return players


def _set(player: TrfPlayer, rnd: int, block: tuple[int, str, str]) -> None:
    while len(player.rounds) <= rnd:
        player.rounds.append(None)
    player.rounds[rnd] = block
