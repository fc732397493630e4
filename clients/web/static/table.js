// The table as shown: the seats (names, scores, cards left), the trick, the scores and the score
// sheet, hearts broken, the last trick, the status line; `state.shown` holds it, so replaying events
// (events.js) moves it on card by card. render(view) shows the whole page for a view when no events
// are being replayed.

import { t } from "./i18n.js";
import { API } from "./api.js";
import { $, setPageState, state } from "./app.js";
import { cardElement, cardName } from "./cards_view.js";
import { renderHand, renderPass } from "./hand.js";
import { announce } from "./page_log.js";
import { agentName, numPlayers, passTo, playerName, positionOf, shortName } from "./seats.js";

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

export function setTurn(view, seat) {
  state.shown.turn = seat;
  document.body.dataset.turn = seat === null || seat === undefined ? "" : String(seat);
  renderSeats(view);
}

export function setStatus(text) {
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

export function renderSeats(view) {
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
export function renderTrick(view) {
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

export function renderScores(view) {
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
export function sheetTable(view) {
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

export function renderHearts() {
  const hearts = $("hearts");
  hearts.textContent = t(state.shown.heartsBroken ? "hearts.broken" : "hearts.not_broken");
  hearts.classList.toggle("broken", state.shown.heartsBroken);
}

export function renderLastTrick(view) {
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

export function renderTable(view) {
  renderSeats(view);
  renderTrick(view);
  renderScores(view);
  renderHearts();
  renderLastTrick(view);
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

export function render(view) {
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
