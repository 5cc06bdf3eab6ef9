"use strict";
// The paged games table of the tournament and player pages: rows fetched a page at
// a time, a pager, and each game's replay row, fetched when it is opened.
(function () {
  function cell(row, text, cls) {
    const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; row.appendChild(td); return td;
  }

  // o.page(offset, limit): the URL of a page of games; o.lead(tr, g): the page's own
  // first cells; o.replay(g): the URL of a game's replay; o.empty: the pager's text
  // for no games; o.meta: show the opening above a replay and focus it; o.tail(tr, g)
  // (optional): the page's own cells after the time.
  function pagedGames(o) {
    const body = document.querySelector("#games-paged tbody");
    const info = document.getElementById("page-info");
    const LIMIT = 50;
    let offset = 0, total = 0;

    async function load() {
      const reply = await fetch(o.page(offset, LIMIT));
      const page = await reply.json();
      total = page.total;
      body.replaceChildren();
      for (const g of page.games) {
        const tr = document.createElement("tr"); tr.className = "game"; tr.dataset.key = g.key;
        o.lead(tr, g);
        cell(tr, g.players[0], "name"); cell(tr, g.players[1], "name"); cell(tr, g.result, "result");
        cell(tr, g.reason + (g.faulty ? " (" + g.faulty + ")" : ""), "reason"); cell(tr, g.plies, "num"); cell(tr, g.seconds.toFixed(1) + "s", "num");
        if (o.tail) o.tail(tr, g);
        const b = document.createElement("button"); b.type = "button"; b.className = "open"; b.textContent = "replay";
        cell(tr, "").appendChild(b);
        b.addEventListener("click", () => toggle(tr, g, b));
        body.appendChild(tr);
      }
      const shown = page.games.length;
      info.textContent = total ? (offset + 1) + "–" + (offset + shown) + " of " + total + " games" : o.empty;
      info.dataset.total = total;
      document.getElementById("prev-page").disabled = offset === 0;
      document.getElementById("next-page").disabled = offset + shown >= total;
    }

    async function toggle(tr, g, b) {
      const next = tr.nextElementSibling;
      if (next && next.classList.contains("replay-row")) { next.remove(); b.textContent = "replay"; return; }
      const row = document.createElement("tr"); row.className = "replay-row";
      const td = document.createElement("td"); td.colSpan = tr.children.length; row.appendChild(td);
      tr.after(row); b.textContent = "close";
      const reply = await fetch(o.replay(g));
      if (!reply.ok) { td.textContent = await reply.text(); td.className = "error"; return; }
      const data = await reply.json();
      const viewer = document.createElement("div"); viewer.className = "viewer";
      if (o.meta) {
        const meta = document.createElement("div"); meta.className = "meta";
        meta.textContent = "opening " + data.opening + (data.detail ? " · " + data.detail : "");
        td.append(meta);
      }
      const said = (data.output || []).map((text, i) => [g.players[i], text]).filter(([, text]) => text);
      if (said.length) {  // what the bots wrote: where a fault's cause is
        const box = document.createElement("details"); box.className = "stderr"; box.open = !!g.faulty;
        const summary = document.createElement("summary"); summary.textContent = "output"; box.append(summary);
        for (const [name, text] of said) {
          const who = document.createElement("div"); who.textContent = name + ":";
          const pre = document.createElement("pre"); pre.textContent = text;
          box.append(who, pre);
        }
        const wrap = document.createElement("div"); wrap.append(box);  // sticky, as the viewer
        td.append(wrap);
      }
      td.append(viewer);
      ArenaReplay.buildViewer(data, viewer);
      if (o.meta) viewer.focus();
    }

    document.getElementById("prev-page").addEventListener("click", () => { offset = Math.max(0, offset - LIMIT); load(); });
    document.getElementById("next-page").addEventListener("click", () => { offset += LIMIT; load(); });
    load();
    return {reload() { offset = 0; load(); }};
  }

  globalThis.ArenaGames = {cell, pagedGames};
})();
