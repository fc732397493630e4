// A whole game in JavaScript as a game app plays it: the engine (src/engine.js) deals, passes, plays
// and scores; the exported policy (src/hearts.js + onnxruntime-node) chooses the cards of seats 1-3
// from seatRecord(game), what the seat to act knows; seat 0 plays a legal card of its own.
// Uses the committed fixtures' classic policy (test/fixtures/policy.onnx).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { act, legalActions, newGame, nextHand, seatRecord } from '../src/engine.js';
import { chooseCard, loadPolicy } from '../src/hearts.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

test('the policy plays a whole classic game on the engine, every card legal', async () => {
  const manifest = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  const session = await loadPolicy(ort, readFileSync(path.join(fixtures, 'policy.onnx')), manifest);
  const game = newGame(manifest.rules);
  let decisions = 0;
  while (game.phase !== 'over') {
    if (game.phase === 'scored') nextHand(game);
    const legal = legalActions(game);
    const card = game.toAct === 0 ? legal[0] : (await chooseCard(session, seatRecord(game))).action;
    assert.ok(legal.includes(card), `the policy chose a legal card (${card} of ${legal})`);
    act(game, card);
    decisions += 1;
    assert.ok(decisions < 10000);
  }
  assert.ok(game.winner >= 0);
  assert.equal(game.handsPlayed.at(-1).winner, game.winner);
  assert.deepEqual(game.handsPlayed.reduce((t, h) => t.map((s, i) => s + h.points[i]), [0, 0, 0, 0]), game.scores);
});
