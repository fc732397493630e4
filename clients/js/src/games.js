// The games of the in-browser back end (hearts_app/serve/games.py): each game a session (match.js)
// with a person at seat 0 and the offered agents at the others, kept in the browser's storage (or
// memoryStorage() in Node). GameStore creates a game from a preset and option overrides (gameRules),
// plays seat 0's card and the agents' turns, loads and saves; a refused request is an ApiError with
// an HTTP status, a one-line detail in English and a reason code (games.py REASON_CODES) for the page.
import { cryptoRandomBelow, legalActions, newGame } from './engine.js';
import { PRESETS, RulesError, resolveRules } from './rules.js';
import { covers, refusal as outsideSpace, refusalParts, spaceOf } from './rule_space.js';
import { HUMAN, cardRefusal, refusalReason, step, texts } from './match.js';
import { view } from './view.js';

const STORAGE_PREFIX = 'hearts-lab-local-game:';
const STORAGE_INDEX = 'hearts-lab-local-games';
/** Games kept in the browser's storage; beyond it the oldest are dropped. */
export const MAX_STORED_GAMES = 30;
const STORED_FORMAT = 'hearts-lab-local-game';
const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Whole numbers in rules options are refused beyond this size (as games.py MAX_OPTION_NUMBER). */
const MAX_OPTION_NUMBER = 1_000_000;

/**
 * An answer that is not a view: an HTTP status and a one-line detail in English (a refused card adds
 * `legal`); `reason`: what went wrong as a code and its parts, for the page to word in its player's
 * language (a refused card's refusalReason, or the codes of games.py's REASON_CODES).
 */
/** The reason of a new game's refused preset, rules or opponent count (games.py INVALID_SETUP). */
export const INVALID_SETUP = Object.freeze({ code: 'invalid_setup' });

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

/** A new game id: 22 characters of A-Za-z0-9_- (as secrets.token_urlsafe(16)). */
function newId(randomBelow) {
  let id = '';
  for (let i = 0; i < 22; i++) id += ID_ALPHABET[randomBelow(64)];
  return id;
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

export class GameStore {
  /**
   * `agents`: the offered agents (local_api.js randomAgent, policyAgent), in the order the page lists
   * them; `storage`: where games are kept (default the browser's localStorage); `randomBelow`: the random
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

  /**
   * A new game of `preset` with the option `overrides` against `opponents` (default: defaultOpponents),
   * the agents played up to seat 0's first decision, saved; its view (games.py GameStore.create).
   */
  async create(preset, overrides, opponents) {
    const rules = gameRules(preset, overrides);
    const n = rules.num_players - 1;
    opponents ??= this.defaultOpponents(rules);
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

  /** Seat 0 plays (or picks to pass) `card` (an id); the agents play on; saved; the view (GameStore.play). */
  async play(id, card) {
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
      throw new ApiError(409, cardRefusal(g, card, legal), texts(legal), refusalReason(g, card, legal) ?? undefined);
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
}
