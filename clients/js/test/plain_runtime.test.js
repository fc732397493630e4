// The plain JavaScript runtime (src/plain_runtime.js) against Python's golden vectors: the same card
// for every golden record and probabilities within 1e-5, for the fixtures' policy, every shipped
// exported policy (agents/policies/*/) and the folders in HEARTS_PLAIN_DIRS (a ladder's levels,
// written by `hearts export --ladder`; tests/test_export.py passes them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseCard, loadPolicy } from '../src/hearts.js';
import { PlainRuntimeError, plainRuntime, readGraph, perceptron } from '../src/plain_runtime.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const policies = path.join(here, '..', '..', '..', 'agents', 'policies');
const folders = [
  path.join(here, 'fixtures'),
  ...(existsSync(policies) ? readdirSync(policies).map((name) => path.join(policies, name)) : []),
  ...(process.env.HEARTS_PLAIN_DIRS ? process.env.HEARTS_PLAIN_DIRS.split(path.delimiter) : []),
].filter((d) => ['golden.json', 'policy.json', 'policy.onnx'].every((f) => existsSync(path.join(d, f))));

test('the plain runtime picks Python\'s cards with Python\'s probabilities', async () => {
  assert.ok(folders.length >= 2, `only ${folders.length} policies with golden vectors`);
  for (const dir of folders) {
    const golden = JSON.parse(readFileSync(path.join(dir, 'golden.json'), 'utf8'));
    const manifest = JSON.parse(readFileSync(path.join(dir, 'policy.json'), 'utf8'));
    const session = await loadPolicy(plainRuntime, readFileSync(path.join(dir, 'policy.onnx')), manifest);
    let maxDiff = 0;
    for (const [i, c] of golden.cases.entries()) {
      const choice = await chooseCard(session, c.record);
      assert.equal(choice.action, c.action, `${dir} record ${i}: action`);
      c.probabilities.forEach((p, k) => { maxDiff = Math.max(maxDiff, Math.abs(choice.probabilities[k] - p)); });
    }
    assert.ok(golden.cases.length >= 10, `${dir}: ${golden.cases.length} cases`);
    assert.ok(maxDiff <= 1e-5, `${dir}: largest probability difference ${maxDiff}`);
  }
});

test('a file that is not an exported perceptron is refused in one line', async () => {
  const bytes = readFileSync(path.join(here, 'fixtures', 'policy.onnx'));
  await assert.rejects(plainRuntime.InferenceSession.create(bytes.subarray(0, 1000)), PlainRuntimeError);
  await assert.rejects(plainRuntime.InferenceSession.create(new Uint8Array([0x3a, 0x02, 0x08])), PlainRuntimeError);
  const graph = readGraph(new Uint8Array(bytes));
  graph.nodes.push({ op: 'LSTM', inputs: [], outputs: [], attributes: {} });
  assert.throws(() => perceptron(graph), /the model uses the operator LSTM/);
});
