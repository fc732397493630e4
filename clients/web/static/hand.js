// Your hand: its cards fanned to fit the felt (legal, chosen, received marked) and, while passing,
// the pass panel (how many more to choose, undo, confirm).

import { t } from "./i18n.js";
import { chooseCard, confirmPass } from "./acting.js";
import { $, state } from "./app.js";
import { cardElement, cardSymbol } from "./cards_view.js";

export function renderPass(view) {
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

export function refreshPass() {
  renderPass(state.view);
  renderHand(state.view);
}

/** Lays the hand out as a fan that fits the felt's width (cards overlap as much as they must). */
export function layoutHand() {
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

export function renderHand(view, interactive = true) {
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
