"use strict";
// Kamisado's picture for replays and the live page (arena/report/templates/replay.js
// says what a picture provides): the board show.py draws once as the
// "kamisado-board" template, with towers drawn on it from each frame.
(function () {
  const R = globalThis.ArenaReplay;
  const svg = R.svg;
  const STYLE = JSON.parse(document.getElementById("kamisado-style").textContent);

  function isTower(key) { return /^[bg][A-Z]$/.test(key) && (key[1] in STYLE.colours); }

  function squareXY(square) {
    const size = STYLE.square, margin = STYLE.margin;
    return [margin + (square.charCodeAt(0) - 97) * size, (8 - parseInt(square.slice(1), 10)) * size];
  }

  // The squares the last action moved the mover's tower from and to (none for a regroup).
  function lastMove(prev, frame) {
    if (!prev || !frame) return null;
    const moved = Object.keys(frame).filter(k => isTower(k) && k[0] === prev.m && prev[k] !== frame[k]);
    if (moved.length !== 1) return null;
    const k = moved[0];
    return {from: prev[k].replace(/\+/g, ""), to: frame[k].replace(/\+/g, "")};
  }

  // Mirrors kamisado_tower_svg in show.py, each tower drawn at
  // its square's origin and moved there by a transform. The group keeps its
  // tower elements between calls and only moves (or re-ranks) the towers that
  // changed: a live page redraws up to 16 boards per update, and rebuilding
  // some 100 SVG nodes each time was most of its cost.
  function drawTowers(group, frame, move) {
    const size = STYLE.square;
    const keys = Object.keys(frame).filter(isTower);
    let cache = group.arenaTowers;
    if (!cache || cache.towers.size !== keys.length || keys.some(k => !cache.towers.has(k))) {
      while (group.firstChild) group.removeChild(group.firstChild);
      cache = group.arenaTowers = {towers: new Map(), marks: {}};
      for (const cls of ["from", "to"]) {
        cache.marks[cls] = svg("rect", {"class": "last-move " + cls, width: size - 4, height: size - 4, fill: "none",
          stroke: cls === "to" ? "#000" : "#fff", "stroke-width": 3, "stroke-dasharray": cls === "to" ? "" : "4 3"});
      }
      for (const key of keys) {
        const owner = key[0] === "b" ? "black" : "gold", colour = STYLE.colours[key[1]];
        const g = svg("g", {"class": "tower", "data-owner": owner, "data-colour": colour}, group);
        svg("circle", {cx: size / 2, cy: size / 2, r: size * 0.42, fill: STYLE.owner_fill[owner], stroke: "#fff", "stroke-width": 1}, g);
        svg("circle", {cx: size / 2, cy: size / 2, r: size * 0.27, fill: STYLE.hex[colour]}, g);
        const t = svg("text", {x: size / 2, y: size / 2 + 4, "text-anchor": "middle", "font-size": 11, "font-weight": "bold", fill: STYLE.owner_text[owner]}, g);
        t.textContent = key[1];
        cache.towers.set(key, {g, value: null, dots: []});
      }
    }
    const first = keys.length ? cache.towers.values().next().value.g : null;
    for (const cls of ["to", "from"]) {  // below the towers, "from" before "to"
      const mark = cache.marks[cls];
      if (!move) { mark.remove(); continue; }
      const [x, y] = squareXY(move[cls]);
      mark.setAttribute("x", x + 2); mark.setAttribute("y", y + 2); mark.setAttribute("data-square", move[cls]);
      if (mark.parentNode !== group) group.insertBefore(mark, cls === "to" ? first : cache.marks.to);
    }
    for (const key of keys) {
      const tower = cache.towers.get(key), value = frame[key];
      if (tower.value === value) continue;
      const square = value.replace(/\+/g, ""), rank = value.length - square.length;
      const [x, y] = squareXY(square);
      tower.g.setAttribute("transform", "translate(" + x + "," + y + ")");
      tower.g.setAttribute("data-square", square);
      if (tower.g.getAttribute("data-rank") !== String(rank)) {
        tower.g.setAttribute("data-rank", rank);
        for (const d of tower.dots) d.remove();
        tower.dots = [];
        for (let k = 0; k < rank; k++) tower.dots.push(svg("circle", {cx: 6 + 6 * k, cy: 6, r: 2.5, fill: "#fff", stroke: "#000", "stroke-width": 0.8}, tower.g));
      }
      tower.value = value;
    }
  }

  function kamisadoStatus(f) {
    const side = f.m === "b" ? "black" : "gold";
    const phase = f.ph === "over" ? "match over"
      : f.ph === "regroup" ? side + " chooses the regroup (left/right)"
      : side + " to move, " + (f.c ? STYLE.colours[f.c] : "any") + " tower";
    return f.x + " match, round " + f.r + ", score black " + f.s[0] + " – gold " + f.s[1] + " (target " + f.g + ")\n" + phase;
  }

  // The move an action names ("c1-c5"; a zero-length move, a regroup: none).
  function namedMove(action) {
    const m = /^([a-h][1-8])-([a-h][1-8])$/.exec(action);
    return m && m[1] !== m[2] ? {from: m[1], to: m[2]} : null;
  }

  R.register("kamisado", {
    create(parent) {
      const board = document.getElementById("kamisado-board").content.firstElementChild.cloneNode(true);
      parent.appendChild(board);
      return board;
    },
    // The marked move is the one the action names when it is known: a live page
    // that skipped plies would find another mover's towers moved in its last
    // drawn frame, and mark that.
    draw(board, frame, prev, action) {
      drawTowers(board.querySelector("g.towers"), frame, action === undefined ? lastMove(prev, frame) : namedMove(action));
    },
    status: kamisadoStatus,
    mover(f) { return f.m ? (f.m === "b" ? 0 : 1) : null; },
    side(p) { return "side " + (p === 0 ? "black" : "gold"); },
  });
})();
