"""Games to simulate: seeded random legal games and PGN helpers.

Random games are played by a *biased* chooser: uniformly random play almost
never castles long or captures en passant, so special moves get a much larger
weight, pawn advances a moderate one, and promotions pick an under-promotion
about two times in five. Over a few hundred seeds every special move occurs
(``tests/sim/test_games.py`` checks 500).
"""

from __future__ import annotations

import random

import chess
import chess.pgn

__all__ = ["RANDOM_TIME_CONTROL", "choose_move", "random_game"]

#: TimeControl tag of random games: blitz, so that simulated think times stay short.
RANDOM_TIME_CONTROL = "180+2"

_UNDERPROMOTION_WEIGHTS = ((chess.QUEEN, 0.6), (chess.KNIGHT, 0.2), (chess.ROOK, 0.12), (chess.BISHOP, 0.08))


def _weight(board: chess.Board, move: chess.Move) -> float:
    if board.is_en_passant(move):
        return 60.0
    if board.is_castling(move):
        return 25.0
    if move.promotion is not None:
        return 20.0 * dict(_UNDERPROMOTION_WEIGHTS)[move.promotion]
    weight = 1.0
    if board.is_capture(move):
        weight *= 1.5
    piece = board.piece_type_at(move.from_square)
    if piece == chess.PAWN:
        # Advanced pawns run: promotions then happen within a few dozen moves.
        advance = chess.square_rank(move.to_square) if board.turn == chess.WHITE else 7 - chess.square_rank(
            move.to_square)
        weight *= 1.0 + 0.5 * advance
    return weight


def choose_move(board: chess.Board, rng: random.Random, *, biased: bool = True) -> chess.Move:
    """Pick a legal move of *board* (which must have one), biased towards special moves.

    Raises:
        ValueError: the position has no legal move.
    """
    moves = list(board.legal_moves)
    if not moves:
        raise ValueError("no legal move")
    if not biased:
        return rng.choice(moves)
    weights = [_weight(board, move) for move in moves]
    return rng.choices(moves, weights=weights, k=1)[0]


def random_game(seed: int, *, max_plies: int = 80, chess960: bool = False, biased: bool = True) -> chess.pgn.Game:
    """A random legal game, the same for the same arguments.

    Args:
        seed: the random seed.
        max_plies: stop after this many half-moves (result ``*``) unless the game ended before.
        chess960: start from the Chess960 position ``seed % 960``.
        biased: use the biased chooser (see the module docstring); False is uniform.

    Returns:
        A game with the Seven Tag Roster, ``TimeControl`` and the moves; a Chess960
        game carries ``Variant``, ``SetUp`` and ``FEN``.
    """
    rng = random.Random(seed)
    board = chess.Board.from_chess960_pos(seed % 960) if chess960 else chess.Board()
    game = chess.pgn.Game()
    if chess960:
        game.setup(board)
        game.headers["Variant"] = "Chess960"
    game.headers.update(Event="boardd random game", Site="simulator", Date="????.??.??", Round=str(seed),
                        White="Random A", Black="Random B", TimeControl=RANDOM_TIME_CONTROL)
    node: chess.pgn.GameNode = game
    while len(board.move_stack) < max_plies and not board.is_game_over(claim_draw=False):
        move = choose_move(board, rng, biased=biased)
        node = node.add_variation(move)
        board.push(move)
    outcome = board.outcome(claim_draw=False)
    game.headers["Result"] = outcome.result() if outcome is not None else "*"
    return game
