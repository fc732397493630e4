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
// This module is the thin back end, app.py's routes and request checks; behind it a game is a session
// (match.js, as session/match.py), kept by games.js (as serve/games.py) and shown by view.js (as
// serve/view.py): only what seat 0 ("you") may see. (The whole game, deals included, is in the
// browser's storage: it is the player's own machine, as the server's disk is the server's.) Deals
// come from crypto.getRandomValues (engine.js).
// What differs from the server: no `seed` (deals are the browser's), no bots-as-a-service routes, and
// the record is this engine's JSON (every hand's deal and actions), not the play mode's record.
import { parseCard } from './cards.js';
import { cryptoRandomBelow, legalActions, seatRecord } from './engine.js';
import { ApiError, GameStore, MAX_STORED_GAMES, memoryStorage } from './games.js';
import { checkManifest, chooseCard, loadPolicy } from './hearts.js';
import { cardRefusal, refusalReason } from './match.js';
import { MOON_RULES, PRESETS } from './rules.js';
import { spaceOf } from './rule_space.js';
import { view } from './view.js';

// What this module has always exported, now owned by the modules above.
export { ApiError, MAX_STORED_GAMES, cardRefusal as refusal, memoryStorage, refusalReason, view };

export const API_PATH = 'api/v1/';

/** The choices the page offers for each option (as app.py option_choices). */
export const OPTION_CHOICES = Object.freeze({
  pass_cycle: [['left', 'right', 'across', 'none'], ['left', 'right', 'none'], ['left'], ['right'], ['across'], ['none']],
  target_score: [50, 100, 150],
  moon: [...MOON_RULES],
  first_trick_protection: [true, false],
  hearts_must_be_broken: [true, false],
  queen_breaks_hearts: [true, false],
  queen_waits_for_hearts: [true, false],
  jack_of_diamonds_bonus: [true, false],
});

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

export class LocalApi {
  /**
   * `agents`: the offered agents (randomAgent, policyAgent), in the order the page lists them;
   * `storage`: where games are kept (default the browser's localStorage); `randomBelow`: the random
   * source of deals and ids (default crypto.getRandomValues); `dealer(rules, handNumber)`: the deal
   * of a hand as owners[52] instead (tests replaying Python's games). The games: a GameStore (games.js).
   */
  constructor(options = {}) {
    this.store = new GameStore(options);
    this.queue = Promise.resolve(); // the requests in flight, one after the other (handle)
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
      if (parts.length === 2 && first === 'games') return only(method, 'GET', () => ({ status: 200, body: view(this.store.load(id)) }));
      if (parts.length === 3 && first === 'games' && action === 'play') {
        return await only(method, 'POST', async () => ({ status: 200, body: await this.play(id, readBody(body)) }));
      }
      if (parts.length === 3 && first === 'games' && action === 'record') return only(method, 'GET', () => this.store.record(id));
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
    const byPreset = Object.fromEntries(Object.entries(PRESETS).map(([name, rules]) => [name, this.store.playing(rules)]));
    return {
      presets: Object.keys(PRESETS),
      preset_rules: structuredClone(PRESETS),
      options: structuredClone(OPTION_CHOICES),
      agents: this.store.offered,
      agents_by_preset: byPreset,
      default_opponents: this.store.defaultOpponents(PRESETS.classic),
    };
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
    return this.store.create(preset, overrides, body.opponents);
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
    return this.store.play(id, card);
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

function typeName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
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
