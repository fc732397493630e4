// A seat record (docs/export.md, "Seat records"), read as hearts_env/seat_record.py reads it: parsed
// and checked (parseRecord: malformed records, card counts, passes), then its hand replayed under the
// engine's rules (replay: who leads, what each seat could legally play, where the unseen cards can
// be) into what observation v1 needs. A record that describes no reachable situation throws
// RecordError, worded as Python's SeatRecordError word for word (golden.json's "invalid" records).
// The legal-play rules are the engine's (engine.js legalCards), the rules' checks rules.js's: this
// module owns only what a record adds. hearts.js encodes the replayed state and runs the policy.
import { NUM_CARDS, cardText, parseCard, pyRepr, suitOf } from './cards.js';
import { breaksHearts, legalCards, trickWinner } from './engine.js';
import { OPTIONS, RulesError, checkRules, compiled, handSize } from './rules.js';

export const RECORD_VERSION = 1;
export const RECORD_FORMAT = 'hearts-seat-record';

export class RecordError extends Error {
  constructor(message) {
    super(`seat record: ${message}`);
    this.name = 'RecordError';
  }
}

const fail = (message) => new RecordError(message);

/** Marks a parsed record, so replay() does not parse it again. */
const PARSED = Symbol('parsed seat record');

const formatCards = (ids) => ids.map(cardText).join(' ');


// ------------------------------------------------------------------------------------------
// Rules (the record carries them in full, as Python's Rules.to_dict() writes them)
// ------------------------------------------------------------------------------------------

/**
 * The record's rules, checked: complete (every option, as Rules.to_dict() writes them: this client
 * reads no presets) and valid by the one rules validator (rules.js checkRules). A copy; throws RecordError.
 */
export function recordRules(rules) {
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) {
    throw fail('rules must be an object with every rules option (as Rules.to_dict() writes them)');
  }
  const missing = OPTIONS.filter((k) => !(k in rules));
  if (missing.length) {
    throw fail(`rules: missing ${missing.join(', ')} (this client reads complete rules, e.g. the manifest's "rules")`);
  }
  const unknown = Object.keys(rules).filter((k) => !OPTIONS.includes(k));
  if (unknown.length) throw fail(`rules: unknown option(s) ${unknown.join(', ')}`);
  try {
    checkRules(rules);
  } catch (err) {
    if (err instanceof RulesError) throw fail(`rules: ${err.detail}`);
    throw err;
  }
  return { ...rules };
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
  const rules = recordRules(record.rules);
  const { inDeck, passOffsets } = compiled(rules);
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
    hand: cardList(record.hand, 'hand', inDeck),
    passed: cardList(record.passed ?? [], 'passed', inDeck),
    received: cardList(record.received ?? [], 'received', inDeck),
    tricks: tricks.map((t, i) => trickField(t, `tricks[${i}]`, p, inDeck)),
    trick: trickField(record.trick ?? { cards: [] }, 'trick', p, inDeck),
    [PARSED]: true,
  };
  r.offset = passOffsets[handNumber % passOffsets.length];
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
  const size = handSize(rules);
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
  const opening = compiled(rules).openingIds;
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
  const { inDeck, handSize: size } = compiled(rules);
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
  for (let c = 0; c < NUM_CARDS; c++) if (inDeck[c] && !seen.has(c)) unseen.push(c);
  const room = new Map();
  for (const [s, h] of holding) {
    if (s === me) continue;
    if (h.size > size) throw fail(`seat ${s} would hold ${h.size} cards, more than a hand of ${size}`);
    room.set(s, size - h.size);
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
