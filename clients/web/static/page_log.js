// What the page says as the game goes: the game's log (the lines shown, kept in localStorage per game
// with which events were seen, so a reload replays none), the message line (an error, a refusal),
// and the announcements for a screen reader. Also the page's localStorage helpers.

import { $, state } from "./app.js";

const LOG_KEEP = 400; // lines kept per game
const LOG_GAMES = 8; // games whose logs are kept

export function storageGet(key) {
  try {
    return JSON.parse(localStorage.getItem(key));
  } catch {
    return null;
  }
}

export function storageSet(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or refused: the log is simply not kept
  }
}

function logLine(text, kind = "") {
  const li = document.createElement("li");
  li.textContent = text;
  if (kind) li.className = `ev-${kind}`;
  const list = $("log");
  list.append(li);
  while (list.children.length > LOG_KEEP) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

export function log(text, kind = "") {
  logLine(text, kind);
  const id = state.view && state.view.id;
  if (!id) return;
  const entries = storageGet(`hearts-log:${id}`) || [];
  entries.push([kind, text]);
  storageSet(`hearts-log:${id}`, entries.slice(-LOG_KEEP));
  const games = (storageGet("hearts-log-games") || []).filter((g) => g !== id);
  games.unshift(id);
  for (const old of games.slice(LOG_GAMES)) localStorage.removeItem(`hearts-log:${old}`);
  storageSet("hearts-log-games", games.slice(0, LOG_GAMES));
}

export function restoreLog(id) {
  $("log").replaceChildren();
  for (const [kind, text] of storageGet(`hearts-log:${id}`) || []) logLine(text, kind);
}

/** Which events of an answer the player has seen: a reload replays none, and logs only the unseen. */
export function answerSignature(view) {
  return `${view.hand_number}/${view.trick_number}/${view.to_act}/${view.phase}/${JSON.stringify(view.events || [])}`;
}

export function markSeen(view, count) {
  storageSet(`hearts-seen:${view.id}`, { sig: answerSignature(view), count });
}

export function showMessage(text, kind = "error") {
  const el = $("message");
  el.textContent = text;
  el.className = `message ${kind}`;
}

export function clearMessage() {
  $("message").textContent = "";
  $("message").className = "message";
}

/** Say it to a screen reader (a polite live region): each card played, each trick taken, your turn. */
export function announce(text) {
  const el = $("announce");
  el.textContent = "";
  el.textContent = text;
}
