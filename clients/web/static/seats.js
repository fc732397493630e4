// Seats and names: how many players, where each seat sits at the table (south is you), and the
// names the page gives them ("You", "West (Normal)", a level or a bot by its spec), the winners, and
// whom a pass goes to.

import { t } from "./i18n.js";

export function numPlayers(view) {
  return (view && view.rules && view.rules.num_players) || (view ? view.players.length : 4);
}

export function positionOf(seat, n) {
  if (n === 2) return seat === 0 ? "south" : "north";
  return ["south", "west", "north", "east"][seat % 4];
}

/**
 * A player's name as players read it: "Easy" for level:easy and, in play, for the bot easy too; the
 * setup's seat-by-seat list (`setup`) tells the bot apart: "Easy (rules bot)".
 */
export function agentName(spec, setup = false) {
  const level = /^level:(easy|normal|hard|strong)$/.exec(spec);
  if (level) return t(`level.${level[1]}`);
  if (["easy", "normal", "hard"].includes(spec)) return t(setup ? `bot.${spec}` : `level.${spec}`);
  if (spec === "random") return t("random");
  return spec;
}

function posName(view, seat) {
  return t(`pos.${positionOf(seat, numPlayers(view))}`);
}

export function playerName(view, seat) {
  if (seat === 0) return t("you");
  const p = view.players.find((x) => x.seat === seat);
  return t("player.named", { pos: posName(view, seat), name: p ? agentName(p.name) : String(seat) });
}

export function shortName(view, seat) {
  return seat === 0 ? t("you") : posName(view, seat);
}

export function winnerText(view, winner) {
  if (winner === null || winner === undefined) return t("win.none");
  const seats = Array.isArray(winner) ? winner : [winner];
  const names = seats.map((s) => playerName(view, s));
  if (seats.length === 1) return seats[0] === 0 ? t("win.you") : t("win.one", { who: names[0] });
  return t("win.shared", { names: names.join(t("and")) });
}

/** Whom a pass goes to, by name ("" when nobody). */
export function passTo(view, to) {
  return to === null || to === undefined ? "" : shortName(view, to);
}
