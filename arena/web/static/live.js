"use strict";
// The live page: one server-sent-event stream (a snapshot, then changes).
(function () {
  const ROOT = document.documentElement.dataset.root;  // the proxy's path prefix, or ""
  const boards = document.getElementById("boards");
  const cards = new Map();
  // For tests and bench/web.py: referee-to-page delays in seconds, games seen ending.
  window.arenaLive = {delays: [], moves: 0, finished: 0, snapshots: 0};
  const DELAYS_KEPT = 100000;

  function clock(ms) {
    if (ms === undefined || ms === null) return "–";
    const s = Math.max(ms, 0) / 1000, m = Math.floor(s / 60);
    return m + ":" + (s - 60 * m).toFixed(1).padStart(4, "0");
  }

  function text(tag, cls, parent, content) {
    const e = document.createElement(tag); if (cls) e.className = cls; if (content !== undefined) e.textContent = content;
    parent.appendChild(e); return e;
  }

  // Text is set only when it changes: every assignment re-lays out the card.
  function put(e, value) { if (e.textContent !== value) e.textContent = value; }

  function card(g) {
    let c = cards.get(g.key);
    if (c) return c;
    const root = document.createElement("div"); root.className = "card"; root.dataset.key = g.key;
    const title = text("div", "line", root, g.key + " · " + g.variant);
    const pic = window.ArenaReplay.picture(g.k);
    const rows = [0, 1].map(p => {
      const who = text("div", "who", root);
      const name = text("span", pic.side ? pic.side(p) : "", who, g.players[p]);
      const clk = text("span", "clock", who, "");
      return {who, name, clk};
    });
    const view = pic.create(root);
    const last = text("div", "line last", root, "");
    const info = text("div", "line info", root, "");
    c = {root, title, rows, pic, view, last, info, frame: null};
    cards.set(g.key, c);
    boards.appendChild(root);
    running();
    return c;
  }

  function showGame(g) {
    const c = card(g);
    c.root.dataset.ply = g.ply;
    // The event names the action that led here (the opening has none).
    c.pic.draw(c.view, g.frame, c.frame, g.last ? g.last.action : undefined);
    c.frame = g.frame;
    const mover = c.pic.mover ? c.pic.mover(g.frame) : null;
    c.rows.forEach((r, p) => {
      put(r.clk, g.clocks ? clock(g.clocks[p]) : (g.tc ? g.tc[p] : ""));
      r.clk.classList.toggle("mover", mover === p);  // a no-op when already so
      put(r.name, g.players[p]);
    });
    put(c.last, g.last
      ? "ply " + g.ply + ": " + g.players[g.last.player] + " " + g.last.action + " (" + g.last.ms + " ms" + (g.last.forced ? ", forced" : "") + (g.last.rtt == null ? "" : ", latency " + Math.round(g.last.rtt) + " ms") + ")"
      : "opening");
    put(c.info, window.ArenaReplay.infoText(g.info));
    if (g.ply > 0) {
      window.arenaLive.moves++;
      // Bounded: a page left open overnight must not grow by a number a move.
      if (window.arenaLive.delays.length < DELAYS_KEPT) window.arenaLive.delays.push(Date.now() / 1000 - g.t);
    }
  }

  function gone(key) {
    const c = cards.get(key);
    if (c) { c.root.remove(); cards.delete(key); window.arenaLive.finished++; running(); }
  }

  function progress(p) {
    if (p.name) document.getElementById("live-name").textContent = p.name;  // (none before the first game)
    const eta = p.eta_seconds === null ? "–" : (p.eta_seconds >= 60 ? Math.round(p.eta_seconds / 60) + " min" : p.eta_seconds + " s");
    const state = p.running ? (p.stopping ? "stopping" : "running") : (p.closed ? "finished" : "starting");
    const line = document.getElementById("progress-line");
    line.textContent = state === "starting"
      ? "starting: every entrant is checked before the first game"
      : p.done + " of " + p.total + " games · " +
        p.per_minute + " games/min · ETA " + eta + " · faults " + p.faults +
        (p.disqualified.length ? " · disqualified " + p.disqualified.join(", ") : "") + " · " + state;
    line.dataset.done = p.done; line.dataset.total = p.total; line.dataset.state = state;
    document.getElementById("progress-bar").style.width = (p.total ? 100 * p.done / p.total : 0) + "%";
    remote(p.remote || [], !p.closed);
    running();
  }

  const PRESENCE = {
    connected: "connected", dropped: "connection lost, may come back",
    restarting: "starting a fresh bot", absent: "not connected",
  };

  // Who of the remote entrants is here: an organiser waiting for them, or one
  // whose author lost the network, sees it without reading the terminal.
  function remote(entrants, open) {
    const line = document.getElementById("remote-line");
    line.hidden = !entrants.length || !open;
    line.textContent = "remote: " + entrants.map(e => e.name + " " + PRESENCE[e.state] +
      (e.state === "connected" && e.rtt_ms != null ? " (" + e.rtt_ms.toFixed(1) + " ms)" : "")).join(" · ");
    line.dataset.states = entrants.map(e => e.name + "=" + e.state).join(" ");
  }

  function running() {
    document.getElementById("running-count").textContent = "(" + cards.size + ")";
  }

  function rows(tbody, items, render) {
    tbody.replaceChildren();
    if (!items.length) { const tr = document.createElement("tr"); text("td", "meta", tr, "none yet"); tbody.appendChild(tr); }
    for (const item of items) {
      const tr = document.createElement("tr");
      for (const [value, cls] of render(item)) text("td", cls || "", tr, value);
      tbody.appendChild(tr);
    }
  }

  function results(r) {
    const table = document.getElementById("live-standings");
    table.tHead.replaceChildren();
    const head = document.createElement("tr");
    ["#", "player", "Elo", "95%", "games", "W-L-D", "score", "LOS next", "faults"].forEach((h, i) => text("th", i === 1 ? "pinned" : "", head, h));
    table.tHead.appendChild(head);
    rows(table.tBodies[0], r.standings, s => s.cells.map((c, i) => [c, i === 1 ? "name pinned" : "num"]));
    document.getElementById("standings-games").textContent = "(" + r.games + " games; first move " + r.first_move + " Elo)";
    const line = g => [[g.index, "num"], [g.players[0], "name"], [g.players[1], "name"], [g.result, "result"], [g.reason + (g.faulty ? " (" + g.faulty + ")" : ""), "reason"], [g.plies + " plies", "num"]];
    rows(document.querySelector("#recent tbody"), r.recent, line);
    rows(document.querySelector("#faults tbody"), r.faults, g => line(g).map(([v, c], i) => [v, i === 4 ? "reason fault" : c]));
    document.getElementById("recent").dataset.games = r.games;
    showRounds(r.rounds);
  }

  // A Swiss or knockout: the round being played, its pairings, the bracket (an SVG
  // the server drew with every name escaped, parsed as an image, never as HTML).
  function showRounds(rounds) {
    const box = document.getElementById("live-rounds");
    box.hidden = !rounds;
    if (!rounds) return;
    document.getElementById("round-title").textContent = rounds.title;
    const list = document.getElementById("round-boards");
    list.replaceChildren();
    for (const line of rounds.boards) text("li", "", list, line);
    const holder = document.getElementById("live-bracket");
    holder.replaceChildren();
    if (rounds.bracket) {
      const svg = new DOMParser().parseFromString(rounds.bracket, "image/svg+xml").documentElement;
      if (svg.tagName === "svg") holder.appendChild(document.importNode(svg, true));
    }
  }

  // Moves are drawn once per animation frame, each game at its latest position:
  // a page whose browser draws slower than the games move skips to the present
  // instead of queueing every move (which made a busy page fall seconds behind).
  const due = new Map();
  let frame = 0;
  function draw() {
    frame = 0;
    for (const [key, g] of due) g === null ? gone(key) : showGame(g);
    due.clear();
  }
  function later(key, g) {
    due.delete(key); due.set(key, g);  // re-inserted: drawn in arrival order
    if (!frame) frame = requestAnimationFrame(draw);
  }

  // The stream is open only while the page is visible. A browser gives a server
  // six HTTP/1.1 connections and a stream holds one for as long as it is open:
  // six tabs of this page left a seventh tab, or any other page of the server,
  // waiting forever. A hidden page draws nothing anyway; shown again, it opens a
  // new stream, whose snapshot brings it to the present.
  let source = null, ended = false;
  function connect() {
    source = new EventSource(ROOT + "/live/events");
    source.addEventListener("snapshot", ev => {
      const s = JSON.parse(ev.data);
      window.arenaLive.snapshots++;
      due.clear();
      for (const c of cards.values()) c.root.remove();
      cards.clear();
      progress(s.progress);
      for (const g of s.games) showGame(g);
      results(s.results);
    });
    source.addEventListener("progress", ev => progress(JSON.parse(ev.data)));
    source.addEventListener("game", ev => { const g = JSON.parse(ev.data); later(g.key, g); });
    source.addEventListener("gone", ev => later(JSON.parse(ev.data).key, null));
    source.addEventListener("results", ev => results(JSON.parse(ev.data)));
    source.addEventListener("end", () => { ended = true; disconnect(); });  // the run is over: no reconnecting
    source.onerror = () => {
      const line = document.getElementById("progress-line");
      if (line.dataset.state !== "finished") line.textContent = "connection lost; reconnecting…";
    };
  }
  function disconnect() {
    if (source) { source.close(); source = null; }
  }
  function follow() {
    if (document.hidden) { disconnect(); due.clear(); }  // the snapshot will replace them
    else if (!source && !ended) connect();
  }
  document.addEventListener("visibilitychange", follow);
  follow();
})();
