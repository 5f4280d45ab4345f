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

// A tablet socket's "delta" (docs/consumers.md, "Tablet socket"): the board's view after it, a new object
// (the view it is applied to is left as it was). Fields changed ("set"), the state's keys changed or gone,
// the moves and SAN kept up to a ply and appended to, the findings and incidents changed or gone; the
// findings stay in arrival order ("pos"), the incidents newest first ("last"), the log is the findings
// "noted". The same as boardd.consumers.web.tablet.apply_delta.
function applyDelta(view, delta) {
  const out = Object.assign({}, view, delta.set || {});
  const state = Object.assign({}, view.state || {}, delta.state || {});
  for (const key of delta.state_drop || []) delete state[key];
  for (const name of ["moves", "san"]) {
    if (delta[name]) state[name] = (state[name] || []).slice(0, delta[name][0]).concat(delta[name][1]);
  }
  out.state = state;
  out.flags = mergedById(view.flags || [], delta.flags || [], delta.flags_drop || [], (f) => f.pos);
  out.incidents = mergedById(view.incidents || [], delta.incidents || [], delta.incidents_drop || [], (i) => -i.last);
  out.log = out.flags.filter((f) => f.status === "noted").map((f) => String(f.id));
  return out;
}

function mergedById(items, changed, dropped, order) {
  if (!changed.length && !dropped.length) return items;
  const gone = new Set(dropped.concat(changed.map((c) => String(c.id))));
  return items.filter((i) => !gone.has(String(i.id))).concat(changed).sort((a, b) => order(a) - order(b));
}
