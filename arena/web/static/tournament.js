"use strict";
// A stored tournament's games: paged and filtered by the server, each replay
// fetched when it is opened.
(function () {
  const NAME = JSON.parse(document.getElementById("page-name").textContent);
  const base = "/t/" + encodeURIComponent(NAME);
  const form = document.getElementById("filter");
  const body = document.querySelector("#games-paged tbody");
  const info = document.getElementById("page-info");
  const LIMIT = 50;
  let offset = 0, total = 0;

  function cell(row, text, cls) {
    const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; row.appendChild(td); return td;
  }

  // The analysis column: a game's blunders and missed wins (arena analyze), if analysed.
  function mistakes(g) {
    if (g.blunders === undefined || g.blunders === null) return "";
    const parts = [];
    if (g.blunders) parts.push(g.blunders + (g.blunders > 1 ? " blunders" : " blunder"));
    const missed = g.missed - g.blunders;
    if (missed > 0) parts.push(missed + (missed > 1 ? " missed wins" : " missed win"));
    return parts.join(", ");
  }

  async function load() {
    const q = new URLSearchParams(new FormData(form));
    q.set("offset", offset); q.set("limit", LIMIT);
    const reply = await fetch(base + "/games?" + q.toString());
    const page = await reply.json();
    total = page.total;
    body.replaceChildren();
    for (const g of page.games) {
      const tr = document.createElement("tr"); tr.className = "game"; tr.dataset.key = g.key;
      cell(tr, g.index, "num"); cell(tr, g.key); cell(tr, g.players[0]); cell(tr, g.players[1]); cell(tr, g.result);
      cell(tr, g.reason + (g.faulty ? " (" + g.faulty + ")" : "")); cell(tr, g.plies, "num"); cell(tr, g.seconds.toFixed(1) + "s", "num");
      cell(tr, mistakes(g), "analysis");
      const b = document.createElement("button"); b.type = "button"; b.className = "open"; b.textContent = "replay";
      cell(tr, "").appendChild(b);
      b.addEventListener("click", () => toggle(tr, g.key, b));
      body.appendChild(tr);
    }
    const shown = page.games.length;
    info.textContent = total ? (offset + 1) + "–" + (offset + shown) + " of " + total + " games" : "no game matches";
    info.dataset.total = total;
    document.getElementById("prev-page").disabled = offset === 0;
    document.getElementById("next-page").disabled = offset + shown >= total;
  }

  async function toggle(tr, key, b) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("replay-row")) { next.remove(); b.textContent = "replay"; return; }
    const row = document.createElement("tr"); row.className = "replay-row";
    const td = document.createElement("td"); td.colSpan = 10; row.appendChild(td);
    tr.after(row); b.textContent = "close";
    const reply = await fetch(base + "/replay?key=" + encodeURIComponent(key));
    if (!reply.ok) { td.textContent = await reply.text(); td.className = "error"; return; }
    const data = await reply.json();
    const meta = document.createElement("div"); meta.className = "meta";
    meta.textContent = "opening " + data.opening + (data.detail ? " · " + data.detail : "");
    const viewer = document.createElement("div"); viewer.className = "viewer";
    td.append(meta, viewer);
    ArenaReplay.buildViewer(data, viewer);
    viewer.focus();
  }

  form.addEventListener("change", () => { offset = 0; load(); });
  document.getElementById("prev-page").addEventListener("click", () => { offset = Math.max(0, offset - LIMIT); load(); });
  document.getElementById("next-page").addEventListener("click", () => { offset += LIMIT; load(); });
  load();
})();
