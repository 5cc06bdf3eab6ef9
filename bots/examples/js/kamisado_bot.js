#!/usr/bin/env node
// kamisado_bot.js — an example Kamisado Arena bot in plain Node.js (no packages).
//
// It plays a winning move when one of the legal moves lands on the opponent's
// home row (rank 8 for player 0, Black; rank 1 for player 1, Gold), and
// otherwise a random legal action (regroup choices "left"/"right" included).
// It does not implement the rules: the arena's `legal` list is the truth.
//
// Run: node kamisado_bot.js [--seed N]
"use strict";

const readline = require("node:readline");

// A small seedable PRNG (mulberry32) so that games can be reproduced.
function makeRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seedIndex = process.argv.indexOf("--seed");
const seed = seedIndex > 0 ? Number(process.argv[seedIndex + 1]) : Date.now();
const random = makeRandom(Number.isFinite(seed) ? seed : 1);

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");

// A move "c1-c5" wins when its destination is on the opponent's home row.
function isWinning(action, player) {
  const m = /^[a-h][1-8]-([a-h])([1-8])$/.exec(action);
  if (!m) return false;
  return m[2] === (player === 0 ? "8" : "1");
}

function choose(msg) {
  const legal = msg.legal;
  const wins = legal.filter((a) => isWinning(a, msg.player));
  const pool = wins.length > 0 ? wins : legal;
  return pool[Math.floor(random() * pool.length)];
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    console.error(`ignoring a line that is not JSON: ${err.message}`);
    return;
  }
  switch (msg.type) {
    case "hello":
      send({
        type: "identity",
        id: msg.id,
        protocol: 1,
        name: "example-js",
        author: "Kamisado Arena",
        version: "1",
        games: ["kamisado"],
      });
      break;
    case "newgame":
      send({ type: "ready", id: msg.id });
      break;
    case "ping":
      send({ type: "pong", id: msg.id });
      break;
    case "go":
      send({ type: "action", id: msg.id, action: choose(msg) });
      break;
    case "quit":
      process.exit(0);
      break;
    default:
      break; // gameover, or a message type this bot does not know
  }
});
rl.on("close", () => process.exit(0));
