// rule_space.js against Python's words: every case of fixtures/rule_space.json (export/fixtures.py
// rule_space_cases) gives Python's refusal, or null where the space covers the rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { covers, refusal, spaceOf } from '../src/rule_space.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const { cases } = JSON.parse(readFileSync(path.join(fixtures, 'rule_space.json'), 'utf8'));

test('each refusal is worded as Python words it', () => {
  assert.ok(cases.length > 20 && cases.some((c) => c.refusal === null) && cases.some((c) => c.refusal !== null));
  for (const c of cases) {
    assert.equal(refusal(c.space, c.rules), c.refusal, `${c.rules.name} in a space around ${JSON.stringify(c.space.fields.num_players)}`);
    assert.equal(covers(c.space, c.rules), c.refusal === null);
  }
});

test('a manifest without a rule space covers exactly its rules', () => {
  const rules = cases[0].rules;
  const space = spaceOf({ rules });
  assert.equal(refusal(space, rules), null);
  assert.match(refusal(space, { ...rules, target_score: rules.target_score + 1 }), /^target_score \d+ is not among the values it covers: \d+$/);
});
