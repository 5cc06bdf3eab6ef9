"use strict";
// The Sekigahara battle's picture for replays and the live page (frames from
// show.py; arena/report/templates/replay.js says what a picture provides): per
// army its impact bar, field, reserve and hand; the cards shown so far; the
// outcome at the end.
(function () {
  const R = globalThis.ArenaReplay;
  const html = R.html;

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

  R.register("sekigahara", {
    create(parent) { return html("div", "battle", null, parent); },
    draw(box, frame, prev) { drawBattle(box, frame, prev); },
    mover(f) { return f.m ? (f.m === "attacker" ? 0 : 1) : null; },
  });
})();
