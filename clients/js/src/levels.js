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
 * With `rules` (a complete rules object), the level's network for those rules: the first of its
 * `networks` whose rule space covers them (rule_space.js); a LevelsError naming the option outside
 * them when none does. Without, the level's own network, which covers the ladder's rules.
 */
export async function loadLevel(ort, levels, name, read, sessionOptions = {}, rules = null) {
  const level = checkLevels(levels).levels.find((entry) => entry.name === name);
  if (!level) throw new LevelsError(`no level ${JSON.stringify(name)}; levels: ${levelNames(levels).join(', ')}`);
  const readManifest = async (network) => JSON.parse(new TextDecoder().decode(await read(network.manifest)));
  let network = level;
  let manifest = await readManifest(level);
  if (rules) {
    const networks = Array.isArray(level.networks) && level.networks.length ? level.networks : [level];
    let why = null;
    network = null;
    for (const candidate of networks) {
      const theirs = candidate === level ? manifest : await readManifest(candidate);
      why = refusal(spaceOf(theirs), rules);
      if (why === null) {
        network = candidate;
        manifest = theirs;
        break;
      }
    }
    if (!network) throw new LevelsError(`the level ${name} has no network for these rules: ${why}`);
  } else if (levels.rules && refusal(spaceOf(manifest), levels.rules) !== null) {
    throw new ManifestError(`the level ${name}'s policy is for other rules than its ladder`);
  }
  const model = await read(network.model);
  const session = await loadPolicy(ort, model instanceof ArrayBuffer ? new Uint8Array(model) : model, manifest, sessionOptions);
  return { ...session, level };
}
