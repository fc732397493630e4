// The rules of a game of Hearts (hearts_env/rules.py): the options, the presets, the one validator
// (checkRules), "the same game" (sameGame), and what follows from a rule set (compiled: the hand
// size, the deck, the pass offsets, the opening cards), each owned here once for the JavaScript
// client: the engine (engine.js), the seat record's reader (seat_record.js) and the game session
// (match.js) read them from here. Rule spaces (which rule sets a policy covers) are rule_space.js.
import { JACK_OF_DIAMONDS, NUM_CARDS, RANKS, SHORT_DECK_RANKS, SUITS, cardText, parseCard, rankOf } from './cards.js';

/** Seat offset of each pass direction: left = seat+1, across = seat+2, right = seat-1. */
export const PASS_OFFSETS = Object.freeze({ left: 1, right: -1, across: 2, none: 0 });
export const MOON_RULES = Object.freeze(['add_to_others', 'subtract_from_self', 'shooters_choice', 'off']);

/** A rules value or combination is invalid; `detail` names the option and what is allowed. */
export class RulesError extends Error {
  constructor(detail) {
    super(`invalid rules: ${detail}`);
    this.name = 'RulesError';
    this.detail = detail;
  }
}

const CLASSIC = Object.freeze({
  name: 'classic', num_players: 4, deck: 'full52', dead_cards: 0, pass_cycle: ['left', 'right', 'across', 'none'],
  pass_count: 3, opening_lead: ['2C'], first_trick_protection: true, hearts_must_be_broken: true,
  queen_breaks_hearts: false, queen_waits_for_hearts: false, moon: 'add_to_others', moon_points: 26,
  jack_of_diamonds_bonus: false, jack_of_diamonds_points: -10, target_score: 100, trump_suit: null,
});

/** The presets, as Rules.to_dict() writes them. */
export const PRESETS = Object.freeze({
  classic: CLASSIC,
  quick: { ...CLASSIC, name: 'quick', target_score: 50 },
  long: { ...CLASSIC, name: 'long', target_score: 150 },
  two_player: {
    ...CLASSIC, name: 'two_player', num_players: 2, deck: 'short28', dead_cards: 2, pass_cycle: ['none'],
    opening_lead: ['2C', '4C', '6C'], first_trick_protection: false, moon_points: 20, trump_suit: 'H',
  },
});
/** Every option of a complete rules object, `name` first (Rules.to_dict()'s keys). */
export const OPTIONS = Object.freeze(Object.keys(CLASSIC));
const FLAGS = ['first_trick_protection', 'hearts_must_be_broken', 'queen_breaks_hearts', 'queen_waits_for_hearts',
  'jack_of_diamonds_bonus'];
/** Bound on the numeric options, as hearts_env/rules.py RULES_NUMBER_LIMIT. */
const NUMBER_LIMIT = 10 ** 9;
const NUMBERS = ['num_players', 'dead_cards', 'pass_count', 'moon_points', 'jack_of_diamonds_points', 'target_score'];

/** The card ids of a deck (full52 or short28), in id order. */
export function deckIds(deck) {
  const ids = [];
  for (let c = 0; c < NUM_CARDS; c++) if (deck === 'full52' || SHORT_DECK_RANKS.includes(RANKS[rankOf(c)])) ids.push(c);
  return ids;
}

/**
 * Complete, checked rules from a preset name, a full options object, or options with `preset` naming
 * the base (the others default to classic). Options changed from a preset make a `custom` game
 * unless `name` is given. Throws RulesError naming the option.
 */
export function resolveRules(value = 'classic') {
  if (typeof value === 'string') {
    if (!(value in PRESETS)) throw new RulesError(`unknown preset ${JSON.stringify(value)}; presets are: ${Object.keys(PRESETS).join(', ')}`);
    return structuredClone(PRESETS[value]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new RulesError('rules must be a preset name or an object of options');
  }
  const { preset, ...changes } = value;
  const base = preset === undefined ? CLASSIC : resolveRules(preset);
  const unknown = Object.keys(changes).filter((k) => !OPTIONS.includes(k));
  if (unknown.length) throw new RulesError(`unknown option(s) ${unknown.join(', ')}; the options are: ${OPTIONS.join(', ')}`);
  const rules = { ...structuredClone(base), ...structuredClone(changes) };
  // docs/rules.md writes lists as "left, right" and no trump as none.
  if (typeof rules.pass_cycle === 'string') rules.pass_cycle = rules.pass_cycle.split(',').map((s) => s.trim()).filter(Boolean);
  if (typeof rules.opening_lead === 'string') rules.opening_lead = rules.opening_lead.split(',').map((s) => s.trim()).filter(Boolean);
  if (rules.trump_suit === 'none') rules.trump_suit = null;
  checkRules(rules);
  rules.opening_lead = rules.opening_lead.map((c) => cardText(parseCard(c)));
  if (!('name' in changes) && !sameGame(rules, base)) {
    rules.name = 'custom';
  }
  return rules;
}

/**
 * Throws RulesError unless every option and combination of the complete rules `r` is allowed
 * (hearts_env/rules.py's validators): the one rules validator of the JavaScript client, used by
 * resolveRules and by the seat record's reader (seat_record.js).
 */
export function checkRules(r) {
  for (const k of FLAGS) if (typeof r[k] !== 'boolean') throw new RulesError(`${k}: must be true or false`);
  for (const k of NUMBERS) {
    // (Python keeps them in 64-bit integers with room to add; here they stay exact doubles)
    if (!Number.isInteger(r[k]) || Math.abs(r[k]) > NUMBER_LIMIT) {
      throw new RulesError(`${k}: must be a whole number between -${NUMBER_LIMIT} and ${NUMBER_LIMIT}`);
    }
  }
  if (r.num_players !== 2 && r.num_players !== 4) throw new RulesError('num_players: must be 2 or 4');
  if (r.deck !== 'full52' && r.deck !== 'short28') throw new RulesError('deck: must be full52 or short28');
  if (r.dead_cards < 0) throw new RulesError('dead_cards: must be 0 or more');
  if (r.pass_count < 1) throw new RulesError('pass_count: must be at least 1 (for no passing use pass_cycle: ["none"])');
  if (r.target_score <= 0) throw new RulesError('target_score: must be a positive number of points');
  if (r.moon_points <= 0) throw new RulesError('moon_points: must be a positive number of points');
  if (!MOON_RULES.includes(r.moon)) throw new RulesError(`moon: must be one of ${MOON_RULES.join(', ')}`);
  if (r.trump_suit !== null && !(typeof r.trump_suit === 'string' && r.trump_suit.length === 1 && SUITS.includes(r.trump_suit))) {
    throw new RulesError('trump_suit: must be none or one of C D H S');
  }
  if (!Array.isArray(r.pass_cycle) || !r.pass_cycle.length || r.pass_cycle.some((d) => !(d in PASS_OFFSETS))) {
    throw new RulesError('pass_cycle: must list one or more of left, right, across, none');
  }
  if (!Array.isArray(r.opening_lead) || !r.opening_lead.length) throw new RulesError('opening_lead: must list cards, e.g. ["2C"]');
  const size = r.deck === 'full52' ? 52 : 28;
  const inPlay = size - r.dead_cards;
  if (inPlay <= 0 || inPlay % r.num_players) {
    throw new RulesError(`dead_cards=${r.dead_cards}: the ${size}-card deck less the dead cards must deal evenly to ${r.num_players} players`);
  }
  if (r.pass_count > inPlay / r.num_players) throw new RulesError(`pass_count=${r.pass_count} is more than a hand of ${inPlay / r.num_players} cards`);
  if (r.num_players === 2 && r.pass_cycle.includes('across')) throw new RulesError("pass_cycle: 'across' needs four players");
  const deck = deckIds(r.deck);
  let ids;
  try {
    ids = r.opening_lead.map(parseCard);
  } catch (error) {
    throw new RulesError(`opening_lead: ${error.message}`);
  }
  if (new Set(ids).size !== ids.length) throw new RulesError('opening_lead: lists a card twice');
  for (const c of ids) if (!deck.includes(c)) throw new RulesError(`opening_lead: ${cardText(c)} is not in the ${r.deck} deck`);
  if (ids.length <= r.dead_cards) {
    throw new RulesError(`opening_lead: with ${r.dead_cards} dead cards it needs at least ${r.dead_cards + 1} fallback cards so one is always dealt`);
  }
  if (r.jack_of_diamonds_bonus && !deck.includes(JACK_OF_DIAMONDS)) throw new RulesError(`jack_of_diamonds_bonus: the ${r.deck} deck has no J♦`);
}

const COMPILED = new WeakMap();

/**
 * What the rule functions read, derived once per rules object (as Rules' properties and
 * hearts_env/constants.py): {p, deck, inDeck, handSize, trump, openingIds, passOffsets}.
 */
export function compiled(rules) {
  let c = COMPILED.get(rules);
  if (!c) {
    const deck = deckIds(rules.deck);
    const inDeck = new Array(NUM_CARDS).fill(false);
    for (const id of deck) inDeck[id] = true;
    c = {
      p: rules.num_players,
      deck,
      inDeck,
      handSize: (deck.length - rules.dead_cards) / rules.num_players,
      trump: rules.trump_suit === null ? -1 : SUITS.indexOf(rules.trump_suit),
      openingIds: rules.opening_lead.map(parseCard),
      passOffsets: rules.pass_cycle.map((d) => ((PASS_OFFSETS[d] % rules.num_players) + rules.num_players) % rules.num_players),
    };
    COMPILED.set(rules, c);
  }
  return c;
}

/**
 * Whether `a` and `b` (complete rules objects) play the same game: every option equal, the `name`
 * label aside (Rules.same_game).
 */
export function sameGame(a, b) {
  return OPTIONS.every((k) => k === 'name' || JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** The number of cards dealt to each seat: the deck less the dead cards, dealt evenly (Rules.hand_size). */
export function handSize(rules) {
  return compiled(rules).handSize;
}

/** Seat offset of the pass of hand `handNumber`: entry handNumber % length of pass_cycle (0 = no pass). */
export function passOffset(rules, handNumber) {
  const offsets = compiled(rules).passOffsets;
  return offsets[handNumber % offsets.length];
}

/** The pass direction's name for hand `handNumber` (left, right, across, none). */
export function passDirection(rules, handNumber) {
  return rules.pass_cycle[handNumber % rules.pass_cycle.length];
}
