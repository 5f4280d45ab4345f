"""Downtime audit: the real situations of a board that was out of sight while play went on, recorded and replayed.

Run: ``python -m bench downtime-audit [--cases N] [--seed S] [--out DIR]``

Every case is a recording (a ``boardd`` event log, ``docs/event-log.md``) of a real game of ``../shared/data/pgn``:
some plies seen, then the board out of sight (the daemon restarted, or the board's link lost while it ran) for
1-12 plies (randomised, with randomised timings and hand orders: captures lifted before or after the capturing
piece, castling king first), then the board back (a DGT board gives its EEPROM log first when the case has one:
every change and every lever press with the presser's time, protocols.md §1.9) and three plies seen. The clock is
on its own link (seen throughout a link outage), on the board's jack (lost with it) or absent. Situations:

``moves``        any stretch; ``captures``, ``castling``, ``promotion``, ``en-passant``: a stretch that has one;
``illegal``      an illegal move made during the gap stood (a piece moved where it cannot go), its mover pressed;
                 without a clock the opponent's move, seen after the board is back, completes it (7.5.1);
``displaced``    a piece displaced during the gap (off its square to an empty one): no legal line leads there; after
                 the return it is seen and put back (7.4: a player or the arbiter, soon or after a while), and play
                 goes on (three plies), as a real game does: the outcome is judged after them;
``reset``        the game ended during the gap and the board was set up for the next game;
``ended``        the game ended during the gap: both kings put in the centre (a draw, rules-spec §3.6).

The recording is written as JSON lines, read back (``read_event_log``) and replayed through the engine; then:

* **exact**: the record is the game played, the missed plies marked recovered; **gap**: one gap entry whose
  candidates hold the moves played (``gap+``) or none (``gap0``) and the moves after it right;
  **divergence**: ``POSITION_DIVERGENCE`` (link outage, nothing explains the board); **WRONG**: a move recorded
  that was not played, or a move seen before the gap lost; **moves+end** (``ended``): every ply before the end
  recovered (the board's log), the result signalled; **illegal raised** (``illegal``): the illegal move recorded
  as it stood and ``ILLEGAL_MOVE`` raised, as live; **held** / **stopped**: the record kept as it was, without /
  with an alert;
* **alerts**: the findings raised (open or not, above ``info``) plus the ``MOVES_RECOVERED`` events that ask the
  arbiter (``ambiguous``, ``gap``) and ``RESULT_SIGNAL``, a finding or an event folded under another of its incident
  (``incident``) not counted: one per gap, none when the record is exact;
* **clock**: the state's clock is the last reading, and a recovered move's ``[%clk]`` is the presser's time;
  how many recovered moves (``eeprom``, ``search``) of a presser carry a ``[%clk]`` (the board's log holds the
  presser's time, the clock seen at the press) or leave it out (no time known: none invented);
* **consistent**: the moves published (``MoveMade``/``MovesRetracted`` replayed by ply) are the state's, and the
  PGN checks (``pgn_and_check``).
"""

from __future__ import annotations

import argparse
import io
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

from bench.bench_downtime_block import _lines
from boardd.core.engine import Engine
from boardd.core.engine.downtime import RESTART_DETAIL
from boardd.core.eventlog import LogHeader, read_events, read_header, write_events
from boardd.core.events import (
    BoardLog,
    BoardSnapshot,
    ClockReading,
    ClockSide,
    Content,
    Event,
    GameInfo,
    Link,
    LinkChanged,
    LogEntry,
    LoggedChange,
    LoggedPress,
    SquareChanged,
)
from boardd.core.outputs import GameEvent, IrregularityRaised, MoveMade, MovesRetracted, Output, Severity
from boardd.core.record import game_pgn
from boardd.core.settings import RulesConfig

SITUATIONS = ("moves", "captures", "castling", "promotion", "en-passant", "illegal", "displaced", "reset", "ended")
CLOCKS = ("own-link", "jack", "none")
Step = tuple[int, Content]


def _steps(board: chess.Board, move: chess.Move, rng: random.Random) -> list[Step]:
    """The square changes of *move* as a hand makes them (a capture lifted before or after, castling king first)."""
    mover = board.piece_at(move.from_square)
    assert mover is not None
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = board.is_kingside_castling(move)
        rook_from = chess.square(7 if kingside else 0, rank)
        king_to, rook_to = chess.square(6 if kingside else 2, rank), chess.square(5 if kingside else 3, rank)
        return [(move.from_square, None), (king_to, mover), (rook_from, None), (rook_to, board.piece_at(rook_from))]
    captured = move.to_square
    if board.is_en_passant(move):
        captured = chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))
    placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
    out: list[Step] = [(move.from_square, None)]
    if board.piece_at(captured) is not None:
        out.insert(rng.randrange(2), (captured, None))
    return [*out, (move.to_square, placed)]


def _has(situation: str, board: chess.Board, moves: Sequence[chess.Move]) -> bool:
    work = board.copy(stack=False)
    for move in moves:
        if ((situation == "captures" and work.is_capture(move)) or (situation == "castling" and work.is_castling(move))
                or (situation == "promotion" and move.promotion) or (situation == "en-passant"
                                                                      and work.is_en_passant(move))):
            return True
        work.push(move)
    return situation not in ("captures", "castling", "promotion", "en-passant")


@dataclass
class Case:
    situation: str
    restart: bool
    clock: str
    eeprom: bool
    start: chess.Board
    seen: list[chess.Move]
    missed: list[chess.Move]
    after: list[chess.Move]
    events: list[Event] = field(default_factory=list)
    #: the presser's time after each ply pressed (the truth for ``[%clk]``), by ply
    times: dict[int, float] = field(default_factory=dict)
    #: what the board shows at its return differs from the legal line (illegal, displaced, reset, ended)
    unreachable: bool = False
    #: ``illegal``: the illegal move made (UCI), the last of the plies missed
    illegal: str = ""
    #: ``illegal`` without a clock: the position the opponent's reply (``after``, seen) is played from
    reply_from: chess.Board | None = None
    #: ``displaced``: the piece's square and the empty square it was knocked to (put back after the return)
    displaced: tuple[int, int] | None = None


def _pick(rng: random.Random, lines: list[list[chess.Move]], situation: str) -> tuple[chess.Board, list[chess.Move],
                                                                                    int, int]:
    """A game, the plies seen, the plies missed (a stretch with the situation's move)."""
    for _ in range(20000):
        moves = rng.choice(lines)
        n = rng.randint(1, 12)
        k = rng.randrange(2, max(3, len(moves) - n - 3))
        board = chess.Board()
        for move in moves[:k]:
            board.push(move)
        if k + n + 3 <= len(moves) and _has(situation, board, moves[k:k + n]):
            return chess.Board(), moves[:k + n + 3], k, n
    raise RuntimeError(f"no stretch with {situation}")


def record(rng: random.Random, lines: list[list[chess.Move]], situation: str) -> Case:
    """One recording of *situation*."""
    start, moves, k, n = _pick(rng, lines, situation)
    restart = rng.random() < 0.5
    clock = rng.choice(CLOCKS)
    case = Case(situation, restart, clock, eeprom=rng.random() < 0.5, start=start, seen=moves[:k],
                missed=moves[k:k + n], after=moves[k + n:])
    board = start.copy()
    phys: list[Content] = [board.piece_at(sq) for sq in chess.SQUARES]
    times = {chess.WHITE: 5400.0, chess.BLACK: 5400.0}
    inc = 30.0
    t = 0.0
    running: chess.Color | None = None
    ev = case.events
    log: list[LogEntry] = []

    def reading(at: float, visible: bool) -> None:
        if clock == "none" or not visible:
            return
        left = times[chess.WHITE] - (at - t_run if running == chess.WHITE else 0.0)
        right = times[chess.BLACK] - (at - t_run if running == chess.BLACK else 0.0)
        side = None if running is None else (ClockSide.LEFT if running == chess.WHITE else ClockSide.RIGHT)
        lever = ClockSide.LEFT if board.turn == chess.WHITE else ClockSide.RIGHT
        ev.append(ClockReading(at=at, left=round(left, 1), right=round(right, 1), running=side, lever_high=lever))

    t_run = 0.0
    ev.append(BoardSnapshot(at=t, squares=tuple(phys)))
    reading(0.2, True)
    t = 1.0
    down_at: float | None = None

    def play(move: chess.Move, board_seen: bool, clock_seen: bool) -> None:
        nonlocal t, running, t_run
        t += rng.uniform(2.0, 8.0)
        for square, content in _steps(board, move, rng):
            t += rng.uniform(0.1, 0.5)
            phys[square] = content
            if board_seen:
                ev.append(SquareChanged(at=t, square=square, content=content))
            else:
                log.append(LoggedChange(square=square, content=content))
        side = board.turn
        board.push(move)
        if clock == "none":
            return
        t += rng.uniform(0.2, 1.0)
        if running is not None:
            times[side] -= t - t_run
        shown = times[side]  # the presser's time as the lever goes down (the DGT logs it before the increment)
        times[side] += inc if running is not None else 0.0
        running, t_run = not side, t
        case.times[len(board.move_stack)] = times[side]
        if clock_seen:
            reading(t, True)
        else:
            log.append(LoggedPress(side=ClockSide.LEFT if side == chess.WHITE else ClockSide.RIGHT,
                                   shown=float(int(shown))))

    for move in case.seen:
        play(move, True, True)
    t += rng.uniform(1.0, 5.0)
    down_at = t
    if restart:
        ev.append(LinkChanged(at=t, link=Link.CLOCK, up=False, detail=RESTART_DETAIL))
        ev.append(LinkChanged(at=t, link=Link.BOARD, up=False, detail=RESTART_DETAIL))
    else:
        ev.append(LinkChanged(at=t, link=Link.BOARD, up=False, detail="unplugged"))
        if clock == "jack":
            ev.append(LinkChanged(at=t, link=Link.CLOCK, up=False, detail="board link down"))
    clock_seen = not restart and clock == "own-link"
    for i, move in enumerate(case.missed):
        if situation == "illegal" and i == len(case.missed) - 1:
            # the last mover's piece put where it cannot go (a knight one step, a bishop straight on): it stood
            mover = board.piece_at(move.from_square)
            assert mover is not None
            empties = [sq for sq in chess.SQUARES if phys[sq] is None
                       and chess.square_distance(sq, move.from_square) == 1
                       and chess.Move(move.from_square, sq) not in board.legal_moves]
            if empties:
                to = rng.choice(empties)
                t += rng.uniform(2.0, 6.0)
                for square, content in ((move.from_square, None), (to, mover)):
                    phys[square] = content
                    log.append(LoggedChange(square=square, content=content))
                if clock != "none":  # he pressed: the illegal move completed (7.5.1); without a clock it stood
                    t += rng.uniform(0.3, 1.0)
                    times[board.turn] -= t - t_run
                    log.append(LoggedPress(side=ClockSide.LEFT if board.turn == chess.WHITE else ClockSide.RIGHT,
                                           shown=float(int(times[board.turn]))))
                    # the clock's lever and the side to move change over, seen or not (a clock read again after the
                    # outage shows the opponent's time running); nothing is played after it
                    board.push(chess.Move.null())
                    running, t_run = board.turn, t
                    if clock_seen:
                        reading(t, True)
                case.unreachable = True
                case.illegal = chess.Move(move.from_square, to).uci()
                case.after = []  # the arbiter stops the game (7.5): nothing after it is compared
                if clock == "none":
                    # no clock: the opponent's move completes it (7.5.1), made after the board is back (seen); the
                    # arbiter stops the game then
                    stood = board.copy(stack=False)
                    stood.remove_piece_at(move.from_square)
                    stood.set_piece_at(to, mover)
                    stood.turn = not board.turn
                    stood.ep_square = None
                    replies = [m for m in stood.legal_moves if not stood.is_castling(m)]
                    if replies:
                        case.after = [rng.choice(replies)]
                        case.reply_from = stood
                break
        play(move, False, clock_seen)
    if situation == "displaced":
        occupied = [sq for sq in chess.SQUARES if phys[sq] is not None and not (
            isinstance(phys[sq], chess.Piece) and phys[sq].piece_type == chess.KING)]  # type: ignore[union-attr]
        empty = [sq for sq in chess.SQUARES if phys[sq] is None]
        fro, to = rng.choice(occupied), rng.choice(empty)
        phys[to], phys[fro] = phys[fro], None
        log += [LoggedChange(square=fro, content=None), LoggedChange(square=to, content=phys[to])]
        case.displaced = (fro, to)
    if situation in ("reset", "ended"):
        if situation == "reset":
            target = chess.Board()
        else:
            target = board.copy(stack=False)
            for color, square in ((chess.WHITE, chess.E4), (chess.BLACK, chess.D5)):
                king = target.king(color)
                assert king is not None
                target.remove_piece_at(square)  # whatever stood there is put aside by hand
                target.remove_piece_at(king)
                target.set_piece_at(square, chess.Piece(chess.KING, color))
        for sq in chess.SQUARES:
            if phys[sq] != target.piece_at(sq):
                phys[sq] = target.piece_at(sq)
                log.append(LoggedChange(square=sq, content=phys[sq]))
        case.unreachable = True
        case.after = []
    t += rng.uniform(5.0, 60.0)
    ev.append(LinkChanged(at=t, link=Link.BOARD, up=True, detail="usb"))
    if case.eeprom and log:
        ev.append(BoardLog(at=t, entries=tuple(log)))
    ev.append(BoardSnapshot(at=t, squares=tuple(phys)))
    if clock != "none" and (restart or clock == "jack"):
        ev.append(LinkChanged(at=t, link=Link.CLOCK, up=True, detail="usb"))
        reading(t + rng.uniform(0.05, 0.8), True)
    t += rng.uniform(1.0, 3.0)
    if case.reply_from is not None:
        board = case.reply_from.copy()  # (play() goes on from the illegal move's position)
    if case.displaced is not None:
        # the real procedure (7.4): the displaced piece is seen and put back (a player, or the arbiter), then play goes
        # on. Its own draws (the recording up to the return stays the one drawn before): seen within a few seconds
        # or after a while, held in the hand a moment
        fro, to = case.displaced
        hand = random.Random(f"{t:.9f}-{fro}-{to}")
        t += hand.choice((hand.uniform(0.5, 4.0), hand.uniform(4.0, 25.0)))
        piece = phys[to]
        for square, content in ((to, None), (fro, piece)):
            phys[square] = content
            ev.append(SquareChanged(at=t, square=square, content=content))
            t += hand.uniform(0.2, 2.5)
        rng = hand  # (the plies after it too: the caller's draws, and so the next recordings, stay the ones before)
    for move in case.after:
        play(move, True, True)
    del down_at
    return case


@dataclass
class Outcome:
    kind: str
    alerts: int
    clock_ok: bool
    consistent: bool
    notes: list[str]
    filled: bool = False
    #: recovered moves (``eeprom``, ``search``) whose mover pressed: with a ``[%clk]``, without one
    clk_given: int = 0
    clk_left_out: int = 0


def _timers(engine: Engine, before: float, *, inclusive: bool = False) -> list[Output]:
    """The engine's timers due before *before* (at it too when *inclusive*), each at its deadline."""
    outs: list[Output] = []
    for _ in range(10000):
        deadline = engine.next_deadline()
        if deadline is None or deadline > before or (deadline == before and not inclusive):
            break
        outs += engine.advance(deadline)
    return outs


def replay(case: Case) -> Outcome:
    """The recording written, read back and fed to an engine; the outcome measured."""
    buffer = io.StringIO()
    game = GameInfo(start_fen=case.start.fen(), time_control="5400+30")
    rules = RulesConfig(clock_expected=case.clock != "none")
    write_events(buffer, case.events, LogHeader(rules=rules, game=game))
    text = buffer.getvalue().splitlines()
    header = read_header(text)
    events = [event for _, event in read_events(text)]
    engine = Engine(header.rules if header is not None else rules, game)
    outs: list[Output] = []
    last = 0.0
    for event in events:
        # the engine's timers fire at their deadlines before the event, as the daemon's timer task and ``boardd
        # replay`` fire them (fired only at the end, a held board was recovered at the time of the next event: an
        # illegal move it showed looked "put down" as the opponent's reply began, and was not raised)
        outs += _timers(engine, event.at)
        outs += engine.feed(event)
        last = event.at
    outs += _timers(engine, last + 60.0, inclusive=True)  # (a gap's event waits 30 s at most)
    state = engine.state
    truth = [m.uci() for m in (*case.seen, *case.missed, *case.after)]
    got = [m.uci for m in state.moves]
    k, n = len(case.seen), len(case.missed)
    notes: list[str] = []
    findings = {o.irregularity.id: o.irregularity for o in outs if isinstance(o, IrregularityRaised)
                and o.irregularity.severity is not Severity.INFO}
    # (an event folded under another of its incident, ``incident``, is no second alert)
    asks = [o.details for o in outs if isinstance(o, GameEvent) and "incident" not in o.details
            and ((o.type == "MOVES_RECOVERED" and o.details.get("kind") in ("ambiguous", "gap"))
                 or o.type == "RESULT_SIGNAL")]
    filled = [o.details for o in outs if isinstance(o, GameEvent) and o.type == "MOVES_RECOVERED"
              and o.details.get("kind") == "filled"]
    if filled:
        notes.append("gap filled once the side to move was known")
    codes = sorted({f.code for f in findings.values()})
    gaps = [i for i, rec in enumerate(state.moves) if rec.recovered == "gap"]
    if got[:k] != truth[:k]:
        kind = "WRONG"
        notes.append("a move seen before the gap lost")
    elif not case.unreachable and got == truth:
        kind = "exact"
        if any(not rec.recovered for rec in state.moves[k:k + n]) and n > 1:
            notes.append("missed plies not marked recovered")
    elif case.situation == "ended" and got == truth:
        kind = "moves+end"  # every ply before the end recovered (the board's log), the result signalled
    elif case.illegal and got[:k + n] == [*truth[:k + n - 1], case.illegal] and not state.moves[k + n - 1].legal \
            and got[k + n:] == [m.uci() for m in case.after] and "ILLEGAL_MOVE" in codes:
        kind = "illegal raised"  # the illegal move recorded as made (it stood) and raised, as live
    elif gaps == [k] and (case.unreachable or got[k + 1:] == truth[k + n:]):
        cands = [c for e in asks for c in e.get("candidates", [])]  # type: ignore[union-attr]
        kind = "gap+" if [m.uci() for m in case.missed] in cands else "gap0"
    elif "POSITION_DIVERGENCE" in codes and (got == truth[:len(got)] or got[k:] == truth[k + n:len(got) + n]):
        kind = "divergence"
    elif case.unreachable and got == truth[:len(got)]:
        kind = "held" if not codes and not asks else "stopped"
    else:
        kind = "WRONG"
        notes.append(f"record {got[k:k + n + 3]} for {truth[k:k + n + 3]}")
    # a finding joined to an incident (``incident``: its primary's id) is folded under that primary (mqtt-additions.md,
    # "incidents and notes"): one card for the arbiter, no second alert (it counted as one before)
    alerts = sum(1 for f in findings.values() if f.incident is None) + len(asks)
    # the clock: the state shows the last reading; a recovered move's [%clk] is the presser's time at his press
    clock_ok = True
    clk_given = clk_left_out = 0
    if case.clock != "none":
        readings = [e for e in events if isinstance(e, ClockReading)]
        if readings and state.clock.white is not None:
            r = readings[-1]
            if abs((state.clock.white or 0) - (r.left or 0)) > 0.6 and state.clock.running is None:
                clock_ok = False
        for rec in state.moves:
            if rec.ply <= k or rec.recovered == "gap":
                continue
            # the true ply of a record after a gap (one entry for the plies missed)
            true_ply = rec.ply if not gaps or rec.ply <= gaps[0] else rec.ply + n - 1
            shown = rec.clock_white if rec.side == chess.WHITE else rec.clock_black
            want = case.times.get(true_ply)
            if rec.recovered in ("eeprom", "search") and want is not None:
                clk_given += shown is not None
                clk_left_out += shown is None
            if shown is not None and want is not None and abs(shown - want) > 1.01:
                clock_ok = False
                notes.append(f"[%clk] of ply {rec.ply} ({rec.recovered or 'seen'}): {shown} for {want:.1f}")
    # the broadcast: what was published, by ply, is the state's record; the PGN checks
    published: dict[int, str] = {}
    for o in outs:
        if isinstance(o, MovesRetracted):
            published = {p: u for p, u in published.items() if p <= o.to_ply}
        elif isinstance(o, MoveMade):
            published[o.move.ply] = o.move.uci
    consistent = [published.get(i + 1) for i in range(len(published))] == got
    parsed = chess.pgn.read_game(io.StringIO(game_pgn(state)))
    movetext = [m.uci() for m in parsed.mainline_moves()] if parsed is not None else []
    legal_run = got[:gaps[0]] if gaps else got
    if movetext != legal_run[:len(movetext)] or (not gaps and len(movetext) != len(got) and all(
            rec.legal for rec in state.moves)):
        consistent = False
        notes.append(f"pgn movetext {movetext[-3:]} for the record {legal_run[-3:]}")
    named = ", ".join(codes + [str(a.get("kind", "RESULT_SIGNAL")) for a in asks])
    if kind == "exact" and alerts and not filled:
        notes.append("alerts on an exact record: " + named)
    elif kind != "exact" and alerts != 1:
        notes.append(f"{alerts} alerts: " + named)
    return Outcome(kind, alerts, clock_ok, consistent, notes, filled=bool(filled), clk_given=clk_given,
                   clk_left_out=clk_left_out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=30, help="cases per situation")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write the recordings (JSON lines) here")
    parser.add_argument("--only", choices=SITUATIONS, default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    lines = _lines(200)
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for situation in SITUATIONS if args.only is None else (args.only,):
        rng = random.Random(f"{args.seed}-{situation}")
        for i in range(args.cases):
            case = record(rng, lines, situation)
            if args.out is not None:
                args.out.mkdir(parents=True, exist_ok=True)
                with (args.out / f"{situation}-{i:03d}.jsonl").open("w", encoding="utf-8") as handle:
                    rules = RulesConfig(clock_expected=case.clock != "none")
                    game = GameInfo(start_fen=case.start.fen(), time_control="5400+30")
                    write_events(handle, case.events, LogHeader(rules=rules, game=game))
            out = replay(case)
            row = table[situation]
            row[out.kind] += 1
            right = out.alerts == 0 if out.kind == "exact" else out.alerts == 1
            row["alerts ok" if right else ("alert, then filled" if out.filled else "ALERTS OFF")] += 1
            row["clock ok" if out.clock_ok else "clock WRONG"] += 1
            row["consistent" if out.consistent else "INCONSISTENT"] += 1
            row["recovered [%clk] given"] += out.clk_given
            row["recovered [%clk] left out"] += out.clk_left_out
            if args.verbose and out.notes:
                print(f"  {situation} {i} ({'restart' if case.restart else 'outage'}, clock {case.clock}, "
                      f"eeprom {case.eeprom}, {len(case.missed)} plies): {out.kind}: {'; '.join(out.notes)}")
    print(f"downtime-audit: {args.cases} recordings per situation (seed {args.seed})")
    for situation, row in table.items():
        print(f"  {situation:<11} " + ", ".join(f"{k} {v}" for k, v in sorted(row.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
