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
//
// This module holds what the page's modules share, the page state (`state`) and the back end
// (`backend`), with the helpers they all use ($, sleep, setPageState), and starts the page: its
// settings (pace, deck, language) and its listeners. The rest, one job each: cards_view.js (a card's
// glyphs and element), api.js (the requests), reasons.js (every reason code of the API in words),
// seats.js (seats and names), page_log.js (the log, the message line, the announcements), table.js
// (the table as shown), hand.js (your hand and the pass panel), dialogs.js (the hand's summary, the
// game over), events.js (an answer's events replayed), acting.js (choosing, passing, playing a card),
// keyboard.js, setup.js (the setup form) and routing.js (the start screen or a game, by the address).

import { currentLanguage, setLanguage, translatePage } from "./i18n.js";
import { downloadRecord } from "./api.js";
import { layoutHand } from "./hand.js";
import { onKey } from "./keyboard.js";
import { askNewGame, newGame, route, startGame } from "./routing.js";
import { renderSetup } from "./setup.js";
import { render } from "./table.js";

// ---- the page state, shared by every module ------------------------------------------------------

export let backend = null; // what answers the API's requests (startPage)

const params = new URLSearchParams(location.search);
export const state = {
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

export const $ = (id) => document.getElementById(id);
export const sleep = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export function setPageState(name) {
  document.body.dataset.state = name;
}

// ---- the start: the settings and the listeners ----------------------------------------------------

/** The page in the language chosen: its static text now, the rest at the next render. */
function switchLanguage(code) {
  setLanguage(code);
  if (!$("setup").hidden && state.options) renderSetup();
  if (state.view && !$("game").hidden) render(state.view);
}

function setDeck(value) {
  document.body.classList.toggle("four-colour", value === "4");
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
