// The game server's API answered in the browser: the same requests the page of `hearts serve` makes
// (hearts_app/serve/app.py), the same JSON (hearts_app/serve/view.py and games.py), played by the
// JavaScript engine (engine.js) with the computer seats chosen by exported policies (hearts.js) and
// the games kept in the browser's storage. The static build (`hearts export --web DIR`, export/web.py)
// starts the one page in "static mode": its requests to api/v1/... come here instead of the network.
//
//   const api = new LocalApi({ agents: [policyAgent('ppo-classic', manifest, () => loadPolicy(ort, url, manifest)),
//                                       randomAgent()] });   // storage: localStorage (memoryStorage() in Node)
//   const response = await api.fetch('api/v1/games', { method: 'POST', body: '{"preset": "quick"}' });
//   startPage(api);      // the page (clients/web/static/app.js) with this back end: localBackend() below
//
// Routes: GET options, POST games, GET games/{id}, POST games/{id}/play, GET games/{id}/record.
// tests/test_web_build.py checks the answers against the server's, field for field, on the golden games.
// What the page gets is what seat 0 ("you") may see, built field by field as view.py builds it: its
// own hand and legal cards, the cards it chose to pass and received, the cards on the table, the
// tricks' winners and points, the scores; of the exchange only seat 0's cards, no other seat's pass
// picks. (The whole game, deals included, is in the browser's storage: it is the player's own
// machine, as the server's disk is the server's.) Deals come from crypto.getRandomValues (engine.js).
// What differs from the server: no `seed` (deals are the browser's), no bots-as-a-service routes, and
// the record is this engine's JSON (every hand's deal and actions), not the play mode's record.
import { cardText, parseCard, suitOf, HEARTS, QUEEN_OF_SPADES } from './cards.js';
import {
  PRESETS, RulesError, act, cardPoints, cryptoRandomBelow, isPointCard, legalActions, newGame,
  nextHand, passDirection, passOffset, resolveRules, seatRecord,
} from './engine.js';
import { checkManifest, chooseCard, loadPolicy } from './hearts.js';
import { covers, refusal as outsideSpace, refusalParts, spaceOf } from './rule_space.js';

export const API_PATH = 'api/v1/';
const HUMAN = 0;
const STORAGE_PREFIX = 'hearts-lab-local-game:';
const STORAGE_INDEX = 'hearts-lab-local-games';
/** Games kept in the browser's storage; beyond it the oldest are dropped. */
export const MAX_STORED_GAMES = 30;
const STORED_FORMAT = 'hearts-lab-local-game';
const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Whole numbers in rules options are refused beyond this size (as games.py MAX_OPTION_NUMBER). */
const MAX_OPTION_NUMBER = 1_000_000;
const SUIT_SYMBOLS = '♣♦♥♠';

/** The choices the page offers for each option (as app.py option_choices). */
export const OPTION_CHOICES = Object.freeze({
  pass_cycle: [['left', 'right', 'across', 'none'], ['left', 'right', 'none'], ['left'], ['right'], ['across'], ['none']],
  target_score: [50, 100, 150],
  moon: ['add_to_others', 'subtract_from_self', 'shooters_choice', 'off'],
  first_trick_protection: [true, false],
  hearts_must_be_broken: [true, false],
  queen_breaks_hearts: [true, false],
  queen_waits_for_hearts: [true, false],
  jack_of_diamonds_bonus: [true, false],
});

/**
 * An answer that is not a view: an HTTP status and a one-line detail in English (a refused card adds
 * `legal`); `reason`: what went wrong as a code and its parts, for the page to word in its player's
 * language (a refused card's refusalReason, or the codes of games.py's REASON_CODES).
 */
/** The reason of a new game's refused preset, rules or opponent count (games.py INVALID_SETUP). */
const INVALID_SETUP = Object.freeze({ code: 'invalid_setup' });

export class ApiError extends Error {
  constructor(status, detail, legal = undefined, reason = undefined) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
    this.legal = legal;
    this.reason = reason;
  }
}

// ------------------------------------------------------------------------------------------
// Agents: {spec, space (the rule space it covers, rule_space.js; null: any rules), rules (the rules it
// was made for; null: any), choose(game) -> card id}
// ------------------------------------------------------------------------------------------

/** The `random` agent: a uniformly random legal card, from the browser's random source. */
export function randomAgent(randomBelow = cryptoRandomBelow) {
  return {
    spec: 'random',
    space: null,
    rules: null,
    async choose(game) {
      const legal = legalActions(game);
      return legal[randomBelow(legal.length)];
    },
  };
}

/**
 * An exported policy as an agent: `spec` its name, `manifest` its policy.json, `load()` a function
 * returning (a promise of) the policy session (hearts.js loadPolicy), called once, at warm() or its
 * first card (again after a load that failed).
 */
export function policyAgent(spec, manifest, load) {
  let session = null;
  const loaded = () => {
    session ??= Promise.resolve().then(load);
    return session;
  };
  return {
    spec,
    space: spaceOf(manifest),
    rules: manifest.rules,
    /** Starts loading the model now (a failure is reported by the first choose, which tries again). */
    warm() {
      loaded().catch(() => { session = null; });
    },
    async choose(game) {
      try {
        return (await chooseCard(await loaded(), seatRecord(game))).action;
      } catch (err) {
        if (session && (await session.then(() => false, () => true))) session = null; // a failed load: try again next time
        throw err;
      }
    },
  };
}

/**
 * The policies of a static build: `index` is models.json's list of {spec, model, manifest} (URLs
 * relative to `base`); each becomes a policyAgent whose model loads with onnxruntime `ort` when it
 * first plays. Only files of `base`'s own origin are fetched; an entry naming another origin, or
 * whose manifest cannot be fetched or is not a policy manifest this client reads, is left out
 * (`onSkip(spec, reason)`, by default a console warning) and the others stay playable. The `random`
 * agent comes last.
 */
export async function loadAgents(ort, base, index, onSkip = (spec, reason) => console.warn(`opponent ${spec} left out: ${reason}`)) {
  const agents = [];
  const origin = new URL(base).origin;
  const entries = Array.isArray(index?.models) ? index.models : [];
  for (const entry of entries) {
    const spec = typeof entry?.spec === 'string' ? entry.spec : JSON.stringify(entry?.spec ?? null);
    try {
      if (typeof entry?.spec !== 'string' || typeof entry.model !== 'string' || typeof entry.manifest !== 'string') {
        throw new Error('an entry needs spec, model and manifest as text');
      }
      const manifestUrl = new URL(entry.manifest, base);
      const modelUrl = new URL(entry.model, base);
      if (manifestUrl.origin !== origin || modelUrl.origin !== origin) throw new Error(`its files are on another origin than ${origin}`);
      const response = await fetch(manifestUrl);
      if (!response.ok) throw new Error(`cannot fetch ${manifestUrl}: HTTP ${response.status}`);
      const manifest = await response.json();
      checkManifest(manifest);
      agents.push(policyAgent(entry.spec, manifest, () => loadPolicy(ort, modelUrl, manifest)));
    } catch (err) {
      onSkip(spec, err.message ?? String(err));
    }
  }
  agents.push(randomAgent());
  return agents;
}

// ------------------------------------------------------------------------------------------
// Storage: the browser's localStorage, or memoryStorage() (Node, tests)
// ------------------------------------------------------------------------------------------

/** A Storage-like object held in memory (getItem, setItem, removeItem). */
export function memoryStorage() {
  const items = new Map();
  return {
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => { items.set(key, String(value)); },
    removeItem: (key) => { items.delete(key); },
    get length() { return items.size; },
  };
}

// ------------------------------------------------------------------------------------------
// What seat 0 may see (view.py)
// ------------------------------------------------------------------------------------------

/** Card ids as card texts, sorted by suit (C, D, H, S) then rank. */
const texts = (ids) => [...ids].sort((a, b) => a - b).map(cardText);
const symbolText = (card) => { const t = cardText(card); return (t[0] === 'T' ? '10' : t[0]) + SUIT_SYMBOLS[suitOf(card)]; };
const plays = (leader, cards, p) => cards.map((card, i) => ({ seat: (leader + i) % p, card: cardText(card) }));
const offsetOf = (game) => passOffset(game.rules, game.handNumber);

/** The seats with the lowest total. */
function winners(scores) {
  const low = Math.min(...scores);
  return scores.flatMap((s, seat) => (s === low ? [seat] : []));
}

/** The page's picture of a stored game: only what seat 0 may know (view.py view). */
export function view(entry) {
  const { id, game: g, opponents, events } = entry;
  const p = g.rules.num_players;
  const over = g.phase === 'over';
  const passing = g.phase === 'pass';
  const yourTurn = !over && g.toAct === HUMAN;
  const trickNumber = g.tricks.length;
  let lastTrick = null;
  if ((trickNumber > 0 || over) && g.tricks.length) {
    const t = g.tricks[g.tricks.length - 1];
    lastTrick = { plays: plays(t.leader, t.cards, p), winner: t.winner, points: cardPoints(t.cards) };
  }
  const direction = passDirection(g.rules, g.handNumber);
  let pass = null;
  if (passing) {
    const chosen = g.passed[HUMAN];
    pass = { direction, to: (HUMAN + offsetOf(g)) % p, picks_left: g.rules.pass_count - chosen.length, chosen: texts(chosen) };
  }
  const received = !over && !passing && offsetOf(g) !== 0 ? g.received[HUMAN] : [];
  const winner = g.winner >= 0 ? g.winner : winners(g.scores);
  const legal = yourTurn ? legalActions(g) : [];
  // Why each card of the hand that may not be taken now may not: the page refuses it before any request.
  const refused = {};
  if (yourTurn) {
    for (const card of [...g.hands[HUMAN]].sort((a, b) => a - b)) {
      const reason = legal.includes(card) ? null : refusalReason(g, card, legal);
      if (reason) refused[cardText(card)] = reason;
    }
  }
  return {
    id,
    rules: structuredClone(g.rules),
    players: [{ seat: 0, name: 'You' }, ...opponents.map((name, i) => ({ seat: i + 1, name }))],
    phase: over ? 'over' : (passing ? 'pass' : 'play'),
    hand_number: g.handNumber,
    trick_number: trickNumber,
    pass_direction: direction,
    to_act: over ? -1 : g.toAct,
    your_turn: yourTurn,
    hand: over ? [] : texts(g.hands[HUMAN]),
    legal: texts(legal),
    refused,
    pass,
    received: received.length ? texts(received) : null,
    trick: over ? [] : plays(g.trick.leader, g.trick.cards, p),
    last_trick: lastTrick,
    hearts_broken: g.heartsBroken,
    scores: [...g.scores],
    hand_points: over ? new Array(p).fill(0) : g.taken.map(cardPoints),
    score_sheet: entry.hands.map((h) => ({ hand_number: h.hand_number, points: [...h.points], moon: h.moon })),
    events: structuredClone(events),
    game_over: over ? { winner, scores: [...g.scores] } : null,
  };
}

/**
 * The rule that forbids the seat to act to take `card` now, as a reason code with the card or suit it
 * names ({code: 'follow_suit', suit: 'C'}), null when none is known (session/match.py refusal_reason).
 */
export function refusalReason(game, card, legal) {
  const seat = game.toAct;
  if (game.phase === 'over') return { code: 'game_over' };
  if (!game.hands[seat].includes(card)) return { code: 'not_held' }; // (the card asked for is not named back)
  if (game.phase === 'pass') return game.passed[seat].includes(card) ? { code: 'already_chosen', card: cardText(card) } : null;
  const trick = game.trick.cards;
  const firstTrick = game.tricks.length === 0;
  if (trick.length) {
    const led = suitOf(trick[0]);
    if (suitOf(card) !== led && legal.every((c) => suitOf(c) === led)) return { code: 'follow_suit', suit: 'CDHS'[led] };
    if (firstTrick && game.rules.first_trick_protection && isPointCard(card)) return { code: 'first_trick_points' };
    return null;
  }
  if (firstTrick && legal.length === 1) return { code: 'opens_first_trick', card: cardText(legal[0]) };
  if (suitOf(card) === HEARTS && !game.heartsBroken) return { code: 'hearts_not_broken' };
  if (card === QUEEN_OF_SPADES && game.rules.queen_waits_for_hearts && !game.heartsBroken) return { code: 'queen_waits' };
  return null;
}

/** A reason code for `card` in English words (session/match.py why_not). */
function reasonWords(reason, card) {
  const named = symbolText(reason.card ? parseCard(reason.card) : card);
  return {
    game_over: 'the game is over',
    not_held: `you do not hold ${named}`,
    already_chosen: `you already chose ${named} to pass`,
    follow_suit: `you must follow suit (${SUIT_SYMBOLS['CDHS'.indexOf(reason.suit)]})`,
    first_trick_points: 'no hearts and no Q♠ on the first trick',
    opens_first_trick: `${named} opens the first trick`,
    hearts_not_broken: 'hearts are not broken yet',
    queen_waits: 'Q♠ may not be led before hearts are broken',
  }[reason.code];
}

/** Why seat 0 may not take `card` now, in words (games.py refusal). */
export function refusal(game, card, legal) {
  const reason = refusalReason(game, card, legal);
  if (reason && (reason.code === 'not_held' || reason.code === 'already_chosen')) return reasonWords(reason, card);
  const text = symbolText(card);
  const words = reason ? `: ${reasonWords(reason, card)}` : '';
  return game.phase === 'pass' ? `${text} cannot be passed${words}` : `${text} cannot be played now${words}`;
}

/**
 * One action of the seat to act, as the page's events (view.py public_events of match.py's events):
 * other seats' pass picks are left out; a scored hand that does not end the game deals the next one
 * at once (`dealing(rules, handNumber)`: nextHand's options), as the Python engine does. `entry.hands`
 * gets every finished hand (for the record).
 */
function step(entry, card, dealing) {
  const g = entry.game;
  const p = g.rules.num_players;
  const trickNumber = g.tricks.length;
  const brokenBefore = g.heartsBroken;
  const dealt = g.dealt.map((h) => texts(h));
  const dead = texts(g.dead);
  const happened = act(g, card);
  const out = [];
  if (happened.kind === 'pass') {
    const offset = offsetOf(g);
    if (happened.exchanged && offset !== 0) {
      out.push({ type: 'exchanged', passed: texts(g.passed[HUMAN]), received: texts(g.received[HUMAN]),
        to: (HUMAN + offset) % p, from: (((HUMAN - offset) % p) + p) % p });
    }
    return out;
  }
  out.push({ type: 'played', seat: happened.seat, card: cardText(happened.card), trick_number: trickNumber });
  if (g.heartsBroken && !brokenBefore && !happened.hand) {
    out.push({ type: 'hearts_broken', seat: happened.seat, card: cardText(happened.card) });
  }
  if (happened.trick) {
    const { leader, cards, winner } = happened.trick;
    out.push({ type: 'trick_won', trick_number: trickNumber, winner, points: cardPoints(cards), plays: plays(leader, cards, p) });
  }
  if (happened.hand) {
    const hand = happened.hand;
    const moon = hand.moon.indexOf(true);
    entry.hands.push({ hand_number: hand.handNumber, dealt, dead, actions: g.history.map(([s, c]) => [s, cardText(c)]),
      points: hand.points, moon: moon >= 0 ? moon : null });
    out.push({ type: 'hand_scored', hand_number: hand.handNumber, points: [...hand.points],
      card_points: g.taken.map(cardPoints), scores: [...hand.scores], tricks: g.taken.map((t) => t.length / p),
      moon: moon >= 0 ? moon : null });
    if (hand.gameOver) {
      out.push({ type: 'game_over', winner: hand.winner >= 0 ? hand.winner : winners(hand.scores), scores: [...hand.scores] });
    } else {
      nextHand(g, dealing(g.rules, g.handNumber + 1));
      const offset = offsetOf(g);
      out.push({ type: 'hand_started', hand_number: g.handNumber, pass_direction: passDirection(g.rules, g.handNumber),
        pass_to: offset ? (HUMAN + offset) % p : null });
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// The API
// ------------------------------------------------------------------------------------------

/** A new game id: 22 characters of A-Za-z0-9_- (as secrets.token_urlsafe(16)). */
function newId(randomBelow) {
  let id = '';
  for (let i = 0; i < 22; i++) id += ID_ALPHABET[randomBelow(64)];
  return id;
}

function typeName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}

export class LocalApi {
  /**
   * `agents`: the offered agents (randomAgent, policyAgent), in the order the page lists them;
   * `storage`: where games are kept (default the browser's localStorage); `randomBelow`: the random
   * source of deals and ids (default crypto.getRandomValues); `dealer(rules, handNumber)`: the deal
   * of a hand as owners[52] instead (tests replaying Python's games).
   */
  constructor({ agents, storage = globalThis.localStorage, randomBelow = cryptoRandomBelow, dealer = null } = {}) {
    if (!agents || !agents.length) throw new Error('LocalApi: no agents offered');
    if (!storage) throw new Error('LocalApi: no storage (give memoryStorage() outside a browser)');
    // One spec may name several agents, each for other rules (a ladder's level:easy of every game),
    // tried in order: the first whose space covers the game's rules plays.
    this.agents = new Map();
    for (const agent of agents) {
      // An agent that names only the rules it was made for covers exactly those (null: any rules).
      if (agent.space === undefined) agent.space = agent.rules ? spaceOf({ rules: agent.rules }) : null;
      this.agents.set(agent.spec, [...(this.agents.get(agent.spec) ?? []), agent]);
    }
    this.storage = storage;
    this.randomBelow = randomBelow;
    this.dealer = dealer;
    this.queue = Promise.resolve(); // the requests in flight, one after the other (handle)
  }

  get offered() {
    return [...this.agents.keys()];
  }

  /** The agent of `spec` that plays `rules`, or undefined. */
  agentFor(spec, rules) {
    return (this.agents.get(spec) ?? []).find((a) => a.space === null || covers(a.space, rules));
  }

  /**
   * Why no agent of `spec` plays `rules`: the refusal of its agent for the same number of players
   * (else its last), naming the option outside the rules it covers (rule_space.js).
   */
  refusalFor(spec, rules) {
    const own = this.agents.get(spec) ?? [];
    const same = own.filter((a) => a.space.fields.num_players?.includes(rules.num_players));
    const agent = (same.length ? same : own).at(-1);
    return outsideSpace(agent.space, rules);
  }

  /** The offered agents that play `rules`, in offered order. */
  playing(rules) {
    return this.offered.filter((spec) => this.agentFor(spec, rules));
  }

  /** The options of newGame / nextHand for hand `handNumber`: a random deal, or the dealer's. */
  dealing(rules, handNumber) {
    return this.dealer ? { deal: this.dealer(rules, handNumber) } : { randomBelow: this.randomBelow };
  }

  /** A request: `method`, `path` (after api/v1/, query aside), `body` (text or undefined) -> {status, body, headers}. */
  handle(method, path, body) {
    // One request at a time in this page, and across the browser's tabs where it has Web Locks (each
    // request reads the game from the storage afresh), as the server holds a lock per game.
    const locks = globalThis.navigator?.locks;
    const route = () => this.route(method, path, body);
    const run = this.queue.then(() => (locks ? locks.request('hearts-lab-local-api', route) : route()));
    this.queue = run.catch(() => {});
    return run;
  }

  async route(method, path, body) {
    try {
      let parts;
      try {
        parts = path.split('?')[0].split('/').filter(Boolean).map(decodeURIComponent);
      } catch {
        throw new ApiError(404, 'Not Found');
      }
      const [first, id, action] = parts;
      if (parts.length === 1 && first === 'options') return only(method, 'GET', () => ({ status: 200, body: this.options() }));
      if (parts.length === 1 && first === 'games') {
        return await only(method, 'POST', async () => ({ status: 201, body: await this.create(readBody(body)) }));
      }
      if (parts.length === 2 && first === 'games') return only(method, 'GET', () => ({ status: 200, body: view(this.load(id)) }));
      if (parts.length === 3 && first === 'games' && action === 'play') {
        return await only(method, 'POST', async () => ({ status: 200, body: await this.play(id, readBody(body)) }));
      }
      if (parts.length === 3 && first === 'games' && action === 'record') return only(method, 'GET', () => this.record(id));
      throw new ApiError(404, 'Not Found');
    } catch (err) {
      if (err instanceof ApiError) {
        const out = { detail: err.detail };
        if (err.legal !== undefined) out.legal = err.legal;
        if (err.reason !== undefined) out.reason = err.reason;
        return { status: err.status, body: out };
      }
      return { status: 500, body: { detail: `the page's game engine failed: ${err.name}: ${String(err.message).split('\n')[0]}` } };
    }
  }

  /** GET options: presets, the options the page offers, the offered agents (app.py options). */
  options() {
    const byPreset = Object.fromEntries(Object.entries(PRESETS).map(([name, rules]) => [name, this.playing(rules)]));
    return {
      presets: Object.keys(PRESETS),
      preset_rules: structuredClone(PRESETS),
      options: structuredClone(OPTION_CHOICES),
      agents: this.offered,
      agents_by_preset: byPreset,
      default_opponents: this.defaultOpponents(PRESETS.classic),
    };
  }

  /**
   * The opponents of a game that names none: the first offered policies that play the rules, in offered
   * order (a ladder's levels: easy, normal, hard), the last repeated when there are fewer than seats;
   * the random agent only when no policy plays the rules.
   */
  defaultOpponents(rules) {
    const playing = this.playing(rules);
    const pool = playing.filter((spec) => this.agentFor(spec, rules).space !== null);
    const from = pool.length ? pool : (playing.length ? playing : this.offered);
    const n = rules.num_players - 1;
    return Array.from({ length: n }, (_, i) => from[Math.min(i, from.length - 1)]);
  }

  /** POST games: a new game, the agents played up to seat 0's first decision; its view. */
  async create(body) {
    const allowed = ['preset', 'rules', 'opponents', 'seed'];
    for (const key of Object.keys(body)) if (!allowed.includes(key)) throw new ApiError(422, `${key}: Extra inputs are not permitted`);
    const preset = body.preset ?? 'classic';
    if (typeof preset !== 'string') throw new ApiError(422, `preset: Input should be a valid string`);
    if (body.seed !== undefined && body.seed !== null) {
      throw new ApiError(422, "seed: this page deals from the browser's random source; it takes no seed");
    }
    const overrides = body.rules ?? {};
    if (typeof overrides !== 'object' || Array.isArray(overrides)) throw new ApiError(422, 'rules: Input should be a valid dictionary');
    const rules = gameRules(preset, overrides);
    const n = rules.num_players - 1;
    let opponents = body.opponents ?? this.defaultOpponents(rules);
    if (!Array.isArray(opponents)) throw new ApiError(422, 'opponents: Input should be a valid list');
    if (opponents.length !== n) {
      throw new ApiError(422, `opponents: this game has ${n} opponent seat(s); ${opponents.length} given`, undefined, INVALID_SETUP);
    }
    for (const spec of opponents) {
      if (typeof spec !== 'string' || !this.agents.has(spec)) {
        throw new ApiError(422, `opponents: ${JSON.stringify(spec)} is not offered here; offered: ${this.offered.join(', ')}`,
          undefined, { code: 'opponent_not_offered', spec: String(spec).slice(0, 80) });
      }
      if (!this.agentFor(spec, rules)) {
        const why = this.refusalFor(spec, rules);
        throw new ApiError(422, `opponents: ${spec} cannot play these rules: ${why}`,
          undefined, { code: 'opponent_cannot_play', spec, ...refusalParts(why) });
      }
    }
    opponents = [...opponents];
    for (const spec of new Set(opponents)) this.agentFor(spec, rules).warm?.(); // their models load during the pass
    let id;
    do id = newId(this.randomBelow); while (this.storage.getItem(STORAGE_PREFIX + id) !== null);
    const entry = { format: STORED_FORMAT, version: 1, id, opponents, events: [], hands: [],
      game: newGame(rules, this.dealing(rules, 0)) };
    try {
      await this.agentsPlay(entry, entry.events);
    } finally {
      this.save(entry, true);
    }
    return view(entry);
  }

  /** POST games/{id}/play: seat 0 plays (or picks to pass) a card; the agents play on; saved. */
  async play(id, body) {
    for (const key of Object.keys(body)) if (key !== 'card') throw new ApiError(422, `${key}: Extra inputs are not permitted`);
    if (body.card === undefined) throw new ApiError(422, 'card: Field required');
    if (typeof body.card !== 'string') throw new ApiError(422, 'card: Input should be a valid string');
    if (body.card.length > 8) throw new ApiError(422, 'card: String should have at most 8 characters');
    let card;
    try {
      card = parseCard(body.card);
    } catch (err) {
      throw new ApiError(422, `card: ${err.message}`);
    }
    const entry = this.load(id);
    const g = entry.game;
    if (g.phase === 'over') throw new ApiError(409, 'the game is over', [], { code: 'game_over' });
    const events = [];
    if (g.toAct !== HUMAN) { // an agent failed in an earlier request: let the agents try again
      try {
        await this.agentsPlay(entry, events);
      } finally {
        entry.events = events;
        this.save(entry);
      }
    }
    if (g.phase === 'over' || g.toAct !== HUMAN) throw new ApiError(409, 'it is not your turn', [], { code: 'not_your_turn' });
    const legal = legalActions(g);
    if (!legal.includes(card)) {
      throw new ApiError(409, refusal(g, card, legal), texts(legal), refusalReason(g, card, legal) ?? undefined);
    }
    events.push(...step(entry, card, (rules, n) => this.dealing(rules, n)));
    try {
      await this.agentsPlay(entry, events);
    } finally {
      entry.events = events;
      this.save(entry);
    }
    return view(entry);
  }

  /** The agents play until seat 0 is to act or the game is over, adding their events to `events`. */
  async agentsPlay(entry, events = []) {
    const g = entry.game;
    while (g.phase !== 'over' && g.toAct !== HUMAN) {
      const seat = g.toAct;
      const spec = entry.opponents[seat - 1];
      let card;
      try {
        card = await this.agentFor(spec, g.rules).choose(g);
      } catch (err) { // the game stays at that agent's turn (the caller saves it): a later card tries again
        throw new ApiError(500, `the opponent at seat ${seat} (${spec}) failed: ${err.name}: ${String(err.message).split('\n')[0]}`,
          undefined, { code: 'opponent_failed', seat });
      }
      events.push(...step(entry, card, (rules, n) => this.dealing(rules, n)));
    }
    return events;
  }

  /** GET games/{id}/record: once the game is over, every hand's deal and actions (this engine's JSON). */
  record(id) {
    const entry = this.load(id);
    if (entry.game.phase !== 'over') {
      throw new ApiError(409, 'the record is available when the game is over: it shows every hand as dealt', undefined,
        { code: 'record_not_ready' });
    }
    const g = entry.game;
    const line = {
      type: 'game', format: 'hearts-lab-js-game', engine: 'clients/js/src/engine.js', rules: g.rules,
      specs: ['human', ...entry.opponents], hands: entry.hands, scores: g.scores, winner: g.winner, finished: true,
    };
    return { status: 200, body: `${JSON.stringify(line)}\n`,
      headers: { 'Content-Type': 'application/x-ndjson', 'Content-Disposition': `attachment; filename="hearts-game-${id}.jsonl"` } };
  }

  load(id) {
    const missing = { code: 'no_such_game' };
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
      throw new ApiError(404, 'no such game (a game id is 22 letters, digits, - and _)', undefined, missing);
    }
    const text = this.storage.getItem(STORAGE_PREFIX + id);
    if (text === null) throw new ApiError(404, `no game ${id}`, undefined, missing);
    const unusable = (why) => new ApiError(409, `game ${id} cannot be continued: ${why}`, undefined, { code: 'game_unreadable' });
    let entry;
    try {
      entry = JSON.parse(text);
    } catch {
      throw unusable('its saved copy is not JSON');
    }
    if (!entry || entry.format !== STORED_FORMAT || entry.version !== 1 || !entry.game) {
      throw unusable('its saved copy is not a game of this page');
    }
    if (entry.game.phase !== 'over') {
      for (const spec of entry.opponents) {
        if (!this.agentFor(spec, entry.game.rules)) {
          throw unusable(`its opponent '${spec}' is not offered here (offered: ${this.offered.join(', ')})`);
        }
      }
    }
    return entry;
  }

  /**
   * Keeps the game in the storage, with the index of games (most recent last; a new game beyond
   * MAX_STORED_GAMES drops the oldest). A full storage drops the oldest other games until it fits.
   */
  save(entry, isNew = false) {
    let index = [];
    try {
      index = JSON.parse(this.storage.getItem(STORAGE_INDEX) ?? '[]');
      if (!Array.isArray(index)) index = [];
    } catch {
      index = [];
    }
    index = [...index.filter((x) => x !== entry.id), entry.id];
    while (isNew && index.length > MAX_STORED_GAMES) this.storage.removeItem(STORAGE_PREFIX + index.shift());
    const text = JSON.stringify(entry);
    for (;;) {
      try {
        this.storage.setItem(STORAGE_PREFIX + entry.id, text);
        break;
      } catch (err) { // QuotaExceededError: make room, oldest first
        if (index.length <= 1) {
          throw new ApiError(500, `cannot save the game in this browser's storage: ${err.message}`, undefined, { code: 'save_failed' });
        }
        this.storage.removeItem(STORAGE_PREFIX + index.shift());
      }
    }
    this.storage.setItem(STORAGE_INDEX, JSON.stringify(index));
  }

  /** A fetch() answering the API's URLs (anything whose path holds api/v1/): a Response. */
  async fetch(input, init = {}) {
    const url = typeof input === 'string' ? input : (input.url ?? String(input));
    const method = String(init.method ?? (typeof input === 'object' ? input.method : undefined) ?? 'GET').toUpperCase();
    const at = url.indexOf(API_PATH);
    const path = at >= 0 ? url.slice(at + API_PATH.length) : url;
    const answer = await this.handle(method, path, init.body);
    const isText = typeof answer.body === 'string';
    const headers = answer.headers ?? { 'Content-Type': 'application/json' };
    return new Response(isText ? answer.body : JSON.stringify(answer.body), { status: answer.status, headers });
  }
}

/** The route's answer when the request's method is the one it takes, else 405 (as FastAPI answers). */
function only(method, allowed, answer) {
  if (method !== allowed) throw new ApiError(405, 'Method Not Allowed');
  return answer();
}

function readBody(body) {
  if (body === undefined || body === null || body === '') throw new ApiError(422, 'the body must be a JSON object');
  let data;
  try {
    data = typeof body === 'string' ? JSON.parse(body) : body;
  } catch (err) {
    throw new ApiError(422, `the body is not valid JSON (${err.message})`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ApiError(422, `the body must be a JSON object, got ${typeName(data)}`);
  }
  return data;
}

/** A preset with option overrides, checked (games.py game_rules): ApiError 422 naming the field. */
function gameRules(preset, overrides) {
  if (!(preset in PRESETS)) {
    throw new ApiError(422, `preset: unknown rules preset '${preset}'; presets are: ${Object.keys(PRESETS).join(', ')}`,
      undefined, INVALID_SETUP);
  }
  if ('preset' in overrides) {
    throw new ApiError(422, 'rules.preset: name the preset in "preset", not among the options', undefined, INVALID_SETUP);
  }
  for (const [key, value] of Object.entries(overrides)) {
    const numbers = Array.isArray(value) ? value : [value];
    if (numbers.some((v) => Number.isInteger(v) && Math.abs(v) > MAX_OPTION_NUMBER)) {
      throw new ApiError(422, `rules.${key}: ${JSON.stringify(value)} is out of range (at most ${MAX_OPTION_NUMBER.toLocaleString('en')})`,
        undefined, INVALID_SETUP);
    }
  }
  try {
    return resolveRules({ preset, ...overrides });
  } catch (err) {
    if (err instanceof RulesError || err instanceof RangeError) throw new ApiError(422, err.message, undefined, INVALID_SETUP);
    throw err;
  }
}

// ------------------------------------------------------------------------------------------
// The page's back end in the static build
// ------------------------------------------------------------------------------------------

/**
 * The page's back end in the static build (clients/web/static/main.js starts the page with it when
 * the build's config.json says "local"): a LocalApi offering the policies of `models` (models.json's
 * URL), run by `runtime` (plain_runtime.js's plainRuntime, or onnxruntime-web: with `wasmPaths`, set to
 * single-threaded WebAssembly from there), and the random agent. A model loads when a game first
 * needs it (LocalApi warms the seats' agents when it creates the game), not before.
 */
export async function localBackend(runtime, { models, wasmPaths = null }) {
  if (wasmPaths) {
    runtime.env.wasm.numThreads = 1; // no cross-origin isolation needed: any static file server
    runtime.env.wasm.wasmPaths = wasmPaths;
  }
  const response = await fetch(models);
  if (!response.ok) throw new Error(`cannot fetch ${models}: HTTP ${response.status}`);
  return new LocalApi({ agents: await loadAgents(runtime, models, await response.json()) });
}
