"""The game's mutable state: one object (:class:`Game`) that every room of the engine receives."""

from __future__ import annotations

import re

import chess

from boardd.core.clock import ClockModel, TimeControl
from boardd.core.engine.common import (
    _LOGGER,
    _STANDARD_FEN,
    _BlindPress,
    _Candidate,
    _change_text,
    _Press,
    _Window,
)
from boardd.core.engine.modes import (
    BOARD_LINK,
    CLOCK_LINK,
    PHASES,
    PLAYING,
    LinkState,
    LinkTrigger,
    Machine,
    Phase,
    PhaseTrigger,
)
from boardd.core.events import (
    ClockReading,
    Content,
    Event,
    GameInfo,
    Marker,
)
from boardd.core.laws.penalties import category_of
from boardd.core.outputs import (
    ClockState,
    Evidence,
    Irregularity,
    MoveRecord,
)
from boardd.core.recognizer import Diff, DiffClass, PhysicalBoard, PositionIndex
from boardd.core.settings import Category, Regime, RulesConfig


def _increment_of(time_control: str) -> float:
    """The Fischer increment (seconds) of the first period that has one (the increment an illegal press earned)."""
    m = re.search(r"\+(\d+(?:\.\d+)?)", time_control)
    return float(m.group(1)) if m else 0.0


class Game:
    """Everything about the current game that more than one room reads (a new one for every ``NewGame``).

    The attributes are grouped as the steps of ``__init__`` set them: the rules of this game, the positions
    and the record, the board input, the findings and the phase, the current segment (the moves being made),
    the clock. A room's own state that no other room reads lives in the room (see the room's ``__init__``).
    """

    def __init__(self, rules: RulesConfig, game: GameInfo, at: float | None, *, irr_counter: int = 0,
                 field_updates: bool = False) -> None:
        self.rules = rules
        self.irr_counter = irr_counter
        game = game.start_read()  # variant auto: a Chess960 start position is one
        #: the board sends field updates (DGT): its snapshots are dumps, not scans (kept across games)
        self.field_updates = field_updates
        self._init_rules(game)
        self._init_positions(game)
        self._init_board_input()
        self._init_findings_and_phase()
        self._init_segment(at)
        self._init_clock()

    @property
    def playing(self) -> bool:
        """The game is being played (set-up or play phase): board changes are recognised, presses judged."""
        return self.phase.state in PLAYING

    @property
    def setting_up(self) -> bool:
        """The pieces are being set up before the first move (quiet until the start position is there)."""
        return self.phase.state is Phase.SETTING_UP

    @property
    def board_down(self) -> bool:
        """The board link is down: presses are recorded, not judged."""
        return self.board_link.state is LinkState.DOWN

    @property
    def clock_down(self) -> bool:
        """The clock link is down: moves complete as without a clock."""
        return self.clock_link.state is LinkState.DOWN

    def _init_rules(self, game: GameInfo) -> None:
        """The game, its edition, category (7.1), regime and time control."""
        self.game = game
        self.edition = game.edition
        self.tc: TimeControl | None = None
        parsed: TimeControl | None = None
        try:
            parsed = TimeControl.parse(game.time_control)
            self.tc = parsed if parsed.is_timed else None
        except Exception:  # an unparsable control: no time keeping, no period checks, standard (7.1)
            _LOGGER.warning("time control %r not understood; no time keeping", game.time_control)
        if self.rules.category is not None:
            self.category = self.rules.category.value
        else:
            self.category = (category_of(parsed, game.edition) if parsed is not None else Category.STANDARD).value
        self.regime = Regime.COMPETITION.value if self.category == "standard" else self.rules.regime.value
        self.increment = _increment_of(game.time_control)
        self.model: ClockModel | None = ClockModel(self.tc) if self.tc is not None else None
        self.model_started = False

    def _init_positions(self, game: GameInfo) -> None:
        """The official position with the record, and the physical position (rules-spec §3.1)."""
        fen = game.start_fen or _STANDARD_FEN
        self.start_fen = fen
        self.board = chess.Board(fen, chess960=game.chess960)
        self.index = PositionIndex(self.board)
        self.records: list[MoveRecord] = []
        start = self.board
        self.base_moves = {chess.WHITE: start.fullmove_number - (0 if start.turn == chess.BLACK else 1),
                           chess.BLACK: start.fullmove_number - 1}
        self.keys: list[tuple[int, ...]] = [self.index.key]
        self.phys = PhysicalBoard(self.board)
        self.raw: list[Content] = [self.board.piece_at(sq) for sq in chess.SQUARES]
        self.result = "*"
        self.termination: str | None = None
        self.game_end_at: float | None = None

    def _init_board_input(self) -> None:
        """What the board said, its frame, and the outage and set-up memory (rules-spec §3.6)."""
        self.markers: dict[int, Marker] = {}
        self.raw_touched: set[int] = set()
        self.resync = False
        #: the board link (up, or down from its LinkChanged until the next board event: presses are not judged)
        self.board_link: Machine[LinkState, LinkTrigger] = Machine("board link", BOARD_LINK, LinkState.UP)
        self.blind_presses: list[_BlindPress] = []
        self.blind_matched = 0  # presses of the outage that completed a recovered move
        #: the POSITION_DIVERGENCE of the dump after an outage: presses are not judged until it is resolved
        self.outage_divergence: str | None = None
        self.pending_fix: tuple[int, tuple[int, ...], chess.Move, chess.Board, str] | None = None
        self.impossible_since: tuple[float, str] | None = None
        self.adopted_open: int | None = None  # ply of a position adopted with the side to move unknown
        self.rot = 0  # quarter turns from the board's own frame to the official frame
        self.orientation_known = False

    def _init_findings_and_phase(self) -> None:
        """The findings (the illegal-move counts follow them: ``Findings.count``), the phase of the game and the
        restoration it waits for."""
        self.irr: dict[str, Irregularity] = {}
        #: the latest ply of an illegal-move finding, whatever its status (-1: none yet): the correction looks for
        #: an illegal move found later (Correction._found_later) only while one is that recent
        self.illegal_ply = -1
        #: setting up, play, awaiting a restoration, game over (:data:`boardd.core.engine.modes.PHASES`)
        self.phase: Machine[Phase, PhaseTrigger] = Machine("phase", PHASES, Phase.PLAY)
        self.restore_key: tuple[int, ...] | None = None
        self.restore_check: float | None = None
        self.claim_windows: list[_Window] = []
        # §3.7: the replacement move after a reinstatement (irregularity id, ply, touched square); kept after the
        # correction cycle (a later reinstatement to that ply arms it again): a replacement is awaited only while
        # the cycle of that illegal move is open (Presses.replacement_awaited)
        self.replacement: tuple[str, int, int] | None = None
        self.replacement_due: tuple[str, int, int] | None = None

    def _init_segment(self, at: float | None) -> None:
        """The segment: what happened on the board since the last made move (rules-spec §3.3, §3.4)."""
        self.seg_start = at if at is not None else 0.0
        self.seg_lifts: list[tuple[float, int, chess.Piece]] = []
        self.prev_lifts: list[tuple[float, int, chess.Piece]] = []
        self.extra_lifts: list[tuple[float, int, chess.Piece]] = []
        self.seg_places: list[tuple[float, int, chess.Piece]] = []
        self._seg_evidence: list[Evidence] = []
        #: the segment's board changes (time, square, old, new) after :attr:`seg_evidence`, not yet read as text
        self._seg_changes: list[tuple[float, int, Content, Content]] = []
        self.last_board_t = -1e18
        self.match_t = 0.0
        self.cand: _Candidate | None = None
        self.uncompleted: dict[chess.Color, int] = {}
        self.opp_started = False
        self.oot_raised = False  # an out-of-turn finding was raised in this segment (raised once)
        #: a piece of the side without the move appeared on an empty square (no lift): judged once it stayed
        #: T_flicker (a sensor glitch reverts sooner: SENSOR_FLICKER), at this time
        self.oot_recheck: float | None = None
        #: the opponent's lone first lift, which may be a sensor flicker: (due = its time + T_flicker, its square,
        #: the last mover, the record's length, whether his press was not made, the time read as his start, the
        #: evidence); judged when due (:meth:`WhoseChange.started_due`) unless it flickered first
        #: (:meth:`WhoseChange.flickered`)
        self.start_pending: tuple[float, int, chess.Color, int, bool, float, tuple[Evidence, ...]] | None = None
        #: the board back at the position before the last mover's made move not completed yet (R07): judged once it
        #: stood ``T_settle`` (the move taken back, not a slide or a flicker), at this time
        self.undo_due: float | None = None
        self.opp_early_raised = False  # OPPONENT_STARTED_BEFORE_MOVE_MADE was raised in this segment
        self.pressed_no_move: chess.Color | None = None
        self.promo_seen = False
        self.illegal_settled: tuple[float, chess.Move] | None = None
        #: an illegal placement first seen in the dump of the board's return (out of sight: a restart, a board link
        #: outage): nobody was seen touching it (4.3), it may be a piece displaced (7.4); its correction binds no piece
        self.illegal_unseen: tuple[float, chess.Move] | None = None
        self.gesture_hold = False  # a kings-in-the-centre signal was given and a king is still on the centre
        self.parked = False
        self.two_hands: dict[chess.Color, Irregularity | None] = {}
        #: (primary finding id, ply at its raise) of the incident under way (contract ``incident``)
        self.incident: tuple[str, int] | None = None
        self.mask: set[int] = set()
        self.last_diff = Diff(DiffClass.NONE)
        self.castle_king: tuple[float, chess.Move] | None = None
        self.castle_released: tuple[float, chess.Move, str] | None = None
        self.illegal_state: tuple[float, chess.Move] | None = None

    def _init_clock(self) -> None:
        """The clock as read, the press waiting to be judged, the flags (rules-spec §3.5)."""
        self.shown: tuple[object, ...] | None = None
        self.prev_reading: ClockReading | None = None
        self.held_reading: ClockReading | None = None  # a suspect reading waiting for confirmation
        self.pre_clock: ClockState | None = None
        self.running: chess.Color | None = None
        self.clock_seen = False
        #: the clock link (down: moves complete as without a clock, the clock is unknown, no press codes)
        self.clock_link: Machine[LinkState, LinkTrigger] = Machine("clock link", CLOCK_LINK, LinkState.UP)
        self.clock_resync = False  # the first reading after the link came back sets the lever (no press)
        self.clockless: set[int] = set()  # plies made (or left uncompleted) while the clock link was down
        self.paused = False
        self.press: _Press | None = None
        self.buffer: list[Event] = []
        self.flag_t: dict[chess.Color, float] = {}
        self.clock = ClockState()
        self.last_press_at: float | None = None

    @property
    def seg_evidence(self) -> list[Evidence]:
        """The segment's evidence: the board changes (``L e2``, ``P e4 wP``, ``X e4 wP→bN``) and what else was noted.

        A change is kept as data (:meth:`note_change`) and written as text when the evidence is first read (a
        finding that carries it): most segments end with the move made and their changes are never read.
        """
        changes = self._seg_changes
        if changes:
            self._seg_evidence += [Evidence(at=at, event=_change_text(sq, old, new)) for at, sq, old, new in changes]
            self._seg_changes = []
        return self._seg_evidence

    @seg_evidence.setter
    def seg_evidence(self, evidence: list[Evidence]) -> None:
        self._seg_evidence = evidence
        self._seg_changes = []

    def note_change(self, at: float, square: int, old: Content, new: Content) -> None:
        """A board change into the segment's evidence (at most 200 kept: past that, the oldest 100 are dropped)."""
        changes = self._seg_changes
        changes.append((at, square, old, new))
        evidence = self._seg_evidence
        if len(evidence) + len(changes) > 200:
            written = min(100, len(evidence))
            del evidence[:written]
            del changes[:100 - written]

    def fen_before(self, ply: int) -> str:
        """The FEN of the position before the record's move *ply* (the start position before the first)."""
        return self.records[ply - 1].fen_after if ply > 0 else self.start_fen

    def recheck_by(self, due: float) -> None:
        """The out-of-turn recheck timer fires at *due* at the latest (an earlier one set stays)."""
        self.oot_recheck = due if self.oot_recheck is None else min(self.oot_recheck, due)
