// One owner for each concept in the JavaScript client (issue 55; the map is docs/export.md, "Which
// JavaScript module stands for which Python module"). Each concept's functions may be defined in its
// one module only, and its words written there only: a second rules validator, game session, view or
// refusal wording anywhere in clients/js/src or clients/web/static fails this test. A module that
// needs a concept imports it from its owner (and may re-export it: a re-export defines nothing).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');  // clients/
const FOLDERS = ['js/src', 'web/static'];

/**
 * Each concept: its one module (relative to clients/) and the names only that module may define.
 * (The page, clients/web/static, has functions of its own under other names: its newGame asks for a
 * game, its route reads the address; the names below are the concepts', not the page's, but for the
 * one the page owns: its words for the API's reason codes.)
 */
export const CONCEPTS = {
  cards: { module: 'js/src/cards.js', names: ['cardText', 'cardSymbolText', 'pyRepr', 'suitOf', 'rankOf'] },
  'rules (the options, the presets, the one validator, the same game, the hand size)': {
    module: 'js/src/rules.js',
    names: ['RulesError', 'checkRules', 'resolveRules', 'sameGame', 'handSize', 'deckIds', 'compiled', 'passOffset',
      'passDirection', 'PRESETS', 'PASS_OFFSETS', 'MOON_RULES'],
  },
  'rule spaces (which rule sets a policy covers)': { module: 'js/src/rule_space.js', names: ['spaceOf', 'covers', 'refusalParts'] },
  'the engine (deal, pass, play, score)': {
    module: 'js/src/engine.js',
    names: ['IllegalActionError', 'act', 'nextHand', 'legalActions', 'legalPlays', 'legalPasses', 'legalCards',
      'followSuit', 'heartsMustBeBroken', 'firstTrickProtection', 'breaksHearts', 'trickWinner', 'scoreHand',
      'cardPoints', 'isPointCard', 'isShooter', 'isGameOver', 'randomDeal', 'dealtHands', 'seatRecord'],
  },
  'the seat record (read, checked, replayed)': {
    module: 'js/src/seat_record.js',
    names: ['RecordError', 'parseRecord', 'recordRules', 'checkCounts', 'forcedDead', 'placeUnseen'],
  },
  'observation v1 and the policy': {
    module: 'js/src/hearts.js',
    names: ['encodeObservation', 'legalMask', 'checkManifest', 'loadPolicy', 'runPolicy', 'ManifestError'],
  },
  'the game session and why a card is refused': {
    module: 'js/src/match.js',
    names: ['HUMAN', 'step', 'refusalReason', 'whyNot', 'cardRefusal', 'winners'],
  },
  'the view of a game': { module: 'js/src/view.js', names: ['view'] },
  'the stored games': {
    module: 'js/src/games.js',
    names: ['GameStore', 'gameRules', 'agentsPlay', 'defaultOpponents', 'agentFor', 'memoryStorage', 'INVALID_SETUP'],
  },
  'the requests (routes)': { module: 'js/src/local_api.js', names: ['LocalApi', 'localBackend', 'OPTION_CHOICES'] },
  "the page's words for the API's reason codes (a refused request's, a refused card's)": {
    module: 'web/static/reasons.js', names: ['REQUEST_CODES', 'reasonWords', 'CODES', 'reasonText', 'refusalText'],
  },
};

/**
 * Words only one module may write: the English refusals of a card (the page words them from its
 * catalogue, i18n.js, in each language), and the rules validator's messages.
 */
export const WORDINGS = [
  { what: 'a refused card', modules: ['js/src/match.js', 'web/static/i18n.js'],
    phrases: ['cannot be played now', 'cannot be passed', 'you must follow suit', 'hearts are not broken yet',
      'opens the first trick', 'on the first trick', 'may not be led before hearts are broken', 'you already chose'] },
  { what: 'the rules validator', modules: ['js/src/rules.js'],
    phrases: ['must be 2 or 4', 'full52 or short28', 'deal evenly', 'pass_cycle: must list', 'must be true or false'] },
];

/** Where `name` is defined in `text`: top-level declarations, class methods, and functions assigned to it. */
export function definitions(text, name) {
  const n = name.replace(/[$]/g, '\\$');
  const patterns = [
    new RegExp(`^(?:export\\s+)?(?:default\\s+)?(?:async\\s+)?function\\s*\\*?\\s*${n}\\b`, 'gm'),
    new RegExp(`^(?:export\\s+)?class\\s+${n}\\b`, 'gm'),
    new RegExp(`^(?:export\\s+)?(?:const|let|var)\\s+${n}\\b`, 'gm'),
    new RegExp(`^[ \\t]+(?:static\\s+)?(?:async\\s+)?(?:get\\s+|set\\s+)?${n}\\s*\\([^()]*\\)\\s*\\{`, 'gm'),  // a method
    new RegExp(`\\b${n}\\s*[:=]\\s*(?:async\\s*)?(?:function\\b|\\([^()]*\\)\\s*=>|\\w+\\s*=>)`, 'g'),  // NAME = (...) =>
    new RegExp(`(?:^|[;{]\\s*)(?:function|class)\\s+${n}\\b`, 'gm'),  // nested declarations
  ];
  const lines = new Set();
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) lines.add(text.slice(0, match.index).split('\n').length);
  }
  return [...lines].sort((a, b) => a - b);
}

/** Every .js file the client ships: clients/js/src/*.js and clients/web/static/*.js. */
export function clientFiles(root = ROOT) {
  return FOLDERS.flatMap((folder) => readdirSync(join(root, folder)).filter((f) => f.endsWith('.js'))
    .map((f) => ({ path: `${folder}/${f}`, text: readFileSync(join(root, folder, f), 'utf8') })));
}

/** Comments aside (a module may name another's function or quote its words in a comment). */
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** "NAME defined in FILE:LINE" for each definition of a concept's name outside its module. */
export function strayDefinitions(files, concepts = CONCEPTS) {
  const stray = [];
  for (const [concept, { module, names }] of Object.entries(concepts)) {
    for (const { path, text } of files) {
      if (path === module) continue;
      for (const name of names) {
        for (const line of definitions(code(text), name)) stray.push(`${name} (${concept}: ${module}) defined again in ${path}:${line}`);
      }
    }
  }
  return stray;
}

/** "PHRASE written in FILE" for each of a wording's phrases outside its modules. */
export function strayWordings(files, wordings = WORDINGS) {
  const stray = [];
  for (const { what, modules, phrases } of wordings) {
    for (const { path, text } of files) {
      if (modules.includes(path)) continue;
      for (const phrase of phrases) if (code(text).includes(phrase)) stray.push(`"${phrase}" (${what}: ${modules.join(', ')}) written in ${path}`);
    }
  }
  return stray;
}

test('each concept is defined in its one module', () => {
  const files = clientFiles();
  for (const { module, names } of Object.values(CONCEPTS)) {
    const own = files.find((f) => f.path === module);
    assert.ok(own, `${module} is missing`);
    for (const name of names) assert.ok(definitions(code(own.text), name).length, `${name} is not defined in ${module}`);
  }
  assert.deepEqual(strayDefinitions(files), []);
});

test('a refused card and the rules validator are worded in one module each', () => {
  assert.deepEqual(strayWordings(clientFiles()), []);
});

test('a second rules validator, session or refusal wording is found', () => {
  // The check itself, on a file that defines them again (as the client did before issue 55).
  const files = [...clientFiles(), {
    path: 'js/src/extra.js',
    text: [
      'function checkRules(rules) {',
      "  if (rules.num_players !== 2 && rules.num_players !== 4) throw new Error('num_players must be 2 or 4');",
      '}',
      'export class Extra {',
      '  async step(entry, card) {',
      '    return `${card} cannot be played now`;',
      '  }',
      '}',
      'const refusalReason = (game, card) => null;',
      'export const sameGame = function (a, b) { return true; };',
    ].join('\n'),
  }];
  const stray = strayDefinitions(files);
  for (const name of ['checkRules', 'step', 'refusalReason', 'sameGame']) {
    assert.ok(stray.some((line) => line.startsWith(`${name} (`) && line.includes('js/src/extra.js')), `${name} not found: ${stray}`);
  }
  const words = strayWordings(files);
  assert.ok(words.some((line) => line.includes('cannot be played now') && line.includes('extra.js')));
  assert.ok(words.some((line) => line.includes('must be 2 or 4') && line.includes('extra.js')));
});
