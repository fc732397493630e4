// The ladder of levels (`hearts export --ladder classic --out DIR`): DIR/levels.json lists the levels
// easiest first, each an exported policy (DIR/<level>/policy.onnx + policy.json) that plays through
// chooseCard(session, record) like any other. See docs/export.md, "Levels".
import { ManifestError, loadPolicy } from './hearts.js';
import { refusal, spaceOf } from './rule_space.js';

export const LEVELS_FORMAT = 'hearts-lab-levels';
export const LEVELS_VERSION = 1;

export class LevelsError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LevelsError';
  }
}

/** Refuse a levels.json this client cannot read; returns it. */
export function checkLevels(levels) {
  if (!levels || levels.format !== LEVELS_FORMAT || levels.format_version !== LEVELS_VERSION) {
    throw new LevelsError(`levels format ${JSON.stringify(levels?.format)} version ${JSON.stringify(levels?.format_version)}; expected "${LEVELS_FORMAT}" version ${LEVELS_VERSION}`);
  }
  if (!Array.isArray(levels.levels) || levels.levels.length === 0) throw new LevelsError('levels.json lists no levels');
  const names = new Set();
  for (const level of levels.levels) {
    if (typeof level?.name !== 'string' || !level.name) throw new LevelsError('a level without a name');
    if (names.has(level.name)) throw new LevelsError(`the level ${level.name} is listed twice`);
    names.add(level.name);
    for (const key of ['model', 'manifest']) {
      if (typeof level[key] !== 'string' || level[key].startsWith('/') || level[key].split('/').includes('..')) {
        throw new LevelsError(`the level ${level.name}'s ${key} must be a path inside the ladder's folder, got ${JSON.stringify(level[key])}`);
      }
    }
  }
  return levels;
}

/** The levels' names, easiest first (as levels.json lists them). */
export function levelNames(levels) {
  return checkLevels(levels).levels.map((level) => level.name);
}

/**
 * A policy session for one level: `read(path)` returns (a promise of) the bytes of a file of the
 * ladder's folder, by the path levels.json gives (e.g. `(p) => fetch(base + p).then((r) => r.arrayBuffer())`
 * in a browser, `(p) => readFile(join(dir, p))` in Node). Play it with chooseCard(session, record).
 * With `rules` (a complete rules object), the level must cover them (its manifest's rule_space,
 * rule_space.js), else a LevelsError names the option outside it; without, the ladder's own rules.
 */
export async function loadLevel(ort, levels, name, read, sessionOptions = {}, rules = null) {
  const level = checkLevels(levels).levels.find((entry) => entry.name === name);
  if (!level) throw new LevelsError(`no level ${JSON.stringify(name)}; levels: ${levelNames(levels).join(', ')}`);
  const manifest = JSON.parse(new TextDecoder().decode(await read(level.manifest)));
  const outside = refusal(spaceOf(manifest), rules ?? levels.rules ?? manifest.rules);
  if (outside !== null && rules) throw new LevelsError(`the level ${name} has no network for these rules: ${outside}`);
  if (outside !== null) throw new ManifestError(`the level ${name}'s policy is for other rules than its ladder`);
  const model = await read(level.model);
  const session = await loadPolicy(ort, model instanceof ArrayBuffer ? new Uint8Array(model) : model, manifest, sessionOptions);
  return { ...session, level };
}
