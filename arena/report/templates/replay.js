"use strict";
(function () {
  const styleBlock = document.getElementById("kamisado-style");
  const STYLE = styleBlock ? JSON.parse(styleBlock.textContent) : {};
  const SVGNS = "http://www.w3.org/2000/svg";

  // Frames are stored as differences (see arena/report/replay.py: decode_frames).
  function decode(deltas) {
    const frames = [];
    let cur = {};
    for (const d of deltas) {
      cur = Object.assign({}, cur);
      for (const k of d["-"] || []) delete cur[k];
      for (const [k, v] of Object.entries(d)) {
        if (k === "-") continue;
        if (k.startsWith("+")) { const n = k.slice(1); cur[n] = (cur[n] || []).concat(v); }
        else cur[k] = v;
      }
      frames.push(cur);
    }
    return frames;
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  function html(tag, cls, text, parent) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

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

  // Mirrors kamisado_tower_svg in arena/report/boards.py, each tower drawn at
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
        cache.marks[cls] = el("rect", {"class": "last-move " + cls, width: size - 4, height: size - 4, fill: "none",
          stroke: cls === "to" ? "#000" : "#fff", "stroke-width": 3, "stroke-dasharray": cls === "to" ? "" : "4 3"});
      }
      for (const key of keys) {
        const owner = key[0] === "b" ? "black" : "gold", colour = STYLE.colours[key[1]];
        const g = el("g", {"class": "tower", "data-owner": owner, "data-colour": colour}, group);
        el("circle", {cx: size / 2, cy: size / 2, r: size * 0.42, fill: STYLE.owner_fill[owner], stroke: "#fff", "stroke-width": 1}, g);
        el("circle", {cx: size / 2, cy: size / 2, r: size * 0.27, fill: STYLE.hex[colour]}, g);
        const t = el("text", {x: size / 2, y: size / 2 + 4, "text-anchor": "middle", "font-size": 11, "font-weight": "bold", fill: STYLE.owner_text[owner]}, g);
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
        for (let k = 0; k < rank; k++) tower.dots.push(el("circle", {cx: 6 + 6 * k, cy: 6, r: 2.5, fill: "#fff", stroke: "#000", "stroke-width": 0.8}, tower.g));
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

  // The Sekigahara battle (frames from arena/report/battle.py): per army its impact
  // bar, field, reserve and hand; the cards shown so far; the outcome at the end.
  const ROLES = ["attacker", "defender"];
  function drawBattle(box, f, prev) {
    while (box.firstChild) box.removeChild(box.firstChild);
    const top = Math.max(1, f.im[0], f.im[1]);
    ROLES.forEach((role, i) => {
      const k = role[0];
      const army = html("div", "army " + role + (f.m === role ? " to-move" : ""), null, box);
      army.dataset.role = role;
      army.dataset.impact = f.im[i];
      html("h4", null, role + " (" + f.sd[i] + "): impact " + f.im[i] + (f.st[i] ? " · stopped" : "") + (f.m === role ? " · to act" : ""), army);
      const bar = html("div", "bar", null, army);
      html("div", null, null, bar).style.width = (100 * f.im[i] / top).toFixed(1) + "%";
      const before = new Set(prev ? (prev["f" + k] || []).map(b => b[0]) : []);
      const field = html("div", "row field", null, army);
      html("span", "label", "field", field);
      for (const [token, owner, added] of f["f" + k] || []) {
        const b = html("span", "block" + (owner !== k ? " turned" : "") + (prev && !before.has(token) ? " new" : ""), token + " +" + added, field);
        b.title = owner !== k ? "turned from the " + (owner === "a" ? "attacker" : "defender") : "";
      }
      for (const [label, key, cls] of [["reserve", "r", "block"], ["hand", "h", "card"]]) {
        const items = f[key + k];
        if (!items) continue;
        const row = html("div", "row " + label, null, army);
        html("span", "label", label, row);
        if (!items.length) html("span", "meta", "none", row);
        for (const token of items) html("span", cls, token, row);
      }
    });
    const shown = html("div", "row cards", null, box);
    html("span", "label", "cards shown", shown);
    const seen = new Set(prev ? (prev.cards || []).map(c => c[0]) : []);
    if (!(f.cards || []).length) html("span", "meta", "none", shown);
    for (const [id, what] of f.cards || []) html("span", "card" + (prev && !seen.has(id) ? " new" : ""), id + ":" + what, shown);
    if (f.pe) {
      html("div", "pending", f.pe.by + " deployed " + (f.pe.blocks || []).join(",") + " (+" + f.pe.added + ")"
        + (f.pe.challenge ? ", challenged with " + f.pe.challenge : ", open to a loyalty challenge"), box);
    }
    if (f.out) {
      const o = html("div", "outcome", null, box);
      o.dataset.winner = f.out.winner;
      html("strong", null, f.out.winner + " wins", o);
      o.appendChild(document.createTextNode(" · impact " + f.out.impacts.join("–") + " · casualties " + f.out.casualties.join("–")));
      ROLES.forEach((role, i) => {
        const lost = (f.out.removed || [])[i] || [];
        if (!lost.length) return;
        const row = html("div", "row", null, o);
        html("span", "label", role + " loses", row);
        for (const id of lost) html("span", "block removed", id, row);
      });
    }
  }

  function button(label, title, parent) {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = label; b.title = title; parent.appendChild(b);
    return b;
  }

  // An action's info (depth, score, nodes or playouts, PV) as one short line.
  function infoText(info) {
    if (!info) return "";
    const parts = [];
    if (info.depth !== undefined) parts.push("depth " + info.depth);
    if (info.score !== undefined) parts.push("score " + (info.score > 0 ? "+" : "") + info.score);
    if (info.nodes !== undefined) parts.push(info.nodes + " nodes");
    if (info.playouts !== undefined) parts.push(info.playouts + " playouts");
    if (info.pv && info.pv.length) parts.push("pv " + info.pv.join(" "));
    if (info.text) parts.push(info.text);
    return parts.join(" · ");
  }

  // A viewer of one game's replay JSON (arena/report/replay.py: replay_json); the
  // web view (arena/web) builds the same viewers from replays it fetches.
  function buildViewer(data, container) {
    const frames = decode(data.f);
    const last = Math.max(frames.length - 1, 0);
    const who = p => data.n[p] + (data.r ? " (" + data.r[p] + ")" : "");
    container.tabIndex = 0;
    const left = document.createElement("div");
    const right = document.createElement("div");
    container.append(left, right);
    let board = null, fields = null, battle = null;
    if (data.k === "kamisado") {
      board = document.getElementById("kamisado-board").content.firstElementChild.cloneNode(true);
      left.appendChild(board);
    } else if (data.k === "sekigahara") {
      battle = html("div", "battle", null, left);
    } else {
      fields = document.createElement("pre"); fields.className = "fields"; left.appendChild(fields);
    }
    const controls = document.createElement("div"); controls.className = "controls"; left.appendChild(controls);
    const first = button("|◀", "first", controls), prev = button("◀", "previous", controls);
    const next = button("▶", "next", controls), end = button("▶|", "last", controls);
    const slider = document.createElement("input");
    slider.type = "range"; slider.min = 0; slider.max = last; slider.value = 0; controls.appendChild(slider);
    const status = document.createElement("div"); status.className = "status"; left.appendChild(status);
    if (data.e) { const p = document.createElement("p"); p.className = "error"; p.textContent = "Replay stopped: " + data.e; left.appendChild(p); }
    const list = document.createElement("ol"); list.className = "moves"; right.appendChild(list);
    data.a.forEach((a, i) => {
      const li = document.createElement("li");
      li.textContent = who(a[2]) + ": " + a[0] + " (" + a[1] + " ms" + (a[3] ? ", forced" : "") + ")";
      if (a[4]) html("span", "info", infoText(a[4]), li);
      li.addEventListener("click", () => show(Math.min(i + 1, last)));
      list.appendChild(li);
    });
    let ply = 0;
    function show(k) {
      ply = Math.max(0, Math.min(last, k));
      slider.value = ply;
      container.dataset.ply = ply;
      const frame = frames[ply] || {};
      const before = ply > 0 ? frames[ply - 1] : null;
      const action = ply > 0 ? data.a[ply - 1] : null;
      let head = "ply " + ply + "/" + data.a.length + (action
        ? ": " + who(action[2]) + " played " + action[0] + " in " + action[1] + " ms" + (action[3] ? " (forced)" : "")
        : ": opening");
      if (action && action[4]) head += "\n" + infoText(action[4]);
      if (board) { drawTowers(board.querySelector("g.towers"), frame, lastMove(before, frame)); status.textContent = head + "\n" + (frames.length ? kamisadoStatus(frame) : ""); }
      else if (battle) { if (frames.length) drawBattle(battle, frame, before); status.textContent = head; }
      else { status.textContent = head; fields.textContent = Object.entries(frame).map(([k, v]) => k + ": " + JSON.stringify(v)).join("\n"); }
      list.querySelectorAll("li.current").forEach(li => li.classList.remove("current"));
      if (ply > 0 && list.children[ply - 1]) { list.children[ply - 1].classList.add("current"); }
    }
    first.addEventListener("click", () => show(0));
    prev.addEventListener("click", () => show(ply - 1));
    next.addEventListener("click", () => show(ply + 1));
    end.addEventListener("click", () => show(last));
    slider.addEventListener("input", () => show(parseInt(slider.value, 10)));
    container.addEventListener("keydown", ev => {
      if (ev.key === "ArrowLeft") { show(ply - 1); ev.preventDefault(); }
      else if (ev.key === "ArrowRight") { show(ply + 1); ev.preventDefault(); }
      else if (ev.key === "Home") { show(0); ev.preventDefault(); }
      else if (ev.key === "End") { show(last); ev.preventDefault(); }
    });
    show(0);
  }

  globalThis.ArenaReplay = {decode, drawTowers, drawBattle, kamisadoStatus, infoText, lastMove, buildViewer};

  const games = document.getElementById("games");
  if (!games) return;  // a page of the web view: it wires up its own games table
  // Replays are parsed only when opened, so a page of a thousand games loads fast.
  games.addEventListener("click", ev => {
    const b = ev.target.closest("button.open");
    if (!b) return;
    const index = b.dataset.index;
    const row = document.getElementById("replay-row-" + index);
    const viewer = row.querySelector(".viewer");
    if (!viewer.dataset.built) {
      buildViewer(JSON.parse(document.getElementById("replay-" + index).textContent), viewer);
      viewer.dataset.built = "1";
    }
    row.hidden = !row.hidden;
    b.textContent = row.hidden ? "replay" : "close";
    if (!row.hidden) viewer.focus();
  });

  // Filtering by bot, result and reason; sorting by a column header. Each game is
  // one <tbody>, so its replay row and data move with it.
  const filter = document.getElementById("games-filter");
  if (filter) {
    const groups = () => Array.from(games.querySelectorAll("tbody.game-group"));
    const shown = document.getElementById("games-shown");
    const apply = () => {
      const want = {};
      filter.querySelectorAll("select").forEach(s => { want[s.dataset.filter] = s.value; });
      let n = 0;
      const all = groups();
      for (const g of all) {
        const d = g.dataset;
        const ok = (!want.bot || d.first === want.bot || d.second === want.bot)
          && (!want.result || d.result === want.result) && (!want.reason || d.reason === want.reason);
        g.hidden = !ok;
        if (ok) n++;
      }
      if (shown) shown.textContent = n + " of " + all.length + " games";
    };
    filter.addEventListener("change", apply);
    apply();
    games.querySelectorAll("th.sortable").forEach(th => {
      th.addEventListener("click", () => {
        const key = th.dataset.sort, numeric = th.dataset.type === "num";
        const dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        games.querySelectorAll("th.sortable").forEach(o => o.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        const sorted = groups().sort((a, b) => {
          const x = a.dataset[key], y = b.dataset[key];
          const c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return dir * (c || parseInt(a.dataset.index, 10) - parseInt(b.dataset.index, 10));
        });
        for (const g of sorted) games.appendChild(g);
      });
    });
  }
})();
