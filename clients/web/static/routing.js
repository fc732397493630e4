// Which screen, by the address: the start screen (the setup, "Continue your game") or a game at
// ?game=<id>, so Back, Forward and a reload find it again. Starting a game, continuing one after a
// reload (its log, the events not yet seen) and leaving it for a new one.

import { t } from "./i18n.js";
import { api } from "./api.js";
import { $, setPageState, state } from "./app.js";
import { openDialog, showGameOver, showSummary } from "./dialogs.js";
import { eventLine } from "./events.js";
import { answerSignature, clearMessage, log, markSeen, restoreLog, storageGet, storageSet } from "./page_log.js";
import { playerName } from "./seats.js";
import { renderSetup, setupBody } from "./setup.js";
import { render } from "./table.js";

const LAST_GAME = "hearts-last-game";

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

export async function startGame(event) {
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
export function newGame(replace = false) {
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
export function askNewGame() {
  const view = state.view;
  if (!view || view.phase === "over") {
    newGame();
    return;
  }
  openDialog($("leave"));
  $("leave-keep").focus();
}

/** The page for the address: Back and Forward move between the start screen and a game. */
export async function route() {
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
