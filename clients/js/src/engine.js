// Hearts Lab game engine in JavaScript: deal, pass, play, score, moons, target score, every preset
// and option of docs/rules.md, the two-player game. A game app (or the static web build) runs whole
// games with it and asks the exported policy (hearts.js) for the computer seats' cards.
//
//   const game = newGame('classic');              // or full rules (Rules.to_dict()), or {preset, ...}
//   legalActions(game)  -> card ids the seat game.toAct may take (a pass pick or a play)
//   act(game, card)     -> what happened: {kind: 'pass'|'play', seat, card, exchanged?, trick?, hand?}
//   nextHand(game)      -> after a scored hand (phase 'scored'), deals the next one
//   seatRecord(game)    -> what the seat to act knows, as a seat record (hearts.js encodes it)
//
// The rules mirror the Python engine one function per rule (hearts_env/play.py legal_cards,
// passing.py, scoring.py, deal.py; the options, presets and their checks are rules.js, as
// hearts_env/rules.py); Python's golden games (clients/js/test/fixtures/golden_games.json, written by
// `python -m export.golden_games DIR`) replay here with the same legal cards at every step and the
// same points and scores (test/engine.test.js).
//
// A game is a plain JSON object (it can be kept in the browser's storage and read back); the
// functions change it in place. Seats are 0..N-1 clockwise; card ids are 13 * suit + rank.
// Deals come from a given owner list (one seat per card id, -1 for dead or not in the deck) or from
// the platform's cryptographic random source (crypto.getRandomValues), never from Math.random.
import {
  HEARTS, JACK_OF_DIAMONDS, NUM_CARDS, QUEEN_OF_SPADES, cardText, parseCard, rankOf, suitOf,
} from './cards.js';
import { compiled, passDirection, passOffset, resolveRules } from './rules.js';

// The rules (rules.js) as the engine's callers have always imported them from here.
export {
  MOON_RULES, PASS_OFFSETS, PRESETS, RulesError, handSize, passDirection, passOffset, resolveRules,
} from './rules.js';

export const GAME_FORMAT = 'hearts-lab-game';
export const GAME_VERSION = 1;

export class IllegalActionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'IllegalActionError';
  }
}

/** Cards worth penalty points: the hearts and Q♠ (J♦ is a bonus, not a point card). */
export const isPointCard = (card) => suitOf(card) === HEARTS || card === QUEEN_OF_SPADES;

/** Cards that may not be led before hearts are broken: hearts, and Q♠ when it waits for them. */
export function waitsForHearts(rules, card) {
  return (rules.hearts_must_be_broken && suitOf(card) === HEARTS) || (rules.queen_waits_for_hearts && card === QUEEN_OF_SPADES);
}

// ------------------------------------------------------------------------------------------
// Dealing (hearts_env/deal.py): the deck shuffled, dead cards set aside, one card at a time round
// ------------------------------------------------------------------------------------------

/** A uniform integer in 0..bound-1 from crypto.getRandomValues (rejection sampling: no modulo bias). */
export function cryptoRandomBelow(bound) {
  const limit = 2 ** 32 - (2 ** 32 % bound);
  const word = new Uint32Array(1);
  for (;;) {
    globalThis.crypto.getRandomValues(word);
    if (word[0] < limit) return word[0] % bound;
  }
}

/** The deck in a uniformly random order (Fisher-Yates; `randomBelow(n)` gives 0..n-1). */
export function shuffledDeck(rules, randomBelow = cryptoRandomBelow) {
  const order = [...compiled(rules).deck];
  for (let i = order.length - 1; i > 0; i--) {
    const j = randomBelow(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * A random deal as owners[52]: the seat dealt each card, -1 for dead or not in the deck. As the
 * Python engine deals a shuffled deck: the first card (and, for two dead cards, the last) is set
 * aside; the rest go one at a time round the table.
 */
export function randomDeal(rules, randomBelow = cryptoRandomBelow) {
  const order = shuffledDeck(rules, randomBelow);
  const dead = rules.dead_cards;
  const first = dead - Math.floor(dead / 2);
  const last = order.length - Math.floor(dead / 2);
  const owners = new Array(NUM_CARDS).fill(-1);
  for (let k = 0; k < last - first; k++) owners[order[first + k]] = k % rules.num_players;
  return owners;
}

/** Hands (sorted card ids by seat) and dead cards of a deal given as owners[52]; checked. */
export function dealtHands(rules, owners) {
  const { p, inDeck, handSize: size } = compiled(rules);
  if (!Array.isArray(owners) || owners.length !== NUM_CARDS) throw new RangeError('a deal is owners[52]: the seat of each card id, -1 for dead');
  const hands = Array.from({ length: p }, () => []);
  const dead = [];
  owners.forEach((seat, card) => {
    if (!Number.isInteger(seat) || seat < -1 || seat >= p) throw new RangeError(`deal: seats must be -1 (dead) or 0..${p - 1}, got ${seat} for ${cardText(card)}`);
    if (seat >= 0 && !inDeck[card]) throw new RangeError(`deal: ${cardText(card)} is not in the ${rules.deck} deck`);
    if (seat >= 0) hands[seat].push(card);
    else if (inDeck[card]) dead.push(card);
  });
  if (hands.some((h) => h.length !== size)) throw new RangeError(`deal: every hand needs ${size} cards, got ${hands.map((h) => h.length).join(', ')}`);
  return { hands, dead };
}

/** A deal given as hands by seat (card texts or ids): owners[52], the cards in no hand dead. */
export function ownersFromHands(hands) {
  const owners = new Array(NUM_CARDS).fill(-1);
  hands.forEach((hand, seat) => hand.forEach((c) => {
    const card = parseCard(c);
    if (owners[card] >= 0) throw new RangeError(`${cardText(card)} is dealt twice (seats ${owners[card]} and ${seat})`);
    owners[card] = seat;
  }));
  return owners;
}

// ------------------------------------------------------------------------------------------
// Passing (hearts_env/passing.py)
// ------------------------------------------------------------------------------------------

/** Cards the seat to act may still choose to pass: any held card it has not chosen yet. */
function legalPasses(game) {
  const chosen = game.passed[game.toAct];
  return game.hands[game.toAct].filter((c) => !chosen.includes(c));
}

/** Every seat gives its chosen cards to the seat `offset` places clockwise, all at once. */
function exchange(game) {
  const { p } = compiled(game.rules);
  const offset = passOffset(game.rules, game.handNumber);
  const kept = game.hands.map((hand, seat) => hand.filter((c) => !game.passed[seat].includes(c)));
  for (let seat = 0; seat < p; seat++) {
    const giver = (seat - offset + p) % p;
    game.received[seat] = [...game.passed[giver]].sort((a, b) => a - b);
    game.hands[seat] = [...kept[seat], ...game.received[seat]].sort((a, b) => a - b);
  }
}

// ------------------------------------------------------------------------------------------
// Playing (hearts_env/play.py): the legal-play cascade, one function per rule
// ------------------------------------------------------------------------------------------

/** The card that opens the hand: the first of opening_lead that is not dead (else the last). */
export function openingCard(rules, dead) {
  const ids = compiled(rules).openingIds;
  return ids.find((c, i) => i === ids.length - 1 || !dead.includes(c));
}

/** 1. Follow suit if you can; otherwise any card. */
function followSuit(legal, ledSuit) {
  if (ledSuit < 0) return legal;
  const ofLedSuit = legal.filter((c) => suitOf(c) === ledSuit);
  return ofLedSuit.length ? ofLedSuit : legal;
}

/** 2. The first trick is opened with the opening card (2C, or its fallback when it is dead). */
function openingLead(legal, card) {
  return [card];
}

/** 3. Hearts (and Q♠ when it waits) may not be led before hearts are broken, unless nothing else. */
function heartsMustBeBroken(legal, rules) {
  const other = legal.filter((c) => !waitsForHearts(rules, c));
  return other.length ? other : legal;
}

/** 4. First-trick protection: no heart and no Q♠ on trick one, unless nothing else is legal. */
function firstTrickProtection(legal) {
  const safe = legal.filter((c) => !isPointCard(c));
  return safe.length ? safe : legal;
}

/**
 * The legal cards of a seat holding `hand` (card ids): the rules above, applied in order.
 * `situation`: {leading, firstTrick, ledSuit (-1 when leading), heartsBroken, openingCard}.
 * (The encoder's replay in hearts.js asks it too, of what a seat record shows.)
 */
export function legalCards(rules, hand, { leading, firstTrick, ledSuit, heartsBroken, openingCard: opening }) {
  let legal = followSuit(hand, leading ? -1 : ledSuit);
  if (leading && firstTrick) legal = openingLead(legal, opening);
  if (leading && !heartsBroken) legal = heartsMustBeBroken(legal, rules);
  if (rules.first_trick_protection && firstTrick && !leading) legal = firstTrickProtection(legal);
  return legal;
}

/** The legal cards of the seat to act in the play phase. */
function legalPlays(game) {
  const leading = game.trick.cards.length === 0;
  return legalCards(game.rules, game.hands[game.toAct], {
    leading, firstTrick: game.tricks.length === 0, ledSuit: leading ? -1 : suitOf(game.trick.cards[0]),
    heartsBroken: game.heartsBroken, openingCard: openingCard(game.rules, game.dead),
  });
}

/**
 * Whether playing `card` to a trick led in `ledSuit` breaks hearts: a heart played to a trick led in
 * another suit (a discard or, with hearts trump, a ruff), and any Q♠ with queen_breaks_hearts.
 */
export function breaksHearts(rules, card, ledSuit) {
  return (suitOf(card) === HEARTS && ledSuit !== HEARTS) || (rules.queen_breaks_hearts && card === QUEEN_OF_SPADES);
}

/** Seat winning a complete trick (cards in play order from `leader`): the highest trump, else the highest of the led suit. */
export function trickWinner(rules, leader, cards) {
  const { p, trump } = compiled(rules);
  const ledSuit = suitOf(cards[0]);
  let best = 0;
  let bestStrength = -1;
  cards.forEach((card, i) => {
    const suit = suitOf(card);
    const strength = rankOf(card) + (suit === ledSuit ? 13 : 0) + (suit === trump ? 26 : 0);
    if (strength > bestStrength) {
      best = i;
      bestStrength = strength;
    }
  });
  return (leader + best) % p;
}

// ------------------------------------------------------------------------------------------
// Scoring (hearts_env/scoring.py): points, the J♦ bonus, the moon in one place, game end
// ------------------------------------------------------------------------------------------

/** Penalty points of a set of cards, before the moon: hearts 1 each, Q♠ 13. */
export function cardPoints(cards) {
  return cards.reduce((sum, c) => sum + (suitOf(c) === HEARTS ? 1 : c === QUEEN_OF_SPADES ? 13 : 0), 0);
}

/** What J♦ adds to a set's score: jack_of_diamonds_points when the bonus is on and J♦ is in it. */
export function jackBonus(rules, cards) {
  return rules.jack_of_diamonds_bonus && cards.includes(JACK_OF_DIAMONDS) ? rules.jack_of_diamonds_points : 0;
}

/** The set holds every point card in play (dead cards are out of play). */
export function isShooter(rules, cards, dead) {
  return compiled(rules).deck.every((c) => !isPointCard(c) || dead.includes(c) || cards.includes(c));
}

/** The seat holding the lowest total alone, or -1 on a tie for lowest. */
export function soleLowest(totals) {
  let seat = 0;
  let ties = 0;
  for (let s = 1; s < totals.length; s++) {
    if (totals[s] < totals[seat]) {
      seat = s;
      ties = 0;
    } else if (totals[s] === totals[seat]) {
      ties += 1;
    }
  }
  return ties ? -1 : seat;
}

/** Someone reached the target score and the lowest total is held by one seat alone. */
export function isGameOver(rules, totals) {
  return Math.max(...totals) >= rules.target_score && soleLowest(totals) >= 0;
}

/**
 * One finished hand: {points, moon} per seat, moon rule and J♦ applied. `taken` are the cards each
 * seat won, `dead` the dead cards, `scores` the totals before the hand (shooter's choice reads them).
 */
export function scoreHand(rules, taken, dead, scores) {
  const moon = taken.map((cards) => rules.moon !== 'off' && isShooter(rules, cards, dead));
  if (!moon.some(Boolean)) return { points: taken.map((cards) => cardPoints(cards) + jackBonus(rules, cards)), moon };
  let subtract = rules.moon === 'subtract_from_self';
  if (rules.moon === 'shooters_choice') {
    // Adding to the others unless that ends the game with the shooter not the sole lowest.
    const totals = taken.map((cards, s) => scores[s] + (moon[s] ? 0 : rules.moon_points) + jackBonus(rules, cards));
    const lowest = soleLowest(totals);
    subtract = Math.max(...totals) >= rules.target_score && !(lowest >= 0 && moon[lowest]);
  }
  const points = taken.map((cards, s) => {
    const moonPoints = subtract ? (moon[s] ? -rules.moon_points : 0) : (moon[s] ? 0 : rules.moon_points);
    return moonPoints + jackBonus(rules, cards);
  });
  return { points, moon };
}

// ------------------------------------------------------------------------------------------
// The game
// ------------------------------------------------------------------------------------------

/**
 * A new game. `rules`: a preset name or options (resolveRules). Options: `deal` (owners[52] of the
 * first hand; default a random deal), `scores` (totals so far, default 0), `handNumber` (default 0:
 * it fixes the pass direction), `randomBelow` (the random source for deals).
 */
export function newGame(rules = 'classic', { deal, scores, handNumber = 0, randomBelow = cryptoRandomBelow } = {}) {
  const resolved = resolveRules(rules);
  const { p } = compiled(resolved);
  if (scores !== undefined && (!Array.isArray(scores) || scores.length !== p || !scores.every(Number.isInteger))) {
    throw new RangeError(`scores: ${p} whole numbers, one per seat`);
  }
  if (!Number.isInteger(handNumber) || handNumber < 0) throw new RangeError('handNumber must be 0 or more');
  const game = {
    format: GAME_FORMAT, version: GAME_VERSION, rules: resolved, handNumber,
    scores: scores ? [...scores] : new Array(p).fill(0), winner: -1, handsPlayed: [],
  };
  startHand(game, deal ?? randomDeal(resolved, randomBelow));
  return game;
}

/** Lay out hand game.handNumber from owners[52]: a hand with a pass starts in 'pass', else in 'play'. */
function startHand(game, owners) {
  const { rules } = game;
  const { p } = compiled(rules);
  const { hands, dead } = dealtHands(rules, owners);
  Object.assign(game, {
    dealt: hands.map((h) => [...h]), hands, dead,
    passed: Array.from({ length: p }, () => []), received: Array.from({ length: p }, () => []),
    tricks: [], trick: { leader: -1, cards: [] }, taken: Array.from({ length: p }, () => []),
    heartsBroken: false, history: [], startScores: [...game.scores],
  });
  if (passOffset(rules, game.handNumber) !== 0) {
    game.phase = 'pass';
    game.toAct = 0;
  } else {
    startPlay(game);
  }
}

/** The play phase begins: the holder of the opening card leads the first trick. */
function startPlay(game) {
  const opening = openingCard(game.rules, game.dead);
  game.phase = 'play';
  game.toAct = game.hands.findIndex((h) => h.includes(opening));
  game.trick = { leader: game.toAct, cards: [] };
}

/** The card ids the seat to act may take now (sorted): a card to pass or to play; [] between hands. */
export function legalActions(game) {
  if (game.phase === 'pass') return legalPasses(game);
  if (game.phase === 'play') return legalPlays(game);
  return [];
}

/**
 * The seat to act takes `card` (an id or text): a pass pick or a play. Returns what happened:
 * `{kind, seat, card}`, with `exchanged: true` when the last pick moved the passed cards, `trick:
 * {leader, cards, winner}` when the card completed a trick, and `hand: {points, moon, scores,
 * gameOver, winner}` when it ended the hand (the game is then in phase 'scored', or 'over').
 * An illegal card throws IllegalActionError naming the legal ones, and changes nothing.
 */
export function act(game, card) {
  const id = typeof card === 'string' ? parseCard(card) : card;
  const legal = legalActions(game);
  if (!legal.includes(id)) {
    const what = Number.isInteger(id) && id >= 0 && id < NUM_CARDS ? cardText(id) : `action ${JSON.stringify(card)}`;
    if (game.phase !== 'pass' && game.phase !== 'play') throw new IllegalActionError(`the hand is ${game.phase}: no card can be played (${what})`);
    throw new IllegalActionError(`player ${game.toAct} cannot ${game.phase} ${what}; legal: ${legal.map(cardText).join(' ')}`);
  }
  const seat = game.toAct;
  game.history.push([seat, id]);
  return game.phase === 'pass' ? choose(game, seat, id) : play(game, seat, id);
}

/** Record one pass pick; when every seat has chosen, the cards change hands and play begins. */
function choose(game, seat, card) {
  const { rules } = game;
  game.passed[seat].push(card);
  const event = { kind: 'pass', seat, card };
  if (game.passed[seat].length === rules.pass_count) {
    game.toAct = seat + 1;
    if (game.toAct === compiled(rules).p) {
      exchange(game);
      startPlay(game);
      event.exchanged = true;
    }
  }
  return event;
}

/** Play a card to the trick; a full trick goes to its winner, who leads next; the last one ends the hand. */
function play(game, seat, card) {
  const { rules } = game;
  const { p, handSize: size } = compiled(rules);
  game.hands[seat] = game.hands[seat].filter((c) => c !== card);
  const ledSuit = game.trick.cards.length ? suitOf(game.trick.cards[0]) : suitOf(card);
  if (breaksHearts(rules, card, ledSuit)) game.heartsBroken = true;
  game.trick.cards.push(card);
  game.toAct = (seat + 1) % p;
  const event = { kind: 'play', seat, card };
  if (game.trick.cards.length < p) return event;
  const { leader, cards } = game.trick;
  const winner = trickWinner(rules, leader, cards);
  game.taken[winner].push(...cards);
  game.tricks.push({ leader, cards: [...cards], winner });
  event.trick = { leader, cards: [...cards], winner };
  game.trick = { leader: winner, cards: [] };
  game.toAct = winner;
  if (game.tricks.length === size) event.hand = finishHand(game);
  return event;
}

/** Score the hand, add it to the totals, end the game when it is decided. */
function finishHand(game) {
  const { rules } = game;
  const { points, moon } = scoreHand(rules, game.taken, game.dead, game.scores);
  game.scores = game.scores.map((s, i) => s + points[i]);
  const gameOver = isGameOver(rules, game.scores);
  game.winner = gameOver ? soleLowest(game.scores) : -1;
  game.phase = gameOver ? 'over' : 'scored';
  game.toAct = -1;
  const hand = { handNumber: game.handNumber, points, moon, scores: [...game.scores], gameOver, winner: game.winner };
  game.handsPlayed.push(hand);
  return hand;
}

/** After a scored hand that did not end the game: deal the next one (`deal`: owners[52], default random). */
export function nextHand(game, { deal, randomBelow = cryptoRandomBelow } = {}) {
  if (game.phase !== 'scored') throw new IllegalActionError(`no next hand: the game is in phase ${game.phase}`);
  game.handNumber += 1;
  startHand(game, deal ?? randomDeal(game.rules, randomBelow));
}

/**
 * What `seat` (default the seat to act) knows now, as a seat record (docs/export.md) that hearts.js
 * encodes for a policy: its hand, passed and received cards, the tricks of this hand, the scores
 * before it. Only the seat to act has a decision to describe.
 */
export function seatRecord(game, seat = game.toAct) {
  if (seat !== game.toAct || seat < 0) throw new IllegalActionError(`a seat record is of the seat to act (${game.toAct}), not seat ${seat}`);
  const text = (cards) => cards.map(cardText);
  const record = {
    version: 1, rules: structuredClone(game.rules), seat, hand_number: game.handNumber, scores: [...game.startScores],
    phase: game.phase, hand: text(game.hands[seat]), passed: text(game.passed[seat]),
  };
  if (game.phase === 'play') {
    if (passOffset(game.rules, game.handNumber) !== 0) record.received = text(game.received[seat]);
    record.tricks = game.tricks.map(({ leader, cards }) => ({ leader, cards: text(cards) }));
    record.trick = { leader: game.trick.leader, cards: text(game.trick.cards) };
  }
  return record;
}
