// A tiny DOM, just enough to run the HTML report's replay script in node
// (tests/test_report.py fills in the payload and the script). Not a browser:
// it checks the script's logic (decoding frames, drawing towers, the buttons).
"use strict";
const PAYLOAD = /*PAYLOAD*/null;

class Node {
  constructor(tag) {
    this.tagName = tag; this.children = []; this.attrs = {}; this.listeners = {};
    this.dataset = {}; this.textContent = ""; this.hidden = false; this.parent = null;
    const self = this;
    this.classList = {
      add(c) { const s = new Set(self.className.split(" ").filter(Boolean)); s.add(c); self.className = [...s].join(" "); },
      remove(c) { self.className = self.className.split(" ").filter(x => x && x !== c).join(" "); },
    };
  }
  get className() { return this.attrs["class"] || ""; }
  set className(v) { this.attrs["class"] = v; }
  get firstChild() { return this.children[0] || null; }
  get firstElementChild() { return this.children[0] || null; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k]; }
  appendChild(c) { c.parent = this; this.children.push(c); return c; }
  append(...cs) { cs.forEach(c => this.appendChild(c)); }
  removeChild(c) { this.children = this.children.filter(x => x !== c); c.parent = null; return c; }
  insertBefore(c, ref) {
    if (c.parent) c.parent.removeChild(c);
    const i = ref ? this.children.indexOf(ref) : -1;
    c.parent = this;
    if (i < 0) this.children.push(c); else this.children.splice(i, 0, c);
    return c;
  }
  remove() { if (this.parent) this.parent.removeChild(this); }
  get parentNode() { return this.parent; }
  addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
  fire(type, ev) { (this.listeners[type] || []).forEach(fn => fn(ev || {target: this, preventDefault() {}})); }
  focus() {}
  cloneNode() { const svg = new Node("svg"); const g = new Node("g"); g.className = "towers"; svg.appendChild(g); return svg; }
  matches(sel) {
    const [tag, cls] = sel.split(".");
    return (!tag || this.tagName === tag) && (!cls || this.className.split(" ").includes(cls));
  }
  descendants() { return this.children.flatMap(c => [c, ...c.descendants()]); }
  querySelectorAll(sel) { return this.descendants().filter(n => n.matches(sel)); }
  querySelector(sel) { return this.querySelectorAll(sel)[0] || null; }
  closest(sel) { for (let n = this; n; n = n.parent) if (n.matches(sel)) return n; return null; }
}

const ids = {};
for (const [id, text] of Object.entries(PAYLOAD.scripts)) { ids[id] = new Node("script"); ids[id].textContent = text; }
ids["kamisado-board"] = {content: {firstElementChild: new Node("svg")}};
const games = new Node("table");
ids["games"] = games;
const row = new Node("tr"); row.hidden = true;
const viewer = new Node("div"); viewer.className = "viewer"; row.appendChild(viewer);
ids["replay-row-" + PAYLOAD.index] = row;
const opener = new Node("button"); opener.className = "open"; opener.dataset.index = PAYLOAD.index;
games.appendChild(opener);

global.document = {
  getElementById: id => ids[id] || null,
  createElement: tag => new Node(tag),
  createElementNS: (ns, tag) => new Node(tag),
};

/*SCRIPT*/

games.fire("click", {target: opener});
if (row.hidden) throw new Error("the replay row did not open");
const buttons = viewer.querySelectorAll("button");
const last = buttons.find(b => b.title === "last");
const next = buttons.find(b => b.title === "next");
next.fire("click");
last.fire("click");
next.fire("click");  // past the end stays at the end
const towers = viewer.querySelectorAll("g.tower").map(g => [
  g.attrs["data-square"], g.attrs["data-owner"], g.attrs["data-colour"], Number(g.attrs["data-rank"]),
]);
const status = viewer.querySelector("div.status").textContent;
process.stdout.write(JSON.stringify({towers, status}));
