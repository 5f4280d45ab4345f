// Shared helpers of the broadcast screen and the arbiter tablet: SVG board, clocks, socket.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const PIECE_IDS = {
  p: "black-pawn", n: "black-knight", b: "black-bishop", r: "black-rook", q: "black-queen", k: "black-king",
  P: "white-pawn", N: "white-knight", B: "white-bishop", R: "white-rook", Q: "white-queen", K: "white-king",
};
const FILES = "abcdefgh";

// An 8x8 SVG board (python-chess piece shapes, served in the page), white at the bottom.
function renderBoard(svg, fen, lastMove) {
  const placement = (fen || "8/8/8/8/8/8/8/8").split(" ")[0];
  const key = placement + "|" + (lastMove || "");
  if (svg.dataset.key === key) return;
  svg.dataset.key = key;
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute("viewBox", "0 0 360 360");
  const marked = new Set();
  if (lastMove && lastMove.length >= 4) {
    marked.add(lastMove.slice(0, 2));
    marked.add(lastMove.slice(2, 4));
  }
  for (let rank = 0; rank < 8; rank++) {
    for (let file = 0; file < 8; file++) {
      const name = FILES[file] + (8 - rank);
      const light = (rank + file) % 2 === 0;
      const rect = document.createElementNS(SVGNS, "rect");
      rect.setAttribute("x", file * 45);
      rect.setAttribute("y", rank * 45);
      rect.setAttribute("width", 45);
      rect.setAttribute("height", 45);
      let fill = light ? "#ffce9e" : "#d18b47";
      if (marked.has(name)) fill = light ? "#cdd16a" : "#aaa23b";
      rect.setAttribute("fill", fill);
      svg.appendChild(rect);
    }
  }
  const rows = placement.split("/");
  for (let rank = 0; rank < 8 && rank < rows.length; rank++) {
    let file = 0;
    for (const ch of rows[rank]) {
      if (ch >= "1" && ch <= "8") { file += Number(ch); continue; }
      const id = PIECE_IDS[ch];
      if (id && file < 8) {
        const use = document.createElementNS(SVGNS, "use");
        use.setAttribute("href", "#" + id);
        use.setAttribute("transform", `translate(${file * 45},${rank * 45})`);
        svg.appendChild(use);
      }
      file += 1;
    }
  }
}

// Seconds -> "1:05:09", "5:09" or, under 10 s, "0:09.4".
function formatClock(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "–:––";
  const s = Math.max(0, seconds);
  if (s < 10) return "0:0" + s.toFixed(1);
  const whole = Math.floor(s);
  const h = Math.floor(whole / 3600), m = Math.floor((whole % 3600) / 60), sec = whole % 60;
  const mm = h > 0 ? String(m).padStart(2, "0") : String(m);
  return (h > 0 ? h + ":" : "") + mm + ":" + String(sec).padStart(2, "0");
}

// A clock reading {white, black, running, age} received at performance.now() = receivedAt.
function clockNow(clock, receivedAt, side) {
  if (!clock || clock[side] === null || clock[side] === undefined) return null;
  if (clock.running !== side) return clock[side];
  const elapsed = (performance.now() - receivedAt) / 1000 + (clock.age || 0);
  return clock[side] - elapsed;
}

// A WebSocket that reconnects with backoff; onMessage(obj), onState("open"|"closed").
// With keepAlive, it sends "ping" every minute (keeps the arbiter's session alive during a round);
// close code 4401 means the session ended: back to the login page.
function connectSocket(path, onMessage, onState, keepAlive) {
  let delay = 500;
  function open() {
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
    const ws = new WebSocket(url);
    let pinger = null;
    ws.onopen = () => {
      delay = 500;
      onState("open");
      if (keepAlive) pinger = setInterval(() => ws.send("ping"), 60000);
    };
    ws.onmessage = (event) => {
      let obj;
      try { obj = JSON.parse(event.data); } catch (e) { return; }
      onMessage(obj);
    };
    ws.onclose = (event) => {
      if (pinger !== null) clearInterval(pinger);
      if (event.code === 4401) { location.href = "/arbiter/login"; return; }
      if (keepAlive) {  // a refused handshake (401) looks like 1006: ask the page itself
        fetch("/arbiter", {redirect: "manual", credentials: "same-origin"})
          .then((r) => { if (r.type === "opaqueredirect" || r.status === 401) location.href = "/arbiter/login"; })
          .catch(() => {});
      }
      onState("closed");
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 10000);
    };
  }
  open();
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

// Which boards this screen shows, from the address: ?round=3 and/or ?boards=1-12,15 (board numbers).
// A big hall puts one slice of the boards on each screen, or each arbiter on a section.
function boardFilter() {
  const params = new URLSearchParams(location.search);
  const round = params.get("round");
  const ranges = (params.get("boards") || "").split(",").map((part) => part.trim()).filter(Boolean).map((part) => {
    const [lo, hi] = part.split("-").map((n) => parseInt(n, 10));
    return [lo, Number.isNaN(hi) || hi === undefined ? lo : hi];
  }).filter(([lo, hi]) => !Number.isNaN(lo) && !Number.isNaN(hi));
  return (view) => {
    if (round !== null && String(view.round || "").split(".")[0] !== round) return false;
    if (!ranges.length) return true;
    return view.board_no !== null && ranges.some(([lo, hi]) => view.board_no >= lo && view.board_no <= hi);
  };
}

// A tablet socket's "delta" (docs/consumers.md, "Tablet socket"): the board's view after it, a new object.
// Fields changed ("set"), the state's keys changed or gone, the moves and SAN kept up to a ply and appended
// to, the findings and incidents changed or gone; the findings stay in arrival order ("pos"), the incidents
// newest first ("last"), the log is the findings "noted" (in "pos" order). The same as
// boardd.consumers.web.tablet.apply_delta.
// Its work is what the delta carries, not the game: the view's lists (findings, incidents, log, moves, SAN)
// pass to the new view and are changed there in place (the view it is applied to gives them up: the page
// keeps only the latest), each finding and incident found by id (viewIndex) and put in its place by a binary
// search, nothing re-sorted or walked whole.
function applyDelta(view, delta) {
  const flags = Array.isArray(view.flags) ? view.flags : [];
  const incidents = Array.isArray(view.incidents) ? view.incidents : [];
  const index = listIndex(flags, incidents, true);
  const out = Object.assign({}, view, delta.set || {});
  const state = Object.assign({}, view.state || {}, delta.state || {});
  for (const key of delta.state_drop || []) delete state[key];
  for (const name of ["moves", "san"]) {
    if (!delta[name]) continue;
    const list = Array.isArray(state[name]) ? state[name] : [];
    if (list.length > delta[name][0]) list.length = delta[name][0];
    for (const item of delta[name][1]) list.push(item);
    state[name] = list;
  }
  out.state = state;
  for (const id of delta.flags_drop || []) dropFlag(index, String(id));
  for (const flag of delta.flags || []) {
    dropFlag(index, String(flag.id));
    placeSorted(flags, flag, byPos);
    index.byId.set(String(flag.id), flag);
    if (flag.status === "noted") {
      placeSorted(index.log, String(flag.id), (a, b) => byPos(index.byId.get(a), index.byId.get(b)));
      placeSorted(index.notes, flag, newestNoteFirst);
    }
  }
  for (const id of delta.incidents_drop || []) dropIncident(index, String(id));
  for (const incident of delta.incidents || []) {
    dropIncident(index, String(incident.id));
    placeSorted(incidents, incident, byLastDesc);
    index.incById.set(String(incident.id), incident);
  }
  out.flags = flags;
  out.incidents = incidents;
  out.log = index.log;
  return out;
}

// The page's index of a board's findings and incidents, kept beside the view (not in it, nor in its JSON):
// by id, the log (ids of the findings "noted", "pos" order) and the notes newest first (the event log's
// order). Built once from a full view; applyDelta keeps it. `derive`: the log from the findings (applyDelta's
// rule), else the view's own `log` (a full view, as the hub sent it).
const LIST_INDEX = new WeakMap();  // the view's findings (the array) -> its index
function viewIndex(view) {
  return listIndex(Array.isArray(view.flags) ? view.flags : [], Array.isArray(view.incidents) ? view.incidents : [],
                   false, view.log);
}

function listIndex(flags, incidents, derive, log) {
  let index = LIST_INDEX.get(flags);
  if (!index || (derive && !index.derived)) {
    const byId = index ? index.byId : new Map(flags.map((f) => [String(f.id), f]));
    const own = !derive && Array.isArray(log);
    const ids = own ? log.filter((id) => byId.has(String(id))) : flags.filter((f) => f.status === "noted").map((f) => String(f.id));
    // stable: the order of the log sorted by arbiter.js newerFirst (time first, then the log's order)
    const notes = ids.map((id) => byId.get(String(id))).sort(newerNote);
    index = {flags, incidents: null, byId, incById: null, log: own ? log : ids, notes, derived: !own};
    LIST_INDEX.set(flags, index);
  }
  if (index.incidents !== incidents) {
    index.incidents = incidents;
    index.incById = new Map(incidents.map((i) => [String(i.id), i]));
  }
  return index;
}

function byPos(a, b) { return (a.pos || 0) - (b.pos || 0); }
function byLastDesc(a, b) { return (b.last || 0) - (a.last || 0); }
function noteKey(f) { return [Number(f.session) || 0, Number(f.seq) || 0]; }
function newerNote(a, b) { const ka = noteKey(a), kb = noteKey(b); return (kb[0] - ka[0]) || (kb[1] - ka[1]); }
function newestNoteFirst(a, b) { return newerNote(a, b) || byPos(a, b); }

// Insert `item` after every item not after it (`order`: a sorted list stays sorted, ties in arrival order).
function placeSorted(list, item, order) {
  let lo = 0, hi = list.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (order(list[mid], item) <= 0) lo = mid + 1; else hi = mid; }
  list.splice(lo, 0, item);
}

// Remove `item` (the same object) from a list sorted by `order`: found by a binary search.
function removeSorted(list, item, order) {
  let lo = 0, hi = list.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (order(list[mid], item) < 0) lo = mid + 1; else hi = mid; }
  for (let at = lo; at < list.length && order(list[at], item) === 0; at++) {
    if (list[at] === item) { list.splice(at, 1); return; }
  }
  const at = list.indexOf(item);  // a list the hub sent out of order: still right
  if (at >= 0) list.splice(at, 1);
}

function dropFlag(index, id) {
  const old = index.byId.get(id);
  if (!old) return;
  removeSorted(index.flags, old, byPos);
  if (old.status === "noted") {
    const at = index.log.indexOf(id, lowerBound(index.log, old, (a) => index.byId.get(a)));
    if (at >= 0) index.log.splice(at, 1); else { const any = index.log.indexOf(id); if (any >= 0) index.log.splice(any, 1); }
    removeSorted(index.notes, old, newestNoteFirst);
  }
  index.byId.delete(id);
}

// The first place in the log (ids in "pos" order) of a finding at `flag`'s "pos".
function lowerBound(ids, flag, lookup) {
  let lo = 0, hi = ids.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (byPos(lookup(ids[mid]) || {}, flag) < 0) lo = mid + 1; else hi = mid; }
  return lo;
}

function dropIncident(index, id) {
  const old = index.incById.get(id);
  if (!old) return;
  removeSorted(index.incidents, old, byLastDesc);
  index.incById.delete(id);
}
