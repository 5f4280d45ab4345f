// The hall view: one tile per board (number, players, move, clocks, link), coloured by the most severe
// open incident; a click opens the board's incidents and log. ?boards=1-20 (and ?round=3) for a section.
"use strict";

const hallGrid = document.getElementById("hall");
const hallFilter = boardFilter();
const entries = new Map();  // board id -> {view, node, receivedAt}
let openBoard = null;
let detailLists = null;     // what the open detail's incident and log lists show (rebuilt when it changes)

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

// The link the tile signals: the service's debounced link incident (link_alert), not the raw link, so a
// loose connector does not make the dot and the hall's count flicker. "unstable" for a flapping link (also
// while it is down between drops), "back" while a link that was in trouble is watched; an outage shows its
// raw state (degraded/offline) once it has lasted the grace period. An older service sends no link_alert.
function tileLink(v) {
  if (!("link_alert" in v)) return v.link || "unknown";
  const alert = v.link_alert;
  if (!alert) return v.link === "unknown" || !v.link ? "unknown" : "online";
  if (alert.kind === "unstable" || alert.kind === "back") return alert.kind;
  return v.link === "offline" ? "offline" : "degraded";
}

function renderTile(entry) {
  const v = entry.view, node = entry.node;
  setText(node.querySelector(".no"), String(v.board_no !== null && v.board_no !== undefined ? v.board_no : v.board));
  const moveNo = Math.floor((v.ply || 0) / 2) + 1;
  const mv = node.querySelector(".mv");
  const moveText = v.ply ? String(moveNo) : "–";
  if (mv.dataset.shown !== moveText) {
    mv.replaceChildren(el("span", "word", "move "), document.createTextNode(moveText));
    mv.dataset.shown = moveText;
  }
  setData(mv, "move", String(moveNo));
  setText(node.querySelector(".res"), v.result && v.result !== "*" ? v.result.replace("1/2-1/2", "½-½") : "");
  setText(node.querySelector(".pl.w .nm"), surname(v.white));
  setText(node.querySelector(".pl.b .nm"), surname(v.black));
  const rank = v.rank || 0;
  const link = tileLink(v);
  setClass(node, `tile sev-${rank} link-${link}` + (v.result && v.result !== "*" ? " done" : ""));
  setData(node, "rank", String(rank));
  setData(node, "link", link);
  // incidents that need the arbiter (notes and the related findings folded under an incident are no incident)
  const open = (v.incidents || []).filter((i) => i.needs_arbiter).length;
  const linkText = v.link_alert ? v.link_alert.text : `link ${link}`;
  const title = `Board ${v.board_no ?? v.board} (${v.board}): ${v.white} – ${v.black}; ${linkText}; ` +
    `${open} open incident(s)`;
  if (node.title !== title) node.title = title;
  renderClocks(entry);
}

// Write only what changed: an unchanged tile is not touched (no mutation, no repaint).
function setClass(node, value) { if (node.className !== value) node.className = value; }
function setData(node, key, value) { if (node.dataset[key] !== value) node.dataset[key] = value; }
function setText(node, value) { if (node.textContent !== value) node.textContent = value; }

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
  // boards whose link needs the arbiter (debounced: down for the grace period, or unstable), not every drop
  const trouble = shown.filter((v) => !["online", "unknown"].includes(tileLink(v))).length;
  setText(document.getElementById("counts"),
    `${shown.length} boards · ${finished} finished · ${alerts} alert${alerts === 1 ? "" : "s"} · ` +
    `${trouble} with link trouble`);
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
  setText(document.getElementById("detail-title"), `Board ${v.board_no ?? "?"} (${v.board})`);
  setText(document.getElementById("detail-players"),
    `${v.white} – ${v.black}` + (v.round ? ` · round ${v.round}` : "") + (v.ply ? ` · ply ${v.ply}` : "") +
    (v.result && v.result !== "*" ? ` · ${v.result}` : ""));
  // the detail says what the board needs (the debounced link_alert) and the link as last reported
  setText(document.getElementById("detail-link"), (v.link_alert ? `link: ${v.link_alert.text}; now ` : "link: ") +
    v.link + ((v.link_why || []).length ? ` (${v.link_why.join("; ")})` : ""));
  // Incidents: the findings that ask for action, open first, the most severe first; the notes (info,
  // "noted": they ask for nothing) in their own list, never among the incidents.
  const SEV = {"illegal-move": 3, "warning": 2};
  const all = v.flags || [];
  const flags = all.filter((f) => f.status !== "noted").sort((a, b) => (a.status === "resolved") - (b.status === "resolved") ||
    (SEV[b.severity] || 0) - (SEV[a.severity] || 0));
  const notes = all.filter((f) => f.status === "noted").reverse();
  // The lists are rebuilt only when what they show changed: a flapping link (a view with each drop) leaves
  // them alone, the link line above says it in place.
  const lists = JSON.stringify([v.board, all.map((f) => [f.id, f.title, f.code, f.severity, f.status, f.side, f.ply]),
    (v.events || []).map((e) => [e.ts, e.type, e.result])]);
  if (detailLists === lists) return;
  detailLists = lists;
  const line = (f, cls) => {
    const item = el("li", cls);
    item.dataset.flag = f.id;
    const side = f.side ? ` · ${f.side}` : "";
    const ply = f.ply !== undefined && f.ply !== null ? ` · ply ${f.ply}` : "";
    item.textContent = `${f.title || f.code || f.id} — ${f.severity || "?"} · ${f.status}${side}${ply}`;
    return item;
  };
  document.getElementById("detail-flags").replaceChildren(...(flags.length ? flags.map((f) =>
    line(f, `sev-${f.severity || "none"} ${f.status === "resolved" ? "resolved" : ""}`)) : [el("li", "", "no incident")]));
  document.getElementById("detail-notes").replaceChildren(...(notes.length ? notes.map((f) => line(f, "note"))
    : [el("li", "", "no note")]));
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
  detailLists = null;
});

document.getElementById("show-results").addEventListener("click", (event) => {
  const panel = document.getElementById("results");
  panel.hidden = !panel.hidden;
  event.currentTarget.setAttribute("aria-pressed", String(!panel.hidden));
  renderCounts();
});

// The round upload: preview the file's games (reassign a board id), then send new-game to every board.
const roundState = {file: null, players: null, plan: null, ids: new Map(), answers: new Map()};

function fileBase64(input) {
  return new Promise((resolve, reject) => {
    const file = input.files && input.files[0];
    if (!file) { resolve(null); return; }
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function postRound(send) {
  const map = {};
  for (const input of document.querySelectorAll("#round-plan input[data-board-no]")) {
    if (input.value && input.value !== input.dataset.initial) map[input.dataset.boardNo] = input.value.trim();
  }
  const body = {file: roundState.file, players: roundState.players, round: Number(document.getElementById("round-no").value),
    board_id: document.getElementById("round-template").value || "t{n}", map, send,
    chess960: document.getElementById("round-chess960").value.trim(),
    name: (document.getElementById("round-file").files[0] || {}).name || "upload"};
  const response = await fetch("/arbiter/api/round", {method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json",
      "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
    body: JSON.stringify(body)});
  if (response.status === 401) { location.href = "/arbiter/login"; return null; }
  const text = await response.text();
  if (!response.ok) throw new Error(text);
  return JSON.parse(text);
}

function roundMessage(text, error) {
  const message = document.getElementById("round-message");
  message.textContent = text;
  message.classList.toggle("error", !!error);
}

function showPlan(plan) {
  roundState.plan = plan;
  roundState.ids = new Map(plan.games.map((g) => [g.id, g]));
  const table = document.getElementById("round-plan");
  table.hidden = false;
  table.querySelector("tbody").replaceChildren(...plan.games.map((g) => {
    const row = el("tr", g.known ? "" : "unknown");
    row.dataset.command = g.id;
    const input = el("input");
    input.value = g.board;
    input.dataset.initial = g.board;
    input.dataset.boardNo = String(g.board_no);
    input.setAttribute("aria-label", `board id of board ${g.board_no}`);
    const idCell = el("td");
    idCell.append(input);
    const rating = (p) => (p.rating ? ` (${p.rating})` : "") + (p.fide_id ? ` #${p.fide_id}` : "");
    row.append(el("td", "", g.board_no), idCell, el("td", "", g.white.name + rating(g.white)),
      el("td", "", g.black.name + rating(g.black)), el("td", "answer", g.known ? "" : "board not seen"));
    return row;
  }));
  document.getElementById("round-byes").textContent = plan.byes.length
    ? "No board: " + plan.byes.map((b) => `${b.player.name}${b.kind ? " (" + b.kind + ")" : ""}`).join(", ") : "";
  for (const [id, result] of roundState.answers) renderAnswer(id, result);  // answers faster than the POST
  document.getElementById("round-send").hidden = plan.sent;
  roundMessage(`Round ${plan.round}: ${plan.games.length} games (${plan.format}; ${plan.board_rule})` +
    (plan.chess960 ? `, Chess960 start ${plan.chess960.position ?? ""} (${plan.chess960.fen.split(" ")[0]})` : "") +
    (plan.sent ? " — sent, waiting for the boards' answers" : ""), false);
}

document.getElementById("show-round").addEventListener("click", (event) => {
  const panel = document.getElementById("round");
  panel.hidden = !panel.hidden;
  event.currentTarget.setAttribute("aria-pressed", String(!panel.hidden));
});

document.getElementById("round-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    roundState.file = await fileBase64(document.getElementById("round-file"));
    roundState.players = await fileBase64(document.getElementById("round-players"));
    const plan = await postRound(false);
    if (plan) showPlan(plan);
  } catch (error) {
    document.getElementById("round-plan").hidden = true;
    document.getElementById("round-send").hidden = true;
    roundMessage(String(error.message || error), true);
  }
});

document.getElementById("round-send").addEventListener("click", async () => {
  const games = roundState.plan ? roundState.plan.games.length : 0;
  if (!confirm(`Send new-game to ${games} boards? Each board's current game ends.`)) return;
  try {
    const plan = await postRound(true);
    if (plan) showPlan(plan);
  } catch (error) {
    roundMessage(String(error.message || error), true);
  }
});

function onRoundAnswer(board, result) {
  if (typeof result.id !== "string" || !result.id.startsWith("round")) return;
  roundState.answers.set(result.id, result);
  while (roundState.answers.size > 1000) roundState.answers.delete(roundState.answers.keys().next().value);
  renderAnswer(result.id, result);
}

function renderAnswer(id, result) {
  if (!roundState.ids.has(id)) return;
  const cell = document.querySelector(`#round-plan tr[data-command="${CSS.escape(id)}"] td.answer`);
  if (!cell) return;
  cell.textContent = result.ok ? "ok" + (result.clock_answer ? `, clock ${result.clock_answer}` : "")
    : "refused: " + (result.error || "?");
  cell.className = "answer " + (result.ok ? "ok" : "refused");
}

function onHallMessage(obj) {
  if (obj.t === "cmd-result") {
    onRoundAnswer(obj.board, obj.result || {});
    return;
  }
  if (obj.t === "snapshot") {
    for (const view of obj.boards || []) update(view);
  } else if (obj.t === "board" && obj.view) {
    update(obj.view);
  } else if (obj.t === "delta") {
    const entry = entries.get(obj.board);  // what changed of a board the page holds (its snapshot came first)
    if (!entry) return;
    update(applyDelta(entry.view, obj));
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
