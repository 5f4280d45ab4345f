// Arbiter tablet: only what needs the arbiter. One card per incident (the primary finding in full: articles,
// side, ply, evidence, suggestion, with ack / resolve / reinstate; its related findings folded inside);
// boards with an open incident first (illegal-move > warning), then boards with link trouble (degraded/offline,
// with the reason) or a result signalled on the board (accept: set-result). Findings that ask for no action
// (info, "noted") are lines in the board's collapsible event log, never cards; incidents resolved (by the
// board itself or by the arbiter) move into the board's "Resolved" section by themselves. Boards with nothing
// for the arbiter collapse to one line each, in a section closed by default. Board actions (set result,
// new game, flip) each after a confirmation.
"use strict";

const CSRF = document.querySelector('meta[name="csrf-token"]').content;
const RANK = {"illegal-move": 3, "warning": 2, "info": 1};
const boards = new Map();      // board -> {view, receivedAt}
const shown = boardFilter();   // ?round=&boards= : an arbiter's section
const rung = new Set();        // "board/game/incident" that rang (or came with the first snapshot)
const linkRung = new Map();    // board -> the link incident (its "since") that rang or came with the first snapshot
const unseen = new Map();      // what the banner shows until "Seen": key -> {rank, kind, text, board, at}
// What rings ([web] ring): incidents that need the arbiter of these severities, and link trouble.
const RINGS = new Set(document.querySelector('meta[name="ring"]').content.split(" ").filter(Boolean));
const pending = new Map();     // command id -> {board, flag, name, done}
const results = new Map();     // "board/flag" -> last command outcome text
const early = new Map();       // command id -> cmd-result that arrived before the POST returned
const drafts = new Map();      // "board/field" -> what the arbiter typed (survives re-rendering)
const openActions = new Set(); // boards whose "Board actions" panel is open
const openRelated = new Set(); // "board/incident" whose related findings are unfolded
const openResolved = new Set(); // boards whose "Resolved" section is open
const logOpen = new Map();     // board -> event log open (the arbiter's choice; default: open on a result signal)
const expanded = new Set();    // quiet boards opened from their one line
let quietOpen = false;         // the section of boards with nothing for the arbiter
const LOG_SHOWN = 30;          // event log lines per board
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
document.getElementById("banner-seen").addEventListener("click", () => { unseen.clear(); showBanner(); });

// Three high beeps for an illegal move, two for a warning, one lower for link trouble.
function beep(kind) {
  if (!soundOn || !audio) return;
  const now = audio.currentTime;
  const offsets = kind === "illegal" ? [0, 0.25, 0.5] : kind === "warning" ? [0, 0.25] : [0];
  offsets.forEach((offset) => {
    const osc = audio.createOscillator(), gain = audio.createGain();
    osc.frequency.value = kind === "link" ? 660 : 880;
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

// `done` runs once the board answered ok (the Dismiss's undo offer).
async function sendCommand(board, flag, name, extra, done) {
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
    pending.set(body.id, {board, flag, name, done});
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
  if (result.ok && sent.done) sent.done();
  renderAll();
}

// Undo of a dismissal: the arbiter who dismissed by mistake takes it back (`reopen`: the daemon reopens what the
// dismissal closed and counts it again). Offered for UNDO_WINDOW_MS in a bar at the top of the page once the board
// confirmed the dismissal (the board may have left the needs-you list with it), and for as long as the service
// knows it on the dismissed card itself, in the board's "Resolved" section (incident.dismissed).
const UNDO_WINDOW_MS = 20000;
const undoBar = document.getElementById("undo");
let undoOffer = null;          // {board, flag, irregularity, timer}
function offerUndo(board, flag, irregularity, text) {
  if (undoOffer) clearTimeout(undoOffer.timer);
  undoOffer = {board, flag, irregularity, timer: setTimeout(closeUndo, UNDO_WINDOW_MS)};
  undoBar.dataset.board = board;
  undoBar.dataset.irregularity = irregularity;
  setText(document.getElementById("undo-text"), text);
  undoBar.hidden = false;
}
function closeUndo() {
  if (undoOffer) clearTimeout(undoOffer.timer);
  undoOffer = null;
  undoBar.hidden = true;
}
function reopen(board, flag, irregularity) {
  if (undoOffer && undoOffer.board === board && undoOffer.irregularity === irregularity) closeUndo();
  sendCommand(board, flag, "reopen", {irregularity});
}
document.getElementById("undo-button").addEventListener("click", () => {
  if (undoOffer) reopen(undoOffer.board, undoOffer.flag, undoOffer.irregularity);
});

// Dismiss (resolve with accept false) of `target`, shown on the card of `flag`; once done, its Undo is offered.
function dismissFinding(boardId, flag, target, ruling, extra = {}) {
  const view = (boards.get(boardId) || {}).view;
  const what = `Dismissed: ${view ? boardLabel(view) : boardId} — ${target.title || target.code || target.id}`;
  sendCommand(boardId, flag.id, "resolve", {irregularity: target.id, ruling, accept: false, ...extra},
              () => offerUndo(boardId, flag.id, target.id, what));
}

// An input whose text survives a redraw of its card (keyed rendering: only a card that changed is redrawn).
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


// --- Event log: the board's events and the findings that ask for no action (info, "noted"). ---

function keyOf(body) { return [Number(body.session) || 0, Number(body.seq) || 0]; }
function newerFirst(a, b) { const ka = keyOf(a.body), kb = keyOf(b.body); return (kb[0] - ka[0]) || (kb[1] - ka[1]); }

// The latest result signal that still waits for the arbiter (the game has no result yet).
function pendingSignal(v) {
  if (v.result !== "*") return null;
  const events = v.events || [];
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i].type === "RESULT_SIGNAL") return RESULTS.includes(events[i].result) ? events[i] : null;
  }
  return null;
}

function findingText(flag, v) {
  const parts = [flag.title || flag.code || "finding"];
  if (flag.code && flag.title && flag.title !== flag.code) parts.push(flag.code);
  if (flag.side) parts.push(sideName(flag.side));
  if (flag.ply !== undefined && flag.ply !== null) parts.push(`ply ${flag.ply} (${moveNo(flag.ply)})`);
  if (flag.ruling) parts.push(flag.ruling);
  return parts.join(" · ");
}

// Its lines: the board's events (the hub keeps the last few) and, of the notes, only the newest LOG_SHOWN
// (board.js keeps them newest first: a flaky sensor's hundreds of notes are not walked again).
function eventLog(v, index) {
  const entries = (v.events || []).map((e) => ({kind: "event", body: e}))
    .concat(index.notes.slice(0, LOG_SHOWN).map((f) => ({kind: "finding", body: f})));
  if (!entries.length) return null;
  entries.sort(newerFirst);
  const signal = pendingSignal(v);
  const box = el("details", "event-log");
  box.dataset.board = v.board;
  const remembered = logOpen.get(v.board), byDefault = signal !== null;
  box.open = remembered !== undefined ? remembered : byDefault;
  // Only the arbiter's own choice is remembered (setting .open above fires "toggle" too).
  box.addEventListener("toggle", () => { if (box.open !== byDefault) logOpen.set(v.board, box.open); else logOpen.delete(v.board); });
  const notes = index.notes.length, events = (v.events || []).length;
  const counts = [events ? `${events} event${events === 1 ? "" : "s"}` : "", notes ? `${notes} note${notes === 1 ? "" : "s"}` : ""];
  box.append(el("summary", null, `Event log (${counts.filter(Boolean).join(", ")})`));
  const list = el("ol", "event-list");
  const latestSignal = (v.events || []).slice().reverse().find((e) => e.type === "RESULT_SIGNAL");
  for (const entry of entries.slice(0, LOG_SHOWN)) {
    const body = entry.body;
    if (entry.kind === "finding") {
      const item = el("li", "event note sev-" + (body.severity || "unknown"));
      item.dataset.type = "FINDING";
      item.dataset.flag = body.id;
      item.dataset.status = body.status;
      item.append(el("span", "when", fmtTime(body.t_raised, body.t_raised_s)), el("span", "tag", "note"),
                  el("span", "what", findingText(body, v)));
      list.append(item);
      continue;
    }
    const item = el("li", "event type-" + String(body.type).toLowerCase().replace(/[^a-z0-9-]/g, "-"));
    item.dataset.type = body.type;
    item.append(el("span", "when", fmtTime(body.at, body.at_s)), el("span", "what", eventText(body)));
    if (body === latestSignal && RESULTS.includes(body.result)) {
      if (v.result === "*") {
        item.append(button("accept-result", `Accept result ${body.result}`, () => {
          if (confirm(`Record the result ${body.result} on ${boardName(v)} (${v.white} – ${v.black})?`)) {
            sendCommand(v.board, "board", "set-result", {result: body.result});
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


// --- Incidents: one card per incident, its related findings folded inside. ---

function sevLabel(severity) { return severity === "illegal-move" ? "ILLEGAL MOVE" : (severity || "?"); }

function facts(flag, view) {
  const list = el("dl", "facts");
  const add = (k, v) => { if (v !== undefined && v !== null && v !== "") list.append(el("dt", null, k), el("dd", null, v)); };
  add("Code", flag.code ? flag.code + (flag.subtype && !String(flag.code).includes("/") ? "/" + flag.subtype : "") : null);
  add("Articles", (flag.articles || []).join(", ") + (flag.edition ? ` (Laws ${flag.edition})` : ""));
  add("Side", sideName(flag.side));
  const san = view.state && Array.isArray(view.state.san) && flag.ply > 0 ? view.state.san[flag.ply - 1] : null;
  add("Ply", flag.ply !== undefined && flag.ply !== null ? `${flag.ply} (${moveNo(flag.ply)}${san ? " " + san : ""})` : null);
  add("Confidence", flag.confidence === "suspected" ? "suspected — verify" : flag.confidence);
  add("Raised", fmtTime(flag.t_raised, flag.t_raised_s));
  if (flag.claim_deadline) add("Claim window until", fmtTime(flag.claim_deadline, flag.claim_deadline_s));
  if (flag.regime && flag.regime !== "competition") add("Regime", `${flag.regime} (${flag.category || ""})`);
  return list;
}

function evidence(flag) {
  if (!flag.evidence || !flag.evidence.length) return [];
  const ev = el("ol", "evidence");
  flag.evidence.forEach((item) => ev.append(el("li", null, `${fmtTime(item.at, item.at_s)}  ${item.event}`)));
  return [el("h4", null, "Evidence"), ev];
}

function suggestionText(s) {
  return [s.text, s.move ? `move: ${s.move}` : "", s.add_to_opponent_s ? `+${s.add_to_opponent_s} s to the opponent` : "",
    s.result ? `result: ${s.result}` : "", s.reinstate_ply !== undefined && s.reinstate_ply !== null ? `reinstate to ply ${s.reinstate_ply}` : ""]
    .filter(Boolean).join(" · ");
}

// A related finding, folded inside its incident's card: what it is and why, no actions of its own.
function relatedItem(flag, view) {
  const item = el("li", `related-finding sev-${flag.severity || "unknown"} status-${flag.status}`);
  item.dataset.flag = flag.id;
  item.dataset.status = flag.status;
  const head = el("div", "related-head");
  head.append(el("span", "sev", sevLabel(flag.severity)), el("span", "title", flag.title || flag.code || flag.id),
              el("span", "status", flag.status));
  item.append(head, facts(flag, view), ...evidence(flag));
  if (flag.ruling) item.append(el("p", "ruling", "Ruling: " + flag.ruling));
  return item;
}

// Findings of the illegal-move class the arbiter may rule "not an irregularity": a press without a move he
// judges a distraction (Arbiters' Manual), a suspected illegal move that was a sensor fault. Their cards have
// Dismiss beside Resolve: `resolve` with `accept: false`, and the engine uncounts the finding (7.5.5), the
// later findings' penalty suggestions corrected. (A suspected two-handed move has its own Dismiss, below.)
const DISMISSABLE = new Set(["ILLEGAL_MOVE", "CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND", "PAWN_NOT_REPLACED",
  "PROMOTION_INCOMPLETE_AT_PRESS", "CASTLING_INCOMPLETE_AT_PRESS", "EN_PASSANT_INCOMPLETE_AT_PRESS"]);

// The illegal-move-class finding of an incident the arbiter may dismiss: the card's own finding, else (a card that
// offers Confirm two hands: the two-handed press was an illegal move of its own) one folded in it still open.
function dismissable(flag, incident, byId) {
  const ofClass = (f) => f && DISMISSABLE.has(String(f.code || "").split("/")[0]) &&
    (f.status === "open" || f.status === "acknowledged");
  if (ofClass(flag)) return flag;
  if (!incident || !incident.two_hands) return null;
  return [incident.primary, ...incident.related].map((id) => byId.get(id)).find(ofClass) || null;
}

// A press (without a move, or with a piece in hand) that leads a card with an illegal move of the same move folded
// under it (counted once): the arbiter may judge the press a distraction and the illegal move real. "Dismiss press
// only" dismisses the press alone (`resolve` with `accept: false` and `alone: true`): the illegal move stays open,
// counted, the move's penalty on it, and the card stays, led by it. "Dismiss" still dismisses the whole card.
const PRESSES = new Set(["CLOCK_PRESS_NO_MOVE", "CLOCK_PRESS_PIECE_IN_HAND"]);
function foldedIllegal(flag, incident, byId) {
  if (!incident || !PRESSES.has(String(flag.code || "").split("/")[0])) return null;
  return [incident.primary, ...incident.related].filter((id) => id !== flag.id).map((id) => byId.get(id))
    .find((f) => f && DISMISSABLE.has(String(f.code || "").split("/")[0]) && !PRESSES.has(String(f.code).split("/")[0]) &&
      (f.status === "open" || f.status === "acknowledged")) || null;
}

function actions(boardId, flag, incident, byId) {
  const row = el("div", "actions");
  const ack = button("ack", "Acknowledge", () => sendCommand(boardId, flag.id, "ack", {irregularity: flag.id}));
  ack.disabled = flag.status !== "open";
  const ruling = draftInput(boardId, flag.id + "/ruling", "ruling-text", "ruling (e.g. +2 min to Black)");
  // A suspected two-handed move is a warning until the arbiter confirms it (rules-spec R19): "Dismiss" rules it
  // out; only "Confirm two hands" makes it an illegal move (7.5.4, penalty and count from 2018). Both rule on the
  // incident's TWO_HANDS_AT_PRESS (the hub's incident.two_hands; the card may lead with its TWO_HANDS_SUSPECTED),
  // and the daemon closes the whole incident with that ruling. The outcome shows on the card (flag.id). When the
  // card leads with another finding (the suspicion joined an incident under way, or the press was an illegal
  // move too), Resolve stays the ruling on that primary (the two-handed findings close with it) and Confirm two
  // hands is offered beside it.
  const twoHandsId = (incident && incident.two_hands) || (flag.code === "TWO_HANDS_AT_PRESS" ? flag.id : null);
  const twoHands = twoHandsId !== null;
  const dismiss = twoHands && ["TWO_HANDS_SUSPECTED", "TWO_HANDS_AT_PRESS"].includes(flag.code);
  const resolve = button("resolve", dismiss ? "Dismiss" : "Resolve", () => {
    if (dismiss) dismissFinding(boardId, flag, byId.get(twoHandsId) || {id: twoHandsId, code: "TWO_HANDS_AT_PRESS"},
                                ruling.value || "dismissed: not a two-handed move");
    else sendCommand(boardId, flag.id, "resolve", {irregularity: flag.id, ruling: ruling.value || null});
  });
  const plyInput = el("input", "ply");
  plyInput.dataset.key = flag.id + "/ply";
  plyInput.type = "number";
  plyInput.min = "0";
  const s = flag.suggestion || {};
  // Without a suggested ply: the position before the move the finding is about. A finding raised at the press
  // has the ply after that move; a suspected two-handed move is seen while the move is being made, before it
  // is in the record: its own ply is the position before it.
  const before = flag.code === "TWO_HANDS_SUSPECTED" ? (flag.ply || 0) : (flag.ply || 1) - 1;
  plyInput.value = s.reinstate_ply !== undefined && s.reinstate_ply !== null ? s.reinstate_ply : Math.max(0, before);
  plyInput.setAttribute("aria-label", "reinstate to ply");
  const reinstate = button("reinstate", "Reinstate", () => {
    const ply = parseInt(plyInput.value, 10);
    if (Number.isInteger(ply) && ply >= 0 && confirm(`Reinstate board ${boardId} to ply ${ply} (${moveNo(ply)})?`)) {
      sendCommand(boardId, flag.id, "reinstate", {ply});
    }
  });
  const group = el("span", "reinstate-group");
  const plyLabel = el("label", "ply-label", "to ply ");
  plyLabel.append(plyInput);
  group.append(plyLabel, reinstate);
  row.append(ack, ruling, resolve);
  // Secondary to Resolve (styled apart, after it), no confirmation: Resolve asks none either. On a card that
  // offers Confirm two hands, its Dismiss rules out the two hands: the illegal move (the card's, or the one the
  // two-handed press was) has a Dismiss of its own.
  const illegal = dismissable(flag, incident, byId);
  if (illegal) {
    row.append(button("dismiss", twoHands ? "Dismiss illegal move" : "Dismiss", () => dismissFinding(boardId, flag, illegal,
      ruling.value || "dismissed: not an irregularity")));
  }
  if (!twoHands && illegal === flag && foldedIllegal(flag, incident, byId)) {
    row.append(button("dismiss-alone", "Dismiss press only", () => dismissFinding(boardId, flag, flag,
      ruling.value || "dismissed: the press was no irregularity", {alone: true})));
  }
  if (twoHands) {
    row.append(button("confirm", "Confirm two hands", () => {
      if (confirm(`Confirm the two-handed move on board ${boardId}? From 2018 it is then an illegal move (7.5.4).`)) {
        sendCommand(boardId, flag.id, "resolve",
                    {irregularity: twoHandsId, ruling: ruling.value || "confirmed: two hands (7.5.4)", accept: true});
      }
    }));
  }
  row.append(group);
  return row;
}

// One card per incident: the primary finding in full, the related ones folded, actions only when the
// arbiter is needed. Until the primary arrives, the first related finding that needs the arbiter leads.
function incidentCard(boardId, view, incident, byId) {
  const lead = byId.get(incident.target) || {id: incident.target, status: incident.status};
  const status = incident.status;
  const card = el("article", `flag incident sev-${incident.severity || "unknown"} status-${status}`);
  card.dataset.incident = incident.id;
  card.dataset.flag = lead.id;
  card.dataset.status = status;
  // The card leads with the finding its actions address; the rest of the incident is folded (when a
  // related finding leads — the primary resolved or only a note — the primary is folded with them).
  const led = lead.id !== incident.primary && byId.has(incident.primary);
  const related = [...(led ? [incident.primary] : []), ...incident.related.filter((id) => id !== lead.id)]
    .map((id) => byId.get(id)).filter(Boolean);
  const head = el("header", "flag-head");
  head.append(el("span", "sev", sevLabel(incident.severity)),
              el("span", "title", lead.title || lead.code || lead.id));
  if (related.length) head.append(el("span", "related-count", `+${related.length} related`));
  head.append(el("span", "status", status));
  card.append(head);
  if (incident.primary === null) card.append(el("p", "awaiting", "Main finding of this incident not received yet."));
  if (led) {
    const primary = byId.get(incident.primary);
    card.append(el("p", "follows", `Follows: ${primary.title || primary.code} (${primary.status}` +
      (primary.ruling ? `: ${primary.ruling})` : ")")));
  }
  if (status === "resolved") {
    // Out of the way: who resolved it and how, the details folded.
    if (lead.ruling) card.append(el("p", "ruling", "Ruling: " + lead.ruling));
    card.append(el("p", "summary-line", [lead.code, sideName(lead.side),
      lead.ply !== undefined && lead.ply !== null ? `ply ${lead.ply} (${moveNo(lead.ply)})` : ""].filter(Boolean).join(" · ")));
  } else {
    card.append(facts(lead, view), ...evidence(lead));
    const text = suggestionText(lead.suggestion || {});
    if (text) card.append(el("p", "suggestion", "Suggested: " + text));
    if (lead.ruling) card.append(el("p", "ruling", "Ruling: " + lead.ruling));
  }
  const outcome = outcomeLine(boardId + "/" + lead.id);
  if (outcome) card.append(outcome);
  if (incident.needs_arbiter && lead.code) card.append(actions(boardId, lead, incident, byId));
  // The findings of the incident the arbiter dismissed: their Undo (reopen), also once the card is resolved.
  for (const id of incident.dismissed || []) {
    const what = byId.get(id) || {id};
    const row = el("div", "actions undo-row");
    row.append(button("undo", id === lead.id || (incident.dismissed || []).length === 1 ? "Undo dismissal" :
      `Undo dismissal: ${what.title || what.code || id}`, () => reopen(boardId, lead.id, id)));
    card.append(row);
  }
  if (related.length) {
    const fold = el("details", "related");
    const key = boardId + "/" + incident.id;
    fold.open = openRelated.has(key);
    fold.addEventListener("toggle", () => { if (fold.open) openRelated.add(key); else openRelated.delete(key); });
    fold.append(el("summary", null, `${related.length} related finding${related.length === 1 ? "" : "s"}: ` +
      related.map((f) => f.title || f.code).join("; ")));
    const list = el("ol", "related-list");
    related.forEach((flag) => list.append(relatedItem(flag, view)));
    fold.append(list);
    card.append(fold);
  }
  return card;
}

// online | degraded | offline | unknown (an older service sends only "online").
function linkState(v) {
  if (v.link) return v.link;
  return v.online === false ? "offline" : v.online === true ? "online" : "unknown";
}

// The board's link incident: debounced by the service (link_alert: down a few seconds, or unstable — one
// incident for a flapping link, not one per drop); an older service sends none: the link state as it comes.
function linkAlert(v) {
  if ("link_alert" in v) return v.link_alert;
  const l = linkState(v);
  return l === "offline" || l === "degraded" ? {kind: "down", down: true, drops: 0, text: ""} : null;
}

function trouble(v) { return linkAlert(v) ? 1 : 0; }

// Incidents of a view; a service without incidents (older) gives one per flag, info ones as a log.
function incidentsOf(v) {
  if (Array.isArray(v.incidents)) return v.incidents;
  return (v.flags || []).filter((f) => f.severity !== "info").map((f) => ({
    id: f.id, primary: f.id, related: [], target: f.id, status: f.status, severity: f.severity,
    needs_arbiter: f.status === "open" || f.status === "acknowledged", ply: f.ply || 0}));
}

// Does this board need the arbiter: an incident not resolved, link trouble, a result signal to accept.
function attention(v) {
  return incidentsOf(v).some((i) => i.needs_arbiter) || trouble(v) === 1 || pendingSignal(v) !== null;
}

function openIncidents(v) { return incidentsOf(v).filter((i) => i.status === "open").length; }

function boardHead(v, entry) {
  const head = el("header", "tboard-head");
  head.append(el("span", "board-no", v.board_no !== null ? `Board ${v.board_no}` : v.board),
              el("span", "players", `${v.white} – ${v.black}`),
              el("span", "ply", `${moveNo(v.ply)} ${v.san_tail.length ? v.san_tail[v.san_tail.length - 1] : ""}`),
              el("span", "clocks", `${formatClock(clockNow(v.clock, entry.receivedAt, "white"))} | ${formatClock(clockNow(v.clock, entry.receivedAt, "black"))}`),
              el("span", "result", v.result === "*" ? "" : v.result));
  if (v.illegal_moves && (v.illegal_moves.white || v.illegal_moves.black)) {
    head.append(el("span", "illegal-count", `illegal W ${v.illegal_moves.white} · B ${v.illegal_moves.black}`));
  }
  if (linkAlert(v)) head.append(el("span", "link-state"));  // its word and colour: patchLink
  return head;
}

// What a card says of the board's link: the badge, the incident's text, the reasons. With a flapping link
// these change with every drop (the raw link degraded/online, "N drops", "down now / up now"): patchLink
// writes them into the card in place; the card is rebuilt only when the incident starts or ends (the
// board enters or leaves the needs-you list: cardSignature).
function linkLines(v) {
  const link = linkState(v);
  const alert = linkAlert(v);
  if (!alert) return {link, alert: null};
  const word = alert.kind === "unstable" ? "LINK UNSTABLE" : link === "offline" ? "OFFLINE" :
    link === "degraded" ? "DEGRADED" : "LINK BACK";
  const down = link === "offline" || link === "degraded";
  const why = v.link_why || [];
  const lost = link === "offline" || why.some((w) => w.startsWith("board disconnected"));
  return {link, alert, word, badge: "link-state " + (link === "offline" ? "offline" : "degraded"),
    text: alert.text ? "Link: " + alert.text : "",
    why: down && why.length ? (link === "offline" ? "Offline: " : "Degraded: ") + why.join("; ") +
      (lost ? " — moves on this board are not being recorded." : "") : ""};
}

function patchLink(card, v) {
  const lines = linkLines(v);
  if (card.dataset.link !== lines.link) card.dataset.link = lines.link;
  if (!lines.alert) return;
  const badge = card.querySelector(".tboard-head .link-state");
  if (badge) { if (badge.className !== lines.badge) badge.className = lines.badge; setText(badge, lines.word); }
  for (const [cls, text] of [["link-alert", lines.text], ["link-why", lines.why]]) {
    const line = card.querySelector(":scope > ." + cls + ", :scope > .quiet-row > ." + cls);
    if (!line) continue;
    setText(line, text);
    if (line.hidden !== !text) line.hidden = !text;
  }
}

function boardBody(v, card) {
  if (linkAlert(v)) card.append(el("p", "link-alert"), el("p", "link-why"));  // their text: patchLink
  const index = viewIndex(v);
  const byId = index.byId;
  const incidents = incidentsOf(v);
  const active = incidents.filter((i) => i.needs_arbiter).sort((a, b) =>
    (a.status !== "open") - (b.status !== "open") || (RANK[b.severity] || 0) - (RANK[a.severity] || 0) || (b.ply || 0) - (a.ply || 0));
  const resolved = incidents.filter((i) => !i.needs_arbiter);
  const body = el("div", "tboard-body");
  const svg = document.createElementNS(SVGNS, "svg");
  svg.classList.add("board", "small");
  renderBoard(svg, v.fen, v.last_move);
  const column = el("div", "flags");
  const made = new Map();
  const cardFor = (i) => keptIncidentCard(v, i, byId, made);
  if (active.length) {
    const list = el("div", "open-incidents");
    active.forEach((i) => list.append(cardFor(i)));
    column.append(list);
  }
  if (resolved.length) {
    const box = el("details", "resolved-log");
    box.open = openResolved.has(v.board);
    box.addEventListener("toggle", () => { if (box.open) openResolved.add(v.board); else openResolved.delete(v.board); });
    box.append(el("summary", null, `Resolved (${resolved.length})`));
    resolved.forEach((i) => box.append(cardFor(i)));
    column.append(box);
  }
  incidentCards.set(v.board, made);
  const log = eventLog(v, index);
  if (log) column.append(log);
  body.append(svg, column);
  card.append(body);
  const outcome = outcomeLine(v.board + "/board");
  if (outcome) card.append(outcome);
  card.append(boardActions(v));
}

// An incident's card is kept (by board, game and incident) while what it shows is the same: its signature is
// made of the incident, its findings, the moves they name and the outcome of a command on it, not of the
// board's view. A board card drawn again (a move, a note) takes the incident cards that did not change as they
// are (the same nodes: what the arbiter typed or unfolded in them stays).
const incidentCards = new Map();  // board -> Map("game/incident" -> {sig, node}), those of its latest card
function keptIncidentCard(v, incident, byId, made) {
  const game = v.state && v.state.game ? v.state.game.id : null;
  const key = game + "/" + incident.id;
  const findings = [incident.target, incident.primary, ...(incident.related || []), ...(incident.dismissed || [])]
    .map((id) => byId.get(String(id)) || null);
  const san = v.state && Array.isArray(v.state.san) ? v.state.san : [];
  const moves = findings.map((f) => (f && f.ply > 0 ? san[f.ply - 1] || null : null));
  const lead = byId.get(String(incident.target));
  const sig = JSON.stringify([incident, findings, moves, results.get(v.board + "/" + (lead ? lead.id : incident.target)) || null]);
  const kept = (incidentCards.get(v.board) || new Map()).get(key);
  const node = kept && kept.sig === sig ? kept.node : incidentCard(v.board, v, incident, byId);
  made.set(key, {sig, node});
  return node;
}

// A board that needs the arbiter: in full. Any other board: one line, opened on demand.
function boardCard(entry, quiet) {
  const v = entry.view;
  const card = el("section", "tboard rank-" + v.rank + (quiet ? " quiet" : ""));
  card.dataset.board = v.board;
  card.dataset.open = String(openIncidents(v));
  if (!quiet) {
    card.append(boardHead(v, entry));
    boardBody(v, card);
    patchLink(card, v);
    return card;
  }
  const row = el("details", "quiet-row");
  row.open = expanded.has(v.board);
  const summary = el("summary");
  summary.append(boardHead(v, entry));
  row.append(summary);
  if (row.open) boardBody(v, row);
  row.addEventListener("toggle", () => {
    if (row.open) {
      expanded.add(v.board);
      // the board's latest view (a link change is written in place, without a new card)
      if (row.children.length === 1) { const now = boards.get(v.board); boardBody(now ? now.view : v, row); patchLink(card, now ? now.view : v); }
    } else expanded.delete(v.board);
  });
  card.append(row);
  patchLink(card, v);
  return card;
}

// Many boards send many updates: draw at most every 150 ms.
let renderTimer = null;
function scheduleRender() {
  if (renderTimer === null) renderTimer = setTimeout(() => { renderTimer = null; renderAll(); }, 150);
}

// Keyed rendering: each board's card is kept (by board id) with the signature of what it shows; a render
// builds a new card only for a board whose signature changed, and moves nodes only where the order changed.
// With 50 boards, a message about one board redraws that board only, and a card under the arbiter's finger
// stays the same node (its buttons, inputs and folds untouched) while other boards change.
const cards = new Map();       // board -> {sig, node}
let quietSection = null;       // <details> of the boards with nothing for the arbiter (kept across renders)
let allQuiet = null;           // <p> "Nothing needs you." / "No boards yet." (kept across renders)

// Everything a card shows, but the clocks (counted down in place every 500 ms), the message counters and
// the link as it changes drop by drop (written in place by patchLink): of the link, only whether the board
// has a link incident (it entered or left the needs-you list for it) makes a new card. What the view shows
// is its revision (entry.rev: a new one with each message that changes more than these, onMessage), not
// the view itself: a board's signature costs the same with 600 findings as with 10.
const UNSHOWN = new Set(["clock", "seq", "session", "status"]);
const LINK_LIVE = new Set(["link", "online", "link_why", "link_alert"]);
function signature(entry, quiet) {
  const v = entry.view;
  const outcomes = [...results.entries()].filter(([key]) => key.startsWith(v.board + "/"));
  return JSON.stringify([quiet, outcomes, linkAlert(v) !== null, entry.rev]);
}

// Does a delta change what a card shows (more than the clock, the counters, the link drop by drop)?
let revisions = 0;             // the views' revisions (entry.rev), page-wide
function showsMore(delta) {
  for (const key of Object.keys(delta)) {
    if (key === "t" || key === "board") continue;
    if (key === "state") { if (Object.keys(delta.state).some((name) => !UNSHOWN.has(name))) return true; continue; }
    if (key !== "set") return true;
    for (const name of Object.keys(delta.set)) if (!UNSHOWN.has(name) && !LINK_LIVE.has(name)) return true;
  }
  return false;
}

function cardOf(entry, quiet) {
  const sig = signature(entry, quiet);
  const kept = cards.get(entry.view.board);
  if (kept && kept.sig === sig) { patchLink(kept.node, entry.view); return kept.node; }
  const node = boardCard(entry, quiet);
  cards.set(entry.view.board, {sig, node});
  return node;
}

// Make parent's children exactly `wanted` (in order), touching only what differs.
function reconcile(parent, wanted) {
  const keep = new Set(wanted);
  for (const child of [...parent.childNodes]) if (!keep.has(child)) child.remove();
  let at = parent.firstChild;
  for (const node of wanted) {
    if (node === at) { at = at.nextSibling; continue; }
    parent.insertBefore(node, at);
  }
}

function setText(node, text) { if (node.textContent !== text) node.textContent = text; }

function renderAll() {
  const visible = [...boards.values()].filter((e) => shown(e.view));
  const byNumber = (a, b) => ((a.view.board_no || 9999) - (b.view.board_no || 9999)) || (a.view.board < b.view.board ? -1 : 1);
  const needing = visible.filter((e) => attention(e.view)).sort((a, b) =>
    (openIncidents(b.view) > 0) - (openIncidents(a.view) > 0) || (b.view.rank - a.view.rank) ||
    (trouble(b.view) - trouble(a.view)) || byNumber(a, b));
  const quiet = visible.filter((e) => !attention(e.view)).sort(byNumber);
  // Keep the arbiter's place when the card being typed in is redrawn: the focused input and its cursor.
  const focused = document.activeElement;
  const keep = focused && focused.dataset && focused.dataset.key && focused.closest(".tboard") ?
    {board: focused.closest(".tboard").dataset.board, key: focused.dataset.key, value: focused.value,
     start: focused.selectionStart, end: focused.selectionEnd} : null;
  const nodes = needing.map((e) => cardOf(e, false));
  if (!needing.length) {
    if (!allQuiet) allQuiet = el("p", "all-quiet");
    setText(allQuiet, visible.length ? "Nothing needs you." : "No boards yet.");
    nodes.push(allQuiet);
  }
  if (quiet.length) {
    if (!quietSection) {
      quietSection = el("details", "quiet-boards");
      quietSection.open = quietOpen;
      quietSection.addEventListener("toggle", () => { quietOpen = quietSection.open; });
      quietSection.append(el("summary"), el("div", "quiet-list"));
    }
    setText(quietSection.firstChild, `${quiet.length} board${quiet.length === 1 ? "" : "s"} with nothing for you`);
    reconcile(quietSection.lastChild, quiet.map((e) => cardOf(e, true)));
    nodes.push(quietSection);
  }
  reconcile(container, nodes);
  const present = new Set(visible.map((e) => e.view.board));
  for (const board of [...cards.keys()]) if (!present.has(board)) cards.delete(board);
  for (const board of [...incidentCards.keys()]) if (!present.has(board)) incidentCards.delete(board);
  // (an incident card kept in a board card drawn again was moved: the input is the same, its focus lost)
  if (keep && document.activeElement !== focused) {
    const again = container.querySelector(`.tboard[data-board="${CSS.escape(keep.board)}"] [data-key="${CSS.escape(keep.key)}"]`);
    if (again) {
      again.value = keep.value;
      again.focus();
      if (keep.start !== null && keep.start !== undefined && again.setSelectionRange) {
        try { again.setSelectionRange(keep.start, keep.end); } catch (e) { /* number inputs have no selection */ }
      }
    }
  }
  const openCount = visible.reduce((n, e) => n + openIncidents(e.view), 0);
  const troubled = visible.filter((e) => trouble(e.view)).length;
  setText(document.getElementById("summary"), `${boards.size} board${boards.size === 1 ? "" : "s"} · ${openCount} open incident${openCount === 1 ? "" : "s"}` +
    ` · ${needing.length} need${needing.length === 1 ? "s" : ""} you` + (troubled ? ` · ${troubled} with link trouble` : ""));
}

// The attention signal (the banner, its pulse and, when the arbiter switched sound on, the beep): one
// incident, one ring. An incident rings once, the first time the page sees it open at a severity that rings
// ([web] ring; never info: notes ask for nothing); its updates, its related findings and its end ring
// nothing. A board's link incident (the service's debounced link_alert: down for the grace period, or
// unstable) rings once when it starts, not with each drop, not when it ends. What the page's first snapshot
// brings rings nothing. The banner shows the most severe of what rang until "Seen"; an entry goes by itself
// once its incident no longer needs the arbiter (acknowledged, resolved, the link settled). Ids are unique
// within a game only: the key names the game, or the next game's illegal move with an id seen before would
// not ring.
let rings = 0;
function ring(key, entry) {
  unseen.set(key, {...entry, at: ++rings});
  banner.dataset.rings = String(rings);
  showBanner();
  banner.classList.remove("ringing");
  void banner.offsetWidth;  // the pulse starts again for a new ring while the banner is up
  banner.classList.add("ringing");
  beep(entry.kind);
}

function showBanner() {
  const all = [...unseen.values()].sort((a, b) => (b.rank - a.rank) || (b.at - a.at));
  if (!all.length) { banner.hidden = true; return; }
  const more = all.length > 1 ? ` (+${all.length - 1} more)` : "";
  setText(bannerText, all[0].text + more);
  if (banner.dataset.kind !== all[0].kind) banner.dataset.kind = all[0].kind;
  banner.hidden = false;
}

function boardLabel(view) { return view.board_no !== null ? "Board " + view.board_no : view.board; }

// `delta`: the message that made this view from the one before (null: a full view). Of a delta, only the
// incidents it changed and those on the banner are looked at (the others are as the page saw them last).
function announce(view, delta) {
  if (!shown(view)) return;
  const index = viewIndex(view);
  const byId = index.byId;
  const game = view.state && view.state.game ? view.state.game.id : null;
  let changed = false;
  const present = new Set();
  let looked = incidentsOf(view);
  // a delta that moves the board into this screen's section (its round or number) is looked at whole
  if (delta && Array.isArray(view.incidents) && !(delta.set && ("round" in delta.set || "board_no" in delta.set))) {
    looked = [...(delta.incidents || [])];
    for (const [key, entry] of unseen) {
      if (entry.board !== view.board || entry.incident === undefined) continue;
      const incident = index.incById.get(entry.incident);
      if (incident && !looked.includes(incident)) looked.push(incident);
      else if (!incident) { unseen.delete(key); changed = true; }  // gone from the view
    }
  }
  for (const incident of looked) {
    const key = [view.board, game, incident.id].join("/");
    present.add(key);
    const lead = byId.get(incident.target) || {};
    const rank = RANK[incident.severity] || 0;
    const text = `${sevLabel(incident.severity).toUpperCase()} — ${boardLabel(view)} — ${sideName(lead.side)} — ${lead.title || lead.code || ""}`;
    const kind = incident.severity === "illegal-move" ? "illegal" : "warning";
    if (unseen.has(key)) {
      // still on the banner: gone once it no longer waits for the arbiter, else its latest words (a primary
      // may raise the severity) without ringing again
      if (incident.status !== "open") unseen.delete(key);
      else unseen.set(key, {...unseen.get(key), rank, kind, text});
      changed = true;
      continue;
    }
    if (rung.has(key) || !RINGS.has(incident.severity)) continue;
    if (firstSnapshot) { rung.add(key); continue; }
    if (incident.status !== "open") continue;
    rung.add(key);
    ring(key, {rank, kind, text, board: view.board, incident: String(incident.id)});
  }
  const linkKey = view.board + "/link";
  for (const [key, entry] of delta ? [] : unseen) {  // an incident no longer in the view (a new game on the board)
    if (entry.board === view.board && key !== linkKey && !present.has(key)) { unseen.delete(key); changed = true; }
  }
  // A link incident is told from the next by its start ("since"): the page may not have seen the first end
  // (its socket down meanwhile), and the next one must ring all the same.
  const alert = linkAlert(view);
  if (!alert) {
    linkRung.delete(view.board);
    if (unseen.delete(linkKey)) changed = true;
  } else {
    const text = `LINK — ${boardLabel(view)} — ${alert.text || linkState(view)}`;
    const since = alert.since !== undefined ? alert.since : null;
    if (linkRung.has(view.board) && linkRung.get(view.board) === since) {
      if (unseen.has(linkKey)) {
        unseen.set(linkKey, {...unseen.get(linkKey), text});
        changed = true;
      }
    } else if (RINGS.has("link")) {
      linkRung.set(view.board, since);
      if (!firstSnapshot) ring(linkKey, {rank: 1, kind: "link", text, board: view.board});
      else if (unseen.delete(linkKey)) changed = true;
    }
  }
  if (changed) showBanner();
}

function onMessage(msg) {
  if (msg.t === "snapshot") {
    boards.clear();
    msg.boards.forEach((view) => { boards.set(view.board, {view, receivedAt: performance.now(), rev: ++revisions}); announce(view, null); });
    firstSnapshot = false;
    renderAll();
  } else if (msg.t === "board" || msg.t === "delta") {
    // "delta": what changed of a board the page holds (the socket's snapshot or a "board" came first)
    const kept = msg.t === "delta" ? boards.get(msg.board) : null;
    if (msg.t === "delta" && !kept) return;
    const view = msg.t === "delta" ? applyDelta(kept.view, msg) : msg.view;
    const rev = msg.t === "delta" && !showsMore(msg) ? kept.rev : ++revisions;
    boards.set(view.board, {view, receivedAt: performance.now(), rev});
    announce(view, msg.t === "delta" ? msg : null);
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
