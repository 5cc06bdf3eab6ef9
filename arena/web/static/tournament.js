"use strict";
// A stored tournament's games: paged and filtered by the server (games.js), each
// replay fetched when it is opened.
(function () {
  const NAME = JSON.parse(document.getElementById("page-name").textContent);
  const ROOT = document.documentElement.dataset.root;  // the proxy's path prefix, or ""
  const base = ROOT + "/t/" + encodeURIComponent(NAME);
  const form = document.getElementById("filter");

  // The analysis column: a game's blunders and missed wins (arena analyze), if analysed.
  function mistakes(g) {
    if (g.blunders === undefined || g.blunders === null) return "";
    const parts = [];
    if (g.blunders) parts.push(g.blunders + (g.blunders > 1 ? " blunders" : " blunder"));
    const missed = g.missed - g.blunders;
    if (missed > 0) parts.push(missed + (missed > 1 ? " missed wins" : " missed win"));
    return parts.join(", ");
  }

  const cell = ArenaGames.cell;
  const games = ArenaGames.pagedGames({
    page(offset, limit) {
      const q = new URLSearchParams(new FormData(form));
      q.set("offset", offset); q.set("limit", limit);
      return base + "/games?" + q.toString();
    },
    lead(tr, g) { cell(tr, g.index, "num"); cell(tr, g.key, "name key"); },
    replay: g => base + "/replay?key=" + encodeURIComponent(g.key),
    empty: "no game matches",
    meta: true,
    tail(tr, g) { cell(tr, mistakes(g), "analysis"); },
  });
  form.addEventListener("change", () => games.reload());
})();
