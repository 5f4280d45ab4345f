"""Alert noise at hall scale: how often the arbiter's tablet rings, against the incidents that warranted it.

Run: ``python -m bench alert-rings [--games N] [--profiles clean,casual,clumsy] [--workers 1] [--show K]``.

Every game of the false-alarm bench's mix (``bench.bench_false_alarms.build``: standard and Chess960 games,
one injection of every :class:`drivers.sim.InjectionKind` in turn, every correction cycle of 7.5.1/7.5.2 with
the clock paused or running; the handling profiles' own noise: adjustments, flicker, late presses, pauses)
goes through the real daemon contract (``boardd.daemon.replay.Replay``: the engine, its timers and the
publisher, exactly what the daemon publishes) into the web service's hub and a model of the tablet page
(``tests.consumers.alerts.Tablet``: arbiter.js ``announce``, its cards and its link signal), with the hall's
trouble written from the protocols (``tests.consumers.test_alert_audit``): the arbiter acknowledging and
ruling from the tablet, more sensor flicker on quiet boards, the board's USB link dropping and coming back
(its dump), daemon restarts (journal replayed, new session), web service restarts (the open page
reconnects, a late tablet joins) and the messages of the page's service reordered between topics and
redelivered (QoS 1).

A **ring** is the banner (and the beep): ``announce()`` of an incident, or a board's link incident. An
incident **warrants** one ring when the engine raised a finding of it that asks for action (severity warning
or illegal-move); notes (info) warrant none, and neither do the link's short drops and the restarts (below
``link_grace``: they ask for nothing). Printed per profile: rings per 100 games, incidents warranted and rung,
incidents with 0 rings, with more than 1, info notes that rang, rings without an incident (link), and cards
that appeared more than once for one incident; then the first ``--show`` offending games. Asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import multiprocessing
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from bench.bench_false_alarms import Item, build
from boardd.core.events import Event, Link, LinkChanged
from drivers.sim import PROFILES, SimulationError
from tests.consumers.test_alert_audit import Hall, _quiet, flickers, incidents, physical, play

#: seconds between two of the hall trouble's link drops (more than ``[web] link_window``: each drop is on
#: its own, below ``link_unstable_drops``; a link that drops 3 times a minute warrants its one ring)
SPACING = 61.0


@dataclass
class Rings:
    """What the tablet did for one game (small: it crosses the process boundary)."""

    item: Item
    what: str = ""
    warranted: int = 0                                           # incidents that ask for action
    rings: int = 0                                               # banners + link rings on the page
    silent: list[str] = field(default_factory=list)              # warranted, never rang ("id code")
    repeated: list[str] = field(default_factory=list)            # rang more than once
    notes_rang: list[str] = field(default_factory=list)          # info-only incidents that rang
    stray: list[str] = field(default_factory=list)               # rang for no engine incident
    link_rings: int = 0
    cards_again: list[str] = field(default_factory=list)         # a card that appeared more than once
    troubles: list[str] = field(default_factory=list)
    error: str = ""


def _both(*troubles: Callable[[Hall, list[Event], int], int]) -> Callable[[Hall, list[Event], int], int]:
    def trouble(hall: Hall, events: list[Event], n: int) -> int:
        for one in troubles:
            nxt = one(hall, events, n)
            if nxt != n:
                return nxt
        return n
    return trouble


def hall_trouble(rng: random.Random, done: list[str]) -> Callable[[Hall, list[Event], int], int]:
    """One daemon restart in the game and up to three short drops of the board's USB link (0.2-1.5 s, the
    clock on its jack with it), each on a quiet board (nobody touches it 1.5 s before and 2.5 s after) and
    at least :data:`SPACING` s from the last: trouble that asks nothing of the arbiter."""
    last = [-SPACING]

    def trouble(hall: Hall, events: list[Event], n: int) -> int:
        at = max(hall.journal[-1].at, events[n].at - 1.0) if hall.journal else 0.0
        if n < 5 or at - last[0] < SPACING or len(done) >= 4 or rng.random() > 0.05 \
                or not _quiet(events, events[n].at, 1.5, 2.5):
            return n
        last[0] = at
        if "restart" not in done and (rng.random() < 0.5 or len(done) == 3):
            hall.restart_daemon(at)
            done.append("restart")
            back = at + 0.3
        else:
            hall.feed(LinkChanged(at=at, link=Link.BOARD, up=False, detail="USB read failed: device gone"))
            hall.feed(LinkChanged(at=at, link=Link.CLOCK, up=False, detail="board link down"))
            done.append("flap")
            back = at + rng.uniform(0.2, 1.5)
        hall.board_back(physical(events, n), min(back, events[n].at))
        return n

    return trouble


def audit(item: Item) -> Rings:
    """Simulate *item*, play it through the hall with its trouble, and count the page's rings."""
    out = Rings(item)
    try:
        sim, out.what = build(item)
    except SimulationError as exc:
        out.error = f"simulation error: {exc}"
        return out
    rng = random.Random(f"alert-rings:{item.label}")
    done: list[str] = []
    flicked: list[tuple[float, str, str, str]] = []
    hall = play(sim, seed=item.index, web_restarts=2, wire=True,
                trouble=_both(hall_trouble(rng, done), flickers(rng, flicked, rate=0.1)))
    out.troubles = [*done, f"flicker×{len(flicked)}"]
    findings = hall.replay.engine.irregularities
    asking, notes = incidents(findings)
    codes = {f.incident or f.id: f.code for f in findings if f.incident is None or f.id == f.incident}
    for f in findings:
        codes.setdefault(f.incident or f.id, f.code)
    out.warranted = len(asking)
    page = hall.page  # the page open all along: through the web service's restarts, on the reordered wire
    banners = Counter({key[2]: n for key, n in page.banners.items()})
    out.link_rings = sum(page.link_rings.values())
    out.rings = sum(banners.values()) + out.link_rings
    out.silent = [f"{i} {codes.get(i, '?')}" for i in sorted(asking) if banners[i] == 0]
    out.repeated = [f"{i} {codes.get(i, '?')}×{n}" for i, n in sorted(banners.items()) if n > 1]
    out.notes_rang = [f"{i} {codes.get(i, '?')}" for i in sorted(notes) if banners[i] > 0]
    out.stray = [i for i in sorted(banners) if i not in asking and i not in notes]
    if out.link_rings:
        out.stray.append(f"link×{out.link_rings}")
    out.cards_again = [f"{key[2]} {codes.get(key[2], '?')}×{n}" for key, n in page.cards.items() if n > 1]
    return out


def _per100(count: int, games: int) -> str:
    return f"{100.0 * count / games:6.1f}" if games else "     -"


def report(results: list[Rings], show: int) -> Iterator[str]:
    yield "profile   games  warranted/100  rings/100  incidents 0 rings  >1 ring  notes rang  stray  cards again"
    for profile in PROFILES:
        games = [r for r in results if r.item.profile == profile and not r.error]
        if not games:
            continue
        n = len(games)
        yield (f"{profile:8} {n:6}  {_per100(sum(r.warranted for r in games), n):>13}  "
               f"{_per100(sum(r.rings for r in games), n):>9}  {sum(len(r.silent) for r in games):17}  "
               f"{sum(len(r.repeated) for r in games):7}  {sum(len(r.notes_rang) for r in games):10}  "
               f"{sum(len(r.stray) for r in games):5}  {sum(len(r.cards_again) for r in games):11}")
    errors = [r for r in results if r.error]
    if errors:
        yield f"simulation errors: {len(errors)} ({', '.join(r.item.label for r in errors[:5])})"
    troubles = Counter(t.split('×')[0] for r in results for t in r.troubles if not t.endswith('×0'))
    yield "trouble played: " + ", ".join(f"{k} {v}" for k, v in sorted(troubles.items()))
    bad = [r for r in results if r.silent or r.repeated or r.notes_rang or r.stray or r.cards_again]
    for r in bad[:show]:
        yield (f"  {r.item.label} {r.what}: 0 rings {r.silent} >1 {r.repeated} notes {r.notes_rang} "
               f"stray {r.stray} cards {r.cards_again}")


def _init_worker() -> None:
    logging.disable(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per profile (default 100)")
    parser.add_argument("--profiles", default=",".join(PROFILES), help="comma-separated profiles")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--show", type=int, default=20, help="offending games listed (default 20)")
    args = parser.parse_args(argv)
    items = [Item(profile, index) for profile in args.profiles.split(",") for index in range(args.games)]
    started = time.monotonic()
    _init_worker()
    if args.workers > 1:
        with multiprocessing.Pool(args.workers, initializer=_init_worker) as pool:
            # by its module's name: run with ``python -m``, this module is ``__main__`` (not picklable)
            worker = importlib.import_module("bench.bench_alert_rings").audit
            results = pool.map(worker, items, chunksize=4)
    else:
        results = [audit(item) for item in items]
    for line in report(results, args.show):
        print(line)
    print(f"{len(items)} games in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
