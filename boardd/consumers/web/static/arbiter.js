// Arbiter tablet: boards with open flags first (illegal-move > warning > info), then boards with link
// trouble (degraded/offline, with the reason); each flag in plain words with articles, side, ply, evidence
// and suggestion (ack / resolve / reinstate); the board's recent events (a result signalled on the board
// can be accepted: set-result); board actions (set result, new game, flip), each after a confirmation.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const RANK = {"illegal-move": 3, "warning": 2, "info": 1};
const boards = new Map();      // board -> {view, receivedAt}
const shown = boardFilter();   // ?round=&boards= : an arbiter's section
const seenFlags = new Set();   // flag keys already announced
const pending = new Map();     // command id -> {board, flag, name}
const results = new Map();     // "board/flag" -> last command outcome text
const early = new Map();       // command id -> cmd-result that arrived before the POST returned
const drafts = new Map();      // "board/field" -> what the arbiter typed (survives re-rendering)
const openActions = new Set(); // boards whose "Board actions" panel is open
const RESULTS = ["1-0", "0-1", "1/2-1/2", "*"];
const EVENT_WORDS = {
  GAME_START: "Game started", GAME_END: "Game ended", TAKEBACK_DETECTED: "Takeback on the board",
  REINSTATED: "Position reinstated", ARBITER_ACTION: "Arbiter action", BOARD_DISCONNECTED: "Board disconnected",
  BOARD_RECONNECTED: "Board reconnected", CLOCK_DISCONNECTED: "Clock disconnected",
  CLOCK_RECONNECTED: "Clock reconnected", RESULT_SIGNAL: "Result signalled on the board",
  ORIENTATION_CHANGED: "Board orientation changed",
};
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

// An input whose text survives re-rendering (every move redraws the tablet).
function draftInput(boardId, field, cls, placeholder) {
  const input = el("input", cls);
  input.dataset.key = field;
  if (placeholder) input.placeholder = placeholder;
  input.maxLength = 200;
  const key = boardId + "/" + field;
  if (drafts.has(key)) input.value = drafts.get(key);
  input.addEventListener("input", () => drafts.set(key, input.value));
  return input;
}

function outcomeLine(key) {
  const outcome = results.get(key);
  return outcome ? el("p", "outcome " + (outcome.ok === true ? "ok" : outcome.ok === false ? "bad" : "wait"), outcome.text) : null;
}

function button(cls, text, onClick) {
  const node = el("button", cls, text);
  node.type = "button";
  node.addEventListener("click", onClick);
  return node;
}

function boardName(v) { return v.board_no !== null ? `board ${v.board_no} (${v.board})` : `board ${v.board}`; }

function eventText(event) {
  const words = EVENT_WORDS[event.type] || event.type;
  const extra = [];
  if (event.result) extra.push(event.result);
  if (event.gesture) extra.push(event.gesture);
  if (event.code && event.type !== "RESULT_SIGNAL") extra.push(event.code);
  if (event.to_ply !== undefined && event.to_ply !== null) extra.push(`to ply ${event.to_ply}`);
  if (event.detail) extra.push(event.detail);
  return words + (extra.length ? ": " + extra.join(" · ") : "");
}

function eventsList(v) {
  const events = (v.events || []).slice(-6).reverse();
  if (!events.length) return null;
  const box = el("div", "events");
  box.append(el("h4", null, "Recent events"));
  const list = el("ol", "event-list");
  const latestSignal = events.find((e) => e.type === "RESULT_SIGNAL");
  for (const event of events) {
    const item = el("li", "event type-" + String(event.type).toLowerCase().replace(/[^a-z0-9-]/g, "-"));
    item.dataset.type = event.type;
    item.append(el("span", "when", fmtTime(event.at, event.at_s)), el("span", "what", eventText(event)));
    if (event === latestSignal && RESULTS.includes(event.result)) {
      if (v.result === "*") {
        item.append(button("accept-result", `Accept result ${event.result}`, () => {
          if (confirm(`Record the result ${event.result} on ${boardName(v)} (${v.white} – ${v.black})?`)) {
            sendCommand(v.board, "board", "set-result", {result: event.result});
          }
        }));
      } else {
        item.append(el("span", "recorded", `recorded: ${v.result}`));
      }
    }
    list.append(item);
  }
  box.append(list);
  return box;
}

function boardActions(v) {
  const box = el("details", "board-actions");
  box.open = openActions.has(v.board);
  box.addEventListener("toggle", () => { if (box.open) openActions.add(v.board); else openActions.delete(v.board); });
  box.append(el("summary", null, "Board actions"));
  const row = (...children) => { const r = el("div", "actions"); r.append(...children); return r; };
  const select = el("select", "result-choice");
  select.dataset.key = "result";
  select.setAttribute("aria-label", "result");
  RESULTS.forEach((r) => { const o = el("option", null, r === "*" ? "* (game goes on)" : r); o.value = r; select.append(o); });
  select.value = drafts.get(v.board + "/result") || (v.result !== "*" ? "*" : "1-0");
  select.addEventListener("change", () => drafts.set(v.board + "/result", select.value));
  const setResult = button("set-result", "Set result", () => {
    const result = select.value;
    if (confirm(`Set the result of ${boardName(v)} (${v.white} – ${v.black}) to ${result}?`)) {
      sendCommand(v.board, "board", "set-result", {result});
    }
  });
  const white = draftInput(v.board, "white", "new-white", "White");
  const black = draftInput(v.board, "black", "new-black", "Black");
  const round = draftInput(v.board, "round", "new-round", "Round");
  [white, black, round].forEach((i) => i.setAttribute("aria-label", i.placeholder));
  const newGame = button("new-game", "New game", () => {
    const fields = {white: white.value.trim(), black: black.value.trim(), round: round.value.trim()};
    const who = `${fields.white || "?"} – ${fields.black || "?"}${fields.round ? ", round " + fields.round : ""}`;
    if (confirm(`Start a new game on ${boardName(v)}: ${who}? The current game (${v.white} – ${v.black}, ${v.result}) is closed.`)) {
      const extra = {};
      for (const [k, value] of Object.entries(fields)) if (value) extra[k] = value;
      sendCommand(v.board, "board", "new-game", extra);
      ["white", "black", "round"].forEach((k) => drafts.delete(v.board + "/" + k));
    }
  });
  const flip = button("flip", "Flip board", () => {
    if (confirm(`Turn ${boardName(v)} round (swap which side White sits on)?`)) sendCommand(v.board, "board", "flip", {});
  });
  box.append(row(el("span", "label", "Result"), select, setResult),
             row(el("span", "label", "Next game"), white, black, round, newGame),
             row(flip));
  return box;
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
  const outcome = outcomeLine(boardId + "/" + flag.id);
  if (outcome) card.append(outcome);
  if (flag.status !== "resolved" && flag.code) {
    const actions = el("div", "actions");
    const ack = el("button", "ack", "Acknowledge");
    ack.type = "button";
    ack.disabled = flag.status !== "open";
    ack.addEventListener("click", () => sendCommand(boardId, flag.id, "ack", {irregularity: flag.id}));
    const ruling = draftInput(boardId, flag.id + "/ruling", "ruling-text", "ruling (e.g. +2 min to Black)");
    const resolve = el("button", "resolve", "Resolve");
    resolve.type = "button";
    resolve.addEventListener("click", () => sendCommand(boardId, flag.id, "resolve", {irregularity: flag.id, ruling: ruling.value || null}));
    const plyInput = el("input", "ply");
    plyInput.dataset.key = flag.id + "/ply";
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

// online | degraded | offline | unknown (an older service sends only "online").
function linkState(v) {
  if (v.link) return v.link;
  return v.online === false ? "offline" : v.online === true ? "online" : "unknown";
}

function trouble(v) { const l = linkState(v); return l === "offline" || l === "degraded" ? 1 : 0; }

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
  const link = linkState(v);
  card.dataset.link = link;
  if (link === "offline") head.append(el("span", "link-state offline", "OFFLINE"));
  if (link === "degraded") head.append(el("span", "link-state degraded", "DEGRADED"));
  card.append(head);
  if ((link === "offline" || link === "degraded") && (v.link_why || []).length) {
    const lost = link === "offline" || v.link_why.some((why) => why.startsWith("board disconnected"));
    card.append(el("p", "link-why", (link === "offline" ? "Offline: " : "Degraded: ") + v.link_why.join("; ") +
      (lost ? " — moves on this board are not being recorded." : "")));
  }
  const events = eventsList(v);
  if (open.length || v.flags.length || events) {
    const body = el("div", "tboard-body");
    const svg = document.createElementNS(SVGNS, "svg");
    svg.classList.add("board", "small");
    renderBoard(svg, v.fen, v.last_move);
    const list = el("div", "flags");
    const ordered = [...v.flags].sort((a, b) =>
      (a.status === "resolved") - (b.status === "resolved") || (RANK[b.severity] || 0) - (RANK[a.severity] || 0) || (b.ply || 0) - (a.ply || 0));
    ordered.forEach((flag) => list.append(flagCard(v.board, v, flag)));
    if (events) list.append(events);
    body.append(svg, list);
    card.append(body);
  }
  const outcome = outcomeLine(v.board + "/board");
  if (outcome) card.append(outcome);
  card.append(boardActions(v));
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
    return (ob - oa) || (rb - ra) || (trouble(b.view) - trouble(a.view)) || ((a.view.board_no || 9999) - (b.view.board_no || 9999)) || (a.view.board < b.view.board ? -1 : 1);
  });
  // Keep the arbiter's place: the focused input (its text is in drafts) and its cursor.
  const focused = document.activeElement;
  const keep = focused && focused.dataset && focused.dataset.key && focused.closest(".tboard") ?
    {board: focused.closest(".tboard").dataset.board, key: focused.dataset.key, value: focused.value,
     start: focused.selectionStart, end: focused.selectionEnd} : null;
  container.replaceChildren(...ordered.map(boardCard));
  if (keep) {
    const again = container.querySelector(`.tboard[data-board="${CSS.escape(keep.board)}"] [data-key="${CSS.escape(keep.key)}"]`);
    if (again) {
      again.value = keep.value;
      again.focus();
      if (keep.start !== null && keep.start !== undefined && again.setSelectionRange) {
        try { again.setSelectionRange(keep.start, keep.end); } catch (e) { /* number inputs have no selection */ }
      }
    }
  }
  const openCount = ordered.reduce((n, e) => n + e.view.flags.filter((f) => f.status === "open").length, 0);
  const troubled = ordered.filter((e) => trouble(e.view)).length;
  document.getElementById("summary").textContent = `${boards.size} boards · ${openCount} open flag${openCount === 1 ? "" : "s"}` +
    (troubled ? ` · ${troubled} with link trouble` : "");
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
