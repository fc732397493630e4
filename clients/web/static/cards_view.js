// A card as the page shows it: its glyphs ("Q♠", "10♥"), its name for a screen reader ("queen of
// spades", from the catalogue), a typed card read back ("qs", "10h", "Q♠" -> "QS"), and the card's
// element (the corner index and the pip) that the hand, the trick and the last trick are made of.

import { t } from "./i18n.js";

const RANKS = "23456789TJQKA";
export const SUITS = {
  C: { sym: "♣", red: false },
  D: { sym: "♦", red: true },
  H: { sym: "♥", red: true },
  S: { sym: "♠", red: false },
};
const SYMBOL_SUIT = { "♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S" };

const rankText = (card) => (card[0] === "T" ? "10" : card[0]);
export const cardSymbol = (card) => rankText(card) + SUITS[card[1]].sym;
export const cardName = (card) => t("card.name", { rank: t(`rank.${card[0]}`), suit: t(`suit.${card[1]}`) });
export const cardsText = (list) => (list && list.length ? list.map(cardSymbol).join(" ") : "—");

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

export function cardElement(card, tag = "span") {
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
