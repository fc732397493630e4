// Cards of the Hearts Lab contract, shared by the encoder (hearts.js) and the game engine (engine.js):
// id = 13 * suit + rank, suits C D H S = 0..3, ranks 2..A = 0..12; text "QS", "TH" ("10h", "q♠" read too).

export const NUM_CARDS = 52;
export const RANKS = '23456789TJQKA';
export const SUITS = 'CDHS';
const SUIT_SYMBOLS = { '♣': 0, '♦': 1, '♥': 2, '♠': 3, '♧': 0, '♢': 1, '♡': 2, '♤': 3 };
export const HEARTS = 2;
export const QUEEN_OF_SPADES = 49;
export const JACK_OF_DIAMONDS = 22;
/** Ranks kept in the 28-card deck (short28): 2 4 6 8 10 Q A of every suit. */
export const SHORT_DECK_RANKS = '2468TQA';

/** A value as Python's repr() writes it ('QS', [0, 0, 0], None, True), so messages read as Python's. */
export function pyRepr(value) {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
    return quote + (quote === "'" ? escaped.replace(/'/g, "\\'") : escaped) + quote;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
  return String(value);
}

export const suitOf = (card) => Math.floor(card / 13);
/** The suits' symbols, in suit order (C D H S). */
export const SUIT_SYMBOLS_TEXT = '♣♦♥♠';
export const rankOf = (card) => card % 13;

export function cardText(card) {
  if (!Number.isInteger(card) || card < 0 || card >= NUM_CARDS) throw new RangeError(`card id ${card} is out of range 0..51`);
  return RANKS[card % 13] + SUITS[Math.floor(card / 13)];
}

/** "Q♠" style text of a card id, for people (cards.card_symbol_text). */
export function cardSymbolText(card) {
  const text = cardText(card);
  return (text[0] === 'T' ? '10' : text[0]) + SUIT_SYMBOLS_TEXT[suitOf(card)];
}

/** The card id of a text such as "QS", "10h", "q♠", or an id 0..51. */
export function parseCard(value) {
  if (Number.isInteger(value)) {
    if (value < 0 || value >= NUM_CARDS) throw new RangeError(`card id ${value} is out of range: card ids are 0..51`);
    return value;
  }
  if (typeof value === 'string') {
    const cleaned = value.trim().toUpperCase();
    if (cleaned.length >= 2) {
      let rank = cleaned.slice(0, -1);
      const suitChar = cleaned.slice(-1);
      if (rank === '10') rank = 'T';
      const suit = SUITS.includes(suitChar) ? SUITS.indexOf(suitChar) : (SUIT_SYMBOLS[suitChar] ?? -1);
      if (rank.length === 1 && RANKS.includes(rank) && suit >= 0) return 13 * suit + RANKS.indexOf(rank);
    }
  }
  throw new RangeError(`${pyRepr(value)} is not a card: write a rank from ${RANKS} (or 10) and a suit from ` +
    `${SUITS} or ♣♦♥♠, e.g. 'QS', '10H', 'q♠'`);
}
