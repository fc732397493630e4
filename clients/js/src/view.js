// What seat 0 ("you") may see of a game (hearts_app/serve/view.py): the JSON the page gets, built
// field by field as view.py builds it: its own hand and legal cards, why each other card is refused,
// the cards it chose to pass and received, the cards on the table, the tricks' winners and points, the
// scores; of the exchange only seat 0's cards, no other seat's pass picks.
import { cardText } from './cards.js';
import { cardPoints, legalActions } from './engine.js';
import { handSize, passDirection } from './rules.js';
import { HUMAN, offsetOf, plays, refusalReason, texts, winners } from './match.js';

/** The page's picture of a stored game (match.js's entry): only what seat 0 may know (view.py view). */
export function view(entry) {
  const { id, game: g, opponents, events } = entry;
  const p = g.rules.num_players;
  const over = g.phase === 'over';
  const passing = g.phase === 'pass';
  const yourTurn = !over && g.toAct === HUMAN;
  const trickNumber = g.tricks.length;
  let lastTrick = null;
  if ((trickNumber > 0 || over) && g.tricks.length) {
    const t = g.tricks[g.tricks.length - 1];
    lastTrick = { plays: plays(t.leader, t.cards, p), winner: t.winner, points: cardPoints(t.cards) };
  }
  const direction = passDirection(g.rules, g.handNumber);
  let pass = null;
  if (passing) {
    const chosen = g.passed[HUMAN];
    pass = { direction, to: (HUMAN + offsetOf(g)) % p, picks_left: g.rules.pass_count - chosen.length, chosen: texts(chosen) };
  }
  const received = !over && !passing && offsetOf(g) !== 0 ? g.received[HUMAN] : [];
  const winner = g.winner >= 0 ? g.winner : winners(g.scores);
  const legal = yourTurn ? legalActions(g) : [];
  // Why each card of the hand that may not be taken now may not: the page refuses it before any request.
  const refused = {};
  if (yourTurn) {
    for (const card of [...g.hands[HUMAN]].sort((a, b) => a - b)) {
      const reason = legal.includes(card) ? null : refusalReason(g, card, legal);
      if (reason) refused[cardText(card)] = reason;
    }
  }
  return {
    id,
    rules: structuredClone(g.rules),
    hand_size: handSize(g.rules),
    players: [{ seat: 0, name: 'You' }, ...opponents.map((name, i) => ({ seat: i + 1, name }))],
    phase: over ? 'over' : (passing ? 'pass' : 'play'),
    hand_number: g.handNumber,
    trick_number: trickNumber,
    pass_direction: direction,
    to_act: over ? -1 : g.toAct,
    your_turn: yourTurn,
    hand: over ? [] : texts(g.hands[HUMAN]),
    legal: texts(legal),
    refused,
    pass,
    received: received.length ? texts(received) : null,
    trick: over ? [] : plays(g.trick.leader, g.trick.cards, p),
    last_trick: lastTrick,
    hearts_broken: g.heartsBroken,
    scores: [...g.scores],
    hand_points: over ? new Array(p).fill(0) : g.taken.map(cardPoints),
    score_sheet: entry.hands.map((h) => ({ hand_number: h.hand_number, points: [...h.points], moon: h.moon })),
    events: structuredClone(events),
    game_over: over ? { winner, scores: [...g.scores] } : null,
  };
}
