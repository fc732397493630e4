// Hearts Lab in the browser: the page over the JSON API (/api/v1/...). No build step, no libraries.
//
// The server holds the game; this page only shows the view it gets back (what seat 0, "you", may
// see) and sends one card at a time: a pass pick during passing, a card during play. The events of
// each answer are shown in order, with a short delay per bot card (?fast=1 or the speed setting
// turns the delay off). The URL carries the game (?game=<id>), so a reload continues it.

const API = "api/v1";
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
  el.className = `card ${SUITS[card[1]].red ? "red" : "black"}`;
  el.dataset.card = card;
  const rank = document.createElement("span");
  rank.className = "rank";
  rank.textContent = rankText(card);
  const suit = document.createElement("span");
  suit.className = "suit";
  suit.textContent = SUITS[card[1]].sym;
  rank.setAttribute("aria-hidden", "true");
  suit.setAttribute("aria-hidden", "true");
  el.append(rank, suit);
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
  delay: 450,
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
    res = await fetch(`${API}/${path}`, {
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

// ---- the log -----------------------------------------------------------------------------------

function log(text, kind = "") {
  const li = document.createElement("li");
  li.textContent = text;
  if (kind) li.className = `ev-${kind}`;
  const list = $("log");
  list.append(li);
  while (list.children.length > 80) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
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

// ---- rendering ---------------------------------------------------------------------------------

function renderTrick(view, plays, winner = null) {
  const n = numPlayers(view);
  for (const slot of $("trick").querySelectorAll(".slot")) {
    slot.replaceChildren();
    slot.classList.remove("winner");
    slot.hidden = n === 2 && (slot.dataset.pos === "west" || slot.dataset.pos === "east");
  }
  for (const { seat, card } of plays) {
    const slot = $("trick").querySelector(`.slot[data-pos="${positionOf(seat, n)}"]`);
    const el = cardElement(card);
    el.setAttribute("aria-label", `${shortName(view, seat)}: ${cardName(card)}`);
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = shortName(view, seat);
    slot.append(el, who);
    if (winner === seat) slot.classList.add("winner");
  }
  $("trick-note").textContent =
    winner === null || winner === undefined ? "" : `${shortName(view, winner)} ${winner === 0 ? "take" : "takes"} the trick`;
}

function renderSeats(view) {
  const n = numPlayers(view);
  for (const pos of ["north", "west", "east", "south"]) $(`seat-${pos}`).hidden = true;
  for (const p of view.players) {
    const box = $(`seat-${positionOf(p.seat, n)}`);
    box.hidden = false;
    box.replaceChildren();
    const name = document.createElement("div");
    name.className = "seat-name";
    name.textContent = p.seat === 0 ? "You (South)" : playerName(view, p.seat);
    const score = document.createElement("div");
    score.className = "seat-score";
    const taken = view.hand_points ? view.hand_points[p.seat] : 0;
    score.textContent = `${view.scores[p.seat]} pts${taken ? ` · +${taken} this hand` : ""}`;
    box.append(name, score);
    box.classList.toggle("to-act", view.phase !== "over" && view.to_act === p.seat);
    box.classList.toggle("dealer-you", p.seat === 0);
  }
}

function renderScores(view) {
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
    hand.textContent = view.hand_points ? view.hand_points[p.seat] : 0;
    const total = document.createElement("td");
    total.className = "total";
    total.textContent = view.scores[p.seat];
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

function renderInfo(view) {
  const status = $("status");
  if (view.phase === "over") {
    status.textContent = "Game over.";
  } else if (view.phase === "pass") {
    status.textContent = view.your_turn ? "Choose cards to pass." : `${playerName(view, view.to_act)} is choosing…`;
  } else if (view.your_turn) {
    status.textContent = view.trick.length === 0 ? "Your lead." : "Your turn.";
  } else {
    status.textContent = `${playerName(view, view.to_act)} to play…`;
  }
  const hearts = $("hearts");
  hearts.textContent = view.hearts_broken ? "♥ Hearts are broken" : "♡ Hearts are not broken";
  hearts.classList.toggle("broken", !!view.hearts_broken);
  renderLastTrick(view, view.last_trick);
}

function renderLastTrick(view, last) {
  const el = $("last-trick");
  el.replaceChildren();
  if (!last) {
    el.textContent = "Last trick: none yet this hand.";
    return;
  }
  const who = last.winner === 0 ? "You took" : `${playerName(view, last.winner)} took`;
  el.append(`Last trick: ${who} it (${last.points} ${last.points === 1 ? "point" : "points"}): `);
  for (const { seat, card } of last.plays) {
    const c = cardElement(card);
    c.classList.add("mini");
    c.setAttribute("aria-label", `${shortName(view, seat)}: ${cardName(card)}`);
    el.append(c, " ");
  }
}

function renderPass(view) {
  const panel = $("pass-panel");
  const pass = view.pass;
  const received = view.received;
  panel.replaceChildren();
  if (pass && pass.direction && pass.direction !== "none") {
    panel.hidden = false;
    const to = pass.to === null || pass.to === undefined ? "" : ` to ${playerName(view, pass.to)}`;
    const head = document.createElement("p");
    head.className = "pass-head";
    const arrow = { left: "←", right: "→", across: "↑" }[pass.direction] || "";
    const total = (pass.chosen ? pass.chosen.length : 0) + (pass.picks_left || 0);
    head.textContent = `${arrow} Pass ${total} cards ${pass.direction}${to}: ${pass.picks_left} more to choose.`;
    const chosen = document.createElement("p");
    chosen.className = "pass-chosen";
    chosen.append("Chosen: ");
    if (!pass.chosen || pass.chosen.length === 0) chosen.append("none yet");
    for (const c of pass.chosen || []) chosen.append(cardElement(c), " ");
    panel.append(head, chosen);
    panel.dataset.picksLeft = pass.picks_left;
  } else if (received && received.length && view.phase === "play" && view.hand.length >= numCardsDealt(view) - 1) {
    panel.hidden = false;
    const p = document.createElement("p");
    p.className = "pass-received";
    p.append("You received: ");
    for (const c of received) p.append(cardElement(c), " ");
    panel.append(p);
    delete panel.dataset.picksLeft;
  } else {
    panel.hidden = true;
    delete panel.dataset.picksLeft;
  }
}

function renderHand(view, handCards = view.hand, interactive = true) {
  const hand = $("hand");
  const hadFocus = hand.contains(document.activeElement);
  hand.replaceChildren();
  const legal = new Set(interactive && view.your_turn ? view.legal : []);
  const chosen = new Set(view.pass ? view.pass.chosen || [] : []);
  const firstTrick = view.hand.length >= numCardsDealt(view) - 1;
  const received = new Set(view.phase === "play" && view.received && firstTrick ? view.received : []);
  handCards.forEach((card, i) => {
    const btn = cardElement(card, "button");
    btn.type = "button";
    btn.tabIndex = -1;
    btn.dataset.index = i;
    if (legal.has(card)) btn.classList.add("legal");
    else btn.classList.add("illegal");
    if (chosen.has(card)) {
      btn.classList.add("chosen");
      btn.setAttribute("aria-pressed", "true");
      btn.title = "chosen to pass";
    } else if (view.your_turn && interactive && !legal.has(card)) {
      btn.title = "not playable now";
    }
    if (received.has(card)) btn.classList.add("received");
    btn.addEventListener("click", () => {
      state.focusIndex = i;
      playCard(card);
    });
    hand.append(btn);
  });
  hand.setAttribute("aria-label", view.phase === "pass" ? "Your hand: choose cards to pass" : "Your hand");
  const buttons = hand.querySelectorAll("button");
  if (buttons.length) {
    const i = Math.min(state.focusIndex, buttons.length - 1);
    buttons[i].tabIndex = 0;
    if (hadFocus || (interactive && state.restoreFocus)) buttons[i].focus();
  }
}

function renderGameOver(view) {
  const panel = $("gameover");
  if (view.phase !== "over" || !view.game_over) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const scores = view.game_over.scores || view.scores;
  const lines = view.players.map((p) => `${playerName(view, p.seat)} ${scores[p.seat]}`).join(", ");
  $("gameover-text").textContent = `${winnerText(view, view.game_over.winner)} Final scores: ${lines}.`;
}

function render(view) {
  state.view = view;
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
  renderSeats(view);
  renderTrick(view, view.trick || []);
  renderInfo(view);
  renderPass(view);
  renderScores(view);
  renderHand(view);
  state.restoreFocus = false;
  $("hand").hidden = view.phase === "over" && view.hand.length === 0;
  $("help").hidden = view.phase === "over";
  renderGameOver(view);
  setPageState(view.phase === "over" ? "over" : view.your_turn ? "your-turn" : "waiting");
}

function showSummary(view, event) {
  const body = $("summary-body");
  body.replaceChildren();
  const title = $("summary-title");
  title.textContent = `Hand ${event.hand_number + 1} summary`;
  if (event.moon !== null && event.moon !== undefined) {
    const moon = document.createElement("p");
    moon.className = "moon";
    moon.textContent =
      event.moon === 0 ? "You shot the moon! 🌙" : `${playerName(view, event.moon)} shot the moon! 🌙`;
    body.append(moon);
  }
  const table = document.createElement("table");
  table.innerHTML = "<thead><tr><th scope=\"col\">Player</th><th scope=\"col\">This hand</th><th scope=\"col\">Total</th></tr></thead>";
  const tbody = document.createElement("tbody");
  for (const p of view.players) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = playerName(view, p.seat);
    const pts = document.createElement("td");
    pts.textContent = event.points[p.seat];
    const tot = document.createElement("td");
    tot.textContent = event.scores[p.seat];
    tr.append(th, pts, tot);
    tbody.append(tr);
  }
  table.append(tbody);
  body.append(table);
  $("summary").hidden = false;
}

// ---- events, in order --------------------------------------------------------------------------

async function showEvents(before, after, playedCard) {
  const view = after;
  let trick = before ? [...(before.trick || [])] : [];
  let handCards = before ? before.hand.filter((c) => c !== playedCard || before.phase === "pass") : after.hand;
  if (before && before.phase === "play") renderHand(before, handCards, false);
  setPageState("busy");
  for (const e of after.events || []) {
    switch (e.type) {
      case "played": {
        trick.push({ seat: e.seat, card: e.card });
        renderTrick(view, trick);
        log(`${shortName(view, e.seat)} ${e.seat === 0 ? "play" : "plays"} ${cardSymbol(e.card)}`);
        if (e.seat !== 0) await sleep(state.delay);
        break;
      }
      case "hearts_broken":
        $("hearts").textContent = "♥ Hearts are broken";
        $("hearts").classList.add("broken");
        log(`Hearts are broken (${shortName(view, e.seat)}: ${cardSymbol(e.card)})`, "note");
        break;
      case "trick_won": {
        renderTrick(view, e.plays, e.winner);
        renderLastTrick(view, e);
        const pts = e.points ? ` (${e.points} ${e.points === 1 ? "point" : "points"})` : "";
        log(`${shortName(view, e.winner)} ${e.winner === 0 ? "take" : "takes"} the trick${pts}`, "trick");
        await sleep(state.delay * 1.5);
        trick = [];
        renderTrick(view, trick);
        break;
      }
      case "exchanged": {
        const to = e.to === null || e.to === undefined ? "" : ` to ${shortName(view, e.to)}`;
        const from = e.from === null || e.from === undefined ? "" : ` from ${shortName(view, e.from)}`;
        log(`You passed ${cardsText(e.passed)}${to} and received ${cardsText(e.received)}${from}`, "note");
        if (before) renderHand(after, after.hand, false);
        break;
      }
      case "hand_scored": {
        showSummary(view, e);
        const moon = e.moon === null || e.moon === undefined ? "" : ` — ${shortName(view, e.moon)} shot the moon!`;
        const pts = view.players.map((p) => `${shortName(view, p.seat)} ${e.points[p.seat]}`).join(", ");
        log(`Hand ${e.hand_number + 1} scored: ${pts}${moon}`, "score");
        break;
      }
      case "hand_started": {
        trick = [];
        renderTrick(view, trick);
        const dir = e.pass_direction && e.pass_direction !== "none" ? `pass ${e.pass_direction}` : "no pass";
        log(`Hand ${e.hand_number + 1} dealt (${dir})`, "note");
        break;
      }
      case "game_over": {
        log(`Game over: ${winnerText(view, e.winner)}`, "score");
        break;
      }
      default:
        break;
    }
  }
}

// ---- acting ------------------------------------------------------------------------------------

async function playCard(card) {
  const view = state.view;
  if (!view || state.busy) return;
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
  state.restoreFocus = $("hand").contains(document.activeElement);
  state.busy = true;
  setPageState("busy");
  clearMessage();
  try {
    const next = await api(`games/${encodeURIComponent(view.id)}/play`, {
      method: "POST",
      body: JSON.stringify({ card }),
    });
    $("summary").hidden = true;
    if (view.phase === "pass") log(`You choose ${cardSymbol(card)} to pass`);
    await showEvents(view, next, card);
    render(next);
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      showMessage(refusalText(card, verb, err.message), "refused");
      const btn = $("hand").querySelector(`button[data-card="${card}"]`);
      if (btn) {
        btn.classList.remove("shake");
        void btn.offsetWidth; // restart the animation
        btn.classList.add("shake");
      }
      setPageState(view.your_turn ? "your-turn" : "waiting");
      if (err.data && Array.isArray(err.data.legal)) {
        // The server knows best: refresh which cards are legal.
        view.legal = err.data.legal;
      }
    } else {
      showMessage(`Could not play ${cardSymbol(card)}: ${err.message}`);
      await reloadGame(view.id);
    }
  } finally {
    state.busy = false;
    if (document.body.dataset.state === "busy") setPageState("waiting");
  }
}

/** The server's reason, as a sentence that names the card ("Q♠ cannot be played now: ..."). */
function refusalText(card, verb, detail) {
  const text = String(detail || "").trim();
  const named = text.startsWith(cardSymbol(card)) || text.includes(" cannot be ") || /^you (do not|already)/i.test(text);
  const sentence = named ? text : `${cardSymbol(card)} cannot be ${verb} now${text ? `: ${text}` : ""}`;
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
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
        playCard(b.dataset.card);
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
    playCard(card);
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
    $("summary").hidden = true;
    clearMessage();
    state.focusIndex = 0;
    render({ ...view, events: [] });
    log(`New game: ${view.players.map((p) => playerName(view, p.seat)).join(", ")}`, "note");
    if ((view.events || []).length) {
      await showEvents(null, view, null);
      render(view);
    }
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
  $("summary").hidden = true;
  $("gameover").hidden = true;
  clearMessage();
  showSetup();
}

// ---- start -------------------------------------------------------------------------------------

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
  $("setup-form").addEventListener("submit", startGame);
  $("new-game").addEventListener("click", newGame);
  $("new-game-top").addEventListener("click", newGame);
  $("summary-close").addEventListener("click", () => {
    $("summary").hidden = true;
  });
  document.addEventListener("keydown", onKey);

  const id = params.get("game");
  if (!id) {
    await showSetup();
    return;
  }
  try {
    const view = await api(`games/${encodeURIComponent(id)}`);
    render(view);
    log(`Game ${view.id} continued (hand ${view.hand_number + 1})`, "note");
  } catch (err) {
    await showSetup();
    $("setup-message").textContent = `Could not continue game ${id}: ${err.message}`;
  }
}

main();
