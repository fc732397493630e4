// The page's language catalogues (clients/web/static/i18n.js): English and German hold the same
// entries, and every entry the page asks for by name (t("key"), data-i18n in index.html) is there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CATALOGUES, t } from '../../web/static/i18n.js';

const web = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const read = (name) => readFileSync(path.join(web, name), 'utf8');

test('English and German hold the same entries', () => {
  assert.deepEqual(Object.keys(CATALOGUES.de).sort(), Object.keys(CATALOGUES.en).sort());
});

test('every entry the page names is in the catalogues', () => {
  // every module of the page (static/*.js) but the catalogue itself
  const modules = readdirSync(path.join(web, 'static')).filter((name) => name.endsWith('.js') && name !== 'i18n.js');
  assert.ok(modules.includes('app.js') && modules.includes('main.js') && modules.length > 2, `${modules}`);
  const code = modules.map((name) => read(`static/${name}`)).join('\n');
  const named = new Set([...code.matchAll(/\bt\(\s*["']([\w.]+)["']/g)].map((m) => m[1]));
  for (const m of read('index.html').matchAll(/data-i18n(?:-label|-title)?="([\w.]+)"/g)) named.add(m[1]);
  assert.ok(named.size > 60, `only ${named.size} entries found: the pattern missed them`);
  const missing = [...named].filter((key) => !(key in CATALOGUES.en));
  assert.deepEqual(missing, []);
  // the families of entries the page names with a variable part
  for (const [prefix, values] of Object.entries({
    'level.': ['easy', 'normal', 'hard', 'strong'], 'bot.': ['easy', 'normal', 'hard'],
    'pos.': ['south', 'west', 'north', 'east'], 'direction.': ['left', 'right', 'across', 'none'],
    'moon.': ['add_to_others', 'subtract_from_self', 'shooters_choice', 'off'], 'suit.': ['C', 'D', 'H', 'S'],
    'rank.': [...'23456789TJQKA'], 'preset.': ['classic', 'quick', 'long', 'two_player'],
    'reason.': ['game_over', 'not_your_turn', 'not_held', 'already_chosen', 'follow_suit', 'first_trick_points',
      'opens_first_trick', 'hearts_not_broken', 'queen_waits', 'invalid_setup', 'opponent_not_offered',
      'opponent_cannot_play', 'no_such_game', 'game_unreadable', 'record_not_ready', 'save_failed', 'opponent_failed',
      'opponent_cannot_play_option'],
  })) {
    for (const value of values) assert.ok(`${prefix}${value}` in CATALOGUES.en, `${prefix}${value}`);
  }
});

test('entries with a part to fill in fill it in, in both languages', () => {
  for (const [code, catalogue] of Object.entries(CATALOGUES)) {
    for (const [key, entry] of Object.entries(catalogue)) {
      if (typeof entry !== 'function') continue;
      const text = entry({ n: 2, card: 'Q♠', who: 'W', hand: 3, names: 'A', direction: 'left', suit: '♣', why: 'x',
        typed: 'qs', points: 1, taken: 0, count: 1, turn: true, rank: 'r', suit_name: 's', moon: 'm', winner: 'w',
        cards: 'c', passed: 'p', received: 'r', to: 't', from: 'f', players: 'p', id: 'i', pos: 'p', name: 'n',
        done: 1, total: 2, more: 1, chosen: 1, need: 3, low: 1, target: 50, score: 1, text: 't', extras: '',
        status: 500, value: 'v', you: false, seat: 2, option: 'o', values: 'v' });
      assert.equal(typeof text, 'string', `${code} ${key}`);
      assert.ok(!text.includes('undefined'), `${code} ${key}: ${text}`);
    }
  }
  assert.equal(t('card.name', { rank: 'queen', suit: 'spades' }), 'queen of spades');
});
