"use strict";
// The toy race's picture: one row of cells per runner, the runner a disc.
(function () {
  const R = globalThis.ArenaReplay;
  const COLOURS = JSON.parse(document.getElementById("toy-colours").textContent);
  const NAMES = ["red", "blue"];
  R.register("toy", {
    create(parent) { return R.svg("svg", {"class": "toy-track", width: 400, height: 60}, parent); },
    draw(track, f) {
      while (track.firstChild) track.removeChild(track.firstChild);
      NAMES.forEach((name, lane) => {
        for (let cell = 0; cell <= f.g; cell++) {
          R.svg("rect", {x: 2 + 30 * cell, y: 2 + 28 * lane, width: 28, height: 26, fill: cell === f.g ? "#eee" : "#fff"}, track);
        }
        R.svg("circle", {"class": "runner", "data-name": name, "data-cell": f.l[lane],
          cx: 16 + 30 * f.l[lane], cy: 15 + 28 * lane, r: 10, fill: COLOURS[name]}, track);
      });
    },
    status(f) { return f.m + " to move, goal at cell " + f.g; },
    mover(f) { return NAMES.indexOf(f.m); },
  });
})();
