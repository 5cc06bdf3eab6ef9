"use strict";
// Boards and replays, drawn the way report.html draws them (the geometry and
// colours come from arena/report/boards.py through #kamisado-style).
window.ArenaBoard = (function () {
  const STYLE = JSON.parse(document.getElementById("kamisado-style").textContent);
  const SVGNS = "http://www.w3.org/2000/svg";

  // Frames are stored as differences (arena/report/replay.py: decode_frames).
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

  // Mirrors kamisado_tower_svg in arena/report/boards.py.
  function drawTowers(group, frame) {
    while (group.firstChild) group.removeChild(group.firstChild);
    const size = STYLE.square, margin = STYLE.margin;
    for (const [key, value] of Object.entries(frame)) {
      if (!/^[bg][A-Z]$/.test(key) || !(key[1] in STYLE.colours)) continue;
      const square = value.replace(/\+/g, ""), rank = value.length - square.length;
      const owner = key[0] === "b" ? "black" : "gold", colour = STYLE.colours[key[1]];
      const x = margin + (square.charCodeAt(0) - 97) * size, y = (8 - parseInt(square.slice(1), 10)) * size;
      const cx = x + size / 2, cy = y + size / 2;
      const g = el("g", {"class": "tower", "data-square": square, "data-owner": owner, "data-colour": colour, "data-rank": rank}, group);
      el("circle", {cx: cx, cy: cy, r: size * 0.42, fill: STYLE.owner_fill[owner], stroke: "#fff", "stroke-width": 1}, g);
      el("circle", {cx: cx, cy: cy, r: size * 0.27, fill: STYLE.hex[colour]}, g);
      const t = el("text", {x: cx, y: cy + 4, "text-anchor": "middle", "font-size": 11, "font-weight": "bold", fill: STYLE.owner_text[owner]}, g);
      t.textContent = key[1];
      for (let k = 0; k < rank; k++) el("circle", {cx: x + 6 + 6 * k, cy: y + 6, r: 2.5, fill: "#fff", stroke: "#000", "stroke-width": 0.8}, g);
    }
  }

  function kamisadoStatus(f) {
    const side = f.m === "b" ? "black" : "gold";
    const phase = f.ph === "over" ? "match over"
      : f.ph === "regroup" ? side + " chooses the regroup (left/right)"
      : side + " to move, " + (f.c ? STYLE.colours[f.c] : "any") + " tower";
    return f.x + " match, round " + f.r + ", score black " + f.s[0] + " – gold " + f.s[1] + " (target " + f.g + ")\n" + phase;
  }

  function newBoard() {
    return document.getElementById("kamisado-board").content.firstElementChild.cloneNode(true);
  }

  function fieldsText(frame) {
    return Object.entries(frame).map(([k, v]) => k + ": " + JSON.stringify(v)).join("\n");
  }

  function button(label, title, parent) {
    const b = document.createElement("button");
    b.type = "button"; b.textContent = label; b.title = title; parent.appendChild(b);
    return b;
  }

  // A replay viewer for one game's replay JSON (arena/report/replay.py: replay_json).
  function buildViewer(data, container) {
    const frames = decode(data.f);
    const last = Math.max(frames.length - 1, 0);
    container.tabIndex = 0;
    const left = document.createElement("div");
    const right = document.createElement("div");
    container.append(left, right);
    let board = null, fields = null;
    if (data.k === "kamisado") { board = newBoard(); left.appendChild(board); }
    else { fields = document.createElement("pre"); fields.className = "fields"; left.appendChild(fields); }
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
      li.textContent = data.n[a[2]] + ": " + a[0] + " (" + a[1] + " ms" + (a[3] ? ", forced" : "") + ")";
      li.addEventListener("click", () => show(Math.min(i + 1, last)));
      list.appendChild(li);
    });
    let ply = 0;
    function show(k) {
      ply = Math.max(0, Math.min(last, k));
      slider.value = ply;
      container.dataset.ply = ply;
      const frame = frames[ply] || {};
      const action = ply > 0 ? data.a[ply - 1] : null;
      const head = "ply " + ply + "/" + data.a.length + (action
        ? ": " + data.n[action[2]] + " played " + action[0] + " in " + action[1] + " ms" + (action[3] ? " (forced)" : "")
        : ": opening");
      if (board) { drawTowers(board.querySelector("g.towers"), frame); status.textContent = head + "\n" + (frames.length ? kamisadoStatus(frame) : ""); }
      else { status.textContent = head; fields.textContent = fieldsText(frame); }
      list.querySelectorAll("li.current").forEach(li => li.classList.remove("current"));
      if (ply > 0 && list.children[ply - 1]) list.children[ply - 1].classList.add("current");
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

  return {decode, drawTowers, kamisadoStatus, newBoard, fieldsText, buildViewer};
})();
