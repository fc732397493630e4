// The page's API answered in JavaScript (src/local_api.js): whole games through LocalApi.fetch as the
// page makes them, every answer checked for what seat 0 may see. A quick game (to 50) against the
// random agent (no policy plays the quick rules), and a classic game against the committed fixtures'
// classic policy (test/fixtures/policy.onnx, onnxruntime-node). With HEARTS_LOCAL_API_DUMP=FILE the
// answers are written there: tests/test_web_build.py compares their JSON shapes with the server's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { loadPolicy } from '../src/hearts.js';
import { PRESETS } from '../src/engine.js';
import { LocalApi, loadAgents, memoryStorage, policyAgent, randomAgent } from '../src/local_api.js';
import { spaceOf } from '../src/rule_space.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const VIEW_KEYS = ['id', 'rules', 'hand_size', 'players', 'phase', 'hand_number', 'trick_number', 'pass_direction', 'to_act',
  'your_turn', 'hand', 'legal', 'refused', 'pass', 'received', 'trick', 'last_trick', 'hearts_broken', 'scores', 'hand_points',
  'score_sheet', 'events', 'game_over'];
const EVENT_KEYS = {
  exchanged: ['type', 'passed', 'received', 'to', 'from'],
  played: ['type', 'seat', 'card', 'trick_number'],
  hearts_broken: ['type', 'seat', 'card'],
  trick_won: ['type', 'trick_number', 'winner', 'points', 'plays'],
  hand_scored: ['type', 'hand_number', 'points', 'card_points', 'scores', 'tricks', 'moon'],
  hand_started: ['type', 'hand_number', 'pass_direction', 'pass_to'],
  game_over: ['type', 'winner', 'scores'],
};

async function call(api, method, url, body) {
  const response = await api.fetch(`api/v1/${url}`, body === undefined ? { method } : { method, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: response.headers.get('Content-Type') === 'application/json' ? JSON.parse(text) : text };
}

/** Checks one view: the keys of view.py, seat 0's cards only, its legal cards among them. */
function checkView(v, known) {
  assert.deepEqual(Object.keys(v), VIEW_KEYS);
  assert.ok(v.legal.every((c) => v.hand.includes(c)), 'legal cards are in the hand');
  assert.equal(v.your_turn, v.phase !== 'over' && v.to_act === 0);
  if (v.phase === 'pass') assert.ok(v.pass && v.pass.picks_left > 0 && v.pass.chosen.every((c) => v.hand.includes(c)));
  for (const e of v.events) assert.deepEqual(Object.keys(e), EVENT_KEYS[e.type], `event ${e.type}`);
  // Nothing of another seat's hand: every card the view names is seat 0's own (now or before), or one
  // played at the table (this answer's played events, the trick).
  const cardsIn = (value) => (typeof value === 'string' ? (/^[2-9TJQKA][CDHS]$/.test(value) ? [value] : [])
    : value && typeof value === 'object' ? Object.values(value).flatMap(cardsIn) : []);
  const fresh = [...v.hand, ...v.trick.map((t) => t.card), ...v.events.filter((e) => e.type === 'played').map((e) => e.card)];
  for (const card of cardsIn({ ...v, rules: null })) assert.ok(known.has(card) || fresh.includes(card), `${card} was not seat 0's to see`);
  for (const card of [...fresh, ...cardsIn({ ...v, rules: null })]) known.add(card);
}

async function playWholeGame(api, body, dump) {
  const created = await call(api, 'POST', 'games', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  let v = created.body;
  dump.create = v;
  dump.views = [v];
  const known = new Set();
  checkView(v, known);
  const id = v.id;
  const handScored = [];
  let requests = 0;
  while (v.phase !== 'over') {
    if (requests === 2) { // a refused card: the reason and the legal cards, nothing changed
      const refused = ['2C', '3C', 'AS', 'KH', 'QS', 'AD'].find((c) => !v.legal.includes(c));
      const answer = await call(api, 'POST', `games/${id}/play`, { card: refused });
      assert.equal(answer.status, 409);
      assert.deepEqual(Object.keys(answer.body), ['detail', 'legal', 'reason']);
      assert.deepEqual(answer.body.legal, v.legal);
      if (v.hand.includes(refused)) assert.deepEqual(answer.body.reason, v.refused[refused]); // as the view said
      else assert.deepEqual(answer.body.reason, { code: 'not_held' });
      dump.refused = [answer.status, answer.body];
      assert.deepEqual((await call(api, 'GET', `games/${id}`)).body.hand, v.hand);
    }
    const answer = await call(api, 'POST', `games/${id}/play`, { card: v.legal[v.legal.length - 1] });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    v = answer.body;
    checkView(v, known);
    dump.views.push(v);
    handScored.push(...v.events.filter((e) => e.type === 'hand_scored'));
    requests += 1;
    assert.ok(requests < 2000);
  }
  assert.equal(v.to_act, -1);
  assert.deepEqual(v.game_over.scores, v.scores);
  assert.ok(Math.max(...v.scores) >= v.rules.target_score);
  assert.equal(v.game_over.winner, v.scores.indexOf(Math.min(...v.scores)));
  assert.deepEqual(handScored.reduce((t, h) => t.map((s, i) => s + h.points[i]), v.scores.map(() => 0)), v.scores);
  assert.deepEqual(handScored.map((h) => h.hand_number), handScored.map((_, i) => i));
  dump.get = (await call(api, 'GET', `games/${id}`)).body;
  assert.deepEqual(dump.get, v);
  const over = await call(api, 'POST', `games/${id}/play`, { card: '2C' });
  assert.deepEqual([over.status, over.body], [409, { detail: 'the game is over', legal: [], reason: { code: 'game_over' } }]);
  dump.over_play = [over.status, over.body];
  const record = await call(api, 'GET', `games/${id}/record`);
  assert.equal(record.status, 200);
  const line = JSON.parse(record.body);
  assert.equal(line.hands.length, handScored.length);
  assert.deepEqual(line.scores, v.scores);
  return v;
}

test('a whole quick game through the local API, as the page plays it', async () => {
  const storage = memoryStorage();
  const api = new LocalApi({ agents: [randomAgent()], storage });
  const dump = {};
  const options = await call(api, 'GET', 'options');
  assert.equal(options.status, 200);
  dump.options = options.body;
  assert.deepEqual(options.body.agents_by_preset.quick, ['random']);
  dump.bad_card = await call(api, 'POST', 'games/AAAAAAAAAAAAAAAAAAAAAA/play', { card: 'ZZ' }).then((a) => [a.status, a.body]);
  assert.equal(dump.bad_card[0], 422);
  const missing = await call(api, 'GET', 'games/AAAAAAAAAAAAAAAAAAAAAA');
  assert.deepEqual([missing.status, missing.body],
    [404, { detail: 'no game AAAAAAAAAAAAAAAAAAAAAA', reason: { code: 'no_such_game' } }]);
  dump.missing = [missing.status, missing.body];
  const notOffered = await call(api, 'POST', 'games', { preset: 'quick', opponents: ['hard', 'random', 'random'] });
  dump.not_offered = [notOffered.status, notOffered.body.reason];
  const v = await playWholeGame(api, { preset: 'quick', opponents: ['random', 'random', 'random'] }, dump);
  assert.equal(v.rules.name, 'quick');
  // Another page (a reload) reads the game back from the same storage.
  const again = new LocalApi({ agents: [randomAgent()], storage });
  assert.deepEqual((await call(again, 'GET', `games/${v.id}`)).body, v);
  if (process.env.HEARTS_LOCAL_API_DUMP) writeFileSync(process.env.HEARTS_LOCAL_API_DUMP, JSON.stringify(dump));
});

test('requests the server refuses are refused alike', async () => {
  const api = new LocalApi({ agents: [randomAgent()], storage: memoryStorage() });
  const cases = [
    [{ preset: 'nope' }, /^preset: unknown rules preset 'nope'/],
    [{ preset: 'classic', opponents: ['random'] }, /^opponents: this game has 3 opponent seat\(s\); 1 given$/],
    [{ preset: 'classic', opponents: ['hard', 'random', 'random'] }, /^opponents: "hard" is not offered here/],
    [{ preset: 'classic', rules: { target_score: 10 ** 7 } }, /^rules.target_score: .* out of range/],
    [{ preset: 'classic', rules: { moon: 'sometimes' } }, /moon/],
    [{ preset: 'classic', colour: 'red' }, /^colour: Extra inputs are not permitted$/],
    [{ preset: 'classic', seed: 7 }, /^seed: /],
  ];
  for (const [body, detail] of cases) {
    const answer = await call(api, 'POST', 'games', body);
    assert.equal(answer.status, 422, JSON.stringify(body));
    assert.match(answer.body.detail, detail);
  }
  const notJson = await api.fetch('api/v1/games', { method: 'POST', body: '{' });
  assert.equal(notJson.status, 422);
  assert.equal((await call(api, 'GET', 'games/short')).status, 404);
  assert.deepEqual(Object.values(await call(api, 'GET', 'games')), [405, { detail: 'Method Not Allowed' }]);
  assert.deepEqual(Object.values(await call(api, 'GET', 'nothing/here')), [404, { detail: 'Not Found' }]);
  assert.equal((await call(api, 'GET', 'games/%E0%A4%A')).status, 404);
  const two = await call(api, 'POST', 'games', { preset: 'two_player' });
  assert.equal(two.status, 201);
  assert.deepEqual(two.body.players.map((p) => p.name), ['You', 'random']);
});

test('a classic game against the exported policy through the local API', async () => {
  const manifest = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  let loads = 0;
  const policy = policyAgent('ppo-classic', manifest, () => {
    loads += 1;
    return loadPolicy(ort, readFileSync(path.join(fixtures, 'policy.onnx')), manifest);
  });
  const api = new LocalApi({ agents: [policy, randomAgent()], storage: memoryStorage() });
  const options = (await call(api, 'GET', 'options')).body;
  assert.deepEqual(options.agents_by_preset, { classic: ['ppo-classic', 'random'], quick: ['random'], long: ['random'], two_player: ['random'] });
  assert.deepEqual(options.default_opponents, ['ppo-classic', 'ppo-classic', 'ppo-classic']);
  const refused = await call(api, 'POST', 'games', { preset: 'quick', opponents: ['ppo-classic', 'random', 'random'] });
  assert.equal(refused.status, 422);
  assert.equal(refused.body.detail, 'opponents: ppo-classic cannot play these rules: target_score 50 is not among the values it covers: 100');
  assert.deepEqual(refused.body.reason, { code: 'opponent_cannot_play', spec: 'ppo-classic', field: 'target_score', value: '50', covers: ['100'] });
  const v = await playWholeGame(api, { preset: 'classic' }, {});
  assert.deepEqual(v.players.map((p) => p.name), ['You', 'ppo-classic', 'ppo-classic', 'ppo-classic']);
  assert.equal(loads, 1, 'the model is loaded once, when it first plays');
});

// With HEARTS_LOCAL_API_PARITY=FILE (tests/test_web_build.py writes it from the golden games): Python's
// views, seat 0's card before each, of whole games the server's GameStore flow plays on the Python
// engine (Match + view.py); here the same deals and the same opponents' cards (a scripted agent) go
// through LocalApi, and every answer must be the Python view, field for field (the game id aside), and
// every card seat 0 may not take must be refused with the server's words and legal cards.
test('the local API gives the server\'s views of the golden games, field for field', async (t) => {
  if (!process.env.HEARTS_LOCAL_API_PARITY) {
    t.skip('HEARTS_LOCAL_API_PARITY is not set (tests/test_web_build.py sets it)');
    return;
  }
  const { games } = JSON.parse(readFileSync(process.env.HEARTS_LOCAL_API_PARITY, 'utf8'));
  const owners = (text) => [...text].map((c) => (c === '-' ? -1 : Number(c)));
  let compared = 0;
  let refusals = 0;
  for (const golden of games) {
    const byHand = new Map(golden.hands.map((h) => [h.hand_number, h]));
    const scripted = {
      spec: 'scripted',
      rules: null,
      async choose(game) {
        const [seat, card] = byHand.get(game.handNumber).actions[game.history.length];
        assert.equal(seat, game.toAct);
        return card;
      },
    };
    const api = new LocalApi({ agents: [scripted], storage: memoryStorage(), dealer: (rules, n) => owners(byHand.get(n).deal) });
    const { name, ...options } = golden.rules;
    const p = golden.rules.num_players;
    let answer = await call(api, 'POST', 'games', { preset: 'classic', rules: { name, ...options }, opponents: new Array(p - 1).fill('scripted') });
    for (const [i, { card, refused, view }] of golden.steps.entries()) {
      const id = answer.body.id;
      for (const r of refused ?? []) {
        const no = await call(api, 'POST', `games/${id}/play`, { card: r.card });
        const expected = r.reason ? { detail: r.detail, legal: r.legal, reason: r.reason } : { detail: r.detail, legal: r.legal };
        assert.deepEqual([no.status, no.body], [409, expected], `${golden.name} step ${i}: ${r.card}`);
        refusals += 1;
      }
      if (i > 0) answer = await call(api, 'POST', `games/${id}/play`, { card });
      assert.equal(answer.status, i ? 200 : 201, `${golden.name} step ${i}: ${JSON.stringify(answer.body)}`);
      assert.deepEqual({ ...answer.body, id: 'ID' }, view, `${golden.name}, step ${i} (seat 0 played ${card})`);
      compared += 1;
    }
  }
  assert.ok(compared > 100 && refusals > 100);
});

test('an opponent that fails leaves the game at its turn, and the next card tries again', async () => {
  let fail = true;
  const flaky = { ...randomAgent(), spec: 'flaky', async choose(game) {
    if (fail && game.phase === 'play') throw new Error('no model');
    return randomAgent().choose(game);
  } };
  const api = new LocalApi({ agents: [flaky], storage: memoryStorage() });
  let v = (await call(api, 'POST', 'games', { preset: 'classic', rules: { pass_cycle: ['left'] } })).body;
  let answer;
  for (const card of v.hand.slice(0, 3)) answer = await call(api, 'POST', `games/${v.id}/play`, { card });
  if (answer.status === 200) return; // seat 0 holds 2C and leads: nobody failed yet
  assert.equal(answer.status, 500);
  assert.match(answer.body.detail, /^the opponent at seat \d \(flaky\) failed: Error: no model$/);
  v = (await call(api, 'GET', `games/${v.id}`)).body;
  assert.equal(v.phase, 'play');
  assert.notEqual(v.to_act, 0);
  assert.equal((await call(api, 'POST', `games/${v.id}/play`, { card: v.hand[0] })).status, 500);
  fail = false;
  answer = await call(api, 'POST', `games/${v.id}/play`, { card: 'ZZ' });
  assert.equal(answer.status, 422); // a bad card is refused before anything is played
  const legalNow = (await call(api, 'GET', `games/${v.id}`)).body;
  answer = await call(api, 'POST', `games/${v.id}/play`, { card: legalNow.hand[0] });
  assert.ok([200, 409].includes(answer.status), JSON.stringify(answer.body));
});

test('the default opponents are the first policies that play the rules (a ladder: easy, normal, hard)', async () => {
  const manifest = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  const levels = ['easy', 'normal', 'hard', 'strong'].map((name) => policyAgent(name, manifest, () => { throw new Error('not loaded'); }));
  const options = (await call(new LocalApi({ agents: [...levels, randomAgent()], storage: memoryStorage() }), 'GET', 'options')).body;
  assert.deepEqual(options.default_opponents, ['easy', 'normal', 'hard']);
  assert.deepEqual(options.agents_by_preset.classic, ['easy', 'normal', 'hard', 'strong', 'random']);
  const two = new LocalApi({ agents: [levels[0], randomAgent()], storage: memoryStorage() });
  assert.deepEqual((await call(two, 'GET', 'options')).body.default_opponents, ['easy', 'easy', 'easy']);
  const created = await call(two, 'POST', 'games', { preset: 'two_player' });
  assert.deepEqual(created.body.players.map((p) => p.name), ['You', 'random']);
});

test('a full storage makes room by dropping the oldest games', async () => {
  const inner = memoryStorage();
  const storage = { ...inner, getItem: inner.getItem, removeItem: inner.removeItem,
    setItem(key, value) {
      const games = JSON.parse(inner.getItem('hearts-lab-local-games') ?? '[]').filter((id) => inner.getItem(`hearts-lab-local-game:${id}`) !== null);
      if (key.startsWith('hearts-lab-local-game:') && inner.getItem(key) === null && games.length >= 3) {
        throw new Error('QuotaExceededError');
      }
      inner.setItem(key, value);
    } };
  const api = new LocalApi({ agents: [randomAgent()], storage });
  const ids = [];
  for (let i = 0; i < 5; i++) {
    const answer = await call(api, 'POST', 'games', { preset: 'quick' });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    ids.push(answer.body.id);
  }
  assert.equal((await call(api, 'GET', `games/${ids[4]}`)).status, 200);
  assert.equal((await call(api, 'GET', `games/${ids[0]}`)).status, 404);
  assert.deepEqual(JSON.parse(inner.getItem('hearts-lab-local-games')), ids.slice(2));
});

test('a policy loads once, at warm() or its first card, and again after a load that failed', async () => {
  const manifest = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  let loads = 0;
  let broken = true;
  const agent = policyAgent('ppo-classic', manifest, () => {
    loads += 1;
    if (broken) throw new Error('offline');
    return loadPolicy(ort, readFileSync(path.join(fixtures, 'policy.onnx')), manifest);
  });
  const api = new LocalApi({ agents: [agent], storage: memoryStorage() });
  agent.warm();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(loads, 1);
  const v = (await call(api, 'POST', 'games', { preset: 'classic' })).body; // seat 0 passes first
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(loads, 2); // a new game starts loading its opponents' models (they load during the pass)
  let failed;
  for (const card of v.hand.slice(0, 3)) failed = await call(api, 'POST', `games/${v.id}/play`, { card });
  assert.equal(failed.status, 500);
  assert.equal(loads, 3);
  assert.match(failed.body.detail, /failed: Error: offline/);
  broken = false;
  agent.warm();
  agent.warm();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(loads, 4);
});

test('a model loads only when a game seats its agent', async () => {
  const manifest = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  let loads = 0;
  const agent = policyAgent('ppo-classic', manifest, () => {
    loads += 1;
    return loadPolicy(ort, readFileSync(path.join(fixtures, 'policy.onnx')), manifest);
  });
  const api = new LocalApi({ agents: [agent, randomAgent()], storage: memoryStorage() });
  await call(api, 'GET', 'options');
  await call(api, 'POST', 'games', { preset: 'classic', opponents: ['random', 'random', 'random'] });
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(loads, 0);
  await call(api, 'POST', 'games', { preset: 'classic', opponents: ['random', 'ppo-classic', 'ppo-classic'] });
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(loads, 1);
});

test('a spec may name one agent per rules (a ladder level of the classic and of the two-player game)', async () => {
  const classic = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  const two = { ...classic, rules: { ...classic.rules, ...PRESETS.two_player }, rule_space: undefined };
  const played = [];
  const agent = (manifest) => ({ spec: 'level:easy', space: spaceOf(manifest), rules: manifest.rules, async choose(game) {
    played.push(game.rules.name);
    return randomAgent().choose(game);
  } });
  const api = new LocalApi({ agents: [agent(classic), agent(two), randomAgent()], storage: memoryStorage() });
  const options = (await call(api, 'GET', 'options')).body;
  assert.deepEqual(options.agents, ['level:easy', 'random']);
  assert.deepEqual(options.agents_by_preset, { classic: ['level:easy', 'random'], quick: ['random'], long: ['random'],
    two_player: ['level:easy', 'random'] });
  const v = (await call(api, 'POST', 'games', { preset: 'two_player' })).body;
  assert.deepEqual(v.players.map((p) => p.name), ['You', 'level:easy']);
  await call(api, 'POST', `games/${v.id}/play`, { card: v.legal[0] });
  assert.ok(played.length && played.every((name) => name === 'two_player'));
  const refused = await call(api, 'POST', 'games', { preset: 'quick', opponents: ['level:easy', 'random', 'random'] });
  assert.equal(refused.body.detail, 'opponents: level:easy cannot play these rules: target_score 50 is not among the values it covers: 100');
});

test('loadAgents fetches only from its own origin and leaves out a malformed manifest, keeping the others', async () => {
  const good = JSON.parse(readFileSync(path.join(fixtures, 'policy.json'), 'utf8'));
  const files = { 'https://game.example/models/a/policy.json': good, 'https://game.example/models/b/policy.json': [1, 2] };
  const fetched = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (url) => {
    fetched.push(String(url));
    const body = files[String(url)];
    return { ok: body !== undefined, status: body === undefined ? 404 : 200, json: async () => body };
  };
  const skipped = [];
  try {
    const agents = await loadAgents(null, 'https://game.example/models/models.json', { models: [
      { spec: 'a', model: 'a/policy.onnx', manifest: 'a/policy.json' },
      { spec: 'b', model: 'b/policy.onnx', manifest: 'b/policy.json' },
      { spec: 'evil', model: 'https://evil.example/m.onnx', manifest: 'https://evil.example/m.json' },
      { spec: 'gone', model: 'c/policy.onnx', manifest: 'c/policy.json' },
    ] }, (spec, reason) => skipped.push([spec, reason]));
    assert.deepEqual(agents.map((a) => a.spec), ['a', 'random']);
  } finally {
    globalThis.fetch = realFetch;
  }
  assert.deepEqual(skipped.map(([spec]) => spec), ['b', 'evil', 'gone']);
  assert.match(skipped[1][1], /another origin/);
  assert.ok(fetched.every((url) => url.startsWith('https://game.example/')), fetched);
});
