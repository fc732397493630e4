// The one owner of the API's reason codes on the page: each code an answer carries is worded here,
// from the catalogue (i18n.js, `reason.<code>`), in the player's language. Two kinds:
// - a refused request (`REQUEST_CODES`, games.py REASON_CODES: a setup refused, a game not found, an
//   opponent that failed), worded by reasonWords for the ApiError's message (api.js);
// - a refused card (`CODES`: the view's `refused`, a 409's `reason`), worded by reasonText and, as a
//   sentence that names the card, refusalText (acting.js).
// A request's code outside REQUEST_CODES keeps the answer's English `detail`; a card's outside CODES
// is given no reason.

import { t } from "./i18n.js";
import { cardSymbol, SUITS } from "./cards_view.js";
import { agentName } from "./seats.js";
import { optionValueLabel } from "./setup.js";

// ---- a refused request ----------------------------------------------------------------------------

/** The codes of a refused request that the page words (the others keep their English `detail`). */
const REQUEST_CODES = new Set(["invalid_setup", "opponent_not_offered", "opponent_cannot_play", "no_such_game",
  "game_unreadable", "record_not_ready", "save_failed", "opponent_failed"]);

/** A refusal other than a card's (the answer's `reason`: games.py REASON_CODES) in the player's
 * language; "" when the answer has none (its English `detail` is shown then). */
export function reasonWords(data) {
  const reason = data && data.reason;
  if (!reason || !REQUEST_CODES.has(reason.code)) return "";
  const params = { name: agentName(String(reason.spec ?? "")), seat: reason.seat };
  if (reason.code === "opponent_cannot_play" && typeof reason.field === "string" && Array.isArray(reason.covers)) {
    // the option the network does not cover, its value here and the values it plays (JSON text each)
    const label = (text) => {
      try {
        return optionValueLabel(reason.field, JSON.parse(text));
      } catch {
        return String(text);
      }
    };
    const option = t(`option.${reason.field}`);
    if (option !== `option.${reason.field}`) {
      return t("reason.opponent_cannot_play_option", { ...params, option, value: label(reason.value),
        values: reason.covers.map(label).join(", ") });
    }
  }
  return t(`reason.${reason.code}`, params);
}

// ---- a refused card -------------------------------------------------------------------------------

/** The codes of a refused card. */
const CODES = new Set(["game_over", "not_your_turn", "not_held", "already_chosen", "follow_suit", "first_trick_points",
  "opens_first_trick", "hearts_not_broken", "queen_waits"]);

/** A refusal's reason code (the view's `refused`, a 409's `reason`) in words; "" for none known. */
function reasonText(card, reason) {
  if (!reason || !CODES.has(reason.code)) return "";
  return t(`reason.${reason.code}`, { card: cardSymbol(reason.card || card), suit: reason.suit ? SUITS[reason.suit].sym : "" });
}

/** A refused card, as a sentence that names it ("Q♠ cannot be played now: ..."). */
export function refusalText(card, verb, reason) {
  const code = reason && reason.code;
  if (code === "not_held" || code === "already_chosen") {
    const text = reasonText(card, reason);
    return text.charAt(0).toUpperCase() + text.slice(1);
  }
  return t(verb === "passed" ? "refuse.passed" : "refuse.played", { card: cardSymbol(card), why: reasonText(card, reason) });
}
