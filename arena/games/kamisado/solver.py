"""The exact round solver: who wins the current round by force, and in how many plies.

Kamisado rounds are small enough to solve: a round is decided by which tower
first reaches the opponent's home row, every real move goes forward, and
most positions a few moves into a round are proven within milliseconds. The
solver belongs to the game (``Kamisado.solve``), so the arena's analysis of
stored games and the built-in bots use the same proof.

Speed needs compiled code: the kernels here are numba functions on a few
arrays (``at[64]`` tower or -1, ``sq[16]`` square of each tower, ``rank[16]``;
the occupancy bitboard, side to move, required colour and Zobrist key travel
as scalars), with their own move generation, make and unmake (Sumo pushes,
zero-length moves and deadlocks included), checked move for move against
the rules core by the tests. The built-in bots' search (``bots/kamisado_jit.py``)
builds on these kernels instead of keeping copies.

Purity: the kernels are computation only. numba keeps their machine code in
a cache beside this file (``cache=True``), I/O done by numba, which checks a
cached function against the source of its own file. The board tables are
built from ``board.py`` at import and frozen into that machine code, so a
change there would not be seen; :data:`BOARD_DIGEST` pins them: this module
refuses to load with other tables until the digest here is updated, which
edits this file and so makes numba compile afresh. (``bots/jit_cache.py``
drops the bots' cache when this file changes, for the same reason.) A bot
takes these kernels compiled ahead of time instead, without numba
(:mod:`arena.games.kamisado.jit`).

The proof. ``_wins(attacker, r)`` answers "does ``attacker`` win the round
within ``r`` plies" by depth-first AND/OR search: at the attacker's turn one
winning move suffices, at the defender's every move must lose. Two cuts keep
it small: a side with a move onto the goal row wins at once, and a move after
which the opponent has one loses at once. The root deepens ``r`` one ply at a
time and asks the question for both sides, so the first ``r`` with an answer
is the exact distance: the quickest win, or the longest a lost side holds
out. A transposition table keeps, per position (ranks included, so entries
hold for any game and any round), proven wins and losses with their distance,
the depths already refuted, and the move that proved or refuted. The search
stops at a node count or when a watchdog raises the stop flag.

Only kernels live here (with the tables they freeze): a kernel's numba cache is
checked against its own file alone, so kernels that call each other share one
file, and the shared move kernels stay with the proof that calls them. The
Python side that holds the table and the deadline is
:mod:`arena.games.kamisado.round_solver`; the bots' searches stop through
their own watchdog (``bots/compiled_search.py``).
"""

from __future__ import annotations

import hashlib

import numpy as np

from arena.games.kamisado.board import (
    DISTANCE_LIMIT,
    GOAL_RANK,
    RANK_VALUE,
    RAYS,
    SQUARE_COLOUR,
)
from arena.games.kamisado.jit import njit

# ---------------------------------------------------------------- tables

BOARD_DIGEST = "26eecda4b2b694a8"
"""The board tables these kernels were written for (see the module's docstring)."""


def board_digest() -> str:
    """A digest of the board tables the kernels freeze into their machine code."""
    text = repr((SQUARE_COLOUR, RAYS, DISTANCE_LIMIT, GOAL_RANK, RANK_VALUE))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


if board_digest() != BOARD_DIGEST:  # pragma: no cover - a developer's tripwire
    raise ImportError(
        f"board.py's tables changed: set BOARD_DIGEST in {__file__} to "
        f"{board_digest()!r} (editing this file makes numba compile the kernels again)"
    )


def _signed(x: int) -> int:
    """A 64-bit mask as numba's int64 (bit 63 is the sign bit)."""
    return x - (1 << 64) if x >= 1 << 63 else x


def _tables() -> tuple[np.ndarray, ...]:
    colour = np.array(SQUARE_COLOUR, dtype=np.int64)
    ray = np.full((2, 64, 3, 7), -1, dtype=np.int64)
    ray_len = np.zeros((2, 64, 3), dtype=np.int64)
    goal = np.zeros((2, 5, 64, 3), dtype=np.int64)  # masks of rays ending on the goal row
    first = np.zeros((2, 64), dtype=np.int64)  # squares one step forward
    progress = np.zeros((2, 64), dtype=np.int64)
    for p in (0, 1):
        for s in range(64):
            progress[p, s] = (s >> 3) if p == 0 else 7 - (s >> 3)
            steps = 0
            for d in range(3):
                r = RAYS[p][s][d]
                ray_len[p, s, d] = len(r)
                ray[p, s, d, : len(r)] = r
                if r:
                    steps |= 1 << r[0]
                for k in range(5):
                    cut = r[: DISTANCE_LIMIT[k]]
                    if cut and cut[-1] >> 3 == GOAL_RANK[p]:
                        goal[p, k, s, d] = _signed(sum(1 << t for t in cut))
            first[p, s] = _signed(steps)
    return colour, ray, ray_len, goal, first, progress


COLOUR, RAY, RAY_LEN, GOAL, FIRST, PROGRESS = _tables()
DIST = np.array(DISTANCE_LIMIT, dtype=np.int64)
VALUE = np.array(RANK_VALUE, dtype=np.int64)
GOAL_ROW = np.array(GOAL_RANK, dtype=np.int64)

_rng = np.random.Generator(np.random.PCG64(0x4B414D49))
ZOB = _rng.integers(-(2**63), 2**63 - 1, size=(16, 64), dtype=np.int64)
ZOB_SIDE = _rng.integers(-(2**63), 2**63 - 1, size=2, dtype=np.int64)
ZOB_REQ = _rng.integers(-(2**63), 2**63 - 1, size=9, dtype=np.int64)
ZOB_RANK = _rng.integers(-(2**63), 2**63 - 1, size=(16, 5), dtype=np.int64)

FREE = -1
MAX_PLY = 128
MAX_MOVES = 128

# Control slots, shared with the driver and its watchdog thread (the bots'
# search uses the same layout).
C_STOP, C_NODES, C_ABORTED, C_CANDIDATE, C_NO_TT, C_MAX_NODES = range(6)
CTL_SIZE = 8

# ---------------------------------------------------------------- moves


@njit(cache=True, inline="always")
def _bit(s):
    return np.int64(1) << s


@njit(cache=True)
def can_push(at, rank, p, s, k):
    """Whether the rank-``k`` tower of ``p`` on ``s`` can push straight ahead."""
    n = RAY_LEN[p, s, 1]
    for i in range(n):
        t = at[RAY[p, s, 1, i]]
        if t < 0:
            return i > 0
        if i == k or (t >> 3) == p or rank[t] >= k:
            return False
    return False


@njit(cache=True)
def can_act(at, sq, rank, occ, tower):
    """Whether ``tower`` has a move or a push (is not blocked)."""
    p = tower >> 3
    s = sq[tower]
    k = rank[tower]
    f = FIRST[p, s]
    if f & ~occ:
        return DIST[k] > 0
    return k > 0 and can_push(at, rank, p, s, k)


@njit(cache=True)
def chain_deadlocked(at, sq, rank, occ, player, colour):
    """Ruling M8: the forced zero-length moves from ``player`` having to move
    ``colour`` come back to the same blocked tower of the same player."""
    seen = 0
    while True:
        tower = player * 8 + colour
        if can_act(at, sq, rank, occ, tower):
            return False
        b = np.int64(1) << tower
        if seen & b:
            return True
        seen |= b
        colour = COLOUR[sq[tower]]
        player ^= 1


@njit(cache=True)
def tower_moves(at, sq, rank, occ, tower, out, n):
    """Append the moves and push of ``tower`` to ``out`` from index ``n``; new count."""
    p = tower >> 3
    s = sq[tower]
    k = rank[tower]
    lim = DIST[k]
    for d in range(3):
        m = min(RAY_LEN[p, s, d], lim)
        for i in range(m):
            t = RAY[p, s, d, i]
            if occ & _bit(t):
                break
            out[n] = s | (t << 6)
            n += 1
    if k > 0 and can_push(at, rank, p, s, k):
        out[n] = s | (RAY[p, s, 1, 0] << 6)
        n += 1
    return n


@njit(cache=True)
def gen_moves(at, sq, rank, occ, side, req, out):
    """Every legal action of ``side`` into ``out``; the count."""
    if req >= 0:
        tower = side * 8 + req
        n = tower_moves(at, sq, rank, occ, tower, out, 0)
        if n == 0:
            s = sq[tower]
            out[0] = s | (s << 6)
            n = 1
        return n
    n = 0
    for tower in range(side * 8, side * 8 + 8):
        n = tower_moves(at, sq, rank, occ, tower, out, n)
    return n


@njit(cache=True)
def is_open(occ, p, k, s):
    """Whether a rank-``k`` tower of ``p`` on ``s`` can reach the goal row now."""
    g0 = GOAL[p, k, s, 0]
    g1 = GOAL[p, k, s, 1]
    g2 = GOAL[p, k, s, 2]
    return (
        (g0 != 0 and (occ & g0) == 0)
        or (g1 != 0 and (occ & g1) == 0)
        or (g2 != 0 and (occ & g2) == 0)
    )


@njit(cache=True)
def open_after(occ, p, k, s, frm, to):
    """:func:`is_open` once a tower has moved ``frm`` -> ``to``."""
    o = (occ & ~_bit(frm)) | _bit(to)
    return is_open(o, p, k, s)


@njit(cache=True)
def winning_move(at, sq, rank, occ, side, req):
    """A move of ``side`` onto the goal row at once, or -1."""
    lo = side * 8
    hi = lo + 8
    if req >= 0:
        lo = side * 8 + req
        hi = lo + 1
    for t in range(lo, hi):
        s = sq[t]
        k = rank[t]
        for d in range(3):
            g = GOAL[side, k, s, d]
            if g != 0 and (occ & g) == 0:
                last = RAY[side, s, d, min(DIST[k], RAY_LEN[side, s, d]) - 1]
                return s | (last << 6)
    return -1


@njit(cache=True)
def make(at, sq, rank, occ, side, move):
    """Play ``move`` (legal) for ``side`` in place.

    Returns ``(ended, next_side, next_req, occ, key_delta, pushed, winner, promoted)``;
    ``pushed`` is the number of towers a Sumo push moved (for :func:`unmake`).
    A round end leaves the ranks alone (``promoted`` names the tower the
    rules would promote).
    """
    frm = move & 63
    to = move >> 6
    if frm == to:
        return False, side ^ 1, COLOUR[frm], occ, np.int64(0), 0, -1, -1
    tower = at[frm]
    delta = ZOB[tower, frm] ^ ZOB[tower, to]
    if at[to] >= 0:
        # Sumo push: shift the line one square on, farthest tower first.
        n = 0
        while at[RAY[side, frm, 1, n]] >= 0:
            n += 1
        for i in range(n - 1, -1, -1):
            a = RAY[side, frm, 1, i]
            b = RAY[side, frm, 1, i + 1]
            t = at[a]
            at[b] = t
            sq[t] = b
            delta ^= ZOB[t, a] ^ ZOB[t, b]
        last = RAY[side, frm, 1, n]
        occ |= _bit(last)
        occ &= ~_bit(frm)
        at[to] = tower
        at[frm] = -1
        sq[tower] = to
        colour = COLOUR[last]
        if chain_deadlocked(at, sq, rank, occ, side, colour):
            winner = side ^ 1
            return True, side, FREE, occ, delta, n, winner, winner * 8 + COLOUR[to]
        return False, side, colour, occ, delta, n, -1, -1
    at[to] = tower
    at[frm] = -1
    sq[tower] = to
    occ = (occ & ~_bit(frm)) | _bit(to)
    if (to >> 3) == GOAL_ROW[side]:
        return True, side, FREE, occ, delta, 0, side, tower
    colour = COLOUR[to]
    if chain_deadlocked(at, sq, rank, occ, side ^ 1, colour):
        winner = side ^ 1
        return True, side, FREE, occ, delta, 0, winner, winner * 8 + COLOUR[to]
    return False, side ^ 1, colour, occ, delta, 0, -1, -1


@njit(cache=True)
def unmake(at, sq, side, move, pushed):
    """Take back ``move`` made by ``side`` (``pushed`` from :func:`make`)."""
    frm = move & 63
    to = move >> 6
    if frm == to:
        return
    tower = at[to]
    at[frm] = tower
    sq[tower] = frm
    if pushed == 0:
        at[to] = -1
        return
    for i in range(pushed):
        a = RAY[side, frm, 1, i]
        b = RAY[side, frm, 1, i + 1]
        t = at[b]
        at[a] = t
        sq[t] = a
    at[RAY[side, frm, 1, pushed]] = -1


@njit(cache=True)
def occupancy(at):
    occ = np.int64(0)
    for s in range(64):
        if at[s] >= 0:
            occ |= _bit(s)
    return occ


@njit(cache=True)
def board_key(sq):
    """The Zobrist key of where the towers stand (ranks and turn not included)."""
    key = np.int64(0)
    for t in range(16):
        key ^= ZOB[t, sq[t]]
    return key


@njit(cache=True)
def rank_key(rank):
    key = np.int64(0)
    for t in range(16):
        key ^= ZOB_RANK[t, rank[t]]
    return key


@njit(cache=True, inline="always")
def full_key(key, side, req):
    return key ^ ZOB_SIDE[side] ^ ZOB_REQ[req + 1]


@njit(cache=True)
def perft(at, sq, rank, occ, side, req, depth, buf, ply):
    """Action sequences of exactly ``depth`` plies within the round (the rules
    core's ``perft``, for the tests)."""
    out = buf[ply]
    n = gen_moves(at, sq, rank, occ, side, req, out)
    if depth == 1:
        return n
    total = 0
    for i in range(n):
        m = out[i]
        ended, nside, nreq, nocc, _d, pushed, _w, _p = make(at, sq, rank, occ, side, m)
        if not ended:
            total += perft(at, sq, rank, nocc, nside, nreq, depth - 1, buf, ply + 1)
        unmake(at, sq, side, m, pushed)
    return total


# ---------------------------------------------------------------- the proof
# A table entry packs, for the side to move in the position: the move that
# proved or refuted (+1; 0 none), the distance of a proven win and of a
# proven loss (0 none), and the largest depths at which a win and a loss were
# refuted ("no win within this many plies").

_MOVE_BITS = 13
_F = 8
_WIN_SHIFT = _MOVE_BITS
_LOSS_SHIFT = _WIN_SHIFT + _F
_NOWIN_SHIFT = _LOSS_SHIFT + _F
_NOLOSS_SHIFT = _NOWIN_SHIFT + _F
_FMASK = (1 << _F) - 1


@njit(cache=True, inline="always")
def _field(e, shift):
    return (e >> shift) & _FMASK


@njit(cache=True, inline="always")
def _set_field(e, shift, v):
    return (e & ~(np.int64(_FMASK) << shift)) | (np.int64(v) << shift)


@njit(cache=True)
def _probe(keys, data, fk):
    """The slot holding ``fk`` in its bucket of two, or -1."""
    i = fk & (keys.shape[0] - 1) & ~1
    if keys[i] == fk:
        return i
    if keys[i + 1] == fk:
        return i + 1
    return -1


@njit(cache=True)
def _slot(keys, data, fk):
    """The slot to write ``fk`` into: its own, else an empty one, else the
    bucket's second (the first keeps proven values longest)."""
    i = fk & (keys.shape[0] - 1) & ~1
    if keys[i] == fk:
        return i
    if keys[i + 1] == fk:
        return i + 1
    if data[i] == 0:
        keys[i] = fk
        return i
    e = data[i]
    proven = _field(e, _WIN_SHIFT) != 0 or _field(e, _LOSS_SHIFT) != 0
    if not proven:
        keys[i + 1] = keys[i]
        data[i + 1] = e
        keys[i] = fk
        data[i] = 0
        return i
    keys[i + 1] = fk
    data[i + 1] = 0
    return i + 1


@njit(cache=True)
def _record(keys, data, fk, shift, value, move, smaller):
    """Keep ``value`` in the field at ``shift`` (the smaller or the larger of the
    old and new, as ``smaller`` says) and ``move`` as the entry's move."""
    i = _slot(keys, data, fk)
    e = data[i]
    old = _field(e, shift)
    if old == 0 or (value < old if smaller else value > old):
        e = _set_field(e, shift, value)
    if move >= 0:
        e = (e & ~np.int64((1 << _MOVE_BITS) - 1)) | (move + 1)
    data[i] = e


A1 = "int64[::1]"
A2 = "int64[:, ::1]"
WINS_SIGNATURE = (
    f"int64({A1}, {A1}, {A1}, int64, int64, int64, int64, int64, int64, int64,"
    f" {A1}, {A1}, {A2}, {A2}, {A1})"
)
"""Recursive kernels get an explicit signature: numba's cache of a recursive
function typed by inference crashes when loaded (numba issue 6061)."""


@njit(WINS_SIGNATURE, cache=True)
def _wins(at, sq, rank, occ, key, side, req, attacker, r, ply, keys, data, moves, scores, ctl):
    """The distance within which ``attacker`` wins the round by force, at most
    ``r`` plies (an upper bound of the shortest), or 0 when it cannot be forced
    within ``r``; -1 once stopped. ``key`` includes the ranks."""
    if r <= 0:
        return 0
    if winning_move(at, sq, rank, occ, side, req) >= 0:
        return 1 if side == attacker else 0
    if r == 1 and side == attacker:
        return 0  # a win in one ply is a move onto the goal row
    ctl[C_NODES] += 1
    if (ctl[C_NODES] & 1023) == 0 and (
        ctl[C_STOP] != 0 or (ctl[C_MAX_NODES] > 0 and ctl[C_NODES] >= ctl[C_MAX_NODES])
    ):
        ctl[C_ABORTED] = 1
        return -1
    if ply >= MAX_PLY - 1:
        return 0
    fk = full_key(key, side, req)
    slot = _probe(keys, data, fk)
    tt_move = -1
    if slot >= 0:
        e = data[slot]
        tt_move = (e & ((1 << _MOVE_BITS) - 1)) - 1
        if side == attacker:
            w = _field(e, _WIN_SHIFT)
            if w != 0 and w <= r:
                return w
            if _field(e, _LOSS_SHIFT) != 0 or _field(e, _NOWIN_SHIFT) >= r:
                return 0
        else:
            lo = _field(e, _LOSS_SHIFT)
            if lo != 0 and lo <= r:
                return lo
            if _field(e, _WIN_SHIFT) != 0 or _field(e, _NOLOSS_SHIFT) >= r:
                return 0

    mv = moves[ply]
    sc = scores[ply]
    n = gen_moves(at, sq, rank, occ, side, req, mv)
    # Sort out the moves decided at once and order the rest: the table's move
    # first; the attacker then tries the moves that leave the defender the
    # fewest safe replies, the defender those that leave the attacker fewest.
    later = 0
    worst = 0  # the defender's longest immediate loss
    for j in range(n):
        m = mv[j]
        ended, nside, nreq, nocc, _d, pushed, winner, _p = make(at, sq, rank, occ, side, m)
        if ended:
            dist = 1 if winner == attacker else 0
            unmake(at, sq, side, m, pushed)
            if side == attacker:
                if dist == 1:
                    return 1
                continue
            if dist == 0:
                # The defender's move wins for it (cannot happen: a move onto
                # the goal row was seen above); never a loss.
                _record(keys, data, fk, _NOLOSS_SHIFT, r, m, False)
                return 0
            worst = max(worst, 1)
            continue
        if nside != side and winning_move(at, sq, rank, nocc, nside, nreq) >= 0:
            unmake(at, sq, side, m, pushed)
            if side != attacker:
                worst = max(worst, 2)
            continue  # the opponent answers onto the goal row
        s = 0
        if m == tt_move:
            s = -(1 << 20)
        elif r >= 4 and nside != side:
            # The opponent's replies that do not hand a move onto the goal row back.
            buf = moves[ply + 1]
            cnt = gen_moves(at, sq, rank, nocc, nside, nreq, buf)
            safe = 0
            for q in range(cnt):
                m2 = buf[q]
                e2, ns2, nr2, no2, _d2, p2, w2, _p2 = make(at, sq, rank, nocc, nside, m2)
                if e2:
                    if w2 == nside:
                        safe += 64
                elif ns2 == nside or winning_move(at, sq, rank, no2, ns2, nr2) < 0:
                    safe += 1
                unmake(at, sq, nside, m2, p2)
            s = safe
        unmake(at, sq, side, m, pushed)
        mv[later] = m
        sc[later] = s
        later += 1
    for i in range(1, later):  # insertion sort, ascending
        m = mv[i]
        s = sc[i]
        j = i - 1
        while j >= 0 and sc[j] > s:
            mv[j + 1] = mv[j]
            sc[j + 1] = sc[j]
            j -= 1
        mv[j + 1] = m
        sc[j + 1] = s

    if side == attacker:
        for j in range(later):
            m = mv[j]
            ended, nside, nreq, nocc, delta, pushed, winner, _p = make(at, sq, rank, occ, side, m)
            d = _wins(
                at,
                sq,
                rank,
                nocc,
                key ^ delta,
                nside,
                nreq,
                attacker,
                r - 1,
                ply + 1,
                keys,
                data,
                moves,
                scores,
                ctl,
            )
            unmake(at, sq, side, m, pushed)
            if d < 0:
                return -1
            if d > 0:
                _record(keys, data, fk, _WIN_SHIFT, d + 1, m, True)
                return d + 1
        _record(keys, data, fk, _NOWIN_SHIFT, r, -1, False)
        return 0
    if r == 1 and later > 0:
        _record(keys, data, fk, _NOLOSS_SHIFT, r, mv[0], False)
        return 0
    for j in range(later):
        m = mv[j]
        ended, nside, nreq, nocc, delta, pushed, winner, _p = make(at, sq, rank, occ, side, m)
        d = _wins(
            at,
            sq,
            rank,
            nocc,
            key ^ delta,
            nside,
            nreq,
            attacker,
            r - 1,
            ply + 1,
            keys,
            data,
            moves,
            scores,
            ctl,
        )
        unmake(at, sq, side, m, pushed)
        if d < 0:
            return -1
        if d == 0:
            _record(keys, data, fk, _NOLOSS_SHIFT, r, m, False)
            return 0
        worst = max(worst, d + 1)
    _record(keys, data, fk, _LOSS_SHIFT, worst, -1, True)
    # Lost, but perhaps not within ``r``: with r = 1 a move that hands the
    # attacker the goal row loses in two.
    return worst if worst <= r else 0


WON, LOST, UNKNOWN = 1, 0, -1


@njit(cache=True, nogil=True)
def solve_kernel(at, sq, rank, side, req, max_depth, keys, data, moves, scores, ctl):
    """``(result, distance, move)`` for ``side`` to move: :data:`WON` with the
    shortest forced win, :data:`LOST` with the longest defence, or
    :data:`UNKNOWN` with the depth proven undecided, once stopped or past
    ``max_depth``. The move wins quickest, holds out longest, or (unknown)
    is the last to avoid a loss within the depth proven."""
    occ = occupancy(at)
    key = board_key(sq) ^ rank_key(rank)
    win = winning_move(at, sq, rank, occ, side, req)
    if win >= 0:
        return WON, 1, win
    gen_moves(at, sq, rank, occ, side, req, moves[0])
    fallback = moves[0, 0]
    fk = full_key(key, side, req)
    opp = side ^ 1
    for r in range(1, min(max_depth, MAX_PLY - 2) + 1):
        d = _wins(at, sq, rank, occ, key, side, req, side, r, 0, keys, data, moves, scores, ctl)
        if d < 0:
            return UNKNOWN, r - 1, fallback
        if d > 0:
            slot = _probe(keys, data, fk)
            move = fallback
            if slot >= 0:
                move = (data[slot] & ((1 << _MOVE_BITS) - 1)) - 1
            return WON, d, move
        d = _wins(at, sq, rank, occ, key, side, req, opp, r, 0, keys, data, moves, scores, ctl)
        if d < 0:
            return UNKNOWN, r - 1, fallback
        if d > 0:
            return LOST, d, fallback
        slot = _probe(keys, data, fk)
        if slot >= 0:
            m = (data[slot] & ((1 << _MOVE_BITS) - 1)) - 1
            if m >= 0:
                fallback = m
    return UNKNOWN, min(max_depth, MAX_PLY - 2), fallback
