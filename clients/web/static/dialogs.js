// The dialogs: the hand's summary after each hand (points, the moon, who leads) and the game over
// (the winner, the last hand, the score sheet).

import { t } from "./i18n.js";
import { $, setPageState } from "./app.js";
import { playerName, shortName, winnerText } from "./seats.js";
import { sheetTable } from "./table.js";

export function openDialog(dialog) {
  if (!dialog.open) dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
}

export function moonText(view, seat) {
  return seat === 0 ? t("moon.you") : t("moon.other", { who: playerName(view, seat) });
}

function pointsTable(view, points, scores) {
  const table = document.createElement("table");
  table.className = "points-table";
  const head = document.createElement("tr");
  for (const key of ["scores.player", "scores.hand", "scores.total"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = t(key);
    head.append(th);
  }
  table.createTHead().append(head);
  const tbody = document.createElement("tbody");
  for (const p of view.players) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = playerName(view, p.seat);
    const pts = document.createElement("td");
    pts.textContent = points ? points[p.seat] : "";
    const tot = document.createElement("td");
    tot.textContent = scores[p.seat];
    tr.append(th, pts, tot);
    tbody.append(tr);
  }
  table.append(tbody);
  return table;
}

/** The hand's summary as a dialog; resolves when the player closes it ("Next hand"). */
export function showSummary(view, event) {
  const body = $("summary-body");
  body.replaceChildren();
  $("summary-title").textContent = t("summary.title", { hand: event.hand_number + 1 });
  if (event.moon !== null && event.moon !== undefined) {
    const moon = document.createElement("p");
    moon.className = "moon";
    moon.textContent = moonText(view, event.moon);
    body.append(moon);
  }
  body.append(pointsTable(view, event.points, event.scores));
  const low = Math.min(...event.scores);
  const leaders = view.players.filter((p) => event.scores[p.seat] === low).map((p) => shortName(view, p.seat));
  const lead = document.createElement("p");
  const target = view.rules.target_score;
  const reached = view.players.filter((p) => event.scores[p.seat] >= target).map((p) => shortName(view, p.seat));
  lead.className = reached.length && leaders.length > 1 ? "tie" : "";
  lead.textContent = reached.length && leaders.length > 1 // the target is reached, but the lowest total is shared
    ? t("summary.tie", { names: reached.join(t("and")), score: low, target })
    : t("summary.lowest", { names: leaders.join(t("and")), low, target });
  body.append(lead);
  setPageState("dialog");
  const closed = openDialog($("summary"));
  $("summary-next").focus();
  return closed;
}

export function showGameOver(view, lastHand = null) {
  const over = view.game_over;
  if (!over) return;
  const scores = over.scores || view.scores;
  $("gameover-text").textContent = t("over.final", { winner: winnerText(view, over.winner) });
  const body = $("gameover-body");
  body.replaceChildren();
  if (lastHand && lastHand.moon !== null && lastHand.moon !== undefined) {
    const moon = document.createElement("p");
    moon.className = "moon";
    moon.textContent = t("moon.last_hand", { text: moonText(view, lastHand.moon) });
    body.append(moon);
  }
  body.append(pointsTable(view, lastHand ? lastHand.points : null, scores));
  const sheet = document.createElement("div");
  sheet.className = "sheet";
  const title = document.createElement("h3");
  title.textContent = t("sheet.title");
  sheet.append(title, sheetTable(view));
  body.append(sheet);
  openDialog($("gameover"));
  $("new-game").focus();
}
