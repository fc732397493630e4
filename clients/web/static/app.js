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

import { setLanguage, currentLanguage, t, translatePage } from "./i18n.js";

const API = "api/v1";
let backend = null; // what answers the API's requests (startPage)
const RANKS = "23456789TJQKA";
const SUITS = {
  C: { sym: "♣", red: false },
  D: { sym: "♦", red: true },
  H: { sym: "♥", red: true },
  S: { sym: "♠", red: false },
};
const SYMBOL_SUIT = { "♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S" };
// ---- cards -------------------------------------------------------------------------------------

const rankText = (card) => (card[0] === "T" ? "10" : card[0]);
export const cardSymbol = (card) => rankText(card) + SUITS[card[1]].sym;
export const cardName = (card) => t("card.name", { rank: t(`rank.${card[0]}`), suit: t(`suit.${card[1]}`) });
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
  return t("error.status", { status: `${res.status} ${res.statusText}`.trim() });
}

async function api(path, options = {}) {
  let res;
  try {
    res = await backend.fetch(`${API}/${path}`, {
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      ...options,
    });
  } catch (err) {
    throw new ApiError(t("error.unreachable", { why: err.message }), 0, null);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ApiError(reasonWords(data) || detailText(data, res), res.status, data);
  return data;
}

/** A refusal other than a card's (the answer's `reason`: games.py REASON_CODES) in the player's
 * language; "" when the answer has none (its English `detail` is shown then). */
function reasonWords(data) {
  const reason = data && data.reason;
  if (!reason || !REQUEST_CODES.has(reason.code)) return "";
  const params = { name: agentName(String(reason.spec ?? "")), seat: reason.seat };
  if (reason.code === "opponent_cannot_play" && typeof reason.field === "string" && Array.isArray(reason.covers)) {
    // the option the network does not cover, its value here and the values it plays (JSON text each)
    const label = (text) => {
      try {
        return optionValueLabel(reason.field, JSON.parse(text));
      } catch {
        return String(text);
      }
    };
    const option = t(`option.${reason.field}`);
    if (option !== `option.${reason.field}`) {
      return t("reason.opponent_cannot_play_option", { ...params, option, value: label(reason.value),
        values: reason.covers.map(label).join(", ") });
    }
  }
  return t(`reason.${reason.code}`, params);
}
const REQUEST_CODES = new Set(["invalid_setup", "opponent_not_offered", "opponent_cannot_play", "no_such_game",
  "game_unreadable", "record_not_ready", "save_failed", "opponent_failed"]);

// ---- seats -------------------------------------------------------------------------------------

function numPlayers(view) {
  return (view && view.rules && view.rules.num_players) || (view ? view.players.length : 4);
}

function positionOf(seat, n) {
  if (n === 2) return seat === 0 ? "south" : "north";
  return ["south", "west", "north", "east"][seat % 4];
}

/**
 * A player's name as players read it: "Easy" for level:easy and, in play, for the bot easy too; the
 * setup's seat-by-seat list (`setup`) tells the bot apart: "Easy (rules bot)".
 */
export function agentName(spec, setup = false) {
  const level = /^level:(easy|normal|hard|strong)$/.exec(spec);
  if (level) return t(`level.${level[1]}`);
  if (["easy", "normal", "hard"].includes(spec)) return t(setup ? `bot.${spec}` : `level.${spec}`);
  if (spec === "random") return t("random");
  return spec;
}

function posName(view, seat) {
  return t(`pos.${positionOf(seat, numPlayers(view))}`);
}

function playerName(view, seat) {
  if (seat === 0) return t("you");
  const p = view.players.find((x) => x.seat === seat);
  return t("player.named", { pos: posName(view, seat), name: p ? agentName(p.name) : String(seat) });
}

function shortName(view, seat) {
  return seat === 0 ? t("you") : posName(view, seat);
}

function winnerText(view, winner) {
  if (winner === null || winner === undefined) return t("win.none");
  const seats = Array.isArray(winner) ? winner : [winner];
  const names = seats.map((s) => playerName(view, s));
  if (seats.length === 1) return seats[0] === 0 ? t("win.you") : t("win.one", { who: names[0] });
  return t("win.shared", { names: names.join(t("and")) });
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

const pointsText = (n) => t("points", { n });

/** The table of a view: what the page shows when no events are being replayed. */
function shownOf(view) {
  const n = numPlayers(view);
  const dealt = view.hand_size;
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
    name.textContent = shortName(view, p.seat);
    label.append(name);
    if (p.seat !== 0) {
      const agent = document.createElement("span");
      agent.className = "seat-agent";
      agent.textContent = agentName(p.name);
      label.append(agent);
    }
    const score = document.createElement("span");
    score.className = "seat-score";
    const taken = s.handPoints[p.seat] || 0;
    score.textContent = `${t("pts", { n: s.scores[p.seat] })}${taken ? ` (+${taken})` : ""}`;
    score.title = t("seat.score_title", { points: s.scores[p.seat], taken });
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
      count.textContent = t("cards", { n: s.counts[p.seat] });
      box.append(backs, count);
    }
    box.classList.toggle("to-act", turn);
    box.setAttribute("aria-label", t("seat.aria", { name: playerName(view, p.seat), points: s.scores[p.seat], taken,
      count: p.seat ? s.counts[p.seat] : null, turn }));
  }
  document.body.dataset.turn = s.turn === null || s.turn === undefined ? "" : String(s.turn);
}

/** The trick as shown: a card already on the table stays as it is (no second arrival, no flicker). */
function renderTrick(view) {
  const s = state.shown;
  const n = numPlayers(view);
  const wanted = new Map(s.trick.map(({ seat, card }) => [positionOf(seat, n), { seat, card }]));
  for (const slot of $("trick").querySelectorAll(".slot")) {
    const want = wanted.get(slot.dataset.pos);
    const have = slot.querySelector(".card");
    slot.hidden = n === 2 && (slot.dataset.pos === "west" || slot.dataset.pos === "east");
    slot.classList.toggle("winner", !!want && s.winner === want.seat);
    if (have && want && have.dataset.card === want.card && !have.style.transform) continue;
    slot.replaceChildren();
    if (want) {
      const el = cardElement(want.card);
      el.setAttribute("aria-label", `${shortName(view, want.seat)}: ${cardName(want.card)}`);
      slot.append(el);
    }
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
  const extras = [];
  if (r.moon) extras.push(t("rules.moon", { moon: t(`moon.${r.moon}`) }));
  if (r.queen_waits_for_hearts) extras.push(t("rules.queen_waits"));
  if (r.jack_of_diamonds_bonus) extras.push(t("rules.jack"));
  $("rules-line").textContent = t("rules.line", { hand: view.hand_number + 1,
    name: r.name && r.name !== "custom" ? t("rules.preset", { name: t(`preset.${r.name}`) }) : t("rules.custom"),
    target: r.target_score, extras: extras.map((x) => ` · ${x}`).join("") });
  renderSheet(view);
}

function renderSheet(view) {
  $("sheet").replaceChildren(sheetTable(view));
}

/** The score sheet: each finished hand's points (a moon marked ☾ at its shooter) and the totals. */
function sheetTable(view) {
  const sheet = view.score_sheet || [];
  if (!sheet.length) {
    const none = document.createElement("p");
    none.className = "sheet-none";
    none.textContent = t("sheet.none");
    return none;
  }
  const table = document.createElement("table");
  table.className = "sheet-table";
  const head = document.createElement("tr");
  for (const text of [t("sheet.hand"), ...view.players.map((p) => shortName(view, p.seat))]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = text;
    head.append(th);
  }
  const thead = document.createElement("thead");
  thead.append(head);
  const body = document.createElement("tbody");
  const totals = view.players.map(() => 0);
  for (const hand of sheet) {
    const tr = document.createElement("tr");
    tr.dataset.hand = hand.hand_number;
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = hand.hand_number + 1;
    tr.append(th);
    for (const p of view.players) {
      const td = document.createElement("td");
      totals[p.seat] += hand.points[p.seat];
      td.textContent = hand.points[p.seat];
      if (hand.moon === p.seat) {
        td.classList.add("moon-cell");
        td.textContent = `☾ ${hand.points[p.seat]}`;
        td.title = `${shortName(view, p.seat)}: ${t("sheet.moon")}`;
      }
      tr.append(td);
    }
    body.append(tr);
  }
  const foot = document.createElement("tr");
  foot.className = "sheet-total";
  const label = document.createElement("th");
  label.scope = "row";
  label.textContent = "Σ";
  label.title = t("scores.total");
  foot.append(label, ...totals.map((n) => Object.assign(document.createElement("td"), { textContent: n })));
  body.append(foot);
  table.append(thead, body);
  return table;
}

function renderHearts() {
  const hearts = $("hearts");
  hearts.textContent = t(state.shown.heartsBroken ? "hearts.broken" : "hearts.not_broken");
  hearts.classList.toggle("broken", state.shown.heartsBroken);
}

function renderLastTrick(view) {
  const last = state.shown.lastTrick;
  const el = $("last-trick");
  el.replaceChildren();
  if (!last) {
    el.textContent = t("last.none");
    return;
  }
  el.append(t("last.took", { who: shortName(view, last.winner), points: last.points }));
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

/** Whom a pass goes to, by name ("" when nobody). */
function passTo(view, to) {
  return to === null || to === undefined ? "" : shortName(view, to);
}

function statusOf(view) {
  if (view.phase === "over") return t("status.over");
  if (!view.your_turn) return t("status.playing", { who: shortName(view, view.to_act) });
  if (view.phase === "pass") {
    const n = view.pass ? view.pass.picks_left : 3;
    return t("status.pass", { n, direction: t(`direction.${view.pass.direction}`), to: passTo(view, view.pass.to) });
  }
  return t(view.trick.length === 0 ? "status.lead" : "status.play");
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
      ? t("pass.choose", { more: need - chosen, chosen, need })
      : t("pass.ready", { cards: state.passSel.map(cardSymbol).join(" ") });
    const undo = document.createElement("button");
    undo.type = "button";
    undo.id = "pass-undo";
    undo.textContent = t("pass.undo");
    undo.disabled = chosen === 0 || state.busy;
    undo.addEventListener("click", () => {
      state.passSel.pop();
      refreshPass();
    });
    const go = document.createElement("button");
    go.type = "button";
    go.id = "pass-confirm";
    go.className = "primary";
    go.textContent = t("pass.go", { direction: t(`direction.${pass.direction}`) });
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
      btn.title = t("pass.chosen_title");
    } else if (view.phase === "pass") {
      btn.setAttribute("aria-pressed", "false");
    } else if (active && !legal.has(card)) {
      btn.title = t("card.not_playable");
      btn.setAttribute("aria-disabled", "true"); // (still clickable: a click says why not)
    }
    if (received.has(card)) {
      btn.classList.add("received");
      btn.title = t("card.received");
    }
    btn.addEventListener("click", () => {
      state.focusIndex = i;
      chooseCard(card);
    });
    hand.append(btn);
  });
  hand.setAttribute("aria-label", t(view.phase === "pass" ? "hand.label_pass" : "hand.label"));
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
  const firstTrick = view.phase === "play" && view.hand.length >= view.hand_size - 1;
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
  if (view.your_turn) announce(statusOf(view));
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
  return seat === 0 ? t("moon.you") : t("moon.other", { who: playerName(view, seat) });
}

function pointsTable(view, points, scores) {
  const table = document.createElement("table");
  table.className = "points-table";
  const head = document.createElement("tr");
  for (const key of ["scores.player", "scores.hand", "scores.total"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = t(key);
    head.append(th);
  }
  table.createTHead().append(head);
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
  $("summary-title").textContent = t("summary.title", { hand: event.hand_number + 1 });
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
  const target = view.rules.target_score;
  const reached = view.players.filter((p) => event.scores[p.seat] >= target).map((p) => shortName(view, p.seat));
  lead.className = reached.length && leaders.length > 1 ? "tie" : "";
  lead.textContent = reached.length && leaders.length > 1 // the target is reached, but the lowest total is shared
    ? t("summary.tie", { names: reached.join(t("and")), score: low, target })
    : t("summary.lowest", { names: leaders.join(t("and")), low, target });
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
  $("gameover-text").textContent = t("over.final", { winner: winnerText(view, over.winner) });
  const body = $("gameover-body");
  body.replaceChildren();
  if (lastHand && lastHand.moon !== null && lastHand.moon !== undefined) {
    const moon = document.createElement("p");
    moon.className = "moon";
    moon.textContent = t("moon.last_hand", { text: moonText(view, lastHand.moon) });
    body.append(moon);
  }
  body.append(pointsTable(view, lastHand ? lastHand.points : null, scores));
  const sheet = document.createElement("div");
  sheet.className = "sheet";
  const title = document.createElement("h3");
  title.textContent = t("sheet.title");
  sheet.append(title, sheetTable(view));
  body.append(sheet);
  openDialog($("gameover"));
  $("new-game").focus();
}

// ---- events, in order ---------------------------------------------------------------------------

function eventLine(view, e) {
  switch (e.type) {
    case "played":
      return [t("ev.played", { who: shortName(view, e.seat), you: e.seat === 0, card: cardSymbol(e.card) }), ""];
    case "hearts_broken":
      return [t("ev.hearts_broken", { who: shortName(view, e.seat), card: cardSymbol(e.card) }), "note"];
    case "trick_won":
      return [t("ev.trick_won", { who: shortName(view, e.winner), you: e.winner === 0, points: e.points }), "trick"];
    case "exchanged":
      return [t("ev.exchanged", { passed: cardsText(e.passed), to: passTo(view, e.to), received: cardsText(e.received),
        from: passTo(view, e.from) }), "note"];
    case "hand_scored": {
      const moon = e.moon === null || e.moon === undefined ? "" : moonText(view, e.moon);
      const points = view.players.map((p) => `${shortName(view, p.seat)} ${e.points[p.seat]}`).join(", ");
      return [t("ev.hand_scored", { hand: e.hand_number + 1, points, moon }), "score"];
    }
    case "hand_started":
      return [t("ev.hand_started", { hand: e.hand_number + 1, direction: e.pass_direction || "none" }), "note"];
    case "game_over":
      return [t("ev.game_over", { winner: winnerText(view, e.winner) }), "score"];
    default:
      return null;
  }
}

/** Say it to a screen reader (a polite live region): each card played, each trick taken, your turn. */
function announce(text) {
  const el = $("announce");
  el.textContent = "";
  el.textContent = text;
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
  const dealt = view.hand_size;
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
            setStatus(t("status.playing", { who: shortName(view, e.seat) }));
            await sleep(state.delay);
          }
          s.trick.push({ seat: e.seat, card: e.card });
          if (e.seat === 0) s.hand = s.hand.filter((c) => c !== e.card);
          else s.counts[e.seat] = Math.max(0, s.counts[e.seat] - 1);
          renderTrick(view);
        }
        if (e.seat !== 0) announce(line[0]);
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
        announce(`${line[0]}.`);
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
        setStatus(t("status.received", { cards: cardsText(e.received), from: passTo(view, e.from) }));
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
      showMessage(t("pass.already", { card: cardSymbol(card) }), "refused");
      return;
    }
    clearMessage();
    const i = state.passSel.indexOf(card);
    if (i >= 0) state.passSel.splice(i, 1);
    else if (state.passSel.length < view.pass.picks_left) state.passSel.push(card);
    else {
      showMessage(t("pass.full", { n: view.pass.picks_left }), "refused");
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
  setStatus(t("status.passing", { cards: picks.map(cardSymbol).join(" "), direction: t(`direction.${view.pass.direction}`),
    to: passTo(view, view.pass.to) }));
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
    showMessage(t("error.pass", { why: err.message }));
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
    if (state.busy) showMessage(t("wait.playing"), "refused");
    return;
  }
  if (view.phase === "over") {
    showMessage(t("wait.over"));
    return;
  }
  if (!view.your_turn) {
    showMessage(t("wait.turn"));
    return;
  }
  if (!view.hand.includes(card)) {
    showMessage(t("refuse.not_held", { card: cardSymbol(card) }));
    return;
  }
  const verb = view.phase === "pass" ? "passed" : "played";
  if (!view.legal.includes(card)) { // refused here, in the view's words: no request is sent
    showMessage(refusalText(card, verb, (view.refused || {})[card]), "refused");
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
      setStatus(t("status.playing", { who: shortName(view, 1 % n) }));
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
      showMessage(refusalText(card, verb, err.data.reason), "refused");
      await reloadGame(view.id);
    } else {
      showMessage(t("error.play", { card: cardSymbol(card), why: err.message }));
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
  if (!reason || !CODES.has(reason.code)) return "";
  return t(`reason.${reason.code}`, { card: cardSymbol(reason.card || card), suit: reason.suit ? SUITS[reason.suit].sym : "" });
}
const CODES = new Set(["game_over", "not_your_turn", "not_held", "already_chosen", "follow_suit", "first_trick_points",
  "opens_first_trick", "hearts_not_broken", "queen_waits"]);

/** A refused card, as a sentence that names it ("Q♠ cannot be played now: ..."). */
function refusalText(card, verb, reason) {
  const code = reason && reason.code;
  if (code === "not_held" || code === "already_chosen") {
    const text = reasonText(card, reason);
    return text.charAt(0).toUpperCase() + text.slice(1);
  }
  return t(verb === "passed" ? "refuse.passed" : "refuse.played", { card: cardSymbol(card), why: reasonText(card, reason) });
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
    showMessage(t("error.record", { why: err.message }));
  }
}

async function reloadGame(id) {
  try {
    render(await api(`games/${encodeURIComponent(id)}`));
  } catch (err) {
    showMessage(t("error.load", { why: err.message }));
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
  el.textContent = card ? t("typed.card", { typed: state.typed, card: cardSymbol(card) }) : t("typed.text", { typed: state.typed });
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
      showMessage(t("typed.not_card", { typed }));
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

// ---- setup: difficulty, players, target, moon, then Play; the rest under "More rules" --------------

const LEVELS = ["easy", "normal", "hard", "strong"];
const MORE_RULES = ["pass_cycle", "first_trick_protection", "hearts_must_be_broken", "queen_breaks_hearts",
  "queen_waits_for_hearts", "jack_of_diamonds_bonus"];
const LAST_GAME = "hearts-last-game";

function optionValueLabel(key, value) {
  if (key === "moon") return t(`moon.${value}`);
  if (key === "pass_cycle") return value.map((d) => t(`direction.${d}`)).join(" → ");
  if (typeof value === "boolean") return t(value ? "option.on" : "option.off");
  return String(value);
}

function setupPreset() {
  const players = document.querySelector("input[name=players]:checked");
  return players && players.value === "2" ? "two_player" : "classic";
}

function presetRules(preset) {
  return (state.options.preset_rules || {})[preset] || {};
}

function agentsOf(preset) {
  const opts = state.options;
  return (opts.agents_by_preset && opts.agents_by_preset[preset]) || opts.agents;
}

/** The agent a difficulty names for a preset: its ladder level where offered, else the bot of that name. */
function levelSpec(level, preset) {
  const agents = agentsOf(preset);
  if (agents.includes(`level:${level}`)) return `level:${level}`;
  return level !== "strong" && agents.includes(level) ? level : null;
}

/** A group of radio buttons in `box` (its legend kept): `choices` of [value, label], `chosen` checked. */
function radios(box, name, choices, chosen) {
  for (const old of box.querySelectorAll("label")) old.remove();
  for (const [value, label] of choices) {
    const item = document.createElement("label");
    item.className = "choice";
    const input = document.createElement("input");
    input.type = "radio";
    input.name = name;
    input.value = String(value);
    input.checked = String(value) === String(chosen);
    const text = document.createElement("span");
    text.textContent = label;
    item.append(input, text);
    box.append(item);
  }
}

function checkedValue(name) {
  const input = document.querySelector(`input[name=${name}]:checked`);
  return input ? input.value : null;
}

/**
 * The opponents offered for a preset, as [spec, name]: the difficulty levels (Easy ... Strong) where
 * any is offered, else every player offered for it (a build with no ladder: its policies, Random).
 */
function opponentChoices(preset) {
  const levels = LEVELS.map((level) => [levelSpec(level, preset), t(`level.${level}`)]).filter(([spec]) => spec);
  return levels.length ? levels : agentsOf(preset).map((spec) => [spec, agentName(spec, true)]);
}

/** Everything of the setup that depends on the players (the preset): opponents, target, moon, options, seats. */
function renderChoices() {
  const preset = setupPreset();
  const rules = presetRules(preset);
  const choices = opponentChoices(preset);
  const specs = choices.map(([spec]) => spec);
  const was = checkedValue("level");
  const usual = [levelSpec("normal", preset), ...(state.options.default_opponents || [])].find((spec) => specs.includes(spec));
  radios($("level-choice"), "level", choices, specs.includes(was) ? was : usual || specs[0]);
  const targets = (state.options.options || {}).target_score || [50, 100, 150];
  const target = checkedValue("target") || rules.target_score || 100;
  radios($("target-choice"), "target", targets.map((n) => [n, t("setup.target.value", { n })]), target);
  const moon = $("moon");
  const moonWas = moon.value;
  moon.replaceChildren();
  for (const value of (state.options.options || {}).moon || []) {
    moon.append(Object.assign(document.createElement("option"), { value, textContent: t(`moon.${value}`) }));
  }
  moon.value = moonWas || rules.moon || "add_to_others";
  for (const select of document.querySelectorAll("select[data-rule]")) {
    const key = select.dataset.rule;
    const def = select.querySelector("option[data-preset-default]");
    def.textContent = key in rules ? t("option.preset_value", { value: optionValueLabel(key, rules[key]) }) : t("option.preset_default");
    for (const o of select.querySelectorAll("option:not([data-preset-default])")) {
      o.textContent = optionValueLabel(key, JSON.parse(o.value));
    }
  }
  renderOpponents(preset);
}

/** Each opponent seat's own choice (optional): "as chosen above", a difficulty, or any other offered player. */
function renderOpponents(preset) {
  const agents = agentsOf(preset);
  const n = presetRules(preset).num_players || (preset === "two_player" ? 2 : 4);
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  const levels = opponentChoices(preset).map(([spec]) => spec);
  const others = agents.filter((spec) => !levels.includes(spec));
  for (let seat = 1; seat < n; seat++) {
    const label = document.createElement("label");
    label.className = "field";
    label.append(`${t(`pos.${positionOf(seat, n)}`)} `);
    const select = document.createElement("select");
    select.name = `opponent-${seat}`;
    select.append(Object.assign(document.createElement("option"), { value: "", textContent: t("setup.same") }));
    for (const spec of levels) select.append(Object.assign(document.createElement("option"), { value: spec, textContent: agentName(spec, true) }));
    if (others.length) {
      const group = document.createElement("optgroup");
      group.label = t("setup.others");
      for (const spec of others) group.append(Object.assign(document.createElement("option"), { value: spec, textContent: agentName(spec, true) }));
      select.append(group);
    }
    if (agents.includes(previous[seat - 1])) select.value = previous[seat - 1];
    label.append(select);
    box.append(label);
  }
}

function renderSetup() {
  const opts = state.options;
  const box = $("rule-options");
  if (!box.children.length) {
    radios($("players-choice"), "players", [[4, t("setup.players.4")], [2, t("setup.players.2")]], 4);
    $("players-choice").addEventListener("change", renderChoices);
    for (const key of MORE_RULES) {
      const values = (opts.options || {})[key];
      if (!values) continue;
      const label = document.createElement("label");
      label.className = "field";
      const name = document.createElement("span");
      name.dataset.i18n = `option.${key}`;
      name.textContent = t(`option.${key}`);
      const select = document.createElement("select");
      select.name = `rule-${key}`;
      select.dataset.rule = key;
      const def = document.createElement("option");
      def.value = "";
      def.dataset.presetDefault = "1";
      select.append(def);
      for (const value of values) select.append(Object.assign(document.createElement("option"), { value: JSON.stringify(value) }));
      label.append(name, " ", select);
      box.append(label);
    }
  } else {
    for (const label of $("players-choice").querySelectorAll("label span")) {
      label.textContent = t(label.previousElementSibling.value === "2" ? "setup.players.2" : "setup.players.4");
    }
  }
  renderChoices();
}

/** The game the setup describes, as POST games takes it. */
function setupBody() {
  const preset = setupPreset();
  const rules = {};
  const presetValues = presetRules(preset);
  const target = Number(checkedValue("target"));
  if (target && target !== presetValues.target_score) rules.target_score = target;
  if ($("moon").value && $("moon").value !== presetValues.moon) rules.moon = $("moon").value;
  for (const select of document.querySelectorAll("select[data-rule]")) {
    if (select.value !== "") rules[select.dataset.rule] = JSON.parse(select.value);
  }
  const everyone = checkedValue("level");
  const opponents = [...$("opponents").querySelectorAll("select")].map((s) => s.value || everyone);
  return { preset, rules, opponents };
}

/** "Continue your game" on the start screen: the last game of this browser, when it is not over. */
async function offerContinue() {
  const box = $("continue-box");
  box.hidden = true;
  const id = storageGet(LAST_GAME);
  if (typeof id !== "string") return;
  try {
    const view = await api(`games/${encodeURIComponent(id)}`);
    if (view.phase === "over") return;
    $("continue").textContent = t("setup.continue", { hand: view.hand_number + 1 });
    $("continue").onclick = () => openGame(view);
    box.hidden = false;
  } catch {
    // gone (another browser's storage, an old server): nothing to continue
  }
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
    await offerContinue();
    setPageState("setup");
  } catch (err) {
    $("setup-message").textContent = t("setup.no_options", { why: err.message });
    setPageState("error");
  }
}

/** Show a game at its address: a new history entry, so Back returns to the start screen. */
function gameAddress(id, push) {
  const url = new URL(location.href);
  url.searchParams.set("game", id);
  if (push) history.pushState({ game: id }, "", url);
  else history.replaceState({ game: id }, "", url);
  storageSet(LAST_GAME, id);
}

async function openGame(view) {
  gameAddress(view.id, true);
  state.view = view;
  await continueGame(view);
}

async function startGame(event) {
  event.preventDefault();
  const body = setupBody();
  $("start").disabled = true;
  $("setup-message").textContent = "";
  setPageState("busy");
  try {
    const view = await api("games", { method: "POST", body: JSON.stringify(body) });
    gameAddress(view.id, true);
    $("log").replaceChildren();
    clearMessage();
    state.focusIndex = 0;
    state.passSel = [];
    render(view);
    log(t("ev.new_game", { players: view.players.map((p) => playerName(view, p.seat)).join(", ") }), "note");
    for (const e of view.events || []) {
      const line = eventLine(view, e);
      if (line) log(...line);
    }
    markSeen(view, (view.events || []).length);
  } catch (err) {
    $("setup-message").textContent = t("setup.cannot_start", { why: err.message });
    setPageState("setup");
  } finally {
    $("start").disabled = false;
  }
}

/** The start screen at the site's address (a new history entry unless `replace`). */
function newGame(replace = false) {
  const url = new URL(location.href);
  url.searchParams.delete("game");
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
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

/** The page for the address: Back and Forward move between the start screen and a game. */
async function route() {
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  const id = new URLSearchParams(location.search).get("game");
  if (!id) {
    await showSetup();
    return;
  }
  try {
    const view = await api(`games/${encodeURIComponent(id)}`);
    state.view = view;
    storageSet(LAST_GAME, id);
    await continueGame(view);
  } catch (err) {
    await showSetup();
    $("setup-message").textContent = t("setup.cannot_continue", { id, why: err.message });
  }
}

/** The page in the language chosen: its static text now, the rest at the next render. */
function switchLanguage(code) {
  setLanguage(code);
  if (!$("setup").hidden && state.options) renderSetup();
  if (state.view && !$("game").hidden) render(state.view);
}

// ---- start -------------------------------------------------------------------------------------

function setDeck(value) {
  document.body.classList.toggle("four-colour", value === "4");
}

/** Continues a game after a reload: its log from localStorage, and the events not yet seen. */
async function continueGame(view) {
  restoreLog(view.id);
  render(view);
  log(t("ev.continued", { hand: view.hand_number + 1 }), "note");
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

  const lang = $("lang");
  lang.value = currentLanguage();
  lang.addEventListener("change", () => switchLanguage(lang.value));
  translatePage();

  $("setup-form").addEventListener("submit", startGame);
  $("new-game").addEventListener("click", () => newGame());
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

  window.addEventListener("popstate", route);
  await route();
}

/** Start the page with `api` as its back end: an object whose fetch(path, init) answers api/v1/... */
export function startPage(api) {
  backend = api;
  return main();
}
