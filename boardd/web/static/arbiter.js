// Arbiter tablet: boards with open flags first (illegal-move > warning > info), each flag in
// plain words with articles, side, ply, evidence and suggestion; ack / resolve / reinstate.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const RANK = {"illegal-move": 3, "warning": 2, "info": 1};
const boards = new Map();      // board -> {view, receivedAt}
const shown = boardFilter();   // ?round=&boards= : an arbiter's section
const seenFlags = new Set();   // flag keys already announced
const pending = new Map();     // command id -> {board, flag, name}
const results = new Map();     // "board/flag" -> last command outcome text
const early = new Map();       // command id -> cmd-result that arrived before the POST returned
const container = document.getElementById("boards");
const banner = document.getElementById("banner");
const bannerText = document.getElementById("banner-text");
const soundButton = document.getElementById("sound");
let soundOn = false;
let audio = null;
let firstSnapshot = true;

function setSound(on) {
  soundOn = on;
  soundButton.setAttribute("aria-pressed", on ? "true" : "false");
  soundButton.textContent = on ? "Sound on" : "Sound off";
  if (on && !audio && window.AudioContext) audio = new AudioContext();
}
soundButton.addEventListener("click", () => setSound(!soundOn));
document.getElementById("banner-seen").addEventListener("click", () => { banner.hidden = true; });

function beep() {
  if (!soundOn || !audio) return;
  const now = audio.currentTime;
  [0, 0.25, 0.5].forEach((offset) => {
    const osc = audio.createOscillator(), gain = audio.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.3, now + offset);
    gain.gain.exponentialRampToValueAtTime(0.001, now + offset + 0.2);
    osc.connect(gain).connect(audio.destination);
    osc.start(now + offset);
    osc.stop(now + offset + 0.2);
  });
}

function sideName(side) { return side === "white" ? "White" : side === "black" ? "Black" : "—"; }

function moveNo(ply) { return ply > 0 ? `${Math.ceil(ply / 2)}${ply % 2 ? "." : "…"}` : "start"; }

// ISO time -> local "14:27:19.8"; board seconds as a fallback.
function fmtTime(iso, seconds) {
  const date = iso ? new Date(iso) : null;
  if (date && !Number.isNaN(date.getTime())) {
    return date.toLocaleTimeString([], {hour12: false}) + "." + String(date.getMilliseconds()).padStart(3, "0").slice(0, 1);
  }
  return seconds !== undefined && seconds !== null ? `t=${Number(seconds).toFixed(2)} s` : "";
}

async function sendCommand(board, flag, name, extra) {
  const key = board + "/" + flag;
  results.set(key, {text: `${name}: sending…`, ok: null});
  renderAll();
  let response;
  try {
    response = await fetch("/arbiter/api/cmd", {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRF-Token": CSRF},
      body: JSON.stringify({board, name, ...extra}),
    });
  } catch (e) {
    results.set(key, {text: `${name}: network error`, ok: false});
    renderAll();
    return;
  }
  if (response.status === 401) { location.href = "/arbiter/login"; return; }
  if (!response.ok) {
    results.set(key, {text: `${name}: refused (${response.status}) ${await response.text()}`, ok: false});
  } else {
    const body = await response.json();
    pending.set(body.id, {board, flag, name});
    results.set(key, {text: `${name}: sent, waiting for the board…`, ok: null, id: body.id});
    if (early.has(body.id)) { settle(early.get(body.id)); early.delete(body.id); }
  }
  renderAll();
}

function settle(result) {
  const sent = pending.get(result.id);
  if (!sent) {
    early.set(result.id, result);
    if (early.size > 200) early.delete(early.keys().next().value);
    return;
  }
  pending.delete(result.id);
  const text = result.ok ? `${sent.name}: done` : `${sent.name}: refused by the board — ${result.error || "error"}`;
  results.set(sent.board + "/" + sent.flag, {text, ok: !!result.ok});
  renderAll();
}

function flagCard(boardId, view, flag) {
  const card = el("article", `flag sev-${flag.severity || "unknown"} status-${flag.status}`);
  card.dataset.flag = flag.id;
  card.dataset.status = flag.status;
  const head = el("header", "flag-head");
  head.append(el("span", "sev", flag.severity === "illegal-move" ? "ILLEGAL MOVE" : (flag.severity || "?")),
              el("span", "title", flag.title || flag.code),
              el("span", "status", flag.status));
  card.append(head);
  const facts = el("dl", "facts");
  const add = (k, v) => { if (v !== undefined && v !== null && v !== "") facts.append(el("dt", null, k), el("dd", null, v)); };
  add("Code", flag.code + (flag.subtype && !String(flag.code).includes("/") ? "/" + flag.subtype : ""));
  add("Articles", (flag.articles || []).join(", ") + (flag.edition ? ` (Laws ${flag.edition})` : ""));
  add("Side", sideName(flag.side));
  const san = view.state && Array.isArray(view.state.san) && flag.ply > 0 ? view.state.san[flag.ply - 1] : null;
  add("Ply", flag.ply !== undefined ? `${flag.ply} (${moveNo(flag.ply)}${san ? " " + san : ""})` : null);
  add("Confidence", flag.confidence === "suspected" ? "suspected — verify" : flag.confidence);
  add("Raised", fmtTime(flag.t_raised, flag.t_raised_s));
  if (flag.claim_deadline) add("Claim window until", fmtTime(flag.claim_deadline, flag.claim_deadline_s));
  if (flag.regime && flag.regime !== "competition") add("Regime", `${flag.regime} (${flag.category || ""})`);
  card.append(facts);
  if (flag.evidence && flag.evidence.length) {
    const ev = el("ol", "evidence");
    flag.evidence.forEach((item) => ev.append(el("li", null, `${fmtTime(item.at, item.at_s)}  ${item.event}`)));
    card.append(el("h4", null, "Evidence"), ev);
  }
  const s = flag.suggestion || {};
  const suggestion = [s.text, s.move ? `move: ${s.move}` : "", s.add_to_opponent_s ? `+${s.add_to_opponent_s} s to the opponent` : "",
    s.result ? `result: ${s.result}` : "", s.reinstate_ply !== undefined && s.reinstate_ply !== null ? `reinstate to ply ${s.reinstate_ply}` : ""]
    .filter(Boolean).join(" · ");
  if (suggestion) card.append(el("p", "suggestion", "Suggested: " + suggestion));
  if (flag.ruling) card.append(el("p", "ruling", "Ruling: " + flag.ruling));
  const outcome = results.get(boardId + "/" + flag.id);
  if (outcome) card.append(el("p", "outcome " + (outcome.ok === true ? "ok" : outcome.ok === false ? "bad" : "wait"), outcome.text));
  if (flag.status !== "resolved" && flag.code) {
    const actions = el("div", "actions");
    const ack = el("button", "ack", "Acknowledge");
    ack.type = "button";
    ack.disabled = flag.status !== "open";
    ack.addEventListener("click", () => sendCommand(boardId, flag.id, "ack", {irregularity: flag.id}));
    const ruling = el("input", "ruling-text");
    ruling.placeholder = "ruling (e.g. +2 min to Black)";
    ruling.maxLength = 200;
    const resolve = el("button", "resolve", "Resolve");
    resolve.type = "button";
    resolve.addEventListener("click", () => sendCommand(boardId, flag.id, "resolve", {irregularity: flag.id, ruling: ruling.value || null}));
    const plyInput = el("input", "ply");
    plyInput.type = "number";
    plyInput.min = "0";
    const suggested = s.reinstate_ply !== undefined && s.reinstate_ply !== null ? s.reinstate_ply : Math.max(0, (flag.ply || 1) - 1);
    plyInput.value = suggested;
    plyInput.setAttribute("aria-label", "reinstate to ply");
    const reinstate = el("button", "reinstate", "Reinstate");
    reinstate.type = "button";
    reinstate.addEventListener("click", () => {
      const ply = parseInt(plyInput.value, 10);
      if (Number.isInteger(ply) && ply >= 0 && confirm(`Reinstate board ${boardId} to ply ${ply} (${moveNo(ply)})?`)) {
        sendCommand(boardId, flag.id, "reinstate", {ply});
      }
    });
    const reinstateGroup = el("span", "reinstate-group");
    const plyLabel = el("label", "ply-label", "to ply ");
    plyLabel.append(plyInput);
    reinstateGroup.append(plyLabel, reinstate);
    actions.append(ack, ruling, resolve, reinstateGroup);
    card.append(actions);
  }
  return card;
}

function boardCard(entry) {
  const v = entry.view;
  const open = v.flags.filter((f) => f.status !== "resolved");
  const card = el("section", "tboard rank-" + v.rank);
  card.dataset.board = v.board;
  const head = el("header", "tboard-head");
  head.append(el("span", "board-no", v.board_no !== null ? `Board ${v.board_no}` : v.board),
              el("span", "players", `${v.white} – ${v.black}`),
              el("span", "ply", `${moveNo(v.ply)} ${v.san_tail.length ? v.san_tail[v.san_tail.length - 1] : ""}`),
              el("span", "clocks", `${formatClock(clockNow(v.clock, entry.receivedAt, "white"))} | ${formatClock(clockNow(v.clock, entry.receivedAt, "black"))}`),
              el("span", "result", v.result === "*" ? "" : v.result));
  if (v.illegal_moves && (v.illegal_moves.white || v.illegal_moves.black)) {
    head.append(el("span", "illegal-count", `illegal W ${v.illegal_moves.white} · B ${v.illegal_moves.black}`));
  }
  if (v.online === false) head.append(el("span", "offline", "OFFLINE"));
  card.append(head);
  if (open.length || v.flags.length) {
    const body = el("div", "tboard-body");
    const svg = document.createElementNS(SVGNS, "svg");
    svg.classList.add("board", "small");
    renderBoard(svg, v.fen, v.last_move);
    const list = el("div", "flags");
    const ordered = [...v.flags].sort((a, b) =>
      (a.status === "resolved") - (b.status === "resolved") || (RANK[b.severity] || 0) - (RANK[a.severity] || 0) || (b.ply || 0) - (a.ply || 0));
    ordered.forEach((flag) => list.append(flagCard(v.board, v, flag)));
    body.append(svg, list);
    card.append(body);
  }
  return card;
}

// Many boards send many updates: draw at most every 150 ms.
let renderTimer = null;
function scheduleRender() {
  if (renderTimer === null) renderTimer = setTimeout(() => { renderTimer = null; renderAll(); }, 150);
}

function renderAll() {
  const ordered = [...boards.values()].filter((e) => shown(e.view)).sort((a, b) => {
    const ra = a.view.rank, rb = b.view.rank;
    const oa = a.view.flags.some((f) => f.status === "open"), ob = b.view.flags.some((f) => f.status === "open");
    return (ob - oa) || (rb - ra) || ((a.view.board_no || 9999) - (b.view.board_no || 9999)) || (a.view.board < b.view.board ? -1 : 1);
  });
  // Keep what the arbiter is typing.
  const focused = document.activeElement;
  const keep = focused && focused.closest && focused.closest(".flag") ?
    {board: focused.closest(".tboard").dataset.board, flag: focused.closest(".flag").dataset.flag, cls: focused.className, value: focused.value} : null;
  container.replaceChildren(...ordered.map(boardCard));
  if (keep) {
    const again = container.querySelector(`.tboard[data-board="${CSS.escape(keep.board)}"] .flag[data-flag="${CSS.escape(keep.flag)}"] .${CSS.escape(keep.cls.split(" ")[0])}`);
    if (again) { again.value = keep.value; again.focus(); }
  }
  const openCount = ordered.reduce((n, e) => n + e.view.flags.filter((f) => f.status === "open").length, 0);
  document.getElementById("summary").textContent = `${boards.size} boards · ${openCount} open flag${openCount === 1 ? "" : "s"}`;
}

function announce(view) {
  if (!shown(view)) return;
  for (const flag of view.flags) {
    const key = view.board + "/" + flag.id;
    if (seenFlags.has(key)) continue;
    seenFlags.add(key);
    if (!firstSnapshot && flag.severity === "illegal-move" && flag.status === "open") {
      bannerText.textContent = `ILLEGAL MOVE — ${view.board_no !== null ? "Board " + view.board_no : view.board} — ${sideName(flag.side)} — ${flag.title || flag.code}`;
      banner.hidden = false;
      beep();
    }
  }
}

function onMessage(msg) {
  if (msg.t === "snapshot") {
    boards.clear();
    msg.boards.forEach((view) => { boards.set(view.board, {view, receivedAt: performance.now()}); announce(view); });
    firstSnapshot = false;
    renderAll();
  } else if (msg.t === "board") {
    boards.set(msg.view.board, {view: msg.view, receivedAt: performance.now()});
    announce(msg.view);
    scheduleRender();
  } else if (msg.t === "clocks") {
    const now = performance.now();
    for (const [board, clock] of Object.entries(msg.clocks)) {
      const entry = boards.get(board);
      if (entry) { entry.view.clock = clock; entry.receivedAt = now; }
    }
  } else if (msg.t === "cmd-result") {
    settle(msg.result);
  }
}

connectSocket("/arbiter/ws", onMessage, (state) => {
  const link = document.getElementById("link");
  link.dataset.state = state;
  link.textContent = state === "open" ? "live" : "reconnecting…";
}, true);

setInterval(() => {
  for (const entry of boards.values()) {
    const node = container.querySelector(`.tboard[data-board="${CSS.escape(entry.view.board)}"] .clocks`);
    if (node) node.textContent = `${formatClock(clockNow(entry.view.clock, entry.receivedAt, "white"))} | ${formatClock(clockNow(entry.view.clock, entry.receivedAt, "black"))}`;
  }
}, 500);
// Browsers only play sound after a gesture: the arbiter switches it on. [web] sound = false hides the button.
setSound(false);
if (document.querySelector('meta[name="sound-default"]').content === "off") soundButton.hidden = true;
