"use strict";
// A player's games across every tournament: paged by the server (games.js), each
// replay fetched from its tournament when it is opened.
(function () {
  const NAME = JSON.parse(document.getElementById("page-name").textContent);
  const ROOT = document.documentElement.dataset.root;  // the proxy's path prefix, or ""
  const cell = ArenaGames.cell;
  ArenaGames.pagedGames({
    page: (offset, limit) => ROOT + "/ratings/games/" + encodeURIComponent(NAME) + "?offset=" + offset + "&limit=" + limit,
    lead(tr, g) {
      tr.dataset.tournament = g.tournament;
      const t = cell(tr, "", "name"); const a = document.createElement("a");
      a.href = ROOT + "/t/" + encodeURIComponent(g.tournament); a.textContent = g.tournament; t.appendChild(a);
      cell(tr, g.index, "num");
    },
    replay: g => ROOT + "/t/" + encodeURIComponent(g.tournament) + "/replay?key=" + encodeURIComponent(g.key),
    empty: "no games",
    meta: false,
  });
})();
