// The hall view: one tile per board (number, players, move, clocks, link), coloured by the most severe
// open incident; a click opens the board's incidents and log. ?boards=1-20 (and ?round=3) for a section.
"use strict";

const hallGrid = document.getElementById("hall");
const hallFilter = boardFilter();
const entries = new Map();  // board id -> {view, node, receivedAt}
let openBoard = null;

function surname(name) {
  const text = String(name || "?");
  return text.includes(",") ? text.split(",")[0].trim() : text;
}

function sortKey(view) {
  return [view.board_no === null || view.board_no === undefined ? 1e9 : view.board_no, view.board];
}

function compare(a, b) {
  const ka = sortKey(a), kb = sortKey(b);
  return ka[0] - kb[0] || (ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0);
}

function makeTile(board) {
  const node = el("button", "tile");
  node.type = "button";
  node.dataset.board = board;
  const top = el("div", "top");
  top.append(el("span", "no"), el("span", "mv"), el("span", "res"), el("span", "dot"));
  const white = el("div", "pl w");
  white.append(el("span", "nm"), el("span", "ck"));
  const black = el("div", "pl b");
  black.append(el("span", "nm"), el("span", "ck"));
  node.append(top, white, black);
  node.addEventListener("click", () => openDetail(board));
  return node;
}

function renderTile(entry) {
  const v = entry.view, node = entry.node;
  node.querySelector(".no").textContent = v.board_no !== null && v.board_no !== undefined ? v.board_no : v.board;
  const moveNo = Math.floor((v.ply || 0) / 2) + 1;
  const mv = node.querySelector(".mv");
  mv.replaceChildren(el("span", "word", "move "), document.createTextNode(v.ply ? String(moveNo) : "–"));
  mv.dataset.move = String(moveNo);
  node.querySelector(".res").textContent = v.result && v.result !== "*" ? v.result.replace("1/2-1/2", "½-½") : "";
  node.querySelector(".pl.w .nm").textContent = surname(v.white);
  node.querySelector(".pl.b .nm").textContent = surname(v.black);
  const rank = v.rank || 0;
  node.className = `tile sev-${rank} link-${v.link || "unknown"}` + (v.result && v.result !== "*" ? " done" : "");
  node.dataset.rank = String(rank);
  node.dataset.link = v.link || "unknown";
  const open = (v.flags || []).filter((f) => f.status !== "resolved").length;
  node.title = `Board ${v.board_no ?? v.board} (${v.board}): ${v.white} – ${v.black}; ` +
    `link ${v.link}${(v.link_why || []).length ? " (" + v.link_why.join("; ") + ")" : ""}; ` +
    `${open} open incident(s)`;
  renderClocks(entry);
}

function renderClocks(entry) {
  const v = entry.view, clock = v.clock;
  for (const side of ["white", "black"]) {
    const row = entry.node.querySelector(side === "white" ? ".pl.w" : ".pl.b");
    row.classList.toggle("run", !!clock && clock.running === side && (!v.result || v.result === "*"));
    row.querySelector(".ck").textContent = clock ? formatClock(clockNow(clock, entry.receivedAt, side)) : "";
  }
}

function place(entry) {
  // keep the tiles in board order: insert before the first tile that sorts after this one
  const after = [...entries.values()].filter((e) => e !== entry && e.node.isConnected && compare(e.view, entry.view) > 0)
    .sort((a, b) => compare(a.view, b.view))[0];
  hallGrid.insertBefore(entry.node, after ? after.node : null);
}

function update(view) {
  let entry = entries.get(view.board);
  const isNew = !entry;
  if (!entry) {
    entry = {view, node: makeTile(view.board), receivedAt: performance.now()};
    entries.set(view.board, entry);
  }
  const moved = !isNew && compare(entry.view, view) !== 0;
  entry.view = view;
  entry.receivedAt = performance.now();
  const shown = hallFilter(view);
  if (!shown) {
    if (entry.node.isConnected) entry.node.remove();
  } else {
    renderTile(entry);
    if (isNew || moved || !entry.node.isConnected) place(entry);
  }
  if (openBoard === view.board) renderDetail();
}

function renderCounts() {
  const shown = [...entries.values()].filter((e) => hallFilter(e.view)).map((e) => e.view);
  const finished = shown.filter((v) => v.result && v.result !== "*").length;
  const alerts = shown.filter((v) => (v.rank || 0) >= 2).length;
  const down = shown.filter((v) => v.link === "offline" || v.link === "degraded").length;
  document.getElementById("counts").textContent =
    `${shown.length} boards · ${finished} finished · ${alerts} alert${alerts === 1 ? "" : "s"} · ${down} link down`;
  if (!document.getElementById("results").hidden) renderResults(shown);
}

function renderResults(shown) {
  const body = document.querySelector("#results tbody");
  body.replaceChildren(...shown.sort(compare).map((v) => {
    const row = el("tr");
    row.dataset.board = v.board;
    row.append(el("td", "", v.board_no ?? v.board), el("td", "", v.white), el("td", "", v.black),
      el("td", "r", v.result && v.result !== "*" ? v.result : "playing"));
    return row;
  }));
}

function openDetail(board) {
  openBoard = board;
  document.getElementById("detail").hidden = false;
  renderDetail();
}

function renderDetail() {
  const entry = entries.get(openBoard);
  if (!entry) return;
  const v = entry.view;
  document.getElementById("detail-title").textContent = `Board ${v.board_no ?? "?"} (${v.board})`;
  document.getElementById("detail-players").textContent =
    `${v.white} – ${v.black}` + (v.round ? ` · round ${v.round}` : "") + (v.ply ? ` · ply ${v.ply}` : "") +
    (v.result && v.result !== "*" ? ` · ${v.result}` : "");
  document.getElementById("detail-link").textContent =
    `link: ${v.link}` + ((v.link_why || []).length ? ` (${v.link_why.join("; ")})` : "");
  const flags = [...(v.flags || [])].sort((a, b) => (a.status === "resolved") - (b.status === "resolved"));
  document.getElementById("detail-flags").replaceChildren(...(flags.length ? flags.map((f) => {
    const item = el("li", `sev-${f.severity || "none"} ${f.status === "resolved" ? "resolved" : ""}`);
    item.dataset.flag = f.id;
    const side = f.side ? ` · ${f.side}` : "";
    const ply = f.ply !== undefined && f.ply !== null ? ` · ply ${f.ply}` : "";
    item.textContent = `${f.title || f.code || f.id} — ${f.severity || "?"} · ${f.status}${side}${ply}`;
    return item;
  }) : [el("li", "", "no incident")]));
  const events = [...(v.events || [])].reverse();
  document.getElementById("detail-events").replaceChildren(...(events.length ? events.map((e) => {
    const time = String(e.ts || "").slice(11, 19);
    return el("li", "", `${time} ${e.type || "?"}` + (e.result ? ` ${e.result}` : ""));
  }) : [el("li", "", "nothing yet")]));
  document.getElementById("detail-tablet").href = `/arbiter#board-${encodeURIComponent(v.board)}`;
}

document.getElementById("detail-close").addEventListener("click", () => {
  openBoard = null;
  document.getElementById("detail").hidden = true;
});

document.getElementById("show-results").addEventListener("click", (event) => {
  const panel = document.getElementById("results");
  panel.hidden = !panel.hidden;
  event.currentTarget.setAttribute("aria-pressed", String(!panel.hidden));
  renderCounts();
});

function onHallMessage(obj) {
  if (obj.t === "snapshot") {
    for (const view of obj.boards || []) update(view);
  } else if (obj.t === "board" && obj.view) {
    update(obj.view);
  } else if (obj.t === "clocks") {
    const now = performance.now();
    for (const [board, clock] of Object.entries(obj.clocks || {})) {
      const entry = entries.get(board);
      if (!entry) continue;
      entry.view.clock = clock;
      entry.receivedAt = now;
      if (entry.node.isConnected) renderClocks(entry);
    }
    return;
  } else {
    return;
  }
  renderCounts();
  hallGrid.dataset.boards = String(hallGrid.children.length);
}

function onHallState(state) {
  const link = document.getElementById("link");
  link.dataset.state = state;
  link.textContent = state === "open" ? "live" : "reconnecting…";
}

setInterval(() => {
  for (const entry of entries.values()) {
    if (entry.node.isConnected && entry.view.clock && entry.view.clock.running) renderClocks(entry);
  }
}, 250);

connectSocket("/arbiter/ws", onHallMessage, onHallState, true);
