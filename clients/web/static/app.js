// Hearts Lab in the browser: the page over the JSON API (api/v1/...). No build step, no libraries.
//
// startPage(backend) starts it (main.js): `backend.fetch(path, init)` answers the API's requests, the
// game server's over HTTP under `hearts serve`, or the browser's own (clients/js/src/local_api.js) in
// the static build. The back end holds the game; this page only shows the view it gets back (what seat 0, "you", may
// see) and sends one card at a time: a pass pick during passing, a card during play. An answer
// carries the events since your last card (the opponents' cards, the tricks, the hand's score):
// the page replays them one by one at the chosen pace (the "Pace" setting; ?fast=1 plays them
// instantly), marking the seat that is playing, so you always see whose turn it is. Passing is
// chosen here (three cards, undo by clicking again) and sent when you confirm. The URL carries the
// game (?game=<id>), so a reload continues it; the log of what you saw is kept in localStorage.

const API = "api/v1";
let backend = null; // what answers the API's requests (startPage)
const RANKS = "23456789TJQKA";
const SUITS = {
  C: { sym: "♣", name: "clubs", red: false },
  D: { sym: "♦", name: "diamonds", red: true },
  H: { sym: "♥", name: "hearts", red: true },
  S: { sym: "♠", name: "spades", red: false },
};
const SYMBOL_SUIT = { "♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S" };
const RANK_NAMES = {
  2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
  T: "ten", J: "jack", Q: "queen", K: "king", A: "ace",
};
const POS_NAMES = { south: "South", west: "West", north: "North", east: "East" };
const PRESET_LABELS = {
  classic: "Classic (4 players, to 100)",
  quick: "Quick (4 players, to 50)",
  long: "Long (4 players, to 150)",
  two_player: "Two players (28 cards, hearts are trump)",
};
const OPTION_LABELS = {
  pass_cycle: "Pass cycle",
  target_score: "Target score",
  moon: "Shooting the moon",
  queen_waits_for_hearts: "Q♠ waits until hearts are broken",
  jack_of_diamonds_bonus: "J♦ counts −10",
  first_trick_protection: "No points on the first trick",
  hearts_must_be_broken: "No heart lead before hearts are broken",
  queen_breaks_hearts: "Q♠ breaks hearts",
  num_players: "Players",
};
const VALUE_LABELS = {
  add_to_others: "others get the points",
  subtract_from_self: "shooter subtracts",
  shooters_choice: "shooter's choice",
  off: "off",
};

// ---- cards -------------------------------------------------------------------------------------

const rankText = (card) => (card[0] === "T" ? "10" : card[0]);
export const cardSymbol = (card) => rankText(card) + SUITS[card[1]].sym;
export const cardName = (card) => `${RANK_NAMES[card[0]]} of ${SUITS[card[1]].name}`;
const cardsText = (list) => (list && list.length ? list.map(cardSymbol).join(" ") : "—");

/** "qs", "10h", "Q♠", "th" -> "QS"; null when the text is not a card. */
export function parseCard(text) {
  let t = String(text).trim().toUpperCase();
  t = [...t].map((ch) => SYMBOL_SUIT[ch] || ch).join("");
  if (t.length < 2) return null;
  let rank = t.slice(0, -1);
  const suit = t.slice(-1);
  if (rank === "10") rank = "T";
  if (rank.length !== 1 || !RANKS.includes(rank) || !(suit in SUITS)) return null;
  return rank + suit;
}

function cardElement(card, tag = "span") {
  const el = document.createElement(tag);
  el.className = `card ${SUITS[card[1]].red ? "red" : "black"} suit-${card[1]}`;
  el.dataset.card = card;
  const corner = document.createElement("span"); // the index in the corner: readable when fanned
  corner.className = "corner";
  const rank = document.createElement("span");
  rank.className = "rank";
  rank.textContent = rankText(card);
  const suit = document.createElement("span");
  suit.className = "suit";
  suit.textContent = SUITS[card[1]].sym;
  corner.append(rank, suit);
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = SUITS[card[1]].sym;
  corner.setAttribute("aria-hidden", "true");
  pip.setAttribute("aria-hidden", "true");
  el.append(corner, pip);
  el.setAttribute("aria-label", cardName(card));
  if (tag === "span") el.setAttribute("role", "img");
  return el;
}

// ---- state -------------------------------------------------------------------------------------

const params = new URLSearchParams(location.search);
const state = {
  view: null,
  options: null,
  busy: false,
  typed: "",
  focusIndex: 0,
  restoreFocus: false, // put the focus back on the hand after a play made from the hand
  delay: 700, // ms per opponent's card; a trick stays 1.5 times as long before it goes to its winner
  passSel: [], // the cards chosen to pass, not yet sent (undo: click one again)
  shown: null, // the table as shown now (replaying events moves it on before the view is rendered)
};
if (params.get("fast") === "1") state.delay = 0;
else {
  const saved = localStorage.getItem("hearts-speed");
  if (saved !== null && !Number.isNaN(Number(saved))) state.delay = Number(saved);
}

const $ = (id) => document.getElementById(id);
const sleep = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

function setPageState(name) {
  document.body.dataset.state = name;
}

// ---- the API -----------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(message, status, data) {
    super(message);
    this.status = status;
    this.data = data;
  }
}

function detailText(data, res) {
  const detail = data && data.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => (d && d.msg ? `${(d.loc || []).slice(1).join(".") || "request"}: ${d.msg}` : String(d))).join("; ");
  }
  return `the server answered ${res.status} ${res.statusText}`.trim();
}

async function api(path, options = {}) {
  let res;
  try {
    res = await backend.fetch(`${API}/${path}`, {
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      ...options,
    });
  } catch (err) {
    throw new ApiError(`cannot reach the server (${err.message})`, 0, null);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(detailText(data, res), res.status, data);
  return data;
}

// ---- seats -------------------------------------------------------------------------------------

function numPlayers(view) {
  return (view && view.rules && view.rules.num_players) || (view ? view.players.length : 4);
}

function numCardsDealt(view) {
  const r = view.rules || {};
  const deck = r.deck === "short28" ? 28 : 52;
  return Math.floor((deck - (r.dead_cards || 0)) / numPlayers(view));
}

function positionOf(seat, n) {
  if (n === 2) return seat === 0 ? "south" : "north";
  return ["south", "west", "north", "east"][seat % 4];
}

function playerName(view, seat) {
  if (seat === 0) return "You";
  const p = view.players.find((x) => x.seat === seat);
  return `${POS_NAMES[positionOf(seat, numPlayers(view))]} (${p ? p.name : `seat ${seat}`})`;
}

function shortName(view, seat) {
  return seat === 0 ? "You" : POS_NAMES[positionOf(seat, numPlayers(view))];
}

function winnerText(view, winner) {
  if (winner === null || winner === undefined) return "No winner";
  const seats = Array.isArray(winner) ? winner : [winner];
  const names = seats.map((s) => playerName(view, s));
  if (seats.length === 1) return seats[0] === 0 ? "You win!" : `${names[0]} wins.`;
  return `${names.join(" and ")} share the win.`;
}

// ---- the log (kept in localStorage per game: only what was shown) -------------------------------

const LOG_KEEP = 400; // lines kept per game
const LOG_GAMES = 8; // games whose logs are kept

function storageGet(key) {
  try {
    return JSON.parse(localStorage.getItem(key));
  } catch {
    return null;
  }
}

function storageSet(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or refused: the log is simply not kept
  }
}

function logLine(text, kind = "") {
  const li = document.createElement("li");
  li.textContent = text;
  if (kind) li.className = `ev-${kind}`;
  const list = $("log");
  list.append(li);
  while (list.children.length > LOG_KEEP) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function log(text, kind = "") {
  logLine(text, kind);
  const id = state.view && state.view.id;
  if (!id) return;
  const entries = storageGet(`hearts-log:${id}`) || [];
  entries.push([kind, text]);
  storageSet(`hearts-log:${id}`, entries.slice(-LOG_KEEP));
  const games = (storageGet("hearts-log-games") || []).filter((g) => g !== id);
  games.unshift(id);
  for (const old of games.slice(LOG_GAMES)) localStorage.removeItem(`hearts-log:${old}`);
  storageSet("hearts-log-games", games.slice(0, LOG_GAMES));
}

function restoreLog(id) {
  $("log").replaceChildren();
  for (const [kind, text] of storageGet(`hearts-log:${id}`) || []) logLine(text, kind);
}

/** Which events of an answer the player has seen: a reload replays none, and logs only the unseen. */
function answerSignature(view) {
  return `${view.hand_number}/${view.trick_number}/${view.to_act}/${view.phase}/${JSON.stringify(view.events || [])}`;
}

function markSeen(view, count) {
  storageSet(`hearts-seen:${view.id}`, { sig: answerSignature(view), count });
}

function showMessage(text, kind = "error") {
  const el = $("message");
  el.textContent = text;
  el.className = `message ${kind}`;
}

function clearMessage() {
  $("message").textContent = "";
  $("message").className = "message";
}

// ---- the table as shown ---------------------------------------------------------------------------

const pointsText = (p) => `${p} ${p === 1 ? "point" : "points"}`;

/** The table of a view: what the page shows when no events are being replayed. */
function shownOf(view) {
  const n = numPlayers(view);
  const dealt = numCardsDealt(view);
  const counts = view.players.map((p) => {
    if (p.seat === 0) return view.hand.length;
    if (view.phase === "over") return 0;
    if (view.phase === "pass") return dealt;
    return dealt - view.trick_number - (view.trick.some((t) => t.seat === p.seat) ? 1 : 0);
  });
  return {
    n,
    hand: [...view.hand],
    received: null,
    trick: [...(view.trick || [])],
    winner: null,
    counts,
    handPoints: [...(view.phase === "over" && state.lastHand ? state.lastHand.points : view.hand_points || Array(n).fill(0))],
    scores: [...view.scores],
    turn: view.phase === "over" ? null : view.to_act,
    heartsBroken: !!view.hearts_broken,
    lastTrick: view.last_trick,
  };
}

function setTurn(view, seat) {
  state.shown.turn = seat;
  document.body.dataset.turn = seat === null || seat === undefined ? "" : String(seat);
  renderSeats(view);
}

function setStatus(text) {
  $("status").textContent = text;
}

function renderBacks(box, count) {
  box.replaceChildren();
  const shown = Math.min(count, 13);
  for (let i = 0; i < shown; i++) {
    const back = document.createElement("span");
    back.className = "back";
    back.style.setProperty("--i", i);
    back.style.setProperty("--n", shown);
    box.append(back);
  }
}

function renderSeats(view) {
  const s = state.shown;
  const n = numPlayers(view);
  for (const pos of ["north", "west", "east", "south"]) $(`seat-${pos}`).hidden = true;
  for (const p of view.players) {
    const box = $(`seat-${positionOf(p.seat, n)}`);
    box.hidden = false;
    box.dataset.seat = p.seat;
    box.replaceChildren();
    const label = document.createElement("div");
    label.className = "seat-label";
    const name = document.createElement("span");
    name.className = "seat-name";
    name.textContent = p.seat === 0 ? "You" : POS_NAMES[positionOf(p.seat, n)];
    label.append(name);
    if (p.seat !== 0) {
      const agent = document.createElement("span");
      agent.className = "seat-agent";
      agent.textContent = p.name;
      label.append(agent);
    }
    const score = document.createElement("span");
    score.className = "seat-score";
    const taken = s.handPoints[p.seat] || 0;
    score.textContent = `${s.scores[p.seat]} ${s.scores[p.seat] === 1 ? "pt" : "pts"}${taken ? ` (+${taken})` : ""}`;
    score.title = `${pointsText(s.scores[p.seat])} in total${taken ? `, ${taken} taken this hand` : ""}`;
    label.append(score);
    box.append(label);
    const turn = s.turn === p.seat;
    if (p.seat !== 0) {
      const backs = document.createElement("div");
      backs.className = "backs";
      backs.setAttribute("aria-hidden", "true");
      renderBacks(backs, s.counts[p.seat]);
      const count = document.createElement("span");
      count.className = "count";
      count.textContent = `${s.counts[p.seat]} ${s.counts[p.seat] === 1 ? "card" : "cards"}`;
      box.append(backs, count);
    }
    box.classList.toggle("to-act", turn);
    box.setAttribute("aria-label", `${playerName(view, p.seat)}: ${pointsText(s.scores[p.seat])}` +
      `${taken ? `, ${taken} this hand` : ""}${p.seat ? `, ${s.counts[p.seat]} cards` : ""}${turn ? ", to play" : ""}`);
  }
  document.body.dataset.turn = s.turn === null || s.turn === undefined ? "" : String(s.turn);
}

function renderTrick(view) {
  const s = state.shown;
  const n = numPlayers(view);
  for (const slot of $("trick").querySelectorAll(".slot")) {
    slot.replaceChildren();
    slot.classList.remove("winner");
    slot.hidden = n === 2 && (slot.dataset.pos === "west" || slot.dataset.pos === "east");
  }
  for (const { seat, card } of s.trick) {
    const slot = $("trick").querySelector(`.slot[data-pos="${positionOf(seat, n)}"]`);
    const el = cardElement(card);
    el.setAttribute("aria-label", `${shortName(view, seat)}: ${cardName(card)}`);
    slot.append(el);
    if (s.winner === seat) slot.classList.add("winner");
  }
}

function renderScores(view) {
  const s = state.shown;
  const body = $("scores").querySelector("tbody");
  body.replaceChildren();
  for (const p of view.players) {
    const tr = document.createElement("tr");
    tr.dataset.seat = p.seat;
    const name = document.createElement("th");
    name.scope = "row";
    name.textContent = playerName(view, p.seat);
    const hand = document.createElement("td");
    hand.className = "hand-points";
    hand.textContent = s.handPoints[p.seat] || 0;
    const total = document.createElement("td");
    total.className = "total";
    total.textContent = s.scores[p.seat];
    tr.append(name, hand, total);
    body.append(tr);
  }
  const r = view.rules || {};
  const bits = [`${r.name || "custom"} rules`, `to ${r.target_score}`];
  if (r.moon) bits.push(`moon: ${VALUE_LABELS[r.moon] || r.moon}`);
  if (r.queen_waits_for_hearts) bits.push("Q♠ waits");
  if (r.jack_of_diamonds_bonus) bits.push("J♦ −10");
  $("rules-line").textContent = `Hand ${view.hand_number + 1} · ${bits.join(" · ")}`;
}

function renderHearts() {
  const hearts = $("hearts");
  hearts.textContent = state.shown.heartsBroken ? "Hearts are broken." : "Hearts are not broken yet.";
  hearts.classList.toggle("broken", state.shown.heartsBroken);
}

function renderLastTrick(view) {
  const last = state.shown.lastTrick;
  const el = $("last-trick");
  el.replaceChildren();
  if (!last) {
    el.textContent = "Last trick: none yet this hand.";
    return;
  }
  const who = last.winner === 0 ? "You took" : `${shortName(view, last.winner)} took`;
  el.append(`Last trick: ${who} it (${pointsText(last.points)}): `);
  for (const { seat, card } of last.plays) {
    const c = cardElement(card);
    c.classList.add("mini");
    c.setAttribute("aria-label", `${shortName(view, seat)}: ${cardName(card)}`);
    el.append(c, " ");
  }
}

function renderTable(view) {
  renderSeats(view);
  renderTrick(view);
  renderScores(view);
  renderHearts();
  renderLastTrick(view);
}

function passWords(view, direction, to) {
  const whom = to === null || to === undefined ? "" : `, to ${shortName(view, to)}`;
  return `${direction}${whom}`;
}

function statusOf(view) {
  if (view.phase === "over") return "Game over.";
  if (!view.your_turn) return `${shortName(view, view.to_act)} is playing…`;
  if (view.phase === "pass") {
    const left = view.pass ? view.pass.picks_left : 3;
    return `Your turn: pass ${left} ${left === 1 ? "card" : "cards"} ${passWords(view, view.pass.direction, view.pass.to)}.`;
  }
  return view.trick.length === 0 ? "Your turn: lead a card." : "Your turn: play a card.";
}

function renderPass(view) {
  const panel = $("pass-panel");
  const pass = view.pass;
  panel.replaceChildren();
  delete panel.dataset.picksLeft;
  if (view.phase === "pass" && pass && pass.direction && pass.direction !== "none") {
    panel.hidden = false;
    const need = pass.picks_left;
    const chosen = state.passSel.length;
    panel.dataset.picksLeft = need - chosen;
    const head = document.createElement("p");
    head.className = "pass-head";
    head.textContent = chosen < need
      ? `Choose ${need - chosen} more (${chosen} of ${need}); click a chosen card to put it back.`
      : `Ready to pass ${state.passSel.map(cardSymbol).join(" ")}.`;
    const undo = document.createElement("button");
    undo.type = "button";
    undo.id = "pass-undo";
    undo.textContent = "Undo";
    undo.disabled = chosen === 0 || state.busy;
    undo.addEventListener("click", () => {
      state.passSel.pop();
      refreshPass();
    });
    const go = document.createElement("button");
    go.type = "button";
    go.id = "pass-confirm";
    go.className = "primary";
    go.textContent = `Pass ${pass.direction} →`;
    go.disabled = chosen !== need || state.busy;
    go.addEventListener("click", confirmPass);
    const actions = document.createElement("div");
    actions.className = "pass-actions";
    actions.append(undo, go);
    panel.append(head, actions);
  } else {
    panel.hidden = true;
  }
}

function refreshPass() {
  renderPass(state.view);
  renderHand(state.view);
}

/** Lays the hand out as a fan that fits the felt's width (cards overlap as much as they must). */
function layoutHand() {
  const hand = $("hand");
  const buttons = [...hand.querySelectorAll(".card")];
  const n = buttons.length;
  if (!n) return;
  const width = hand.clientWidth - 24; // room for the fan's tilt
  const w = buttons[0].offsetWidth;
  const step = n > 1 ? Math.min(w * 0.66, (width - w) / (n - 1)) : 0;
  const spread = Math.min(2.2, 26 / n); // degrees between neighbours
  buttons.forEach((b, i) => {
    const off = i - (n - 1) / 2;
    b.style.marginLeft = i === 0 ? "0" : `${step - w}px`;
    b.style.setProperty("--rot", `${(off * spread).toFixed(2)}deg`);
    b.style.setProperty("--arc", `${(off * off * 0.55 * (spread / 2.2)).toFixed(1)}px`);
    b.style.zIndex = String(i + 1);
  });
}

function renderHand(view, interactive = true) {
  const s = state.shown;
  const hand = $("hand");
  const hadFocus = hand.contains(document.activeElement);
  hand.replaceChildren();
  const active = interactive && view.your_turn && !state.busy;
  const legal = new Set(active ? view.legal : []);
  const locked = new Set(view.pass ? view.pass.chosen || [] : []); // sent to the server: no undo
  const chosen = new Set(view.phase === "pass" ? state.passSel : []);
  const received = new Set(s.received || []);
  s.hand.forEach((card, i) => {
    const btn = cardElement(card, "button");
    btn.type = "button";
    btn.tabIndex = -1;
    btn.dataset.index = i;
    if (legal.has(card) && !locked.has(card)) btn.classList.add("legal");
    else if (active) btn.classList.add("illegal");
    if (chosen.has(card) || locked.has(card)) {
      btn.classList.add("chosen");
      btn.setAttribute("aria-pressed", "true");
      btn.title = "chosen to pass";
    } else if (view.phase === "pass") {
      btn.setAttribute("aria-pressed", "false");
    } else if (active && !legal.has(card)) {
      btn.title = "not playable now";
      btn.setAttribute("aria-disabled", "true"); // (still clickable: a click says why not)
    }
    if (received.has(card)) {
      btn.classList.add("received");
      btn.title = "received in the pass";
    }
    btn.addEventListener("click", () => {
      state.focusIndex = i;
      chooseCard(card);
    });
    hand.append(btn);
  });
  hand.setAttribute("aria-label", view.phase === "pass" ? "Your hand: choose cards to pass" : "Your hand");
  layoutHand();
  const buttons = hand.querySelectorAll("button");
  if (buttons.length) {
    const i = Math.min(state.focusIndex, buttons.length - 1);
    buttons[i].tabIndex = 0;
    if (hadFocus || (interactive && state.restoreFocus)) buttons[i].focus();
  }
}

function render(view) {
  state.view = view;
  state.shown = shownOf(view);
  const firstTrick = view.phase === "play" && view.hand.length >= numCardsDealt(view) - 1;
  if (firstTrick && view.received) state.shown.received = view.received;
  const locked = view.pass ? view.pass.chosen || [] : [];
  state.passSel = view.phase === "pass" ? state.passSel.filter((c) => view.hand.includes(c) && !locked.includes(c)) : [];
  $("loading").hidden = true;
  $("setup").hidden = true;
  $("game").hidden = false;
  $("new-game-top").hidden = false;
  // The record shows every hand as dealt, so the server gives it once the game is over.
  for (const link of [$("record-link"), $("record-link-over")]) {
    link.hidden = view.phase !== "over";
    link.href = `${API}/games/${encodeURIComponent(view.id)}/record`;
    link.setAttribute("download", `hearts-game-${view.id}.jsonl`);
  }
  document.body.dataset.hand = view.hand_number;
  document.body.dataset.phase = view.phase;
  renderTable(view);
  setStatus(statusOf(view));
  renderPass(view);
  renderHand(view);
  state.restoreFocus = false;
  $("hand").hidden = view.phase === "over" && view.hand.length === 0;
  $("help").hidden = view.phase === "over";
  setPageState(view.phase === "over" ? "over" : view.your_turn ? "your-turn" : "waiting");
}

// ---- dialogs ----------------------------------------------------------------------------------------

function openDialog(dialog) {
  if (!dialog.open) dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
}

function moonText(view, seat) {
  return seat === 0
    ? "You shot the moon: you took every penalty card."
    : `${playerName(view, seat)} shot the moon: every penalty card.`;
}

function pointsTable(view, points, scores) {
  const table = document.createElement("table");
  table.innerHTML = "<thead><tr><th scope=\"col\">Player</th><th scope=\"col\">This hand</th><th scope=\"col\">Total</th></tr></thead>";
  const tbody = document.createElement("tbody");
  for (const p of view.players) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = playerName(view, p.seat);
    const pts = document.createElement("td");
    pts.textContent = points ? points[p.seat] : "";
    const tot = document.createElement("td");
    tot.textContent = scores[p.seat];
    tr.append(th, pts, tot);
    tbody.append(tr);
  }
  table.append(tbody);
  return table;
}

/** The hand's summary as a dialog; resolves when the player closes it ("Next hand"). */
function showSummary(view, event) {
  const body = $("summary-body");
  body.replaceChildren();
  $("summary-title").textContent = `Hand ${event.hand_number + 1} summary`;
  if (event.moon !== null && event.moon !== undefined) {
    const moon = document.createElement("p");
    moon.className = "moon";
    moon.textContent = moonText(view, event.moon);
    body.append(moon);
  }
  body.append(pointsTable(view, event.points, event.scores));
  const low = Math.min(...event.scores);
  const leaders = view.players.filter((p) => event.scores[p.seat] === low).map((p) => shortName(view, p.seat));
  const lead = document.createElement("p");
  lead.textContent = `Lowest total: ${leaders.join(" and ")} (${low}). The game ends at ${view.rules.target_score}.`;
  body.append(lead);
  setPageState("dialog");
  const closed = openDialog($("summary"));
  $("summary-next").focus();
  return closed;
}

function showGameOver(view, lastHand = null) {
  const over = view.game_over;
  if (!over) return;
  const scores = over.scores || view.scores;
  $("gameover-text").textContent = `${winnerText(view, over.winner)} Final scores below.`;
  const body = $("gameover-body");
  body.replaceChildren();
  if (lastHand && lastHand.moon !== null && lastHand.moon !== undefined) {
    const moon = document.createElement("p");
    moon.className = "moon";
    moon.textContent = `Last hand: ${moonText(view, lastHand.moon)}`;
    body.append(moon);
  }
  body.append(pointsTable(view, lastHand ? lastHand.points : null, scores));
  openDialog($("gameover"));
  $("new-game").focus();
}

// ---- events, in order ---------------------------------------------------------------------------

function eventLine(view, e) {
  switch (e.type) {
    case "played":
      return [`${shortName(view, e.seat)} ${e.seat === 0 ? "play" : "plays"} ${cardSymbol(e.card)}`, ""];
    case "hearts_broken":
      return [`Hearts are broken (${shortName(view, e.seat)}: ${cardSymbol(e.card)})`, "note"];
    case "trick_won": {
      const pts = e.points ? ` (${pointsText(e.points)})` : "";
      return [`${shortName(view, e.winner)} ${e.winner === 0 ? "take" : "takes"} the trick${pts}`, "trick"];
    }
    case "exchanged": {
      const to = e.to === null || e.to === undefined ? "" : ` to ${shortName(view, e.to)}`;
      const from = e.from === null || e.from === undefined ? "" : ` from ${shortName(view, e.from)}`;
      return [`You passed ${cardsText(e.passed)}${to} and received ${cardsText(e.received)}${from}`, "note"];
    }
    case "hand_scored": {
      const moon = e.moon === null || e.moon === undefined ? "" : `. ${moonText(view, e.moon)}`;
      const pts = view.players.map((p) => `${shortName(view, p.seat)} ${e.points[p.seat]}`).join(", ");
      return [`Hand ${e.hand_number + 1} scored: ${pts}${moon}`, "score"];
    }
    case "hand_started": {
      const dir = e.pass_direction && e.pass_direction !== "none" ? `pass ${e.pass_direction}` : "no pass";
      return [`Hand ${e.hand_number + 1} dealt (${dir})`, "note"];
    }
    case "game_over":
      return [`Game over: ${winnerText(view, e.winner)}`, "score"];
    default:
      return null;
  }
}

/** The trick's cards fly to the seat of the player who took it. */
async function collectTrick(view, winner) {
  const ms = Math.min(450, state.delay * 0.6);
  if (ms <= 0 || matchMedia("(prefers-reduced-motion: reduce)").matches) return;
  const target = $(`seat-${positionOf(winner, numPlayers(view))}`).getBoundingClientRect();
  for (const card of $("trick").querySelectorAll(".card")) {
    const r = card.getBoundingClientRect();
    const dx = target.left + target.width / 2 - (r.left + r.width / 2);
    const dy = target.top + target.height / 2 - (r.top + r.height / 2);
    card.style.transition = `transform ${ms}ms ease-in, opacity ${ms}ms ease-in`;
    card.style.transform = `translate(${dx}px, ${dy}px) scale(0.4)`;
    card.style.opacity = "0";
  }
  await sleep(ms);
}

/** Replays an answer's events on the shown table, one by one at the chosen pace. */
async function replay(view, events) {
  const s = state.shown;
  const n = numPlayers(view);
  const dealt = numCardsDealt(view);
  setPageState("busy");
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const line = eventLine(view, e);
    switch (e.type) {
      case "played": {
        const already = e.seat === 0 && s.trick.some((t) => t.card === e.card); // shown when clicked
        if (!already) {
          if (e.seat !== 0) {
            setTurn(view, e.seat);
            setStatus(`${shortName(view, e.seat)} is playing…`);
            await sleep(state.delay);
          }
          s.trick.push({ seat: e.seat, card: e.card });
          if (e.seat === 0) s.hand = s.hand.filter((c) => c !== e.card);
          else s.counts[e.seat] = Math.max(0, s.counts[e.seat] - 1);
          renderTrick(view);
        }
        const next = s.trick.length < n ? (e.seat + 1) % n : null;
        setTurn(view, next);
        break;
      }
      case "hearts_broken":
        s.heartsBroken = true;
        renderHearts();
        break;
      case "trick_won": {
        s.trick = e.plays.map((p) => ({ ...p }));
        s.winner = e.winner;
        s.handPoints[e.winner] += e.points;
        s.lastTrick = e;
        setTurn(view, null);
        renderTrick(view);
        renderScores(view);
        renderLastTrick(view);
        setStatus(`${line[0]}.`);
        await sleep(state.delay * 1.5);
        await collectTrick(view, e.winner);
        s.trick = [];
        s.winner = null;
        renderTrick(view);
        if (s.counts.some((c, seat) => seat !== 0 && c > 0) || s.hand.length) setTurn(view, e.winner);
        break;
      }
      case "exchanged":
        s.hand = [...view.hand];
        s.received = e.received;
        renderHand(view, false);
        setStatus(`You received ${cardsText(e.received)}${e.from === null || e.from === undefined ? "" : ` from ${shortName(view, e.from)}`}.`);
        await sleep(state.delay * 1.5);
        break;
      case "hand_scored": {
        s.scores = [...e.scores];
        s.handPoints = [...e.points];
        renderSeats(view);
        renderScores(view);
        log(...line);
        markSeen(view, i + 1);
        if (!events.slice(i + 1).some((x) => x.type === "game_over")) await showSummary(view, e);
        else state.lastHand = e;
        setPageState("busy");
        continue;
      }
      case "hand_started":
        s.trick = [];
        s.winner = null;
        s.lastTrick = null;
        s.heartsBroken = false;
        s.hand = [...view.hand];
        s.received = null;
        s.counts = s.counts.map((_, seat) => (seat === 0 ? view.hand.length : dealt));
        s.handPoints = s.handPoints.map(() => 0);
        document.body.dataset.hand = e.hand_number;
        renderTable(view);
        renderHand(view, false);
        setTurn(view, e.pass_direction && e.pass_direction !== "none" ? 0 : null);
        break;
      default:
        break;
    }
    if (line) log(...line);
    markSeen(view, i + 1);
  }
}

// ---- acting ------------------------------------------------------------------------------------

function chooseCard(card) {
  const view = state.view;
  if (view && view.phase === "pass" && view.your_turn && !state.busy && view.hand.includes(card)) {
    const locked = view.pass ? view.pass.chosen || [] : [];
    if (locked.includes(card)) {
      showMessage(`${cardSymbol(card)} is already passed.`, "refused");
      return;
    }
    clearMessage();
    const i = state.passSel.indexOf(card);
    if (i >= 0) state.passSel.splice(i, 1);
    else if (state.passSel.length < view.pass.picks_left) state.passSel.push(card);
    else {
      showMessage(`You have chosen ${view.pass.picks_left}: click one of them to put it back first.`, "refused");
      return;
    }
    const fromKeys = $("hand").contains(document.activeElement);
    refreshPass();
    if (fromKeys && state.passSel.length === view.pass.picks_left) $("pass-confirm").focus();
    return;
  }
  playCard(card);
}

async function confirmPass() {
  const view = state.view;
  if (!view || state.busy || view.phase !== "pass" || state.passSel.length !== view.pass.picks_left) return;
  const picks = [...state.passSel];
  state.busy = true;
  setPageState("busy");
  clearMessage();
  setStatus(`Passing ${picks.map(cardSymbol).join(" ")} ${passWords(view, view.pass.direction, view.pass.to)}…`);
  state.shown.hand = state.shown.hand.filter((c) => !picks.includes(c));
  $("pass-panel").hidden = true; // the status says what is being passed
  renderHand(view, false);
  try {
    let next = null;
    for (const card of picks) {
      next = await api(`games/${encodeURIComponent(view.id)}/play`, { method: "POST", body: JSON.stringify({ card }) });
    }
    state.passSel = [];
    await replay(next, next.events || []);
    state.busy = false;
    render(next);
    if (next.phase === "over") showGameOver(next, state.lastHand);
  } catch (err) {
    showMessage(`Could not pass: ${err.message}`);
    state.busy = false;
    await reloadGame(view.id);
  } finally {
    state.busy = false;
    if (document.body.dataset.state === "busy") setPageState("waiting");
  }
}

async function playCard(card) {
  const view = state.view;
  if (!view || state.busy) {
    if (state.busy) showMessage("Wait: the other players are playing.", "refused");
    return;
  }
  if (view.phase === "over") {
    showMessage("The game is over: start a new game.");
    return;
  }
  if (!view.your_turn) {
    showMessage("Wait: it is not your turn.");
    return;
  }
  if (!view.hand.includes(card)) {
    showMessage(`You do not hold ${cardSymbol(card)}.`);
    return;
  }
  const verb = view.phase === "pass" ? "passed" : "played";
  if (!view.legal.includes(card)) { // refused here, in the view's words: no request is sent
    showMessage(refusalText(card, verb, reasonText(card, (view.refused || {})[card])), "refused");
    shake(card);
    return;
  }
  state.restoreFocus = $("hand").contains(document.activeElement);
  state.busy = true;
  setPageState("busy");
  clearMessage();
  if (view.phase === "play") { // shown at once; the server's answer goes on from it
    const s = state.shown;
    s.trick.push({ seat: 0, card });
    s.hand = s.hand.filter((c) => c !== card);
    s.received = null;
    renderTrick(view);
    renderHand(view, false);
    const n = numPlayers(view);
    if (s.trick.length < n) {
      setStatus(`${shortName(view, 1 % n)} is playing…`);
      setTurn(view, 1 % n);
    } else {
      setStatus("");
      setTurn(view, null);
    }
  }
  try {
    const next = await api(`games/${encodeURIComponent(view.id)}/play`, {
      method: "POST",
      body: JSON.stringify({ card }),
    });
    await replay(next, next.events || []);
    state.busy = false;
    render(next);
    if (next.phase === "over") showGameOver(next, state.lastHand);
  } catch (err) {
    state.busy = false;
    if (err instanceof ApiError && err.status === 409 && err.data && err.data.reason) {
      // the game moved on elsewhere (another tab): the reason, then the game as it is now
      showMessage(refusalText(card, verb, reasonText(card, err.data.reason) || err.message), "refused");
      await reloadGame(view.id);
    } else {
      showMessage(`Could not play ${cardSymbol(card)}: ${err.message}`);
      await reloadGame(view.id);
    }
  } finally {
    state.busy = false;
    if (document.body.dataset.state === "busy") setPageState("waiting");
  }
}

/** Shake a card of the hand: it may not be taken now. */
function shake(card) {
  const btn = $("hand").querySelector(`button[data-card="${card}"]`);
  if (btn) {
    btn.classList.remove("shake");
    void btn.offsetWidth; // restart the animation
    btn.classList.add("shake");
  }
}

/** A refusal's reason code (the view's `refused`, a 409's `reason`) in words; "" for none known. */
function reasonText(card, reason) {
  if (!reason) return "";
  const named = cardSymbol(reason.card || card);
  switch (reason.code) {
    case "game_over": return "the game is over";
    case "not_your_turn": return "it is not your turn";
    case "not_held": return `you do not hold ${named}`;
    case "already_chosen": return `you already chose ${named} to pass`;
    case "follow_suit": return `you must follow suit (${SUITS[reason.suit].sym})`;
    case "first_trick_points": return "no hearts and no Q♠ on the first trick";
    case "opens_first_trick": return `${named} opens the first trick`;
    case "hearts_not_broken": return "hearts are not broken yet";
    case "queen_waits": return "Q♠ may not be led before hearts are broken";
    default: return "";
  }
}

/** A reason, as a sentence that names the card ("Q♠ cannot be played now: ..."). */
function refusalText(card, verb, detail) {
  const text = String(detail || "").trim();
  const named = text.startsWith(cardSymbol(card)) || text.includes(" cannot be ") || /^you (do not|already)/i.test(text);
  const sentence = named ? text : `${cardSymbol(card)} cannot be ${verb} now${text ? `: ${text}` : ""}`;
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** The game's record from the back end, saved as a file (a link to the API would reach only a server). */
async function downloadRecord(event) {
  event.preventDefault();
  const link = event.currentTarget;
  try {
    const res = await backend.fetch(link.getAttribute("href"));
    if (!res.ok) throw new ApiError(detailText(await res.json().catch(() => null), res), res.status, null);
    const save = document.createElement("a");
    save.href = URL.createObjectURL(await res.blob());
    save.download = link.getAttribute("download");
    save.click();
    setTimeout(() => URL.revokeObjectURL(save.href), 10_000);
  } catch (err) {
    showMessage(`Could not get the record: ${err.message}`);
  }
}

async function reloadGame(id) {
  try {
    render(await api(`games/${encodeURIComponent(id)}`));
  } catch (err) {
    showMessage(`Could not load the game: ${err.message}`);
  }
}

// ---- keyboard ----------------------------------------------------------------------------------

function handButtons() {
  return [...$("hand").querySelectorAll("button.card")];
}

function focusCard(i) {
  const buttons = handButtons();
  if (!buttons.length) return;
  const k = Math.max(0, Math.min(i, buttons.length - 1));
  buttons.forEach((b, j) => (b.tabIndex = j === k ? 0 : -1));
  state.focusIndex = k;
  buttons[k].focus();
}

function showTyped() {
  const el = $("typed");
  if (!state.typed) {
    el.textContent = "";
    return;
  }
  const card = parseCard(state.typed);
  el.textContent = card ? `Typed: ${state.typed} → ${cardSymbol(card)} (Enter plays it)` : `Typed: ${state.typed}`;
}

function onKey(event) {
  if ($("game").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  if (document.querySelector("dialog[open]")) return;
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
  const buttons = handButtons();
  const inHand = $("hand").contains(document.activeElement);
  const key = event.key;
  if (key === "ArrowLeft" || key === "ArrowRight" || key === "ArrowUp" || key === "ArrowDown" || key === "Home" || key === "End") {
    if (!buttons.length) return;
    event.preventDefault();
    if (!inHand) {
      const firstLegal = buttons.findIndex((b) => b.classList.contains("legal"));
      if (key === "Home") focusCard(0);
      else if (key === "End") focusCard(buttons.length - 1);
      else focusCard(firstLegal >= 0 ? firstLegal : 0);
      return;
    }
    const i = buttons.indexOf(document.activeElement);
    if (key === "Home") focusCard(0);
    else if (key === "End") focusCard(buttons.length - 1);
    else if (key === "ArrowLeft" || key === "ArrowUp") focusCard(i - 1);
    else focusCard(i + 1);
    return;
  }
  if (key === "Escape") {
    state.typed = "";
    showTyped();
    return;
  }
  if (key === "Backspace" && state.typed) {
    event.preventDefault();
    state.typed = state.typed.slice(0, -1);
    showTyped();
    return;
  }
  if (key === "Enter" || (key === " " && state.typed)) {
    if (!state.typed) {
      if (!inHand && target === document.body && buttons.length) {
        // Enter with nothing focused: play the focused position's card.
        event.preventDefault();
        const b = buttons[Math.min(state.focusIndex, buttons.length - 1)];
        chooseCard(b.dataset.card);
      }
      return; // a focused button plays itself (native Enter/Space)
    }
    event.preventDefault();
    const card = parseCard(state.typed);
    const typed = state.typed;
    state.typed = "";
    showTyped();
    if (!card) {
      showMessage(`"${typed}" is not a card: type a rank (2-10, j, q, k, a) and a suit (c, d, h, s), e.g. qs or 10h.`);
      return;
    }
    const i = buttons.findIndex((b) => b.dataset.card === card);
    if (i >= 0) state.focusIndex = i;
    chooseCard(card);
    return;
  }
  if (key.length === 1 && /[0-9tjqkacdhs♣♦♥♠]/i.test(key)) {
    event.preventDefault();
    state.typed = (state.typed + key).slice(-4);
    showTyped();
    const card = parseCard(state.typed);
    if (card) {
      const i = buttons.findIndex((b) => b.dataset.card === card);
      if (i >= 0) focusCard(i);
    }
  }
}

// ---- setup -------------------------------------------------------------------------------------

function optionValueLabel(value) {
  if (Array.isArray(value)) return value.join(" → ");
  if (typeof value === "boolean") return value ? "on" : "off";
  if (typeof value === "string") return VALUE_LABELS[value] || value;
  return String(value);
}

function presetRules(preset) {
  return (state.options.preset_rules || {})[preset] || null;
}

function playersOfPreset(preset) {
  const rules = presetRules(preset);
  return rules && rules.num_players ? rules.num_players : preset === "two_player" ? 2 : 4;
}

/** Each option's first choice keeps the preset's value; say which it is. */
function renderPresetDefaults() {
  const rules = presetRules($("preset").value);
  for (const select of document.querySelectorAll("select[data-rule]")) {
    const def = select.querySelector("option[data-preset-default]");
    const key = select.dataset.rule;
    def.textContent = rules && key in rules ? `preset: ${optionValueLabel(rules[key])}` : "preset default";
  }
}

function renderOpponents() {
  const opts = state.options;
  const preset = $("preset").value;
  renderPresetDefaults();
  const agents = (opts.agents_by_preset && opts.agents_by_preset[preset]) || opts.agents;
  const n = playersOfPreset(preset);
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  const defaults = opts.default_opponents || [];
  for (let seat = 1; seat < n; seat++) {
    const label = document.createElement("label");
    label.className = "field";
    label.append(`${POS_NAMES[positionOf(seat, n)]} `);
    const select = document.createElement("select");
    select.name = `opponent-${seat}`;
    for (const agent of agents) {
      const o = document.createElement("option");
      o.value = agent;
      o.textContent = agent;
      select.append(o);
    }
    const want = previous[seat - 1] || defaults[seat - 1] || defaults[defaults.length - 1] || agents[0];
    if (agents.includes(want)) select.value = want;
    label.append(select);
    box.append(label);
  }
}

function renderSetup() {
  const opts = state.options;
  const preset = $("preset");
  if (!preset.options.length) {
    for (const name of opts.presets) {
      const o = document.createElement("option");
      o.value = name;
      o.textContent = PRESET_LABELS[name] || name;
      preset.append(o);
    }
    preset.addEventListener("change", renderOpponents);
    const box = $("rule-options");
    for (const [key, values] of Object.entries(opts.options || {})) {
      const label = document.createElement("label");
      label.className = "field";
      label.append(`${OPTION_LABELS[key] || key.replaceAll("_", " ")} `);
      const select = document.createElement("select");
      select.name = `rule-${key}`;
      select.dataset.rule = key;
      const def = document.createElement("option");
      def.value = "";
      def.dataset.presetDefault = "1";
      select.append(def);
      for (const value of values) {
        const o = document.createElement("option");
        o.value = JSON.stringify(value);
        o.textContent = optionValueLabel(value);
        select.append(o);
      }
      label.append(select);
      box.append(label);
    }
  }
  renderOpponents();
}

async function showSetup() {
  state.view = null;
  $("loading").hidden = true;
  $("game").hidden = true;
  $("record-link").hidden = true;
  $("record-link-over").hidden = true;
  $("new-game-top").hidden = true;
  $("setup").hidden = false;
  setPageState("busy");
  try {
    if (!state.options) state.options = await api("options");
    renderSetup();
    setPageState("setup");
  } catch (err) {
    $("setup-message").textContent = `Could not load the options: ${err.message}`;
    setPageState("error");
  }
}

async function startGame(event) {
  event.preventDefault();
  const form = $("setup-form");
  const rules = {};
  for (const select of form.querySelectorAll("select[data-rule]")) {
    if (select.value !== "") rules[select.dataset.rule] = JSON.parse(select.value);
  }
  const opponents = [...$("opponents").querySelectorAll("select")].map((s) => s.value);
  const body = { preset: $("preset").value, rules, opponents };
  $("start").disabled = true;
  $("setup-message").textContent = "";
  setPageState("busy");
  try {
    const view = await api("games", { method: "POST", body: JSON.stringify(body) });
    const url = new URL(location.href);
    url.searchParams.set("game", view.id);
    history.replaceState(null, "", url);
    $("log").replaceChildren();
    clearMessage();
    state.focusIndex = 0;
    state.passSel = [];
    render(view);
    log(`New game: ${view.players.map((p) => playerName(view, p.seat)).join(", ")}`, "note");
    for (const e of view.events || []) {
      const line = eventLine(view, e);
      if (line) log(...line);
    }
    markSeen(view, (view.events || []).length);
  } catch (err) {
    $("setup-message").textContent = `Could not start the game: ${err.message}`;
    setPageState("setup");
  } finally {
    $("start").disabled = false;
  }
}

function newGame() {
  const url = new URL(location.href);
  url.searchParams.delete("game");
  history.replaceState(null, "", url);
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  state.lastHand = null;
  clearMessage();
  document.body.dataset.turn = "";
  showSetup();
}

/** "New game": straight to the setup when no game is in progress, else after asking. */
function askNewGame() {
  const view = state.view;
  if (!view || view.phase === "over") {
    newGame();
    return;
  }
  openDialog($("leave"));
  $("leave-keep").focus();
}

// ---- start -------------------------------------------------------------------------------------

function setDeck(value) {
  document.body.classList.toggle("four-colour", value === "4");
}

/** Continues a game after a reload: its log from localStorage, and the events not yet seen. */
async function continueGame(view) {
  restoreLog(view.id);
  render(view);
  log(`Game continued (hand ${view.hand_number + 1})`, "note");
  const events = view.events || [];
  const seen = storageGet(`hearts-seen:${view.id}`);
  const from = seen && seen.sig === answerSignature(view) ? Math.min(seen.count, events.length) : events.length;
  let lastHand = null;
  for (let i = from; i < events.length; i++) { // seen now as the table shows them: logged, not replayed
    const e = events[i];
    const line = eventLine(view, e);
    if (line) log(...line);
    if (e.type === "hand_scored") lastHand = e;
  }
  markSeen(view, events.length);
  if (lastHand && view.phase !== "over") {
    await showSummary(view, lastHand);
    render(view);
  }
  if (view.phase === "over") showGameOver(view, lastHand);
}

async function main() {
  const speed = $("speed");
  speed.value = String(state.delay);
  if (speed.value !== String(state.delay)) {
    const o = document.createElement("option");
    o.value = String(state.delay);
    o.textContent = `${state.delay} ms`;
    speed.append(o);
    speed.value = String(state.delay);
  }
  speed.addEventListener("change", () => {
    state.delay = Number(speed.value);
    localStorage.setItem("hearts-speed", speed.value);
  });
  const deck = $("deck");
  deck.value = localStorage.getItem("hearts-deck") === "4" ? "4" : "2";
  setDeck(deck.value);
  deck.addEventListener("change", () => {
    setDeck(deck.value);
    localStorage.setItem("hearts-deck", deck.value);
  });
  // Keyboard help is for keyboards: hidden where the main pointer is a finger.
  const touch = matchMedia("(hover: none) and (pointer: coarse)");
  const setTouch = () => document.body.classList.toggle("touch", touch.matches);
  setTouch();
  touch.addEventListener("change", setTouch);

  $("setup-form").addEventListener("submit", startGame);
  $("new-game").addEventListener("click", newGame);
  $("new-game-top").addEventListener("click", askNewGame);
  $("leave-keep").addEventListener("click", () => $("leave").close());
  $("leave-yes").addEventListener("click", () => {
    $("leave").close();
    newGame();
  });
  $("summary-next").addEventListener("click", () => {
    setPageState("busy"); // the replay goes on when the dialog has closed
    $("summary").close();
  });
  $("gameover-close").addEventListener("click", () => $("gameover").close());
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", layoutHand);
  for (const link of [$("record-link"), $("record-link-over")]) link.addEventListener("click", downloadRecord);

  const id = params.get("game");
  if (!id) {
    await showSetup();
    return;
  }
  try {
    const view = await api(`games/${encodeURIComponent(id)}`);
    state.view = view;
    await continueGame(view);
  } catch (err) {
    await showSetup();
    $("setup-message").textContent = `Could not continue game ${id}: ${err.message}`;
  }
}

/** Start the page with `api` as its back end: an object whose fetch(path, init) answers api/v1/... */
export function startPage(api) {
  backend = api;
  return main();
}
