"use strict";
// A player's games across every tournament: paged by the server, each replay
// fetched from its tournament when it is opened.
(function () {
  const NAME = JSON.parse(document.getElementById("page-name").textContent);
  const body = document.querySelector("#games-paged tbody");
  const info = document.getElementById("page-info");
  const LIMIT = 50;
  let offset = 0, total = 0;

  function cell(row, text, cls) {
    const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; row.appendChild(td); return td;
  }

  async function load() {
    const reply = await fetch("/ratings/games/" + encodeURIComponent(NAME) + "?offset=" + offset + "&limit=" + LIMIT);
    const page = await reply.json();
    total = page.total;
    body.replaceChildren();
    for (const g of page.games) {
      const tr = document.createElement("tr"); tr.className = "game"; tr.dataset.key = g.key; tr.dataset.tournament = g.tournament;
      const t = cell(tr, ""); const a = document.createElement("a"); a.href = "/t/" + encodeURIComponent(g.tournament); a.textContent = g.tournament; t.appendChild(a);
      cell(tr, g.index, "num"); cell(tr, g.players[0]); cell(tr, g.players[1]); cell(tr, g.result);
      cell(tr, g.reason + (g.faulty ? " (" + g.faulty + ")" : "")); cell(tr, g.plies, "num"); cell(tr, g.seconds.toFixed(1) + "s", "num");
      const b = document.createElement("button"); b.type = "button"; b.className = "open"; b.textContent = "replay";
      cell(tr, "").appendChild(b);
      b.addEventListener("click", () => toggle(tr, g, b));
      body.appendChild(tr);
    }
    const shown = page.games.length;
    info.textContent = total ? (offset + 1) + "–" + (offset + shown) + " of " + total + " games" : "no games";
    info.dataset.total = total;
    document.getElementById("prev-page").disabled = offset === 0;
    document.getElementById("next-page").disabled = offset + shown >= total;
  }

  async function toggle(tr, g, b) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("replay-row")) { next.remove(); b.textContent = "replay"; return; }
    const row = document.createElement("tr"); row.className = "replay-row";
    const td = document.createElement("td"); td.colSpan = 9; row.appendChild(td);
    tr.after(row); b.textContent = "close";
    const reply = await fetch("/t/" + encodeURIComponent(g.tournament) + "/replay?key=" + encodeURIComponent(g.key));
    if (!reply.ok) { td.textContent = await reply.text(); td.className = "error"; return; }
    const data = await reply.json();
    const viewer = document.createElement("div"); viewer.className = "viewer";
    td.append(viewer);
    ArenaReplay.buildViewer(data, viewer);
  }

  document.getElementById("prev-page").addEventListener("click", () => { offset = Math.max(0, offset - LIMIT); load(); });
  document.getElementById("next-page").addEventListener("click", () => { offset += LIMIT; load(); });
  load();
})();
