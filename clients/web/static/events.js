// An answer's events, in order: each in words for the log (eventLine), and replayed on the shown
// table one by one at the chosen pace (replay): the opponents' cards, the trick taken and its cards
// flying to the winner, the pass received, the hand's score and its summary, a new hand.

import { t } from "./i18n.js";
import { $, setPageState, sleep, state } from "./app.js";
import { cardsText, cardSymbol } from "./cards_view.js";
import { moonText, showSummary } from "./dialogs.js";
import { renderHand } from "./hand.js";
import { announce, log, markSeen } from "./page_log.js";
import { numPlayers, passTo, positionOf, shortName, winnerText } from "./seats.js";
import { renderHearts, renderLastTrick, renderScores, renderSeats, renderTable, renderTrick, setStatus, setTurn } from "./table.js";

export function eventLine(view, e) {
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
export async function replay(view, events) {
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
