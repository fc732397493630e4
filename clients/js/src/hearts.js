// Hearts Lab reference client: seat record -> observation v1 and legal mask -> exported policy.
//
// A game app keeps its own game. When the policy is to act for a seat, the app describes what
// that seat knows in a *seat record* (docs/export.md), and this module
//
//   encodeObservation(record) -> Float32Array(629)   observation v1, exactly as Python encodes it
//   legalMask(record)         -> Uint8Array(52)      1 for each legal card id
//   loadPolicy(ort, model, manifest) -> PolicySession (checks the manifest against the model)
//   chooseCard(session, record) -> { action, card, probabilities, observation, mask }
//   runPolicy(session, observations, masks) -> { actions, probabilities }   the model on a batch
//
// The model answers a row whose mask has no legal card with action NO_ACTION (-1) and all-zero
// probabilities (a valid record always has a legal card, so chooseCard never sees it).
//
// `ort` is the onnxruntime module the app uses: onnxruntime-web in a browser, onnxruntime-node
// in Node. Both read the same model file. Card ids follow the contract id = 13 * suit + rank
// (suits C D H S, ranks 2..A), seats are 0..N-1 clockwise.
//
// A record that describes no reachable situation (cards missing or twice, a history the rules
// do not allow, a trick led by the wrong seat, not this seat's turn) throws RecordError. The
// checks follow hearts_env/seat_record.py; Python's golden vectors (clients/js/test/fixtures)
// pin the two implementations together.

import {
  JACK_OF_DIAMONDS, NUM_CARDS, QUEEN_OF_SPADES, RANKS, SHORT_DECK_RANKS, SUITS, cardText, parseCard, pyRepr, rankOf, suitOf,
} from './cards.js';
import { PASS_OFFSETS, breaksHearts, cardPoints, legalCards, trickWinner } from './engine.js';
import { refusal, spaceOf } from './rule_space.js';

export const OBS_VERSION = 1;
export const RECORD_VERSION = 1;
export const RECORD_FORMAT = 'hearts-seat-record';
export const MANIFEST_FORMAT = 'hearts-lab-policy';
export const MANIFEST_VERSION = 1;
/** The model's action for a row whose action mask has no legal card (its probabilities are all 0). */
export const NO_ACTION = -1;

const SEATS = 4;

export const RULE_FLAGS = [
  'first_trick_protection', 'hearts_must_be_broken', 'queen_breaks_hearts', 'queen_waits_for_hearts',
  'jack_of_diamonds_bonus', 'hearts_trump', 'short_deck', 'two_players',
  'moon_add_to_others', 'moon_subtract_from_self', 'moon_shooters_choice', 'moon_off',
];

// Observation v1 pieces in order: [name, shape]. Offsets follow from the sizes.
const PIECES = [
  ['hand', [52]], ['passed', [52]], ['received', [52]], ['trick', [SEATS, 52]], ['played_by', [SEATS, 52]],
  ['trick_leader', [SEATS]], ['voids', [SEATS, 4]], ['points_taken', [SEATS]], ['jack_taken', [SEATS]],
  ['scores', [SEATS]], ['to_act', [SEATS]], ['trick_number', [1]], ['phase', [2]], ['pass_direction', [SEATS]],
  ['hearts_broken', [1]], ['queen_seen', [1]], ['rules', [RULE_FLAGS.length]],
];

export const LAYOUT = (() => {
  const out = [];
  let offset = 0;
  for (const [name, shape] of PIECES) {
    const size = shape.reduce((a, b) => a * b, 1);
    out.push({ name, offset, size, shape });
    offset += size;
  }
  return out;
})();
export const OBS_DIM = LAYOUT[LAYOUT.length - 1].offset + LAYOUT[LAYOUT.length - 1].size;
const AT = Object.fromEntries(LAYOUT.map((p) => [p.name, p.offset]));

export class RecordError extends Error {
  constructor(message) {
    super(`seat record: ${message}`);
    this.name = 'RecordError';
  }
}

export class ManifestError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ManifestError';
  }
}

const fail = (message) => new RecordError(message);

const PARSED = Symbol('parsed seat record');

// ------------------------------------------------------------------------------------------
// Cards
// ------------------------------------------------------------------------------------------

export { NUM_CARDS, cardText, parseCard, rankOf, suitOf };

const formatCards = (ids) => ids.map(cardText).join(' ');

// ------------------------------------------------------------------------------------------
// Rules (the record carries them in full, as Python's Rules.to_dict() writes them)
// ------------------------------------------------------------------------------------------

const RULE_FIELDS = [
  'name', 'num_players', 'deck', 'dead_cards', 'pass_cycle', 'pass_count', 'opening_lead',
  'first_trick_protection', 'hearts_must_be_broken', 'queen_breaks_hearts', 'queen_waits_for_hearts',
  'moon', 'moon_points', 'jack_of_diamonds_bonus', 'jack_of_diamonds_points', 'target_score', 'trump_suit',
];

function checkRules(rules) {
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) {
    throw fail('rules must be an object with every rules option (as Rules.to_dict() writes them)');
  }
  const missing = RULE_FIELDS.filter((k) => !(k in rules));
  if (missing.length) {
    throw fail(`rules: missing ${missing.join(', ')} (this client reads complete rules, e.g. the manifest's "rules")`);
  }
  const unknown = Object.keys(rules).filter((k) => !RULE_FIELDS.includes(k));
  if (unknown.length) throw fail(`rules: unknown option(s) ${unknown.join(', ')}`);
  const p = rules.num_players;
  if (p !== 2 && p !== 4) throw fail(`rules: num_players must be 2 or 4, got ${JSON.stringify(p)}`);
  if (rules.deck !== 'full52' && rules.deck !== 'short28') throw fail(`rules: deck must be full52 or short28`);
  const inDeck = new Array(NUM_CARDS).fill(false);
  for (let c = 0; c < NUM_CARDS; c++) inDeck[c] = rules.deck === 'full52' || SHORT_DECK_RANKS.includes(RANKS[c % 13]);
  const deckSize = rules.deck === 'full52' ? 52 : 28;
  const inPlay = deckSize - rules.dead_cards;
  if (!Number.isInteger(rules.dead_cards) || rules.dead_cards < 0 || inPlay <= 0 || inPlay % p) {
    throw fail(`rules: dead_cards=${rules.dead_cards} does not deal evenly to ${p} players`);
  }
  if (!Array.isArray(rules.pass_cycle) || !rules.pass_cycle.length ||
      rules.pass_cycle.some((d) => !(d in PASS_OFFSETS))) {
    throw fail('rules: pass_cycle must list left, right, across or none');
  }
  if (!Array.isArray(rules.opening_lead) || !rules.opening_lead.length) throw fail('rules: opening_lead must list cards');
  const trump = rules.trump_suit === null ? -1 : SUITS.indexOf(rules.trump_suit);
  if (rules.trump_suit !== null && trump < 0) throw fail('rules: trump_suit must be null or one of C D H S');
  const moons = ['add_to_others', 'subtract_from_self', 'shooters_choice', 'off'];
  if (!moons.includes(rules.moon)) throw fail(`rules: moon must be one of ${moons.join(', ')}`);
  if (!Number.isInteger(rules.target_score) || rules.target_score <= 0) throw fail('rules: target_score must be positive');
  const handSize = inPlay / p;
  return {
    ...rules, inDeck, handSize, trump,
    openingIds: rules.opening_lead.map(parseCard),
    passOffsets: rules.pass_cycle.map((d) => ((PASS_OFFSETS[d] % p) + p) % p),
  };
}

// ------------------------------------------------------------------------------------------
// Parsing a record and the checks that need no replay
// ------------------------------------------------------------------------------------------

const REQUIRED_KEYS = ['version', 'rules', 'seat', 'hand_number', 'scores', 'phase', 'hand'];
const OPTIONAL_KEYS = ['format', 'passed', 'received', 'tricks', 'trick', 'note'];

function intField(data, key, low, high) {
  const value = data[key];
  if (!Number.isInteger(value)) throw fail(`${key} must be an integer, got ${pyRepr(value)}`);
  if (value < low || (high !== undefined && value > high)) {
    throw fail(`${key} must be ${high !== undefined ? `${low}..${high}` : `${low} or more`}, got ${value}`);
  }
  return value;
}

function cardList(value, where, inDeck) {
  if (!Array.isArray(value)) throw fail(`${where} must be a list of cards such as ["QS", "TH"], got ${pyRepr(value)}`);
  const ids = [];
  for (const item of value) {
    if (typeof item !== 'string' && !Number.isInteger(item)) throw fail(`${where}: ${pyRepr(item)} is not a card`);
    let card;
    try {
      card = parseCard(item);
    } catch (err) {
      throw fail(`${where}: ${err.message}`);
    }
    if (ids.includes(card)) throw fail(`${where}: ${cardText(card)} is listed twice`);
    if (!inDeck[card]) throw fail(`${where}: ${cardText(card)} is not in this game's deck`);
    ids.push(card);
  }
  return ids;
}

function trickField(value, where, p, inDeck) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('cards' in value) ||
      Object.keys(value).some((k) => k !== 'leader' && k !== 'cards')) {
    throw fail(`${where} must be an object {"leader": SEAT, "cards": [...]}, got ${pyRepr(value)}`);
  }
  let leader = -1;
  if (value.leader === undefined || value.leader === null) {
    if (value.cards.length) throw fail(`${where}: a trick with cards needs its leader`);
  } else {
    leader = intField(value, 'leader', 0, p - 1);
  }
  return { leader, cards: cardList(value.cards, `${where} cards`, inDeck) };
}

/** A checked record: card ids, rules with derived values, plays in order. Throws RecordError. */
export function parseRecord(record) {
  if (typeof record === 'string') {
    try {
      record = JSON.parse(record);
    } catch (err) {
      throw fail(`not valid JSON: ${err.message}`);
    }
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) throw fail('a record is a JSON object');
  const missing = REQUIRED_KEYS.filter((k) => !(k in record));
  if (missing.length) throw fail(`missing ${missing.join(', ')} (a record needs ${REQUIRED_KEYS.join(', ')})`);
  const unknown = Object.keys(record).filter((k) => !REQUIRED_KEYS.includes(k) && !OPTIONAL_KEYS.includes(k)).sort();
  if (unknown.length) throw fail(`unknown key(s) ${unknown.join(', ')}; the keys are ${[...REQUIRED_KEYS, ...OPTIONAL_KEYS].join(', ')}`);
  if ('format' in record && record.format !== RECORD_FORMAT) throw fail(`format is ${pyRepr(record.format)}, expected ${pyRepr(RECORD_FORMAT)}`);
  if (record.version !== RECORD_VERSION) throw fail(`version ${pyRepr(record.version)} is not supported (this reader reads version ${RECORD_VERSION})`);
  const rules = checkRules(record.rules);
  const p = rules.num_players;
  const seat = intField(record, 'seat', 0, p - 1);
  const handNumber = intField(record, 'hand_number', 0);
  const scores = record.scores;
  if (!Array.isArray(scores) || scores.length !== p || scores.some((s) => !Number.isInteger(s))) {
    throw fail(`scores must be ${p} integers (game totals before this hand, by seat), got ${pyRepr(scores)}`);
  }
  if (record.phase !== 'pass' && record.phase !== 'play') throw fail(`phase must be "pass" or "play", got ${pyRepr(record.phase)}`);
  const tricks = record.tricks ?? [];
  if (!Array.isArray(tricks)) throw fail('tricks must be a list of finished tricks');
  const r = {
    rules, p, seat, handNumber, scores, phase: record.phase,
    hand: cardList(record.hand, 'hand', rules.inDeck),
    passed: cardList(record.passed ?? [], 'passed', rules.inDeck),
    received: cardList(record.received ?? [], 'received', rules.inDeck),
    tricks: tricks.map((t, i) => trickField(t, `tricks[${i}]`, p, rules.inDeck)),
    trick: trickField(record.trick ?? { cards: [] }, 'trick', p, rules.inDeck),
    [PARSED]: true,
  };
  r.offset = rules.passOffsets[handNumber % rules.passOffsets.length];
  r.plays = [];
  [...r.tricks, r.trick].forEach((t, i) => t.cards.forEach((card, k) => r.plays.push({ t: i, seat: (t.leader + k) % p, card })));
  checkCounts(r);
  return r;
}

function countMessage(got, size, what) {
  const gap = size - got;
  return `${what} ${size} cards of a ${size}-card hand, got ${got} (${gap > 0 ? `${gap} missing` : `${-gap} too many`})`;
}

function checkCounts(r) {
  const { rules, p } = r;
  const size = rules.handSize;
  const need = rules.pass_count;
  const direction = rules.pass_cycle[r.handNumber % rules.pass_cycle.length];
  const hand = new Set(r.hand);
  if (r.phase === 'pass') {
    if (r.offset === 0) throw fail(`phase is "pass" but hand ${r.handNumber} has no pass (pass direction '${direction}')`);
    if (r.tricks.length || r.trick.cards.length || r.received.length) {
      throw fail('phase is "pass": no card has been played or received yet (tricks, trick and received must be empty)');
    }
    if (r.hand.length !== size) throw fail(countMessage(r.hand.length, size, 'before the exchange every seat holds'));
    const outside = r.passed.filter((c) => !hand.has(c));
    if (outside.length) throw fail(`passed: ${formatCards(outside)} not in the hand (during the pass the chosen cards stay in the hand until the exchange)`);
    if (r.passed.length >= need) throw fail(`phase is "pass" but ${r.passed.length} cards are already chosen: a seat chooses ${need}, and after its last pick it is no longer its turn`);
    return;
  }
  r.tricks.forEach((t, i) => {
    if (t.cards.length !== p) throw fail(`tricks[${i}] has ${t.cards.length} cards; a finished trick has ${p} (the unfinished one goes in "trick")`);
  });
  if (r.trick.cards.length >= p) throw fail(`trick has ${r.trick.cards.length} cards; the current trick has at most ${p - 1} (a full trick belongs in "tricks")`);
  if (r.tricks.length >= size) throw fail(`${r.tricks.length} tricks are finished: the hand is over and nobody is to act`);
  if (r.offset && (r.passed.length !== need || r.received.length !== need)) {
    throw fail(`hand ${r.handNumber} passes ${direction}: after the exchange passed and received hold ${need} cards each, got ${r.passed.length} and ${r.received.length}`);
  }
  if (!r.offset && (r.passed.length || r.received.length)) throw fail(`hand ${r.handNumber} has no pass, so passed and received must be empty`);
  const where = new Map(r.hand.map((c) => [c, 'in the hand']));
  for (const { t, seat, card } of r.plays) {
    const place = `played by seat ${seat} in ${t < r.tricks.length ? `tricks[${t}]` : 'trick'}`;
    if (where.has(card)) throw fail(`${cardText(card)} appears twice: ${where.get(card)} and ${place}`);
    where.set(card, place);
  }
  const mine = r.plays.filter((x) => x.seat === r.seat).map((x) => x.card);
  const held = r.hand.length + mine.length;
  if (held !== size) throw fail(countMessage(held, size, 'your hand and the cards you played must make the'));
  if (r.hand.length !== size - r.tricks.length) {
    throw fail(`after ${r.tricks.length} finished tricks it is seat ${r.seat}'s turn only if it holds ${size - r.tricks.length} cards, but the hand lists ${r.hand.length}`);
  }
  for (const card of r.passed) {
    if (hand.has(card) || mine.includes(card)) throw fail(`passed: ${cardText(card)} was passed away but is ${where.get(card)}`);
  }
  const receiver = (r.seat + r.offset) % p;
  for (const { seat, card } of r.plays) {
    if (r.passed.includes(card) && seat !== receiver) throw fail(`${cardText(card)} was passed to seat ${receiver} but is played by seat ${seat}`);
  }
  for (const card of r.received) {
    if (!hand.has(card) && !mine.includes(card)) throw fail(`received: ${cardText(card)} is neither in the hand nor among the cards played by seat ${r.seat}`);
  }
}

// ------------------------------------------------------------------------------------------
// Replaying the hand: the engine's rules (engine.js), played on what the seat knows
// ------------------------------------------------------------------------------------------

function forcedDead(r, unseen) {
  const { rules } = r;
  const opening = rules.openingIds;
  let k;
  let what;
  if (r.plays.length) {
    const first = r.plays[0].card;
    k = opening.indexOf(first);
    if (k < 0) throw fail(`the hand's first trick must be opened with ${rules.opening_lead.join(' / ')}, but the record opens it with ${cardText(first)}`);
    what = `the first trick was opened with ${cardText(first)}`;
  } else {
    const held = opening.filter((c) => r.hand.includes(c));
    if (!held.length) throw fail(`no card has been played, so the holder of ${rules.opening_lead[0]} leads; seat ${r.seat} does not hold it, so it is not its turn`);
    k = opening.indexOf(held[0]);
    what = `seat ${r.seat} is to open the first trick with ${cardText(held[0])}`;
  }
  const earlier = opening.slice(0, k);
  const blocked = earlier.filter((c) => !unseen.has(c));
  if (earlier.length && (blocked.length || earlier.length > rules.dead_cards)) {
    throw fail(`${what}, which is allowed only when ${formatCards(earlier)} ${earlier.length === 1 ? 'is' : 'are'} dead (set aside), but ` +
      (blocked.length ? `${formatCards(blocked)} is in play` : `this game sets aside only ${rules.dead_cards} cards`));
  }
  return { dead: new Set(earlier), openingCard: opening[k] };
}

/** Can the unseen cards be dealt to the other seats (and the dead cards) as the play requires? */
function placeUnseen(unseen, room, dead, allowed, deadCount) {
  const capacity = new Map([...room, [-1, deadCount]]);
  const options = new Map(unseen.map((c) => [c, dead.has(c) ? [-1] : [...[...room.keys()].filter((s) => allowed.get(s).has(c)), -1]]));
  const load = new Map([...capacity.keys()].map((s) => [s, []]));
  const assign = (card, visited) => {
    for (const s of options.get(card)) {
      if (visited.has(s)) continue;
      visited.add(s);
      if (load.get(s).length < capacity.get(s)) {
        load.get(s).push(card);
        return true;
      }
      for (const other of [...load.get(s)]) {
        const list = load.get(s);
        list.splice(list.indexOf(other), 1);
        if (assign(other, visited)) {
          list.push(card);
          return true;
        }
        list.push(other);
      }
    }
    return false;
  };
  for (const card of [...unseen].sort((a, b) => options.get(a).length - options.get(b).length)) {
    if (!assign(card, new Set())) {
      const seats = [...room.keys()].filter((s) => !allowed.get(s).has(card));
      throw fail(`the cards this seat has not seen cannot be held consistently with the play: ${cardText(card)} fits no seat with room` +
        (seats.length ? ` (seat${seats.length > 1 ? 's' : ''} ${seats.join(', ')} showed by their play that they cannot hold it)` : ''));
    }
  }
}

/** Replay the record's hand; returns what observation v1 needs. Throws RecordError. */
export function replay(record) {
  const r = record && record[PARSED] ? record : parseRecord(record);
  const { rules, p, seat: me } = r;
  const state = {
    r, legal: [], trick: new Array(p).fill(-1), played: Array.from({ length: p }, () => []),
    taken: Array.from({ length: p }, () => []), voids: Array.from({ length: p }, () => [false, false, false, false]),
    leader: me, numInTrick: 0, trickNumber: r.tricks.length, heartsBroken: false,
  };
  if (r.phase === 'pass') {
    state.legal = r.hand.filter((c) => !r.passed.includes(c));
    return state;
  }
  // What each other seat surely held after the exchange: the cards it plays, and what we passed it.
  const receiver = (me + r.offset) % p;
  const holding = new Map();
  for (let s = 0; s < p; s++) if (s !== me) holding.set(s, new Set());
  for (const { seat, card } of r.plays) if (seat !== me) holding.get(seat).add(card);
  if (r.offset) r.passed.forEach((c) => holding.get(receiver).add(c));
  holding.set(me, new Set([...r.hand, ...r.plays.filter((x) => x.seat === me).map((x) => x.card)]));
  const seen = new Set([...holding.values()].flatMap((h) => [...h]));
  const unseen = [];
  for (let c = 0; c < NUM_CARDS; c++) if (rules.inDeck[c] && !seen.has(c)) unseen.push(c);
  const room = new Map();
  for (const [s, h] of holding) {
    if (s === me) continue;
    if (h.size > rules.handSize) throw fail(`seat ${s} would hold ${h.size} cards, more than a hand of ${rules.handSize}`);
    room.set(s, rules.handSize - h.size);
  }
  const { dead, openingCard } = forcedDead(r, new Set(unseen));
  const allowed = new Map([...room.keys()].map((s) => [s, new Set(unseen)]));
  // The first trick is led by the holder of the opening card.
  const opener = [...holding].find(([, h]) => h.has(openingCard))[0];
  state.leader = opener;
  let toAct = opener;
  for (const { t, seat, card } of r.plays) {
    const where = t < r.tricks.length ? `tricks[${t}]` : 'trick';
    if (seat !== toAct) {
      throw fail(`${where}: the record has seat ${seat} play ${cardText(card)}, but seat ${toAct} ${state.numInTrick === 0 ? 'led' : 'played next'} there ` +
        `(the winner of a trick leads the next; the first trick is opened by the holder of ${rules.opening_lead[0]})`);
    }
    const ctx = {
      leading: state.numInTrick === 0, firstTrick: t === 0, heartsBroken: state.heartsBroken, openingCard,
      ledSuit: state.numInTrick ? suitOf(state.trick[state.leader]) : -1,
    };
    const held = [...holding.get(seat)];
    const legal = legalCards(rules, held, ctx);
    if (!legal.includes(card)) {
      throw fail(`${where}: seat ${seat} cannot play ${cardText(card)} (legal there: ${formatCards(legal.sort((a, b) => a - b))})`);
    }
    if (seat !== me) {  // which unseen cards could this seat also have held, the play still legal?
      for (const c of allowed.get(seat)) {
        if (!legalCards(rules, [...held, c], ctx).includes(card)) allowed.get(seat).delete(c);
      }
    }
    // Play the card (hearts_env/play.py: play_card, then finish_trick when the trick is full).
    holding.get(seat).delete(card);
    state.played[seat].push(card);
    state.trick[seat] = card;
    const ledSuit = ctx.leading ? suitOf(card) : ctx.ledSuit;
    if (suitOf(card) !== ledSuit) {
      state.voids[seat][ledSuit] = true;
    }
    if (breaksHearts(rules, card, ledSuit)) state.heartsBroken = true;
    state.numInTrick += 1;
    toAct = (seat + 1) % p;
    if (state.numInTrick === p) {
      const inOrder = state.trick.map((_, i) => state.trick[(state.leader + i) % p]);
      const winner = trickWinner(rules, state.leader, inOrder);
      state.taken[winner].push(...state.trick);
      state.trick.fill(-1);
      state.numInTrick = 0;
      state.leader = winner;
      toAct = winner;
    }
  }
  if (toAct !== me) throw fail(`after this history it is seat ${toAct}'s turn to play, not seat ${me}'s`);
  if (r.trick.cards.length && state.leader !== r.trick.leader) throw fail(`trick: the record says seat ${r.trick.leader} led, but seat ${state.leader} did`);
  if (!r.trick.cards.length && r.trick.leader !== -1 && r.trick.leader !== me) {
    throw fail(`trick: no card played yet, so the leader is the seat to act (${me}), not ${r.trick.leader}`);
  }
  placeUnseen(unseen, room, dead, allowed, rules.dead_cards);
  state.legal = legalCards(rules, r.hand, {
    leading: state.numInTrick === 0, firstTrick: r.tricks.length === 0, heartsBroken: state.heartsBroken, openingCard,
    ledSuit: state.numInTrick ? suitOf(state.trick[state.leader]) : -1,
  });
  return state;
}

// ------------------------------------------------------------------------------------------
// Observation v1 and the legal mask
// ------------------------------------------------------------------------------------------

function ruleFlags(rules) {
  return {
    first_trick_protection: rules.first_trick_protection, hearts_must_be_broken: rules.hearts_must_be_broken,
    queen_breaks_hearts: rules.queen_breaks_hearts, queen_waits_for_hearts: rules.queen_waits_for_hearts,
    jack_of_diamonds_bonus: rules.jack_of_diamonds_bonus, hearts_trump: rules.trump_suit === 'H',
    short_deck: rules.deck === 'short28', two_players: rules.num_players === 2,
    moon_add_to_others: rules.moon === 'add_to_others', moon_subtract_from_self: rules.moon === 'subtract_from_self',
    moon_shooters_choice: rules.moon === 'shooters_choice', moon_off: rules.moon === 'off',
  };
}

/** Observation v1 (Float32Array of OBS_DIM) of the record's seat; see the manifest's layout. */
export function encodeObservation(record) {
  const state = replay(record);
  const { r } = state;
  const { rules, p, seat: me } = r;
  const obs = new Float32Array(OBS_DIM);
  const setCards = (at, ids) => ids.forEach((c) => { obs[at + c] = 1; });
  const rel = (rowSeat) => (rowSeat - me + p) % p;
  setCards(AT.hand, r.hand);
  setCards(AT.passed, r.passed);
  if (r.phase === 'play' && r.offset) setCards(AT.received, r.received);
  for (let s = 0; s < p; s++) {
    const row = rel(s);
    if (state.trick[s] >= 0) obs[AT.trick + 52 * row + state.trick[s]] = 1;
    setCards(AT.played_by + 52 * row, state.played[s]);
    state.voids[s].forEach((v, suit) => { obs[AT.voids + 4 * row + suit] = v ? 1 : 0; });
    obs[AT.points_taken + row] = cardPoints(state.taken[s]) / 26;
    if (rules.jack_of_diamonds_bonus) obs[AT.jack_taken + row] = state.taken[s].includes(JACK_OF_DIAMONDS) ? 1 : 0;
    obs[AT.scores + row] = r.scores[s] / rules.target_score;
  }
  if (state.numInTrick > 0) obs[AT.trick_leader + rel(state.leader)] = 1;
  obs[AT.to_act + 0] = 1;  // the record is at this seat's decision
  obs[AT.trick_number] = r.tricks.length / rules.handSize;
  obs[AT.phase + (r.phase === 'pass' ? 0 : 1)] = 1;
  if (r.offset) obs[AT.pass_direction + r.offset] = 1;
  obs[AT.hearts_broken] = state.heartsBroken ? 1 : 0;
  obs[AT.queen_seen] = state.played.some((cards) => cards.includes(QUEEN_OF_SPADES)) ? 1 : 0;
  const flags = ruleFlags(rules);
  RULE_FLAGS.forEach((name, i) => { obs[AT.rules + i] = flags[name] ? 1 : 0; });
  return obs;
}

/** Uint8Array(52): 1 for each card the record's seat may choose now. */
export function legalMask(record) {
  const mask = new Uint8Array(NUM_CARDS);
  replay(record).legal.forEach((c) => { mask[c] = 1; });
  return mask;
}

// ------------------------------------------------------------------------------------------
// The exported policy
// ------------------------------------------------------------------------------------------

async function sha256Hex(bytes) {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Refuse a manifest this client cannot honour, or one that belongs to another model. */
export function checkManifest(manifest, modelSha256 = null) {
  if (!manifest || manifest.format !== MANIFEST_FORMAT || manifest.format_version !== MANIFEST_VERSION) {
    throw new ManifestError(`manifest format ${JSON.stringify(manifest?.format)} version ${JSON.stringify(manifest?.format_version)}; expected "${MANIFEST_FORMAT}" version ${MANIFEST_VERSION}`);
  }
  const obs = manifest.observation ?? {};
  if (obs.version !== OBS_VERSION || obs.dimension !== OBS_DIM) {
    throw new ManifestError(`the manifest is for observation v${obs.version} (${obs.dimension} floats); this client encodes observation v${OBS_VERSION} (${OBS_DIM} floats)`);
  }
  const theirs = JSON.stringify((obs.layout ?? []).map(({ name, offset, size, shape }) => ({ name, offset, size, shape })));
  if (theirs !== JSON.stringify(LAYOUT)) throw new ManifestError(`the manifest's observation layout differs from this client's observation v${OBS_VERSION}`);
  if (modelSha256 !== null && manifest.model?.sha256 !== modelSha256) {
    throw new ManifestError(`the manifest belongs to another model (its sha256 ${String(manifest.model?.sha256).slice(0, 12)}..., the model has ${modelSha256.slice(0, 12)}...)`);
  }
  checkRules(manifest.rules);
  const space = manifest.rule_space;
  if (space !== undefined && (space === null || typeof space !== 'object' || typeof space.fields !== 'object' ||
      space.fields === null || Object.values(space.fields).some((values) => !Array.isArray(values) || !values.length))) {
    throw new ManifestError('the manifest\'s rule_space must be {fields: {option: [values]}, held_out: [...]}');
  }
  if (space && refusal(space, manifest.rules) !== null) {
    throw new ManifestError(`the manifest's rule_space does not cover its own rules: ${refusal(space, manifest.rules)}`);
  }
}

/**
 * A policy session: `ort` is onnxruntime-web or onnxruntime-node, `model` the model bytes
 * (ArrayBuffer / Uint8Array) or a URL/path to fetch, `manifest` the parsed policy.json.
 */
export async function loadPolicy(ort, model, manifest, sessionOptions = {}) {
  let bytes = model;
  if (typeof model === 'string' || model instanceof URL) {
    const response = await fetch(model);
    if (!response.ok) throw new ManifestError(`cannot fetch the model ${model}: HTTP ${response.status}`);
    bytes = new Uint8Array(await response.arrayBuffer());
  } else if (model instanceof ArrayBuffer) {
    bytes = new Uint8Array(model);
  }
  checkManifest(manifest, await sha256Hex(bytes));
  const session = await ort.InferenceSession.create(bytes, sessionOptions);
  const input = session.inputMetadata?.find?.((m) => m.name === 'observation');
  if (input && input.shape && input.shape[1] !== manifest.observation.dimension) {
    throw new ManifestError(`the model reads ${input.shape[1]} floats per observation; the manifest says ${manifest.observation.dimension}`);
  }
  return { ort, session, manifest };
}

/**
 * The model on a batch: `observations` and `masks` are arrays of N Float32Array(OBS_DIM) and N
 * Uint8Array(52) (or one flat array each). Returns { actions: N card ids, probabilities: N
 * Float32Array(52) }; a row whose mask has no legal card gets action NO_ACTION (-1) and zeros.
 */
export async function runPolicy(session, observations, masks) {
  const { ort } = session;
  const flat = (rows, width, Type, what) => {
    if (!rows.length || typeof rows[0] !== 'object') return Type.from(rows);  // already one flat array
    const out = new Type(rows.length * width);
    rows.forEach((row, i) => {
      if (row.length !== width) throw new RangeError(`runPolicy: ${what} ${i} has ${row.length} entries, not ${width}`);
      out.set(row, i * width);
    });
    return out;
  };
  const obs = flat(observations, OBS_DIM, Float32Array, 'observation');
  const mask = flat(masks, NUM_CARDS, Uint8Array, 'mask');
  const n = obs.length / OBS_DIM;
  if (!Number.isInteger(n) || mask.length !== n * NUM_CARDS) {
    throw new RangeError(`runPolicy: ${obs.length} observation floats and ${mask.length} mask entries do not make rows of ${OBS_DIM} and ${NUM_CARDS}`);
  }
  const out = await session.session.run({
    observation: new ort.Tensor('float32', obs, [n, OBS_DIM]),
    action_mask: new ort.Tensor('bool', mask, [n, NUM_CARDS]),
  });
  const probabilities = [];
  for (let i = 0; i < n; i++) probabilities.push(Float32Array.from(out.probabilities.data.subarray(i * NUM_CARDS, (i + 1) * NUM_CARDS)));
  return { actions: Array.from(out.action.data, Number), probabilities };
}

/** The policy's card for a record: { action, card, probabilities, observation, mask }. */
export async function chooseCard(session, record) {
  const { manifest } = session;
  const parsed = parseRecord(record);
  const outside = refusal(spaceOf(manifest), parsed.rules);
  if (outside !== null) {
    throw new RecordError(`the policy cannot play the record's rules ('${parsed.rules.name}'): ${outside}`);
  }
  const observation = encodeObservation(parsed);
  const mask = legalMask(parsed);
  const { actions: [action], probabilities: [probabilities] } = await runPolicy(session, [observation], [mask]);
  return { action, card: cardText(action), probabilities, observation, mask };
}
