// Acting: a card chosen from the hand (a pick while passing, else a play), the pass confirmed, a card
// played (shown at once, then the server's answer replayed), a refused card shaken and its refusal
// worded (reasons.js), and the game loaded again when a request fails.

import { t } from "./i18n.js";
import { api, ApiError } from "./api.js";
import { $, setPageState, state } from "./app.js";
import { cardSymbol } from "./cards_view.js";
import { showGameOver } from "./dialogs.js";
import { replay } from "./events.js";
import { refreshPass, renderHand } from "./hand.js";
import { clearMessage, showMessage } from "./page_log.js";
import { refusalText } from "./reasons.js";
import { numPlayers, passTo, shortName } from "./seats.js";
import { render, renderTrick, setStatus, setTurn } from "./table.js";

export function chooseCard(card) {
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

export async function confirmPass() {
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

async function reloadGame(id) {
  try {
    render(await api(`games/${encodeURIComponent(id)}`));
  } catch (err) {
    showMessage(t("error.load", { why: err.message }));
  }
}
