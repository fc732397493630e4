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
// do not allow, a trick led by the wrong seat, not this seat's turn) throws RecordError: the record
// is read and replayed by seat_record.js (as hearts_env/seat_record.py), this module encodes what
// the replay found (as hearts_env/observe.py) and runs the policy (as agents/onnx_policy.py).
// Python's golden vectors (clients/js/test/fixtures) pin the two languages together.

import { JACK_OF_DIAMONDS, NUM_CARDS, QUEEN_OF_SPADES, cardText, parseCard, rankOf, suitOf } from './cards.js';
import { cardPoints } from './engine.js';
import { handSize } from './rules.js';
import { refusal, spaceOf } from './rule_space.js';
import { RECORD_FORMAT, RECORD_VERSION, RecordError, parseRecord, recordRules, replay } from './seat_record.js';

// The seat record's reader (seat_record.js), as the client's users have always imported it from here.
export { RECORD_FORMAT, RECORD_VERSION, RecordError, parseRecord, replay };

export const OBS_VERSION = 1;
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

export class ManifestError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ManifestError';
  }
}

// ------------------------------------------------------------------------------------------
// Cards
// ------------------------------------------------------------------------------------------

export { NUM_CARDS, cardText, parseCard, rankOf, suitOf };

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
  obs[AT.trick_number] = r.tricks.length / handSize(rules);
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
  recordRules(manifest.rules);
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
