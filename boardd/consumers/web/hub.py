"""The hall as the web pages see it: MQTT messages in, per-audience JSON out. Pure (no I/O).

Two audiences, two views of the same boards:

* ``public`` (the broadcast screen, visible to players): a whitelist of fields — players,
  position, last move, the last few SAN moves, clocks, result. Irregularities, their ids,
  the illegal-move counters, move phases (made/completed, which would tell a player that
  the opponent has not pressed) and arbiter events never reach it (rules-spec G2/G3).
* ``arbiter`` (the tablet): everything, plus every irregularity received since start with its
  plain-words title, and the answers to commands. The flags are also folded into ``incidents``
  (one per primary finding, related findings under it) and a ``log`` of the findings that ask for
  no action (info, ``noted``): see :mod:`boardd.consumers.web.incidents`. ``rank`` is the highest
  severity of the open incidents. The tablets get a board's view in full once (and with each new game),
  then ``delta`` messages of what changed; the findings are kept incrementally, so that a message costs
  the same whatever the length of the game: see :mod:`boardd.consumers.web.tablet`.

Flags of a late joiner: ``irregularity`` messages are not retained, so the flag list also takes
the retained ``state``'s ``irregularities`` (every finding that is not resolved, in full). Each
flag remembers the ``(session, seq)`` of the message it came from; the newer message wins, so a
live ``irregularity`` sent after the state (an acknowledgement, a ruling) is not overwritten by
the older state, and a newer state overrides older live news (it is the whole truth: a flag it no
longer lists as open was resolved while this service was away).

Times: the caller passes a monotonic ``now`` so that clock readings carry their age; the
browser counts the running side down from there.

Link trouble: the tablet's ``link`` is the board's link as last reported, the broadcast screen's
(and its ``online``) counts a drop once it has lasted the grace period (:meth:`Hub.public_link`); the
tablet's ``link_alert`` is debounced (:mod:`boardd.consumers.web.links`): a board needs the arbiter for its
link only after it has been down for a few seconds, and a flapping link is one incident ("link
unstable: N drops in the last minute"). The caller calls :meth:`Hub.links_due` a few times a second:
an incident starts or ends with time, not only with messages.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from boardd.consumers.relay import Hall
from boardd.consumers.web.incidents import SEVERITY_RANK
from boardd.consumers.web.links import RESTART_DETAIL, LinkPolicy, LinkWatch
from boardd.consumers.web.tablet import Findings, moves_delta

__all__ = ["AUDIENCES", "SEVERITY_RANK", "BoardExtra", "Hub", "Message", "code_title"]

_LOGGER = logging.getLogger(__name__)

Audience = Literal["public", "arbiter"]
AUDIENCES: tuple[Audience, ...] = ("public", "arbiter")
#: Topic kinds the web service subscribes to.
WEB_KINDS = ("state", "status", "move", "clock", "irregularity", "event", "cmd-result")
#: Mosquitto bridge notifications (config/mosquitto/README.md): retained 1/0 per Pi bridge. When a Pi
#: loses power its daemon's last will never reaches the hall, so this is what says "offline".
BRIDGE_TOPIC = "$SYS/broker/connection/+/state"
_BRIDGE_PREFIX = "$SYS/broker/connection/bridge-"
_SAN_TAIL = 8
_EVENTS_KEPT = 30
_CMD_RESULTS_KEPT = 500


@functools.lru_cache(maxsize=1024)
def code_title(code: str, edition: int | None) -> str:
    """The plain-words title of a rules-spec §5 code (``boardd.core.laws``), or the code itself (cached: a finding is
    titled again whenever a message touches it, and a board's full view titles every finding it sends)."""
    try:
        from boardd.core.laws.codes import code_info  # noqa: PLC0415 - optional until every edition is known

        return code_info(code, int(edition or 2023)).title
    except (ImportError, KeyError, ValueError, TypeError):
        return code


@dataclass(frozen=True, slots=True)
class Message:
    """One JSON text for the sockets of one audience."""

    audience: Audience
    text: str


@dataclass(slots=True)
class BoardExtra:
    """What the web keeps per board beyond the relay's :class:`~boardd.consumers.relay.BoardRecord`."""

    clock: dict[str, Any] | None = None
    clock_key: tuple[int, int] = (-1, -1)
    clock_received: float = 0.0
    last_move: dict[str, Any] | None = None
    irregularities: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=_EVENTS_KEPT))
    #: findings of the board's current game the arbiter dismissed (``resolve`` with ``accept`` false, answered ok),
    #: until reopened or ruled on again: the tablet offers their Undo. Id -> ``(session, seq)`` of the news that
    #: told it (the answer, or the state listing it). Cleared with the game (ids are unique within a game only);
    #: a daemon whose state lists its dismissals (``dismissed_in_state``) is followed: a newer state that no longer
    #: lists one (reopened or upheld, from any tablet) drops it.
    dismissed: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the board's daemon lists the dismissals in its state (seen once): its state is their whole truth
    dismissed_in_state: bool = False
    #: the flags and incidents as the tablets were last sent them, kept incrementally (:mod:`.tablet`)
    findings: Findings = field(default_factory=Findings)
    edition: object = None  # the game's edition the findings were titled with
    #: the tablets' view as last sent, but its findings (``findings``) and the state's moves and SAN (below);
    #: None: the next message is the board's full view
    sent: dict[str, Any] | None = None
    sent_moves: list[Any] = field(default_factory=list)
    sent_san: list[Any] = field(default_factory=list)


class Hub:
    """Boards of one hall, and the JSON each audience receives.

    Args:
        prefix: MQTT topic prefix.
        title: code -> plain words (default: :func:`code_title`).
        links: the link debounce (``[web] link_*``).
    """

    def __init__(self, *, prefix: str = "boardd", title: Callable[[str, int | None], str] = code_title,
                 links: LinkPolicy | None = None) -> None:
        self.hall = Hall(prefix=prefix)
        self.title = title
        self.extra: dict[str, BoardExtra] = {}
        self.cmd_results: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.received = 0
        self._dirty_clocks: set[str] = set()
        #: board -> is its Pi bridge connected (absent: no bridge seen, e.g. a direct connection)
        self.bridges: dict[str, bool] = {}
        self.links = links if links is not None else LinkPolicy()
        #: board -> its link through time (debounced link trouble), and what the tablet was last sent of it
        self.watches: dict[str, LinkWatch] = {}
        self._link_keys: dict[str, tuple[object, ...] | None] = {}
        self._public_links: dict[str, str] = {}  # board -> the link the broadcast screen was last sent
        #: rulings sent from a tablet, until answered: command id -> (board, name, irregularity, accept, the board's
        #: game when sent: an answer that arrives after a new game is about the old one)
        self._rulings: OrderedDict[str, tuple[str, str, str, bool, object]] = OrderedDict()

    # Input.

    def take(self, topic: str, payload: bytes, now: float) -> list[Message]:
        """Feed one MQTT message; returns the messages to send to each audience (maybe none)."""
        self.received += 1
        if topic.startswith(_BRIDGE_PREFIX) and topic.endswith("/state"):
            board = topic[len(_BRIDGE_PREFIX):-len("/state")]
            connected = payload.strip() == b"1"
            if self.bridges.get(board) == connected:
                return []
            self.bridges[board] = connected
            self._observe_link(board, now, None)  # the bridge notification carries no time: it is now
            return self._board_messages(board, now)
        parsed = self.hall.parse_topic(topic)
        if parsed is None:
            return []
        board, kind = parsed
        if kind not in WEB_KINDS:
            return []
        if kind == "cmd-result":
            return self._cmd_result(board, payload, now)
        record = self.hall.boards.get(board)
        previous_game = _game_id(record.state) if record is not None and record.state is not None else None
        update = self.hall.handle(topic, payload)
        if update is None:
            return []
        extra = self.extra.setdefault(board, BoardExtra())
        if kind == "state" and previous_game is not None and _game_id(update.payload) != previous_game:
            # Irregularity ids are unique within a game only: a new game starts with a clean slate.
            extra.irregularities.clear()
            extra.events.clear()
            extra.dismissed.clear()
            extra.last_move = None
            extra.findings, extra.sent = Findings(), None  # the tablets get the new game's view in full
        body = update.payload
        if not isinstance(body, dict):
            return []
        key = (int(body["session"]), int(body["seq"]))
        if kind == "clock":
            if key < extra.clock_key:
                return []
            extra.clock, extra.clock_key, extra.clock_received = body, key, now
            self._dirty_clocks.add(board)  # coalesced: see flush_clocks()
            return []
        if kind == "state":
            touched, ruled = _merge_state_flags(extra, body, key)
            self._findings(board, extra, touched, regroup=ruled, state=True)
            clock = body.get("clock")
            if isinstance(clock, dict) and key > extra.clock_key:
                extra.clock, extra.clock_key, extra.clock_received = clock, key, now
            return self._board_messages(board, now)
        if kind == "status":
            self._observe_link(board, now, _status_time(body), restart=_restart_marker(body))
            return self._board_messages(board, now)
        if kind == "move":
            extra.last_move = body
            return self._board_messages(board, now, public=False)
        if kind == "irregularity":
            ident = str(body.get("id", ""))
            if not ident:
                return []
            if _key(extra.irregularities.get(ident)) > key:
                return []  # the state already told a newer version of this flag
            extra.irregularities[ident] = body
            extra.irregularities.move_to_end(ident)
            self._findings(board, extra, [ident], moved=[ident])
            return self._board_messages(board, now, public=False)
        if kind == "event":
            extra.events.append(body)
            return self._board_messages(board, now, public=False)
        return []

    def _observe_link(self, board: str, now: float, at: float | None, *, restart: bool = False) -> None:
        watch = self.watches.get(board)
        if watch is None:
            watch = self.watches[board] = LinkWatch(self.links)
        watch.observe(self.link(board)[0] in ("offline", "degraded"), now, at, drop=not restart)
        self._link_keys[board] = watch.key(now)
        self._public_links[board] = self.public_link(board, now)

    def links_due(self, now: float) -> list[Message]:
        """The views of the boards whose link incident (tablet) or shown link (broadcast screen) started,
        changed or ended with time alone."""
        out: list[Message] = []
        for board, watch in self.watches.items():
            watch.update(now)
            key = watch.key(now)
            public = self.public_link(board, now)
            if public != self._public_links.get(board):
                self._public_links[board] = public
                self._link_keys[board] = key
                out += self._board_messages(board, now)
            elif key != self._link_keys.get(board):
                self._link_keys[board] = key
                out += self._board_messages(board, now, public=False)
        return out

    def link_alert(self, board: str, now: float) -> dict[str, Any] | None:
        """The board's link incident for the tablet (debounced), or None."""
        watch = self.watches.get(board)
        if watch is None:
            return None
        watch.update(now)
        return watch.alert(now)

    def command_sent(self, board: str, name: str, payload: dict[str, Any]) -> None:
        """A tablet's command was published: a ruling (``resolve``, ``reopen``) is followed to its answer, so that
        the tablet knows which findings were dismissed (and offers their Undo, ``reopen``)."""
        irregularity = payload.get("irregularity")
        if name not in ("resolve", "reopen") or not isinstance(irregularity, str):
            return
        record = self.hall.boards.get(board)
        game = _game_id(record.state) if record is not None and record.state is not None else None
        self._rulings[str(payload["id"])] = (board, name, irregularity, payload.get("accept", True) is not False,
                                             game)
        while len(self._rulings) > _CMD_RESULTS_KEPT:
            self._rulings.popitem(last=False)

    def _cmd_result(self, board: str, payload: bytes, now: float) -> list[Message]:
        # Answers are matched on the command id, not deduped on seq: the envelope is optional here.
        try:
            body = json.loads(payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            _LOGGER.warning("%s: cmd-result is not JSON: dropped", board)
            return []
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            _LOGGER.warning("%s: cmd-result without id: dropped", board)
            return []
        ident = body["id"]
        if self.cmd_results.get(ident) == {**body, "board": board}:
            return []
        self.cmd_results[ident] = {**body, "board": board}
        while len(self.cmd_results) > _CMD_RESULTS_KEPT:
            self.cmd_results.popitem(last=False)
        out = [Message("arbiter", _dumps({"t": "cmd-result", "board": board, "result": body}))]
        ruling = self._rulings.pop(ident, None)
        if ruling is not None and ruling[0] == board and body.get("ok") is True:
            _, name, irregularity, accept, game = ruling
            record = self.hall.boards.get(board)
            if record is None or record.state is None or _game_id(record.state) != game:
                # answered after the board's game changed (the answer was delayed or redelivered): its id is the
                # old game's, and the same id may name another finding of the new one
                return out
            extra = self.extra.setdefault(board, BoardExtra())
            if name == "resolve" and not accept:
                extra.dismissed[irregularity] = _key(body)
            else:
                extra.dismissed.pop(irregularity, None)
            self._findings(board, extra, [], regroup=[irregularity])
            out += self._board_messages(board, now, public=False)
        return out

    def _findings(self, board: str, extra: BoardExtra, touched: list[str], *, moved: Iterable[str] = (),
                  regroup: Iterable[str] = (), state: bool = False) -> None:
        """The tablet's findings of ``board`` after ``touched`` findings changed (``moved``: to the end of the
        list, a live message), ``regroup``: dismissals changed, ``state``: a new state came (its open list)."""
        record = self.hall.boards.get(board)
        current = record.state if record is not None and isinstance(record.state, dict) else None
        game = current.get("game") if current is not None else None
        edition = game.get("edition") if isinstance(game, dict) else None
        if edition != extra.edition:
            # the titles follow the game's edition (a late first state): every finding again, the view in full
            extra.findings, extra.edition, extra.sent = Findings(), edition, None
            touched, state = list(extra.irregularities), True
        # the open list is the board's current state's (a state older than it changes nothing there)
        open_ids = None if not state or current is None else \
            [str(i) for i in current.get("open_irregularities") or []]
        extra.findings.update(extra.irregularities, touched, moved=moved, state_key=_key(current), open_ids=open_ids,
                              dismissed=extra.dismissed, edition=edition, title=self.title, key=_key,
                              regroup=regroup)

    # Views.

    def _clock_view(self, board: str, now: float) -> dict[str, Any] | None:
        extra = self.extra.get(board)
        if extra is None or extra.clock is None:
            return None
        clock = extra.clock
        running = clock.get("running") if clock.get("running") in ("white", "black") else None
        return {"white": _num(clock.get("white")), "black": _num(clock.get("black")), "running": running,
                "age": round(max(0.0, now - extra.clock_received), 3)}

    def public_view(self, board: str, now: float) -> dict[str, Any] | None:
        """The broadcast screen's view of ``board`` (a whitelist), or None before its state."""
        record = self.hall.boards.get(board)
        if record is None or record.state is None:
            return None
        state = record.state
        game = _dict(state.get("game"))
        moves = _list(state.get("moves"))
        san = _list(state.get("san"))
        ply = len(moves)
        result = state.get("result") if state.get("result") in ("1-0", "0-1", "1/2-1/2") else "*"
        link = self.public_link(board, now)
        online = None if link == "unknown" else link != "offline"
        return {
            "board": board,
            "board_no": game.get("board_no") if isinstance(game.get("board_no"), int) else None,
            "round": _text(game.get("round")),
            "event": _text(game.get("event")),
            "white": _text(game.get("white")) or "?",
            "black": _text(game.get("black")) or "?",
            "fen": _text(state.get("fen")),
            "last_move": str(moves[-1]) if moves else None,
            "ply": ply,
            "turn": "white" if state.get("turn") == "white" else "black",
            "san_tail": [str(s) for s in san[-_SAN_TAIL:]],
            "first_ply": max(1, len(san) - _SAN_TAIL + 1),
            "clock": self._clock_view(board, now),
            "result": result,
            "termination": _text(state.get("termination")) if result != "*" else None,
            "online": online,
            # online | degraded (boardd runs, but its board or clock is disconnected: the record may lag) |
            # offline | unknown (no status yet), once down for the grace period (public_link). The reasons
            # are for the tablet only.
            "link": link,
        }

    def public_link(self, board: str, now: float) -> str:
        """The link the broadcast screen shows: a drop counts once it has lasted ``link_grace`` seconds.

        Spectators need to know that the position shown may be stale ("no signal"), not that a loose
        connector blinked: a drop shorter than the grace period shows nothing, a flapping link that keeps
        coming back shows ``online`` (its moves still arrive), an outage shows after the grace period.
        The tablet and the hall view get the raw ``link`` and the debounced ``link_alert``.
        """
        link = self.link(board)[0]
        watch = self.watches.get(board)
        if link in ("offline", "degraded") and watch is not None and watch.down_since is not None \
                and now - watch.down_since < self.links.grace:
            return "online"
        return link

    def link(self, board: str) -> tuple[str, list[str]]:
        """The board's link state (``online``, ``degraded``, ``offline``, ``unknown``) and why, in plain words.

        ``degraded`` is boardd's own word (contract status): the daemon runs but its board or an
        expected clock is disconnected, so moves stop arriving. The Pi bridge notification wins
        over a status that could not be updated (a Pi without power sends no last will).
        """
        record = self.hall.boards.get(board)
        if self.bridges.get(board) is False:
            return "offline", ["the Pi's bridge to the hall broker is down (power or network)"]
        status = record.status if record is not None else None
        if not isinstance(status, dict):
            return "unknown", []
        state = status.get("state")
        if state == "offline":
            return "offline", ["boardd is not running on this board (its last will)"]
        if state != "degraded":
            return ("online", []) if state == "online" else ("unknown", [f"unknown status {str(state)[:40]!r}"])
        why: list[str] = []
        board_link, clock_link = _dict(status.get("board_link")), _dict(status.get("clock_link"))
        if board_link and not board_link.get("connected"):
            where = " ".join(str(board_link[k]) for k in ("driver", "port") if board_link.get(k))
            why.append(f"board disconnected{f' ({where[:80]})' if where else ''}")
        if clock_link and clock_link.get("model") and not clock_link.get("connected"):
            why.append(f"clock disconnected ({str(clock_link['model'])[:40]})")
        change = _dict(status.get("link_change"))
        if change and not change.get("up") and change.get("detail"):
            why.append(str(change["detail"])[:120])
        return "degraded", why or ["boardd reports degraded"]

    def arbiter_view(self, board: str, now: float) -> dict[str, Any] | None:
        """The tablet's view of ``board``: the public view plus the whole state and the flags (folded into
        incidents and a log: :mod:`boardd.consumers.web.incidents`)."""
        head = self._arbiter_head(board, now)
        record = self.hall.boards.get(board)
        if head is None or record is None or record.state is None:
            return None
        extra = self.extra[board]
        head["state"] = {**head["state"], **{k: record.state[k] for k in ("moves", "san") if k in record.state}}
        return {**head, **extra.findings.view()}

    def _arbiter_head(self, board: str, now: float) -> dict[str, Any] | None:
        """The tablet's view of ``board`` but its findings (``flags``, ``incidents``, ``log``) and the state's
        moves and SAN: what is the same size whatever the length of the game."""
        view = self.public_view(board, now)
        record = self.hall.boards.get(board)
        if view is None or record is None or record.state is None:
            return None
        extra = self.extra.setdefault(board, BoardExtra())
        link, link_why = self.link(board)
        state = record.state
        view.update({
            # the flags carry the state's irregularities already: not twice in every frame
            "state": {k: v for k, v in state.items() if k not in ("irregularities", "dismissed", "moves", "san")},
            "status": record.status,
            # the link as last reported (the public view's is debounced); link_alert says when it needs the arbiter
            "link": link,
            "online": None if link == "unknown" else link != "offline",
            "link_why": link_why,
            "link_alert": self.link_alert(board, now),
            "open_ids": list(extra.findings.open_ids),
            "rank": extra.findings.rank(),
            "illegal_moves": state.get("illegal_moves"),
            "events": list(extra.events)[-10:],
            "last_move_phase": (extra.last_move or {}).get("phase"),
            "session": record.session,
            "seq": record.max_seq,
        })
        return view

    def _tablet_message(self, board: str, now: float) -> Message | None:
        """What the tablets get of ``board`` now: its view in full (``board``: the first time, or a new game),
        else a ``delta`` of what changed since the last message (None: nothing did)."""
        head = self._arbiter_head(board, now)
        record = self.hall.boards.get(board)
        if head is None or record is None or record.state is None:
            return None
        extra = self.extra[board]
        moves, san = _list(record.state.get("moves")), _list(record.state.get("san"))
        findings = extra.findings.take_changes()
        sent, sent_moves, sent_san = extra.sent, extra.sent_moves, extra.sent_san
        extra.sent, extra.sent_moves, extra.sent_san = head, moves, san
        if sent is None:
            return Message("arbiter", _dumps({"t": "board", "view": self.arbiter_view(board, now)}))
        delta: dict[str, Any] = {"t": "delta", "board": board}
        changed = {k: v for k, v in head.items() if k != "state" and (k not in sent or sent[k] != v)}
        if changed:
            delta["set"] = changed
        state, before = head["state"], sent["state"]
        if changed_state := {k: v for k, v in state.items() if k not in before or before[k] != v}:
            delta["state"] = changed_state
        if dropped := sorted(k for k in before if k not in state):
            delta["state_drop"] = dropped
        for name, old, new in (("moves", sent_moves, moves), ("san", sent_san, san)):
            if (appended := moves_delta(old, new)) is not None:
                delta[name] = appended
        delta.update(findings)
        return Message("arbiter", _dumps(delta)) if len(delta) > 2 else None

    def view(self, audience: Audience, board: str, now: float) -> dict[str, Any] | None:
        """The view of ``board`` for ``audience``."""
        return self.public_view(board, now) if audience == "public" else self.arbiter_view(board, now)

    def snapshot(self, audience: Audience, now: float) -> str:
        """The first message of a new socket: every board's view."""
        views = [v for b in sorted(self.hall.boards) if (v := self.view(audience, b, now)) is not None]
        return _dumps({"t": "snapshot", "boards": views})

    def _board_messages(self, board: str, now: float, *, public: bool = True) -> list[Message]:
        out: list[Message] = []
        for audience in AUDIENCES:
            if audience == "public" and not public:
                continue
            if audience == "arbiter":
                message = self._tablet_message(board, now)
                out += [message] if message is not None else []
            elif (view := self.public_view(board, now)) is not None:
                out.append(Message(audience, _dumps({"t": "board", "view": view})))
        return out

    def sync(self, now: float) -> list[Message]:
        """The tablets' deltas of what changed with time alone since each board's last message (a clock's age, a
        link's grace period): before a new tablet's snapshot, so that the tablets already connected hold the
        same views as the snapshot and the deltas that follow apply to both."""
        return [m for board in sorted(self.hall.boards) if (m := self._tablet_message(board, now)) is not None]

    def flush_clocks(self, now: float) -> list[Message]:
        """The clock readings received since the last flush, one message for all boards.

        Readings arrive about once a second per board (ten times that in a fast replay); the
        pages count down by themselves, so a few batches a second keep them exact and cheap.
        """
        if not self._dirty_clocks:
            return []
        clocks = {board: view for board in sorted(self._dirty_clocks) if (view := self._clock_view(board, now))}
        self._dirty_clocks.clear()
        if not clocks:
            return []
        text = _dumps({"t": "clocks", "clocks": clocks})
        return [Message(audience, text) for audience in AUDIENCES]


def _key(body: object) -> tuple[int, int]:
    """``(session, seq)`` of a payload; ``(-1, -1)`` when it has none (sorts before any message)."""
    if not isinstance(body, dict):
        return (-1, -1)
    session, seq = body.get("session"), body.get("seq")
    if not isinstance(session, int) or not isinstance(seq, int) or isinstance(session, bool) or isinstance(seq, bool):
        return (-1, -1)
    return (session, seq)


def _merge_state_flags(extra: BoardExtra, state: dict[str, Any], key: tuple[int, int]) -> tuple[list[str], list[str]]:
    """Take the state's ``irregularities`` (full objects of the unresolved flags) unless a newer message told more.

    The stored copy carries the state's ``session``/``seq``: that is how old the news is. Returns the ids of
    the findings taken (in order) and of the dismissals told or dropped.
    """
    touched: list[str] = []
    ruled: list[str] = []
    dismissed = state.get("dismissed")
    if isinstance(dismissed, list):
        # the arbiter's dismissals a reopen can take back (a newer daemon): their Undo survives a restart of
        # this service (which has lost the answers to its own commands)
        extra.dismissed_in_state = True
    listed: set[str] = set()
    for item in dismissed if isinstance(dismissed, list) else ():
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            listed.add(item["id"])
            if _key(extra.irregularities.get(item["id"])) < key:
                extra.irregularities[item["id"]] = {**item, "session": key[0], "seq": key[1]}
                touched.append(item["id"])
            if item["id"] not in extra.dismissed:
                ruled.append(item["id"])
            extra.dismissed[item["id"]] = max(extra.dismissed.get(item["id"], key), key)
    if extra.dismissed_in_state:
        # the state is the whole truth of the dismissals (absent: none): one it no longer lists was reopened or
        # upheld (from this tablet, another one or the command line), unless the news of it is newer than the state
        for ident in [i for i, told in extra.dismissed.items() if i not in listed and told < key]:
            del extra.dismissed[ident]
            ruled.append(ident)
    items = state.get("irregularities")
    if items is None:
        return touched, ruled
    if not isinstance(items, list):
        _LOGGER.warning("%s: state irregularities is not a list: ignored", state.get("board"))
        return touched, ruled
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            _LOGGER.warning("%s: state irregularity without an id: ignored", state.get("board"))
            continue
        ident = item["id"]
        if _key(extra.irregularities.get(ident)) >= key:
            continue
        extra.irregularities[ident] = {**item, "session": key[0], "seq": key[1]}
        touched.append(ident)
    return touched, ruled


def _restart_marker(body: dict[str, Any]) -> bool:
    """Is this status the daemon's restart marker (``link_change`` down with the detail ``daemon restarted``,
    docs/downtime.md)? The outage it marks is the daemon's own restart, already seen as ``offline`` (its clean stop
    or its last will): not another drop of the link."""
    change = body.get("link_change")
    return isinstance(change, dict) and change.get("up") is False and change.get("detail") == RESTART_DETAIL


def _status_time(body: dict[str, Any]) -> float | None:
    """When the status's link change happened (``link_change.at_s``), else when it was published (``ts``)."""
    change = body.get("link_change")
    at = change.get("at_s") if isinstance(change, dict) else None
    if isinstance(at, int | float) and not isinstance(at, bool) and math.isfinite(at):
        return float(at)
    ts = body.get("ts")
    if isinstance(ts, str):
        try:
            return dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _game_id(state: object) -> object:
    game = state.get("game") if isinstance(state, dict) else None
    return game.get("id") if isinstance(game, dict) else None


def _dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _text(value: object) -> str | None:
    return None if value is None else str(value)[:200]
