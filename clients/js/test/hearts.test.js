// The reference client against Python's golden vectors (run: ./run_tests.sh, or npm test).
//
// HEARTS_GOLDEN_DIR points at a folder written by `python -m export.fixtures DIR` (default: the
// committed test/fixtures). HEARTS_JS_REPORT, when set, names a JSON file the parity numbers are
// written to (tests/test_export.py reads it). The shipped bundles (agents/policies/*/, written by
// `hearts export`) are checked too when this client sits in the Hearts Lab repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import {
  LAYOUT, ManifestError, NO_ACTION, OBS_DIM, RecordError, cardText, checkManifest, chooseCard, encodeObservation,
  legalMask, loadPolicy, parseCard, runPolicy,
} from '../src/hearts.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = process.env.HEARTS_GOLDEN_DIR || path.join(here, 'fixtures');
const golden = JSON.parse(readFileSync(path.join(dir, 'golden.json'), 'utf8'));
const manifest = JSON.parse(readFileSync(path.join(dir, 'policy.json'), 'utf8'));
const model = readFileSync(path.join(dir, 'policy.onnx'));
const policies = path.join(here, '..', '..', '..', 'agents', 'policies');
const bundles = existsSync(policies)
  ? readdirSync(policies).map((name) => path.join(policies, name)).filter((d) => existsSync(path.join(d, 'golden.json')))
  : [];
// The ways a record can be wrong that every golden.json must show (Python's export/golden.py names them).
const INVALID_KINDS = ['a card twice', '13 cards missing', 'a card too many', 'did not follow suit while holding the suit',
  'hearts led before they were broken', 'unknown key', "not this seat's turn"];

function pieceAt(index) {
  const piece = LAYOUT.find((p) => index >= p.offset && index < p.offset + p.size);
  return `${piece.name}[${index - piece.offset}]`;
}

function assertObservation(actual, expected, label) {
  assert.equal(actual.length, OBS_DIM);
  for (let i = 0; i < OBS_DIM; i++) {
    if (actual[i] !== Math.fround(expected[i])) {
      assert.fail(`${label}: observation ${pieceAt(i)} is ${actual[i]}, Python has ${expected[i]}`);
    }
  }
}

test('cards follow the contract (id = 13 * suit + rank)', () => {
  assert.equal(parseCard('2C'), 0);
  assert.equal(parseCard('JD'), 22);
  assert.equal(parseCard('QS'), 49);
  assert.equal(parseCard('10h'), parseCard('TH'));
  assert.equal(parseCard('q♠'), 49);
  assert.equal(cardText(51), 'AS');
  assert.deepEqual(manifest.cards.ids.map(parseCard), [...Array(52).keys()]);
  assert.throws(() => parseCard('1X'), /not a card/);
});

test('the observation layout is the manifest\'s', () => {
  assert.equal(OBS_DIM, manifest.observation.dimension);
  assert.deepEqual(LAYOUT, manifest.observation.layout.map(({ name, offset, size, shape }) => ({ name, offset, size, shape })));
});

test('observations and legal masks equal Python\'s on every golden record', () => {
  const cases = [...golden.cases, ...golden.encoder_cases];
  assert.ok(cases.length >= 40, `only ${cases.length} golden records`);
  for (const [i, c] of cases.entries()) {
    const label = `record ${i} (${c.record.rules.name}, ${c.record.phase}, seat ${c.record.seat})`;
    assertObservation(encodeObservation(c.record), c.observation, label);
    assert.deepEqual([...legalMask(c.record)], c.mask, `${label}: legal mask`);
  }
});

test('the model in onnxruntime-node picks Python\'s cards with Python\'s probabilities', async () => {
  const session = await loadPolicy(ort, model, manifest);
  let maxDiff = 0;
  let equal = 0;
  for (const [i, c] of golden.cases.entries()) {
    const choice = await chooseCard(session, c.record);
    assert.equal(choice.action, c.action, `record ${i}: action`);
    assert.equal(choice.card, c.card);
    assert.equal(c.mask[choice.action], 1, `record ${i}: the pick is legal`);
    equal += 1;
    c.probabilities.forEach((p, k) => { maxDiff = Math.max(maxDiff, Math.abs(choice.probabilities[k] - p)); });
  }
  assert.ok(maxDiff <= 1e-5, `largest probability difference ${maxDiff}`);
  if (process.env.HEARTS_JS_REPORT) {
    writeFileSync(process.env.HEARTS_JS_REPORT, JSON.stringify({ cases: golden.cases.length, actions_equal: equal, max_probability_difference: maxDiff }));
  }
});

function checkInvalid(data) {
  const names = data.invalid.map((c) => c.name);
  for (const kind of INVALID_KINDS) assert.ok(names.includes(kind), `golden.json has no invalid record "${kind}"`);
  for (const c of data.invalid) {
    for (const f of [encodeObservation, legalMask]) {
      assert.throws(() => f(c.record), (err) => {
        assert.ok(err instanceof RecordError, `${c.name}: ${err}`);
        assert.ok(err.message.includes(c.error), `${c.name}: "${err.message}" does not say "${c.error}"`);
        assert.equal(err.message, c.message, `${c.name}: the message differs from Python's`);
        return true;
      }, c.name);
    }
  }
}

test('impossible records are refused with Python\'s error', () => {
  checkInvalid(golden);
  assert.throws(() => encodeObservation({ version: 1 }), RecordError);
  assert.throws(() => encodeObservation('{not json'), /not valid JSON/);
});

async function checkEmptyMask(session, data) {
  const cases = data.cases.slice(0, 3);
  const masks = cases.map((c) => Uint8Array.from(c.mask));
  masks[1].fill(0);
  const { actions, probabilities } = await runPolicy(session, cases.map((c) => Float32Array.from(c.observation)), masks);
  assert.equal(actions[1], NO_ACTION);
  assert.equal(NO_ACTION, -1);
  assert.ok(probabilities[1].every((p) => p === 0), `probabilities of the empty mask: ${probabilities[1]}`);
  for (const i of [0, 2]) {  // the rows beside it are the golden decisions
    assert.equal(actions[i], cases[i].action);
    cases[i].probabilities.forEach((p, k) => assert.ok(Math.abs(probabilities[i][k] - p) <= 1e-5));
  }
}

test('an all-false action mask gives action -1 and zero probabilities', async () => {
  await checkEmptyMask(await loadPolicy(ort, model, manifest), golden);
});

for (const bundle of bundles) {
  test(`the shipped bundle ${path.basename(bundle)}: encoder, invalid records and picks equal golden.json`, async () => {
    const data = JSON.parse(readFileSync(path.join(bundle, 'golden.json'), 'utf8'));
    const ownManifest = JSON.parse(readFileSync(path.join(bundle, 'policy.json'), 'utf8'));
    const session = await loadPolicy(ort, readFileSync(path.join(bundle, 'policy.onnx')), ownManifest);
    assert.ok(data.encoder_cases.length > 0, 'golden.json lists no encoder cases');
    for (const [i, c] of [...data.cases, ...data.encoder_cases].entries()) {
      const label = `record ${i} (${c.record.rules.name}, ${c.record.phase}, seat ${c.record.seat})`;
      assertObservation(encodeObservation(c.record), c.observation, label);
      assert.deepEqual([...legalMask(c.record)], c.mask, `${label}: legal mask`);
    }
    for (const [i, c] of data.cases.entries()) assert.equal((await chooseCard(session, c.record)).action, c.action, `record ${i}`);
    checkInvalid(data);
    await checkEmptyMask(session, data);
  });
}

test('a manifest that does not match the model or this client is refused', async () => {
  const other = structuredClone(manifest);
  other.observation.version = 2;
  await assert.rejects(loadPolicy(ort, model, other), (err) => err instanceof ManifestError && /observation v2/.test(err.message));
  const moved = structuredClone(manifest);
  moved.observation.layout[1].offset += 1;
  assert.throws(() => checkManifest(moved), /layout differs/);
  const wrongModel = structuredClone(manifest);
  wrongModel.model.sha256 = '0'.repeat(64);
  await assert.rejects(loadPolicy(ort, model, wrongModel), /another model/);
  await assert.rejects(loadPolicy(ort, model, { ...manifest, format_version: 99 }), ManifestError);
});

test('a record for other rules than the policy\'s is refused', async () => {
  const session = await loadPolicy(ort, model, manifest);
  const other = golden.encoder_cases.find((c) => c.record.rules.num_players === 2);
  await assert.rejects(chooseCard(session, other.record), /rules/);
});
