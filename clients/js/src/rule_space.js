// Rule spaces: the rule sets an exported policy covers, field by field (hearts_env/rule_space.py).
// A manifest's "rule_space" is {fields: {option: [values]}, held_out: [...]}: a rule set is covered
// when each of its options is one of that field's values. A manifest without one covers exactly its
// "rules". The refusal names the first option outside the space and the values it covers, in the
// words Python uses (RuleSpace.refusal), so an app, the page and the server say the same.

/** A field's value as the refusals write it: compact JSON (50, "off", ["left","right"]). */
export const valueText = (value) => JSON.stringify(value);

/** The space a manifest declares (rule_space), else the point space of its rules (every field its one value). */
export function spaceOf(manifest) {
  if (manifest.rule_space) return manifest.rule_space;
  const fields = {};
  for (const [key, value] of Object.entries(manifest.rules)) if (key !== 'name') fields[key] = [value];
  return { fields, held_out: [] };
}

/**
 * Null when `space` covers `rules` (a complete rules object, as Rules.to_dict() writes it); else one
 * line naming the first option outside it and the values covered.
 */
export function refusal(space, rules) {
  for (const [field, values] of Object.entries(space.fields)) {
    const allowed = values.map(valueText);
    const got = valueText(rules[field] ?? null);
    if (!allowed.includes(got)) return `${field} ${got} is not among the values it covers: ${allowed.join(', ')}`;
  }
  return null;
}

/**
 * The option `refusal` names, read back from the end of `line` (an error that quotes it):
 * {field, value, covers: [values]} as text, for a page to word in its own language; null when none.
 */
export function refusalParts(line) {
  const found = /(\w+) (\S+) is not among the values it covers: (.+)$/.exec(line);
  return found ? { field: found[1], value: found[2], covers: found[3].split(', ') } : null;
}

/** Whether `space` covers `rules`. */
export const covers = (space, rules) => refusal(space, rules) === null;
