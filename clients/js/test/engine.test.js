// The JavaScript game engine against Python's golden games (run: ./run_tests.sh, npm test, or
// `node --test test/engine.test.js`: this file needs no npm package).
//
// Every hand of every game in fixtures/golden_games.json (written by `python -m export.golden_games
// DIR`) is replayed from its recorded deal: at every step the seat to act and its legal cards must be
// Python's, and after every hand the points, moons and scores; the game must end after the last hand
// with Python's winner. HEARTS_GOLDEN_GAMES, when set, names another golden games file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  IllegalActionError, PRESETS, RulesError, act, cardPoints, handSize, legalActions, newGame, nextHand, passOffset,
  isGameOver, randomDeal, resolveRules, scoreHand, seatRecord, soleLowest,
} from '../src/engine.js';
import { cardText, legalMask } from '../src/hearts.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.env.HEARTS_GOLDEN_GAMES || path.join(here, 'fixtures', 'golden_games.json');
const golden = JSON.parse(readFileSync(file, 'utf8'));

const owners = (text) => [...text].map((ch) => (ch === '-' ? -1 : Number(ch)));
const setOf = (hex) => {
  const bits = BigInt(`0x${hex}`);
  const out = [];
  for (let c = 0; c < 52; c++) if ((bits >> BigInt(c)) & 1n) out.push(c);
  return out;
};
const texts = (ids) => ids.map(cardText).join(' ');
// Every how many steps the seat record of the engine's state goes through the encoder's own replay
// (hearts.js legalMask) too: the two JavaScript readings of the rules must agree with each other.
const RECORD_EVERY = 5;

test('the golden games cover every preset, each moon rule and each option', () => {
  assert.equal(golden.format, 'hearts-lab-golden-games');
  const rules = golden.games.map((g) => g.rules);
  for (const name of Object.keys(PRESETS)) assert.ok(rules.some((r) => r.name === name), `preset ${name}`);
  for (const moon of ['add_to_others', 'subtract_from_self', 'shooters_choice', 'off']) {
    assert.ok(rules.some((r) => r.moon === moon), `moon ${moon}`);
  }
  for (const flag of ['queen_breaks_hearts', 'queen_waits_for_hearts', 'jack_of_diamonds_bonus']) {
    assert.ok(rules.some((r) => r[flag]), flag);
  }
  assert.ok(rules.some((r) => !r.hearts_must_be_broken) && rules.some((r) => !r.first_trick_protection));
  const hands = golden.games.flatMap((g) => g.hands);
  assert.ok(hands.some((h) => h.moon.some((m, s) => m && h.points[s] < 0)), 'a moon subtracted');
  assert.ok(hands.some((h) => h.moon.some((m, s) => m && h.points[s] === 0)), 'a moon added');
  assert.ok(golden.games.every((g) => g.hands.length >= 2), 'whole games of several hands');
  assert.ok(hands.some((h) => h.deal[0] === '-' && h.deal[2] === '-'), '2C and 4C dead: 6C opens');
  assert.ok(golden.games.some((g) => g.hands.slice(0, -1).some((h) => Math.max(...h.scores) >= g.rules.target_score)),
    'a tie for lowest at the target plays on');
});

let steps = 0;
for (const g of golden.games) {
  test(`golden game ${g.name} (${g.hands.length} hands): same legal cards, points and scores`, () => {
    const first = g.hands[0];
    const game = newGame(g.rules, { deal: owners(first.deal), scores: g.start_scores, handNumber: first.hand_number });
    assert.deepEqual(game.rules, g.rules);
    g.hands.forEach((hand, h) => {
      const where = `${g.name} hand ${hand.hand_number}`;
      if (h > 0) {
        assert.equal(game.phase, 'scored', `${where}: the game went on`);
        nextHand(game, { deal: owners(hand.deal) });
        assert.equal(game.handNumber, hand.hand_number);
      }
      let event;
      hand.actions.forEach(([seat, card, legal], i) => {
        const step = `${where} action ${i} (${game.phase})`;
        assert.equal(game.toAct, seat, `${step}: seat to act`);
        const mine = legalActions(game);
        if (texts(mine) !== texts(setOf(legal))) {
          assert.fail(`${step}: seat ${seat} may take ${texts(mine)}; Python: ${texts(setOf(legal))}`);
        }
        if (i % RECORD_EVERY === 0) {
          const mask = legalMask(seatRecord(game));
          assert.equal(texts([...mask.keys()].filter((c) => mask[c])), texts(mine), `${step}: the encoder's legal mask`);
        }
        event = act(game, card);
        steps += 1;
      });
      assert.ok(event.hand, `${where}: the last action ends the hand`);
      assert.deepEqual(event.hand.points, hand.points, `${where}: points`);
      assert.deepEqual(event.hand.moon, hand.moon, `${where}: moon`);
      assert.deepEqual(event.hand.scores, hand.scores, `${where}: scores`);
    });
    assert.equal(game.phase, 'over', `${g.name}: the game ends after its last hand`);
    assert.equal(game.winner, g.winner, `${g.name}: winner`);
  });
}

test('every golden action was replayed', () => {
  assert.equal(steps, golden.games.reduce((n, g) => n + g.hands.reduce((k, h) => k + h.actions.length, 0), 0));
});

// ---- beyond the golden games: random deals, whole games, refusals ----------------------------

/** A seeded randomBelow (mulberry32), so a failing run can be repeated. */
function seeded(seed) {
  let a = seed >>> 0;
  return (bound) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * bound);
  };
}

test('random deals: every hand full, the dead cards set aside, each seat dealt the opening cards in turn', () => {
  for (const name of Object.keys(PRESETS)) {
    const rules = resolveRules(name);
    const seen = new Set();
    for (let i = 0; i < 200; i++) {
      const deal = randomDeal(rules);
      const counts = new Array(rules.num_players).fill(0);
      deal.forEach((s) => { if (s >= 0) counts[s] += 1; });
      assert.ok(counts.every((n) => n === handSize(rules)), `${name}: ${counts}`);
      assert.equal(deal.filter((s) => s < 0).length, 52 - rules.num_players * handSize(rules));
      seen.add(deal[0]);
    }
    assert.ok(seen.size >= rules.num_players, `${name}: 2C goes to every seat (and is dead) sometimes`);
  }
});

test('whole games with random legal cards end, every hand scoring its points', () => {
  for (const [name, seed] of [['classic', 1], ['quick', 2], ['two_player', 3], [{ preset: 'quick', moon: 'shooters_choice', jack_of_diamonds_bonus: true }, 4]]) {
    const random = seeded(seed);
    const game = newGame(name, { randomBelow: random });
    let hands = 0;
    while (game.phase !== 'over') {
      if (game.phase === 'scored') nextHand(game, { randomBelow: random });
      const legal = legalActions(game);
      assert.ok(legal.length > 0, 'the seat to act always has a legal card');
      const event = act(game, legal[random(legal.length)]);
      if (event.hand) {
        hands += 1;
        const inPlay = game.tricks.flatMap((t) => t.cards);
        const total = event.hand.points.reduce((a, b) => a + b, 0);
        if (!event.hand.moon.some(Boolean) && !game.rules.jack_of_diamonds_bonus) assert.equal(total, cardPoints(inPlay));
      }
      assert.ok(hands < 200);
    }
    assert.ok(game.winner >= 0 && Math.max(...game.scores) >= game.rules.target_score);
    assert.deepEqual(JSON.parse(JSON.stringify(game)), game, 'a game is plain JSON (it can be stored)');
  }
});

test('an illegal card is refused naming the legal ones, and changes nothing', () => {
  const game = newGame('classic', { handNumber: 3, randomBelow: seeded(5) });  // hand 3: no pass
  assert.equal(passOffset(game.rules, 3), 0);
  assert.equal(game.phase, 'play');
  const before = JSON.stringify(game);
  assert.throws(() => act(game, 'AS'), (err) => err instanceof IllegalActionError && /cannot play AS; legal: 2C$/.test(err.message));
  assert.equal(JSON.stringify(game), before);
  act(game, '2C');
});

test('bad rules are refused naming the option', () => {
  assert.throws(() => resolveRules('fast'), RulesError);
  assert.throws(() => resolveRules({ moon: 'sometimes' }), /moon/);
  assert.throws(() => resolveRules({ num_players: 2, pass_cycle: ['across'], deck: 'short28', dead_cards: 2, opening_lead: ['2C', '4C', '6C'] }), /across/);
  assert.throws(() => resolveRules({ dead_cards: 3 }), /dead_cards/);
  assert.throws(() => resolveRules({ preset: 'two_player', jack_of_diamonds_bonus: true }), /J♦/);
  assert.throws(() => resolveRules({ preset: 'two_player', opening_lead: ['2C', '4C'] }), /opening_lead/);
  assert.throws(() => resolveRules({ colour: 'red' }), /unknown option/);
  assert.throws(() => resolveRules({ target_score: 1e30 }), /target_score/);
  assert.throws(() => resolveRules({ pass_count: 1.5 }), /pass_count/);
  assert.equal(resolveRules({ preset: 'classic', moon: 'off' }).name, 'custom');
  assert.equal(resolveRules({ preset: 'classic', trump_suit: 'none' }).name, 'classic');
});

test('the game ends when someone reached the target and the lowest total is alone', () => {
  const rules = resolveRules('classic');
  assert.equal(isGameOver(rules, [100, 50, 60, 70]), true);
  assert.equal(isGameOver(rules, [100, 50, 50, 70]), false);  // a tie for lowest plays another hand
  assert.equal(isGameOver(rules, [99, 50, 60, 70]), false);
  assert.equal(soleLowest([100, 50, 50, 70]), -1);
  assert.equal(soleLowest([100, 40, 50, 70]), 1);
});

test('the moon rules score one made moon four ways', () => {
  const all = [...Array(52).keys()].filter((c) => c >= 26 && c <= 38).concat([49]);
  const taken = [all, [0], [1], [2]];
  const score = (moon, scores = [0, 0, 0, 0]) => scoreHand(resolveRules({ moon }), taken, [], scores).points;
  assert.deepEqual(score('add_to_others'), [0, 26, 26, 26]);
  assert.deepEqual(score('subtract_from_self'), [-26, 0, 0, 0]);
  assert.deepEqual(score('off'), [26, 0, 0, 0]);
  assert.deepEqual(score('shooters_choice'), [0, 26, 26, 26]);
  assert.deepEqual(score('shooters_choice', [90, 10, 75, 60]), [-26, 0, 0, 0]);  // adding would end it, seat 1 lowest
});
