// Broadcast screen: every board of the round, clocks counting down, results. No irregularity
// data ever reaches this page (the server's public view is a whitelist).
"use strict";

const boards = new Map();  // board id -> {view, receivedAt, card}
const shown = boardFilter();
const container = document.getElementById("boards");
const linkState = document.getElementById("link");

function sortKey(view) {
  return [view.board_no === null ? 9999 : view.board_no, view.board];
}

function makeCard(view) {
  const card = el("section", "card");
  card.dataset.board = view.board;
  const black = el("div", "player black");
  black.append(el("span", "name"), el("span", "clock"));
  const svg = document.createElementNS(SVGNS, "svg");
  svg.classList.add("board");
  svg.setAttribute("role", "img");
  const white = el("div", "player white");
  white.append(el("span", "name"), el("span", "clock"));
  const foot = el("div", "card-foot");
  foot.append(el("span", "board-no"), el("span", "moves"), el("span", "result"));
  card.append(black, svg, white, foot);
  return card;
}

function render(entry) {
  const v = entry.view;
  const card = entry.card;
  card.querySelector(".board-no").textContent = (v.board_no !== null ? "Board " + v.board_no : v.board) +
    (v.online === false ? " · no signal" : v.link === "degraded" ? " · connection trouble" : "");
  const result = card.querySelector(".result");
  result.textContent = v.result === "*" ? "" : v.result.replace("1/2", "½").replace("1/2", "½");
  card.classList.toggle("finished", v.result !== "*");
  card.classList.toggle("offline", v.online === false);
  setName(card.querySelector(".player.white .name"), v.white);
  setName(card.querySelector(".player.black .name"), v.black);
  const svg = card.querySelector("svg.board");
  svg.setAttribute("aria-label", `${v.white} – ${v.black}, ${v.fen}`);
  renderBoard(svg, v.fen, v.last_move);
  const parts = [];
  const tail = 4;
  const start = Math.max(0, v.san_tail.length - tail);
  v.san_tail.slice(start).forEach((san, j) => {
    const i = j + start;
    const ply = v.first_ply + i;
    if (ply % 2 === 1) parts.push(((ply + 1) / 2) + ".");
    else if (j === 0) parts.push(Math.floor(ply / 2) + "…");
    parts.push(san);
  });
  card.querySelector(".moves").textContent = parts.join(" ");
  card.dataset.ply = v.ply;
  tickCard(entry);
}

// "Carlsen, Magnus" -> <b>Carlsen</b>, M. : surnames are what the hall reads from 3 m.
function setName(node, full) {
  node.title = full;
  const [surname, given] = full.split(/,\s*/, 2);
  node.replaceChildren(document.createTextNode(surname));
  if (given) node.append(el("span", "given", " " + given.split(/\s+/).map((p) => p[0] + ".").join("")));
}

function tickCard(entry) {
  const v = entry.view;
  // No signal or game over: show the last reading, do not count down.
  const live = v.clock && v.online !== false && v.result === "*" ? v.clock : (v.clock && {...v.clock, running: null});
  for (const side of ["white", "black"]) {
    const node = entry.card.querySelector(`.player.${side} .clock`);
    const seconds = clockNow(live, entry.receivedAt, side);
    node.textContent = formatClock(seconds);
    const running = live && live.running === side;
    node.classList.toggle("running", !!running);
    node.classList.toggle("low", seconds !== null && seconds < 60);
  }
}

function place() {
  const ordered = [...boards.values()].sort((a, b) => {
    const ka = sortKey(a.view), kb = sortKey(b.view);
    return ka[0] - kb[0] || (ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0);
  });
  ordered.forEach((entry, i) => {
    if (container.children[i] !== entry.card) container.insertBefore(entry.card, container.children[i] || null);
  });
  layout();
  const first = ordered[0];
  if (first) {
    document.getElementById("event").textContent = first.view.event || document.title;
    const round = first.view.round ? String(first.view.round).split(".")[0] : "";
    document.getElementById("round").textContent = round ? "Round " + round : "";
  }
}

// Pick the column count that gives the largest board with every card on screen (no scrolling).
function layout() {
  const n = Math.max(1, boards.size);
  const width = container.clientWidth - 24, height = window.innerHeight - container.offsetTop - 24;
  let best = {cols: 1, size: 0};
  for (let cols = 1; cols <= n; cols++) {
    const rows = Math.ceil(n / cols);
    const byWidth = ((width - (cols - 1) * 12) / cols - 16) / 1.18;
    const byHeight = ((height - (rows - 1) * 12) / rows - 26) / 1.34;  // 2 player rows (0.13) + footer (0.08) + padding and gaps
    const size = Math.floor(Math.min(byWidth, byHeight));
    if (size > best.size) best = {cols, size};
  }
  container.style.setProperty("--cols", best.cols);
  container.style.setProperty("--bsize", Math.max(120, best.size) + "px");
  container.dataset.layoutFor = window.innerWidth + "x" + window.innerHeight;  // which viewport this layout fits
}
window.addEventListener("resize", layout);

function upsert(view) {
  let entry = boards.get(view.board);
  if (!shown(view)) {  // not (or no longer) on this screen
    if (entry) { entry.card.remove(); boards.delete(view.board); place(); }
    return;
  }
  const isNew = !entry;
  if (isNew) {
    entry = {view, receivedAt: performance.now(), card: makeCard(view)};
    boards.set(view.board, entry);
  }
  entry.view = view;
  entry.receivedAt = performance.now();
  render(entry);
  if (isNew) place();
}

function onMessage(msg) {
  if (msg.t === "snapshot") {
    boards.clear();
    container.replaceChildren();
    msg.boards.forEach(upsert);
    place();
    document.body.dataset.snapshots = Number(document.body.dataset.snapshots || 0) + 1;
  } else if (msg.t === "board") {
    upsert(msg.view);
  } else if (msg.t === "clocks") {
    const now = performance.now();
    for (const [board, clock] of Object.entries(msg.clocks)) {
      const entry = boards.get(board);
      if (entry) {
        entry.view.clock = clock;
        entry.receivedAt = now;
        tickCard(entry);
      }
    }
  }
}

connectSocket("/ws", onMessage, (state) => {
  linkState.dataset.state = state;
  linkState.textContent = state === "open" ? "live" : "reconnecting…";
});

setInterval(() => boards.forEach(tickCard), 100);
