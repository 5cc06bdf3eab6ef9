"use strict";
// Replays and game pictures, shared by report.html and the web view's pages.
//
// Each game draws its own frames: its script (arena/games/NAME/show.js, put on
// the page after this one by arena/games/show.py's PageAssets) calls
// ArenaReplay.register(picture, {...}) with
//   create(parent)              make the picture's element in parent, return it;
//   draw(view, frame, prev, action)
//                               draw frame over the previous one drawn (prev, or
//                               null); action is the text of the action that led
//                               to frame when the caller knows it (the live page),
//                               else undefined;
//   status(frame)   (optional)  lines of text shown under a replay;
//   mover(frame)    (optional)  0 or 1, the player to move, or null;
//   side(player)    (optional)  a class for a player's name (its side's colour).
// A picture no script registered is drawn as the frame's fields in text.
(function () {
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

  function svg(name, attrs, parent) {
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

  // The picture of a game no script draws: the frame's fields, one per line.
  const TEXT = {
    create(parent) { return html("pre", "fields", null, parent); },
    draw(pre, frame) { pre.textContent = Object.entries(frame).map(([k, v]) => k + ": " + JSON.stringify(v)).join("\n"); },
  };
  const pictures = {};
  function register(name, picture) { pictures[name] = picture; }
  function picture(name) { return pictures[name] || TEXT; }

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

  // The solver's verdict on position k of a game's analysis (arena/analysis/summary.py:
  // GameMarks.replay_json): who wins the round by force and in how many plies.
  function valueText(an, k, names) {
    const v = an && an.v ? an.v[k] : null;
    if (!v) return "";
    if (v[0] < 0) return "solver: unproven" + (v[1] ? " (no forced " + an.s + " win within " + v[1] + " plies)" : "");
    if (v[1] === 0) return "solver: " + names[v[0]] + " won the " + an.s;
    return "solver: " + names[v[0]] + " wins the " + an.s + " in " + v[1] + (v[1] === 1 ? " ply" : " plies");
  }

  // What the analysis says of the move at ply i: its marks as [class, label] pairs.
  function moveMarks(an, i) {
    if (!an) return [];
    const out = [];
    if ((an.d || []).includes(i)) out.push(["decisive", "decisive"]);
    if ((an.b || []).includes(i)) out.push(["blunder", "blunder"]);
    if ((an.m || []).includes(i)) out.push(["missed", "missed win"]);
    return out;
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
    const pic = picture(data.k);
    const view = pic.create(left);
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
      for (const [cls, label] of moveMarks(data.an, i)) {
        li.classList.add(cls);
        html("span", "mark " + cls, label, li);
      }
      const better = data.an && data.an.w ? data.an.w[String(i)] : null;
      if (better) html("span", "info", better + " wins", li);
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
      if (action) {
        const marks = moveMarks(data.an, ply - 1).map(m => m[1]);
        if (marks.length) head += "\n" + marks.join(", ");
      }
      if (data.an) head += "\n" + valueText(data.an, ply, data.r || data.n);
      if (frames.length) pic.draw(view, frame, before);
      status.textContent = pic.status ? head + "\n" + (frames.length ? pic.status(frame) : "") : head;
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

  globalThis.ArenaReplay = {decode, html, svg, register, picture, infoText, buildViewer, valueText, moveMarks};

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
      filter.querySelectorAll("input[type=checkbox]").forEach(c => { want[c.dataset.filter] = c.checked; });
      let n = 0;
      const all = groups();
      for (const g of all) {
        const d = g.dataset;
        const ok = (!want.bot || d.first === want.bot || d.second === want.bot)
          && (!want.result || d.result === want.result) && (!want.reason || d.reason === want.reason)
          && (!want.blunder || d.blunder === "1");
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
