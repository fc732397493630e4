// The game session (hearts_app/session/match.py): a game of the engine (engine.js) with a person at
// seat 0 (HUMAN) and agents at the other seats, kept as an entry {id, game, opponents, events, hands}.
// It owns, for the JavaScript client, one action of the seat to act with the events it makes (step),
// the finished hands for the record, and why a card is refused: the reason code (refusalReason) and
// its one English wording (whyNot, refusal). The page words the codes in its player's language
// (clients/web/static: the catalogue's reason.<code>); the view of a game is view.js, the stored games
// games.js, the requests local_api.js.
import { HEARTS, QUEEN_OF_SPADES, SUIT_SYMBOLS_TEXT, cardSymbolText, cardText, parseCard, suitOf } from './cards.js';
import { act, cardPoints, isPointCard, nextHand } from './engine.js';
import { passDirection, passOffset } from './rules.js';

/** The person's seat. */
export const HUMAN = 0;

/** Card ids as card texts, sorted by suit (C, D, H, S) then rank. */
export const texts = (ids) => [...ids].sort((a, b) => a - b).map(cardText);
export const plays = (leader, cards, p) => cards.map((card, i) => ({ seat: (leader + i) % p, card: cardText(card) }));
export const offsetOf = (game) => passOffset(game.rules, game.handNumber);

/** The seats with the lowest total (view.py winners). */
export function winners(scores) {
  const low = Math.min(...scores);
  return scores.flatMap((s, seat) => (s === low ? [seat] : []));
}

/**
 * The rule that forbids the seat to act to take `card` now, as a reason code with the card or suit it
 * names ({code: 'follow_suit', suit: 'C'}), null when none is known (session/match.py refusal_reason).
 */
export function refusalReason(game, card, legal) {
  const seat = game.toAct;
  if (game.phase === 'over') return { code: 'game_over' };
  if (!game.hands[seat].includes(card)) return { code: 'not_held' }; // (the card asked for is not named back)
  if (game.phase === 'pass') return game.passed[seat].includes(card) ? { code: 'already_chosen', card: cardText(card) } : null;
  const trick = game.trick.cards;
  const firstTrick = game.tricks.length === 0;
  if (trick.length) {
    const led = suitOf(trick[0]);
    if (suitOf(card) !== led && legal.every((c) => suitOf(c) === led)) return { code: 'follow_suit', suit: 'CDHS'[led] };
    if (firstTrick && game.rules.first_trick_protection && isPointCard(card)) return { code: 'first_trick_points' };
    return null;
  }
  if (firstTrick && legal.length === 1) return { code: 'opens_first_trick', card: cardText(legal[0]) };
  if (suitOf(card) === HEARTS && !game.heartsBroken) return { code: 'hearts_not_broken' };
  if (card === QUEEN_OF_SPADES && game.rules.queen_waits_for_hearts && !game.heartsBroken) return { code: 'queen_waits' };
  return null;
}

/** refusalReason in English words, "" when none is known (session/match.py why_not). */
export function whyNot(game, card, legal) {
  const reason = refusalReason(game, card, legal);
  if (!reason) return '';
  const named = cardSymbolText(reason.card ? parseCard(reason.card) : card);
  return {
    game_over: 'the game is over',
    not_held: `you do not hold ${named}`,
    already_chosen: `you already chose ${named} to pass`,
    follow_suit: `you must follow suit (${SUIT_SYMBOLS_TEXT['CDHS'.indexOf(reason.suit)]})`,
    first_trick_points: 'no hearts and no Q♠ on the first trick',
    opens_first_trick: `${named} opens the first trick`,
    hearts_not_broken: 'hearts are not broken yet',
    queen_waits: 'Q♠ may not be led before hearts are broken',
  }[reason.code];
}

/** Why seat 0 may not take `card` now, as one sentence (games.py refusal): the detail of a refused card's answer. */
export function cardRefusal(game, card, legal) {
  const reason = whyNot(game, card, legal);
  if (reason.startsWith('you do not hold') || reason.startsWith('you already chose')) return reason;
  const text = cardSymbolText(card);
  const words = reason ? `: ${reason}` : '';
  return game.phase === 'pass' ? `${text} cannot be passed${words}` : `${text} cannot be played now${words}`;
}

/**
 * One action of the seat to act, as the page's events (view.py public_events of match.py's events):
 * other seats' pass picks are left out; a scored hand that does not end the game deals the next one
 * at once (`dealing(rules, handNumber)`: nextHand's options), as the Python engine does. `entry.hands`
 * gets every finished hand (for the record).
 */
export function step(entry, card, dealing) {
  const g = entry.game;
  const p = g.rules.num_players;
  const trickNumber = g.tricks.length;
  const brokenBefore = g.heartsBroken;
  const dealt = g.dealt.map((h) => texts(h));
  const dead = texts(g.dead);
  const happened = act(g, card);
  const out = [];
  if (happened.kind === 'pass') {
    const offset = offsetOf(g);
    if (happened.exchanged && offset !== 0) {
      out.push({ type: 'exchanged', passed: texts(g.passed[HUMAN]), received: texts(g.received[HUMAN]),
        to: (HUMAN + offset) % p, from: (((HUMAN - offset) % p) + p) % p });
    }
    return out;
  }
  out.push({ type: 'played', seat: happened.seat, card: cardText(happened.card), trick_number: trickNumber });
  if (g.heartsBroken && !brokenBefore && !happened.hand) {
    out.push({ type: 'hearts_broken', seat: happened.seat, card: cardText(happened.card) });
  }
  if (happened.trick) {
    const { leader, cards, winner } = happened.trick;
    out.push({ type: 'trick_won', trick_number: trickNumber, winner, points: cardPoints(cards), plays: plays(leader, cards, p) });
  }
  if (happened.hand) {
    const hand = happened.hand;
    const moon = hand.moon.indexOf(true);
    entry.hands.push({ hand_number: hand.handNumber, dealt, dead, actions: g.history.map(([s, c]) => [s, cardText(c)]),
      points: hand.points, moon: moon >= 0 ? moon : null });
    out.push({ type: 'hand_scored', hand_number: hand.handNumber, points: [...hand.points],
      card_points: g.taken.map(cardPoints), scores: [...hand.scores], tricks: g.taken.map((t) => t.length / p),
      moon: moon >= 0 ? moon : null });
    if (hand.gameOver) {
      out.push({ type: 'game_over', winner: hand.winner >= 0 ? hand.winner : winners(hand.scores), scores: [...hand.scores] });
    } else {
      nextHand(g, dealing(g.rules, g.handNumber + 1));
      const offset = offsetOf(g);
      out.push({ type: 'hand_started', hand_number: g.handNumber, pass_direction: passDirection(g.rules, g.handNumber),
        pass_to: offset ? (HUMAN + offset) % p : null });
    }
  }
  return out;
}
