"use strict";
// A stored tournament's games: paged and filtered by the server (games.js), each
// replay fetched when it is opened.
(function () {
  const NAME = JSON.parse(document.getElementById("page-name").textContent);
  const base = "/t/" + encodeURIComponent(NAME);
  const form = document.getElementById("filter");
  const cell = ArenaGames.cell;
  const games = ArenaGames.pagedGames({
    page(offset, limit) {
      const q = new URLSearchParams(new FormData(form));
      q.set("offset", offset); q.set("limit", limit);
      return base + "/games?" + q.toString();
    },
    lead(tr, g) { cell(tr, g.index, "num"); cell(tr, g.key); },
    replay: g => base + "/replay?key=" + encodeURIComponent(g.key),
    empty: "no game matches",
    meta: true,
  });
  form.addEventListener("change", () => games.reload());
})();
