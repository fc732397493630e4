// The setup form: difficulty (the levels offered), players, target, moon, then Play; the rest under
// "More rules" (each option as the preset has it, or a value of its own) and each opponent's seat.
// renderSetup() fills it from the back end's options; setupBody() reads it as POST games takes it.

import { t } from "./i18n.js";
import { $, state } from "./app.js";
import { agentName, positionOf } from "./seats.js";

const LEVELS = ["easy", "normal", "hard", "strong"];
const MORE_RULES = ["pass_cycle", "first_trick_protection", "hearts_must_be_broken", "queen_breaks_hearts",
  "queen_waits_for_hearts", "jack_of_diamonds_bonus"];

/** An option's value in words: the setup's choices, and a refusal's values (reasons.js). */
export function optionValueLabel(key, value) {
  if (key === "moon") return t(`moon.${value}`);
  if (key === "pass_cycle") return value.map((d) => t(`direction.${d}`)).join(" → ");
  if (typeof value === "boolean") return t(value ? "option.on" : "option.off");
  return String(value);
}

function setupPreset() {
  const players = document.querySelector("input[name=players]:checked");
  return players && players.value === "2" ? "two_player" : "classic";
}

function presetRules(preset) {
  return (state.options.preset_rules || {})[preset] || {};
}

function agentsOf(preset) {
  const opts = state.options;
  return (opts.agents_by_preset && opts.agents_by_preset[preset]) || opts.agents;
}

/** The agent a difficulty names for a preset: its ladder level where offered, else the bot of that name. */
function levelSpec(level, preset) {
  const agents = agentsOf(preset);
  if (agents.includes(`level:${level}`)) return `level:${level}`;
  return level !== "strong" && agents.includes(level) ? level : null;
}

/** A group of radio buttons in `box` (its legend kept): `choices` of [value, label], `chosen` checked. */
function radios(box, name, choices, chosen) {
  for (const old of box.querySelectorAll("label")) old.remove();
  for (const [value, label] of choices) {
    const item = document.createElement("label");
    item.className = "choice";
    const input = document.createElement("input");
    input.type = "radio";
    input.name = name;
    input.value = String(value);
    input.checked = String(value) === String(chosen);
    const text = document.createElement("span");
    text.textContent = label;
    item.append(input, text);
    box.append(item);
  }
}

function checkedValue(name) {
  const input = document.querySelector(`input[name=${name}]:checked`);
  return input ? input.value : null;
}

/**
 * The opponents offered for a preset, as [spec, name]: the difficulty levels (Easy ... Strong) where
 * any is offered, else every player offered for it (a build with no ladder: its policies, Random).
 */
function opponentChoices(preset) {
  const levels = LEVELS.map((level) => [levelSpec(level, preset), t(`level.${level}`)]).filter(([spec]) => spec);
  return levels.length ? levels : agentsOf(preset).map((spec) => [spec, agentName(spec, true)]);
}

/** Everything of the setup that depends on the players (the preset): opponents, target, moon, options, seats. */
function renderChoices() {
  const preset = setupPreset();
  const rules = presetRules(preset);
  const choices = opponentChoices(preset);
  const specs = choices.map(([spec]) => spec);
  const was = checkedValue("level");
  const usual = [levelSpec("normal", preset), ...(state.options.default_opponents || [])].find((spec) => specs.includes(spec));
  radios($("level-choice"), "level", choices, specs.includes(was) ? was : usual || specs[0]);
  const targets = (state.options.options || {}).target_score || [50, 100, 150];
  const target = checkedValue("target") || rules.target_score || 100;
  radios($("target-choice"), "target", targets.map((n) => [n, t("setup.target.value", { n })]), target);
  const moon = $("moon");
  const moonWas = moon.value;
  moon.replaceChildren();
  for (const value of (state.options.options || {}).moon || []) {
    moon.append(Object.assign(document.createElement("option"), { value, textContent: t(`moon.${value}`) }));
  }
  moon.value = moonWas || rules.moon || "add_to_others";
  for (const select of document.querySelectorAll("select[data-rule]")) {
    const key = select.dataset.rule;
    const def = select.querySelector("option[data-preset-default]");
    def.textContent = key in rules ? t("option.preset_value", { value: optionValueLabel(key, rules[key]) }) : t("option.preset_default");
    for (const o of select.querySelectorAll("option:not([data-preset-default])")) {
      o.textContent = optionValueLabel(key, JSON.parse(o.value));
    }
  }
  renderOpponents(preset);
}

/** Each opponent seat's own choice (optional): "as chosen above", a difficulty, or any other offered player. */
function renderOpponents(preset) {
  const agents = agentsOf(preset);
  const n = presetRules(preset).num_players || (preset === "two_player" ? 2 : 4);
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  const levels = opponentChoices(preset).map(([spec]) => spec);
  const others = agents.filter((spec) => !levels.includes(spec));
  for (let seat = 1; seat < n; seat++) {
    const label = document.createElement("label");
    label.className = "field";
    label.append(`${t(`pos.${positionOf(seat, n)}`)} `);
    const select = document.createElement("select");
    select.name = `opponent-${seat}`;
    select.append(Object.assign(document.createElement("option"), { value: "", textContent: t("setup.same") }));
    for (const spec of levels) select.append(Object.assign(document.createElement("option"), { value: spec, textContent: agentName(spec, true) }));
    if (others.length) {
      const group = document.createElement("optgroup");
      group.label = t("setup.others");
      for (const spec of others) group.append(Object.assign(document.createElement("option"), { value: spec, textContent: agentName(spec, true) }));
      select.append(group);
    }
    if (agents.includes(previous[seat - 1])) select.value = previous[seat - 1];
    label.append(select);
    box.append(label);
  }
}

export function renderSetup() {
  const opts = state.options;
  const box = $("rule-options");
  if (!box.children.length) {
    radios($("players-choice"), "players", [[4, t("setup.players.4")], [2, t("setup.players.2")]], 4);
    $("players-choice").addEventListener("change", renderChoices);
    for (const key of MORE_RULES) {
      const values = (opts.options || {})[key];
      if (!values) continue;
      const label = document.createElement("label");
      label.className = "field";
      const name = document.createElement("span");
      name.dataset.i18n = `option.${key}`;
      name.textContent = t(`option.${key}`);
      const select = document.createElement("select");
      select.name = `rule-${key}`;
      select.dataset.rule = key;
      const def = document.createElement("option");
      def.value = "";
      def.dataset.presetDefault = "1";
      select.append(def);
      for (const value of values) select.append(Object.assign(document.createElement("option"), { value: JSON.stringify(value) }));
      label.append(name, " ", select);
      box.append(label);
    }
  } else {
    for (const label of $("players-choice").querySelectorAll("label span")) {
      label.textContent = t(label.previousElementSibling.value === "2" ? "setup.players.2" : "setup.players.4");
    }
  }
  renderChoices();
}

/** The game the setup describes, as POST games takes it. */
export function setupBody() {
  const preset = setupPreset();
  const rules = {};
  const presetValues = presetRules(preset);
  const target = Number(checkedValue("target"));
  if (target && target !== presetValues.target_score) rules.target_score = target;
  if ($("moon").value && $("moon").value !== presetValues.moon) rules.moon = $("moon").value;
  for (const select of document.querySelectorAll("select[data-rule]")) {
    if (select.value !== "") rules[select.dataset.rule] = JSON.parse(select.value);
  }
  const everyone = checkedValue("level");
  const opponents = [...$("opponents").querySelectorAll("select")].map((s) => s.value || everyone);
  return { preset, rules, opponents };
}
