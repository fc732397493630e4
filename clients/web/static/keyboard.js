// The keyboard: the arrow keys, Home and End move along the hand; a card typed ("qs", "10h") is found
// and played with Enter; Escape and Backspace edit what was typed.

import { t } from "./i18n.js";
import { chooseCard } from "./acting.js";
import { $, state } from "./app.js";
import { cardSymbol, parseCard } from "./cards_view.js";
import { showMessage } from "./page_log.js";

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

export function onKey(event) {
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
