// Every level of an exported ladder (HEARTS_LEVELS_DIR: the folder `hearts export --ladder` wrote)
// loads from levels.json and plays its golden records' cards through chooseCard. Skipped without it
// (tests/test_ladder.py sets it to a tiny ladder it exports).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { chooseCard } from '../src/hearts.js';
import { LevelsError, checkLevels, levelNames, loadLevel } from '../src/levels.js';

const dir = process.env.HEARTS_LEVELS_DIR;

test('every level plays its golden picks', { skip: !dir && 'HEARTS_LEVELS_DIR is not set' }, async () => {
  const levels = JSON.parse(readFileSync(path.join(dir, 'levels.json'), 'utf8'));
  const read = (file) => readFileSync(path.join(dir, file));
  const names = levelNames(levels);
  assert.ok(names.length >= 2);
  for (const name of names) {
    const session = await loadLevel(ort, levels, name, read);
    const golden = JSON.parse(readFileSync(path.join(dir, session.level.golden), 'utf8'));
    assert.ok(golden.cases.length > 0);
    for (const c of golden.cases) {
      const { action } = await chooseCard(session, c.record);
      assert.equal(action, c.action, `${name}: the golden record's card`);
    }
  }
});

test('each rule set gets the first network of the level that covers it, and plays its golden picks',
  { skip: !dir && 'HEARTS_LEVELS_DIR is not set' }, async () => {
    const levels = JSON.parse(readFileSync(path.join(dir, 'levels.json'), 'utf8'));
    const read = (file) => readFileSync(path.join(dir, file));
    for (const level of levels.levels) {
      for (const network of level.networks ?? [level]) {
        const golden = JSON.parse(readFileSync(path.join(dir, network.golden), 'utf8'));
        for (const c of golden.cases) {
          const session = await loadLevel(ort, levels, level.name, read, {}, c.record.rules);
          if (session.manifest.model.sha256 !== JSON.parse(read(network.manifest)).model.sha256) continue; // an earlier network covers it
          const { action } = await chooseCard(session, c.record);
          assert.equal(action, c.action, `${level.name} (${network.model}): the golden record's card`);
        }
      }
      const outside = { ...levels.rules, target_score: 777 };
      await assert.rejects(loadLevel(ort, levels, level.name, read, {}, outside),
        new RegExp(`^LevelsError: the level ${level.name} has no network for these rules: target_score 777 is not among the values it covers: `));
    }
  });

test('a levels.json of another format, or a level outside the folder, is refused', () => {
  assert.throws(() => checkLevels({ format: 'x', format_version: 1, levels: [] }), LevelsError);
  const bad = { format: 'hearts-lab-levels', format_version: 1, levels: [{ name: 'a', model: '../a.onnx', manifest: 'a/policy.json' }] };
  assert.throws(() => checkLevels(bad), /inside the ladder's folder/);
});
