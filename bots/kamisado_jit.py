"""The compiled Kamisado search core: evaluation, alpha-beta and Monte-Carlo in numba.

The pure-Python search (``bots/alphabeta_bot.py`` before this core) reached
about 130 k nodes a second; an outside program compiled to machine code does
tens of times that, and in a single round depth is most of strength. numba
compiles these functions with LLVM from wheels, so ``pip install -e .`` needs
no compiler, and ``cache=True`` keeps the machine code beside this file (see
:mod:`arena.bots.jit_cache` for where the cache lives inside the sandbox).

Move generation, make/unmake and the exact round solver belong to the rules
package (:mod:`arena.games.kamisado.solver`, whose kernels the arena's game
analysis uses too); the kernels here call them. numba checks a cached
function against the source of its own file only, while a caller's machine
code holds the kernels it calls (and the board tables they freeze), so
:mod:`arena.bots.jit_cache` drops this file's cache when ``solver.py`` changes.

The search works within one round, with the rules core's semantics (tested
against it move for move): a round end is a terminal whose value is the
match situation after the promotion, a Sumo push gives the same side the
next move, a blocked required tower makes a zero-length move, and a move
that starts an endless chain of zero-length moves ends the round as a
deadlock. The regroup choice between rounds is searched by the Python
driver, one kernel search per choice.

State is a few arrays mutated in place with make/unmake: ``at[64]`` (tower
or -1), ``sq[16]`` (square of each tower) and ``rank[16]``; the occupancy
bitboard ``occ``, the side to move, the required colour and the Zobrist key
travel as scalars. Ranks never change inside a round's search (a promotion
ends the round), so they are not part of the key.
"""

from __future__ import annotations

import numpy as np

from arena.games.kamisado.jit import njit
from arena.games.kamisado.solver import (  # noqa: F401 - the kernels' shared base
    C_ABORTED,
    C_CANDIDATE,
    C_NO_TT,
    C_NODES,
    C_STOP,
    COLOUR,
    DIST,
    FIRST,
    FREE,
    GOAL_ROW,
    MAX_MOVES,
    MAX_PLY,
    PROGRESS,
    RAY,
    VALUE,
    ZOB,
    board_key,
    can_push,
    chain_deadlocked,
    full_key,
    gen_moves,
    is_open,
    make,
    occupancy,
    open_after,
    perft,
    tower_moves,
    unmake,
    winning_move,
)

# ---------------------------------------------------------------- values
# The same scale as bots/kamisado_eval.py, so protocol_score reads both.

WIN_MATCH = 50_000
WIN_ROUND = 20_000
POINT = 100
LIKELY_LOSS = 8_000
WIN_BOUND = 15_000
INF = 1_000_000

EXACT, LOWER, UPPER = 0, 1, 2

# Weight slots: bots/kamisado_eval.py's names in this order, then the search's
# own parameters (bots/compiled_search.py's SEARCH_PARAMS).
W_OPEN, W_SAFE, W_SAFE_CAP, W_PROGRESS, W_PUSH, W_BLOCKED, W_SCORE, W_OPEN_POINTS = range(8)
WEIGHT_NAMES = (
    "OPEN_WEIGHT",
    "SAFE_WEIGHT",
    "SAFE_CAP",
    "PROGRESS_WEIGHT",
    "PUSH_WEIGHT",
    "BLOCKED_WEIGHT",
    "SCORE_WEIGHT",
    "OPEN_POINTS_WEIGHT",
)
W_LMR_DEPTH, W_LMR_MOVES = 8, 9
"""Late move reductions: from this remaining depth (0: never), moves from this
index on are searched one ply shallower first, and again in full if they
beat alpha."""

# Match slots: what a round end is worth depends on the score before it.
M_SCORE0, M_SCORE1, M_TARGET = 0, 1, 2

# Control slots (the solver's layout), shared with the driver and its watchdog
# thread. C_NO_TT makes the search ignore the table's values (the tests
# compare it with plain negamax, which a deeper stored value would not match).

# ---------------------------------------------------------------- moves
# Move generation and make/unmake are the rules package's kernels (imported
# above); the search logs its moves through these two.


@njit(cache=True, inline="always")
def make_logged(at, sq, rank, occ, side, move, sides, moves, pushes, n):
    """``make``, with the move written at ``n`` of a log (who moved, the move, the
    push) that :func:`unmake_logged` takes back; ``make``'s result."""
    result = make(at, sq, rank, occ, side, move)
    sides[n] = side
    moves[n] = move
    pushes[n] = result[5]
    return result


@njit(cache=True, inline="always")
def unmake_logged(at, sq, sides, moves, pushes, start, n):
    """Take back the logged moves ``n - 1`` down to ``start``, last first."""
    for i in range(n - 1, start - 1, -1):
        unmake(at, sq, sides[i], moves[i], pushes[i])


# ---------------------------------------------------------------- values


@njit(cache=True)
def score_after(match, rank, winner, promoted):
    """The winner's score once ``promoted`` (a tower of the winner) is promoted."""
    k = rank[promoted]
    return match[winner] + VALUE[k + 1] - VALUE[k]


@njit(cache=True)
def round_end_value(match, rank, winner, promoted, player, ply):
    """Value for ``player`` of the round just won by ``winner`` (kamisado_eval's)."""
    mine = score_after(match, rank, winner, promoted)
    if mine >= match[M_TARGET]:
        v = WIN_MATCH - ply
    else:
        v = WIN_ROUND + POINT * (mine - match[winner ^ 1]) - ply
    return v if winner == player else -v


@njit(cache=True)
def win_now_value(match, rank, side, req, ply):
    """Value for ``side``, which has a move onto the goal row (kamisado_eval's)."""
    k = rank[side * 8 + req] if req >= 0 else 0
    mine = match[side] + VALUE[k + 1] - VALUE[k]
    if mine >= match[M_TARGET]:
        return WIN_MATCH - ply - 1
    return WIN_ROUND + POINT * (mine - match[side ^ 1]) - ply - 1


@njit(cache=True)
def evaluate(at, sq, rank, occ, side, req, w, match, buf):
    """Static value for the side to move without an immediate win
    (``bots.kamisado_eval.evaluate``, term for term)."""
    opp = side ^ 1
    value = w[W_SCORE] * (match[side] - match[opp])
    if req >= 0:
        tower = side * 8 + req
        frm = sq[tower]
        n = tower_moves(at, sq, rank, occ, tower, buf, 0)
        obase = opp * 8
        if n == 0:
            u = obase + COLOUR[frm]
            if is_open(occ, opp, rank[u], sq[u]):
                return -LIKELY_LOSS
        else:
            safe = 0
            pushes = 0
            for i in range(n):
                to = buf[i] >> 6
                if at[to] >= 0:
                    pushes += 1
                    continue
                u = obase + COLOUR[to]
                if not open_after(occ, opp, rank[u], sq[u], frm, to):
                    safe += 1
            if safe == 0 and pushes == 0:
                return -LIKELY_LOSS
            value += w[W_SAFE] * min(safe + pushes, w[W_SAFE_CAP])
    for i in range(2):
        p = side ^ i
        score = 0
        for t in range(p * 8, p * 8 + 8):
            s = sq[t]
            k = rank[t]
            score += w[W_PROGRESS] * PROGRESS[p, s]
            if is_open(occ, p, k, s):
                extra = VALUE[k + 1] - VALUE[k] - 1 if k < 4 else 0
                score += w[W_OPEN] + w[W_OPEN_POINTS] * max(extra, 0)
            if (FIRST[p, s] & ~occ) == 0:
                score -= w[W_BLOCKED]
            if k > 0 and can_push(at, rank, p, s, k):
                score += w[W_PUSH]
        value += score if p == side else -score
    return value


# ---------------------------------------------------------------- search


@njit(cache=True)
def order_moves(at, sq, rank, occ, side, moves, scores, n, tt_move, killers, history, ply):
    """Sort ``moves[:n]`` best first: TT move, then moves that do not hand the
    opponent an open tower, killers, history."""
    opp = side ^ 1
    k0 = killers[ply, 0]
    k1 = killers[ply, 1]
    for i in range(n):
        m = moves[i]
        if m == tt_move:
            s = np.int64(1) << 40
        else:
            frm = m & 63
            to = m >> 6
            s = history[m & 4095]
            if m == k0:
                s += np.int64(1) << 30
            elif m == k1:
                s += np.int64(1) << 29
            if frm != to and at[to] < 0:
                u = opp * 8 + COLOUR[to]
                if open_after(occ, opp, rank[u], sq[u], frm, to):
                    s -= np.int64(1) << 35
        scores[i] = s
    for i in range(1, n):  # insertion sort, descending
        m = moves[i]
        s = scores[i]
        j = i - 1
        while j >= 0 and scores[j] < s:
            moves[j + 1] = moves[j]
            scores[j + 1] = scores[j]
            j -= 1
        moves[j + 1] = m
        scores[j + 1] = s


@njit(cache=True)
def tt_probe(tt, key):
    """The packed entry for ``key`` or -1.

    ``tt`` holds buckets of two (key, data) pairs side by side, so that one
    probe touches one cache line.
    """
    i = (key & ((tt.shape[0] >> 2) - 1)) << 2
    if tt[i] == key:
        return tt[i + 1]
    if tt[i + 2] == key:
        return tt[i + 3]
    return np.int64(-1)


@njit(cache=True)
def tt_store(tt, key, depth, flag, value, move):
    """The first pair keeps the deepest entry, the second the latest."""
    data = (
        (np.int64(depth) & 255)
        | (np.int64(flag) << 8)
        | (np.int64(move & 8191) << 10)
        | (np.int64(value + (1 << 30)) << 23)
    )
    i = (key & ((tt.shape[0] >> 2) - 1)) << 2
    if tt[i] == key or tt[i + 1] < 0 or (tt[i + 1] & 255) <= depth:
        tt[i] = key
        tt[i + 1] = data
    else:
        tt[i + 2] = key
        tt[i + 3] = data


A1 = "int64[::1]"
A2 = "int64[:, ::1]"
SEARCH_SIGNATURE = (
    f"int64({A1}, {A1}, {A1}, int64, int64, int64, int64, int64, int64, int64, "
    f"int64, {A1}, {A1}, {A2}, {A2}, {A2}, {A1}, {A1}, {A1})"
)
"""Recursive kernels get an explicit signature: numba's cache of a recursive
function typed by inference crashes when loaded (numba issue 6061).

The arrays go as separate arguments, so ``search``'s recursive call and the root's
call spell out the same nineteen: passed as one tuple they cost 22 % of the nodes
a second (``bench/search.py``, 0.89 M against 1.14 M), numba counting references
to each array unpacked from it at every node."""


# A child position is searched the principal-variation way, in stages: the first
# child with the whole window (stage 2), a later one with a null window (stage 1;
# a late one of the opponent's turn first one ply shallower, stage 0, then at
# full depth if it beats alpha), and with the whole window only if it falls
# inside it. A child where the same side moves again (a Sumo push) is searched
# for that side (``sign`` 1), any other negated (``sign`` -1).


@njit(cache=True, inline="always")
def first_stage(i, reduce):
    return 2 if i == 0 else (0 if reduce else 1)


@njit(cache=True, inline="always")
def child_window(stage, alpha, beta, sign):
    """The child's window, from the side to move there."""
    lo, hi = (alpha, beta) if stage == 2 else (alpha, alpha + 1)
    return (lo, hi) if sign == 1 else (-hi, -lo)


@njit(cache=True, inline="always")
def next_stage(stage, v, alpha, beta, aborted):
    """The stage to search the child at again after value ``v``, or -1: done."""
    if stage == 2 or aborted != 0:
        return -1
    if stage == 0:
        return 1 if v > alpha else -1
    return 2 if alpha < v < beta else -1


@njit(SEARCH_SIGNATURE, cache=True)
def search(
    at,
    sq,
    rank,
    occ,
    key,
    side,
    req,
    depth,
    alpha,
    beta,
    ply,
    tt,
    history,
    killers,
    moves,
    scores,
    w,
    match,
    ctl,
):
    """Negamax value for ``side`` to move (principal variation search).

    Sets ``ctl[C_ABORTED]`` and returns 0 once ``ctl[C_STOP]`` is raised; every
    caller unmakes and returns at once then.
    """
    ctl[C_NODES] += 1
    if (ctl[C_NODES] & 1023) == 0 and ctl[C_STOP] != 0:
        ctl[C_ABORTED] = 1
        return 0
    if winning_move(at, sq, rank, occ, side, req) >= 0:
        return win_now_value(match, rank, side, req, ply)
    if depth <= 0 or ply >= MAX_PLY - 1:
        return evaluate(at, sq, rank, occ, side, req, w, match, moves[ply])

    fk = full_key(key, side, req)
    entry = tt_probe(tt, fk)
    tt_move = -1
    if entry >= 0:
        e_depth = entry & 255
        e_flag = (entry >> 8) & 3
        tt_move = (entry >> 10) & 8191
        e_value = (entry >> 23) - (1 << 30)
        if e_depth >= depth and ctl[C_NO_TT] == 0:
            if e_value > WIN_BOUND:
                e_value -= ply
            elif e_value < -WIN_BOUND:
                e_value += ply
            if e_flag == EXACT:
                return e_value
            if e_flag == LOWER:
                if e_value >= beta:
                    return e_value
            elif e_value <= alpha:
                return e_value

    mv = moves[ply]
    n = gen_moves(at, sq, rank, occ, side, req, mv)
    if n > 1:
        order_moves(at, sq, rank, occ, side, mv, scores[ply], n, tt_move, killers, history, ply)
        next_depth = depth - 1
    else:
        next_depth = depth  # a forced action costs no depth

    alpha0 = alpha
    best = -INF
    best_move = mv[0]
    for i in range(n):
        m = mv[i]
        ended, nside, nreq, nocc, delta, pushed, winner, promoted = make(at, sq, rank, occ, side, m)
        if ended:
            v = round_end_value(match, rank, winner, promoted, side, ply + 1)
        else:
            # Late moves of the opponent's turn first get one ply less (a Sumo
            # push, which gives the same side the next move, never does).
            late = 0 < w[W_LMR_DEPTH] <= depth and i >= w[W_LMR_MOVES] and n > 1
            reduce = 1 if late and nside != side else 0
            sign = 1 if nside == side else -1
            stage = first_stage(i, reduce)
            while True:
                a, b = child_window(stage, alpha, beta, sign)
                d = next_depth - reduce if stage == 0 else next_depth
                v = sign * search(
                    at,
                    sq,
                    rank,
                    nocc,
                    key ^ delta,
                    nside,
                    nreq,
                    d,
                    a,
                    b,
                    ply + 1,
                    tt,
                    history,
                    killers,
                    moves,
                    scores,
                    w,
                    match,
                    ctl,
                )
                stage = next_stage(stage, v, alpha, beta, ctl[C_ABORTED])
                if stage < 0:
                    break
        unmake(at, sq, side, m, pushed)
        if ctl[C_ABORTED] != 0:
            return 0
        if v > best:
            best = v
            best_move = m
            if v > alpha:
                alpha = v
                if v >= beta:
                    frm = m & 63
                    to = m >> 6
                    if frm != to and at[to] < 0 and killers[ply, 0] != m:
                        killers[ply, 1] = killers[ply, 0]
                        killers[ply, 0] = m
                    history[m & 4095] += depth * depth
                    break

    if best >= beta:
        flag = LOWER
    elif best > alpha0:
        flag = EXACT
    else:
        flag = UPPER
    stored = best
    if stored > WIN_BOUND:
        stored += ply
    elif stored < -WIN_BOUND:
        stored -= ply
    tt_store(tt, fk, depth, flag, stored, best_move)
    return best


@njit(cache=True, nogil=True)
def root_search(
    at,
    sq,
    rank,
    side,
    req,
    order,
    n_order,
    depth,
    alpha,
    beta,
    tt,
    history,
    killers,
    moves,
    scores,
    w,
    match,
    ctl,
):
    """One iteration over the root moves ``order[:n]`` (best first): ``(move, value)``.

    ``s`` is the search's arrays (:data:`STATE`). The first move gets the whole
    window, the others a null window and a re-search (the stages above, without
    a reduction). ``ctl[C_CANDIDATE]`` holds
    the best move proven so far, so an iteration cut short by the watchdog still
    leaves a move at least as good as the previous iteration's (which was
    searched first). Releases the GIL so that the driver's watchdog thread can
    raise ``ctl[C_STOP]``.
    """
    occ = occupancy(at)
    key = board_key(sq)
    best_move = order[0]
    best = -INF
    for i in range(n_order):
        m = order[i]
        ended, nside, nreq, nocc, delta, pushed, winner, promoted = make(at, sq, rank, occ, side, m)
        if ended:
            v = round_end_value(match, rank, winner, promoted, side, 1)
        else:
            sign = 1 if nside == side else -1
            stage = first_stage(i, 0)
            while True:
                a, b = child_window(stage, alpha, beta, sign)
                v = sign * search(
                    at,
                    sq,
                    rank,
                    nocc,
                    key ^ delta,
                    nside,
                    nreq,
                    depth - 1,
                    a,
                    b,
                    1,
                    tt,
                    history,
                    killers,
                    moves,
                    scores,
                    w,
                    match,
                    ctl,
                )
                stage = next_stage(stage, v, alpha, beta, ctl[C_ABORTED])
                if stage < 0:
                    break
                ctl[C_CANDIDATE] = m  # a null window found it better: keep it if stopped
        unmake(at, sq, side, m, pushed)
        if ctl[C_ABORTED] != 0:
            return best_move, best
        if v > best:
            best = v
            best_move = m
            ctl[C_CANDIDATE] = m
            if v > alpha:
                alpha = v
                if v >= beta:
                    break
    return best_move, best


@njit(cache=True)
def pv_from_table(at, sq, rank, side, req, first, out, buf, tt):
    """The principal variation from the table after ``first``; its length.

    Follows the stored best moves while they are legal in the position
    reached (forced actions need no entry), and leaves the board as it was.
    """
    occ = occupancy(at)
    key = board_key(sq)
    sides = np.empty(out.shape[0], dtype=np.int64)
    pushed = np.empty(out.shape[0], dtype=np.int64)
    length = 0
    m = first
    while length < out.shape[0]:
        ended, nside, nreq, nocc, delta, _q, _w, _p = make_logged(
            at, sq, rank, occ, side, m, sides, out, pushed, length
        )
        length += 1
        if ended:
            break
        side, req, occ, key = nside, nreq, nocc, key ^ delta
        n = gen_moves(at, sq, rank, occ, side, req, buf)
        if n == 1:
            m = buf[0]
            continue
        entry = tt_probe(tt, full_key(key, side, req))
        if entry < 0:
            break
        m = (entry >> 10) & 8191
        legal = False
        for i in range(n):
            if buf[i] == m:
                legal = True
                break
        if not legal:
            break
    unmake_logged(at, sq, sides, out, pushed, 0, length)
    return length


# ---------------------------------------------------------------- Monte-Carlo tree search
# The tree lives in flat arrays (one row per node) so that it can grow across
# several calls while the driver checks the clock in between. A node's
# statistics are credited to the player who made the move into it (after a
# Sumo push the same side moves again, so signs cannot alternate by depth).

N_MOVE, N_PARENT, N_CHILD, N_COUNT, N_VISITS, N_MOVER, N_WINNER = range(7)
"""Columns of the integer node table; wins are a float column of their own."""


@njit(cache=True)
def _playout(at, sq, rank, occ, side, req, sides, moves_made, pushes, base, buf, safe_only):
    """Play the round out from here (random, but a move onto the goal row is
    always taken); the winner. Every move is taken back before returning.

    With ``safe_only`` a move is drawn among those that do not hand the
    opponent a tower with a free path to its goal row, when there is one:
    random play loses most rounds by such a blunder, which says little about
    the position the playout started from.
    """
    n = base
    winner = -1
    while True:
        m = winning_move(at, sq, rank, occ, side, req)
        if m >= 0:
            winner = side
            break
        count = gen_moves(at, sq, rank, occ, side, req, buf)
        if safe_only:
            opp = side ^ 1
            safe = 0
            for i in range(count):
                c = buf[i]
                frm = c & 63
                to = c >> 6
                if frm != to and at[to] >= 0:  # a push: the pusher moves again
                    ok = True
                else:
                    u = opp * 8 + COLOUR[to]
                    ok = not open_after(occ, opp, rank[u], sq[u], frm, to)
                if ok:  # keep the safe moves at the front
                    buf[i] = buf[safe]
                    buf[safe] = c
                    safe += 1
            if safe:
                count = safe
        m = buf[np.random.randint(count)]
        ended, nside, nreq, nocc, _d, _q, w, _p = make_logged(
            at, sq, rank, occ, side, m, sides, moves_made, pushes, n
        )
        n += 1
        if ended:
            winner = w
            break
        side, req, occ = nside, nreq, nocc
        if n >= sides.shape[0]:
            break  # cannot happen: a round is far shorter than the buffer
    unmake_logged(at, sq, sides, moves_made, pushes, base, n)
    return winner


@njit(cache=True, nogil=True)
def mcts_grow(at, sq, rank, side, req, nodes, wins, exploration, safe_only, ctl):
    """Grow the UCT tree in ``nodes``/``wins`` (node 0 is the root, made by
    :func:`mcts_root`) until ``ctl[C_STOP]`` is raised or the table is full;
    the playouts run. ``ctl[C_NODES]`` holds the number of nodes in use."""
    occ0 = occupancy(at)
    cap = nodes.shape[0]
    sides = np.empty(1024, dtype=np.int64)
    moves_made = np.empty(1024, dtype=np.int64)
    pushes = np.empty(1024, dtype=np.int64)
    buf = np.empty(MAX_MOVES, dtype=np.int64)
    playouts = 0
    while playouts == 0 or ctl[C_STOP] == 0:  # at least one: the root gets its children
        node = 0
        depth = 0
        s, r, occ = side, req, occ0
        # Selection: the child with the best upper confidence bound.
        while nodes[node, N_COUNT] > 0 and nodes[node, N_WINNER] < 0:
            first = nodes[node, N_CHILD]
            log_n = np.log(max(nodes[node, N_VISITS], 1))
            best = first
            best_score = -1.0
            for c in range(first, first + nodes[node, N_COUNT]):
                v = nodes[c, N_VISITS]
                if v == 0:
                    score = 1e9 + np.random.random()
                else:
                    score = wins[c] / v + exploration * np.sqrt(log_n / v)
                if score > best_score:
                    best_score = score
                    best = c
            node = best
            m = nodes[node, N_MOVE]
            _e, ns, nr, nocc, _d, _q, _w, _p = make_logged(
                at, sq, rank, occ, s, m, sides, moves_made, pushes, depth
            )
            depth += 1
            s, r, occ = ns, nr, nocc
        # Expansion: a leaf visited before gets its children.
        if (
            nodes[node, N_WINNER] < 0
            and nodes[node, N_COUNT] == 0
            and (nodes[node, N_VISITS] > 0 or node == 0)
        ):
            count = gen_moves(at, sq, rank, occ, s, r, buf)
            used = ctl[C_NODES]
            if used + count <= cap:
                nodes[node, N_CHILD] = used
                for i in range(count):
                    c = used + i
                    m = buf[i]
                    nodes[c, N_MOVE] = m
                    nodes[c, N_PARENT] = node
                    nodes[c, N_CHILD] = 0
                    nodes[c, N_COUNT] = 0
                    nodes[c, N_VISITS] = 0
                    nodes[c, N_MOVER] = s
                    wins[c] = 0.0
                    ended, _s, _r, _o, _d, pushed, w, _p = make(at, sq, rank, occ, s, m)
                    nodes[c, N_WINNER] = w if ended else -1
                    unmake(at, sq, s, m, pushed)
                nodes[node, N_COUNT] = count
                ctl[C_NODES] = used + count
        # Simulation.
        if nodes[node, N_WINNER] >= 0:
            winner = nodes[node, N_WINNER]
        elif winning_move(at, sq, rank, occ, s, r) >= 0:
            winner = s
        else:
            winner = _playout(
                at, sq, rank, occ, s, r, sides, moves_made, pushes, depth, buf, safe_only
            )
        unmake_logged(at, sq, sides, moves_made, pushes, 0, depth)
        # Backpropagation: credit the player who made each move.
        while True:
            nodes[node, N_VISITS] += 1
            if nodes[node, N_MOVER] == winner:
                wins[node] += 1.0
            if node == 0:
                break
            node = nodes[node, N_PARENT]
        playouts += 1
    return playouts


@njit(cache=True)
def mcts_root(nodes, wins, side, seed):
    """Start a fresh tree: the root, made by the opponent of ``side``."""
    np.random.seed(seed)
    nodes[0, N_MOVE] = -1
    nodes[0, N_PARENT] = -1
    nodes[0, N_CHILD] = 0
    nodes[0, N_COUNT] = 0
    nodes[0, N_VISITS] = 0
    nodes[0, N_MOVER] = side ^ 1
    nodes[0, N_WINNER] = -1
    wins[0] = 0.0
    return 1
