"""The arbiter tablet's alerts, as the page computes them, over the hub's views (pure, no broker, no browser).

What the tablet calls for the arbiter's attention (boardd/consumers/web/static/arbiter.js):

* a **card**: every incident of a board's view with ``needs_arbiter`` (open or acknowledged) is drawn as one
  card in the boards-that-need-you section; it leaves when the incident no longer needs the arbiter;
* the **banner** (and the beep): ``announce()`` rings once per ``board/game/incident`` key, the first time
  the page sees the incident ``open`` at a severity that rings (``[web] ring``: ``illegal-move`` and
  ``warning`` by default; never ``info``), never for what the page's first snapshot brings;
* **link trouble**: a board with a link incident (``link_alert``, debounced by the hub; from an older service
  without it, the link state as it comes: offline or degraded) enters the needs-you list; counted per board
  each time it enters (``link_alerts``), and it rings once then (``link_rings``; not for the first snapshot).

:class:`Tablet` replays that logic over the hub's views (the same dicts the page receives) and counts, per
incident, how many times it *appeared* as a card (absent -> present) and how many banners it rang. One
incident is one alert: a card appears once, stays while it needs the arbiter, leaves once; the banner rings
at most once. The hall page's tiles are coloured by ``rank`` (open incidents only): also counted per board.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from boardd.consumers.web.hub import Hub, Message
from boardd.consumers.web.tablet import apply_delta


@dataclass
class Tablet:
    """One tablet page (arbiter.js) over one or several hubs in turn (a web service restart keeps the page)."""

    rings: frozenset[str] = frozenset({"illegal-move", "warning", "link"})   # [web] ring
    seen: set[str] = field(default_factory=set)                  # arbiter.js rung
    needing: dict[str, set[str]] = field(default_factory=dict)   # board -> incidents drawn as cards now
    #: (board, game, incident) -> appearances as a card / banners rung (ids are unique within a game only)
    cards: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    banners: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    hall_alerts: Counter[str] = field(default_factory=Counter)          # board -> times its tile turned red/amber
    ranked: dict[str, int] = field(default_factory=dict)
    link_alerts: Counter[str] = field(default_factory=Counter)          # board -> times it entered for its link
    link_rings: Counter[str] = field(default_factory=Counter)           # board -> times its link trouble rang
    linked: dict[str, bool] = field(default_factory=dict)               # board -> in needs-you for its link now
    games: dict[str, str] = field(default_factory=dict)
    first_snapshot: bool = True
    history: list[tuple[str, str, str]] = field(default_factory=list)   # (board, incident, what), for messages
    shown: dict[str, dict[str, Any]] = field(default_factory=dict)      # board -> the last view received

    def snapshot(self, views: Iterable[dict[str, Any]]) -> None:
        """A (re)connected socket's first message: every board's view."""
        for view in views:
            self.view(view)
        self.first_snapshot = False

    def view(self, view: dict[str, Any]) -> None:
        """A ``board`` message (or one board of a snapshot)."""
        board = str(view["board"])
        self.shown[board] = view
        game = str(((view.get("state") or {}).get("game") or {}).get("id"))
        # announce(): a ring once per board/game/incident, the first time it is open at a severity that rings
        for incident in view.get("incidents", []):
            key = f"{board}/{game}/{incident['id']}"
            if key in self.seen or incident["severity"] not in self.rings:
                continue
            if self.first_snapshot:
                self.seen.add(key)
            elif incident["status"] == "open":
                self.seen.add(key)
                self.banners[(board, game, incident["id"])] += 1
                self.history.append((board, incident["id"], "banner"))
        now = {str(i["id"]) for i in view.get("incidents", []) if i["needs_arbiter"]}
        if self.games.get(board, game) != game:
            self.needing[board] = set()  # a new game: the hub starts the board afresh
        self.games[board] = game
        for ident in now - self.needing.get(board, set()):
            self.cards[(board, game, ident)] += 1
            self.history.append((board, ident, "card"))
        for ident in self.needing.get(board, set()) - now:
            self.history.append((board, ident, "gone"))
        self.needing[board] = now
        # arbiter.js linkAlert(): the hub's debounced incident, else (an older service) the raw link state
        trouble = view["link_alert"] is not None if "link_alert" in view else view.get("link") in ("offline",
                                                                                                   "degraded")
        if trouble and not self.linked.get(board):
            self.link_alerts[board] += 1
            self.history.append((board, "link", "card"))
            if not self.first_snapshot and "link" in self.rings:
                self.link_rings[board] += 1
                self.history.append((board, "link", "banner"))
        self.linked[board] = trouble
        rank = int(view.get("rank") or 0)
        if rank >= 2 and self.ranked.get(board, 0) < 2:
            self.hall_alerts[board] += 1
        self.ranked[board] = rank


class Watch:
    """A hub and the tablet pages that watch it: every message the hub sends to the arbiter reaches the pages."""

    def __init__(self, prefix: str, tablets: Iterable[Tablet] = ()) -> None:
        self.hub = Hub(prefix=prefix)
        self.tablets = list(tablets)
        self.now = 0.0
        for tablet in self.tablets:
            tablet.snapshot([])

    def take(self, topic: str, payload: bytes, at: float | None = None) -> None:
        """A message reaches the service; ``at``: the time it arrives (the service's clock follows the
        hall's: the link debounce counts drops and outages in seconds), else 1 ms after the last."""
        self.now = self.now + 0.001 if at is None else max(self.now + 0.001, at)
        self.deliver(self.hub.take(topic, payload, self.now))

    def tick(self, at: float) -> None:
        """The service's clock loop (four times a second) up to ``at``: link incidents start and end with time."""
        while self.now + 0.25 <= at:
            self.now += 0.25
            self.deliver(self.hub.links_due(self.now))
        self.now = max(self.now, at)
        self.deliver(self.hub.links_due(self.now))

    def deliver(self, messages: Iterable[Message]) -> None:
        for message in messages:
            if message.audience != "arbiter":
                continue
            body = json.loads(message.text)
            if body.get("t") == "board":
                for tablet in self.tablets:
                    tablet.view(body["view"])
            elif body.get("t") == "delta":
                for tablet in self.tablets:
                    tablet.view(apply_delta(tablet.shown[body["board"]], body))

    def views(self) -> list[dict[str, Any]]:
        return [v for b in sorted(self.hub.hall.boards) if (v := self.hub.arbiter_view(b, self.now)) is not None]

    def attach(self, tablet: Tablet) -> None:
        """A page (re)connects its socket: the pages already connected catch up (``Hub.sync``), the snapshot,
        then live messages."""
        self.deliver(self.hub.sync(self.now))
        tablet.snapshot(self.views())
        self.tablets.append(tablet)
