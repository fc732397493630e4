// The demo page: load an exported policy with onnxruntime-web and show its pick for a seat record.
import * as ort from '../node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';
import { cardText, chooseCard, loadPolicy, parseCard } from '../src/hearts.js';

// Single-threaded WebAssembly: no cross-origin isolation needed, works from any static server.
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = new URL('../node_modules/onnxruntime-web/dist/', import.meta.url).href;

const params = new URLSearchParams(location.search);
const fixtures = new URL('../test/fixtures/', import.meta.url);
const modelUrl = new URL(params.get('model') ?? 'policy.onnx', params.get('model') ? location.href : fixtures);
const manifestUrl = new URL(params.get('manifest') ?? 'policy.json', params.get('manifest') ? location.href : fixtures);
const recordUrl = new URL(params.get('record') ?? 'sample_record.json', params.get('record') ? location.href : fixtures);

const $ = (id) => document.getElementById(id);
const SYMBOLS = { C: '♣', D: '♦', H: '♥', S: '♠' };

function cardElement(card, extra = '') {
  const text = cardText(card);
  const el = document.createElement('span');
  el.className = `card ${'DH'.includes(text[1]) ? 'red' : ''} ${extra}`;
  el.textContent = `${text[0] === 'T' ? '10' : text[0]}${SYMBOLS[text[1]]}`;
  el.dataset.card = text;
  return el;
}

function setStatus(message, error = false) {
  $('status').textContent = message;
  $('status').className = error ? 'error' : '';
}

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  return response.json();
}

let session = null;

async function show(record) {
  const choice = await chooseCard(session, record);
  $('seat').textContent = String(record.seat);
  const hand = $('hand');
  hand.replaceChildren();
  for (const card of record.hand.map(parseCard).sort((a, b) => a - b)) {
    const el = cardElement(card, choice.mask[card] ? '' : 'illegal');
    if (card === choice.action) el.classList.add('pick');
    const p = document.createElement('span');
    p.className = 'prob';
    p.textContent = choice.mask[card] ? `${(100 * choice.probabilities[card]).toFixed(1)}%` : 'illegal';
    el.append(p);
    hand.append(el);
  }
  const trick = $('trick');
  trick.replaceChildren();
  const cards = record.trick?.cards ?? [];
  if (!cards.length) trick.textContent = record.phase === 'pass' ? '(passing)' : '(seat leads)';
  const players = record.rules.num_players;
  cards.map(parseCard).forEach((card, i) => {
    const el = cardElement(card);
    const who = document.createElement('span');
    who.className = 'prob';
    who.textContent = `seat ${(record.trick.leader + i) % players}`;
    el.append(who);
    trick.append(el);
  });
  $('pick').replaceChildren(cardElement(choice.action, 'pick'));
  const result = { action: choice.action, card: choice.card, probabilities: Array.from(choice.probabilities) };
  $('result').textContent = JSON.stringify(result);
  $('result').dataset.status = 'done';
  setStatus(`policy: ${manifestUrl.pathname} (rules '${session.manifest.rules.name}', observation v${session.manifest.observation.version})`);
}

function fail(err) {
  setStatus(String(err.message ?? err), true);
  $('result').textContent = JSON.stringify({ error: String(err.message ?? err) });
  $('result').dataset.status = 'error';
}

// With ?golden=URL the page also runs every record of a golden.json (python -m export.fixtures) and
// writes the picks into #golden-result: the browser parity check of tests/test_export.py.
async function runGolden(url) {
  const golden = await fetchJson(url);
  const picks = [];
  for (const c of golden.cases) {
    const choice = await chooseCard(session, c.record);
    picks.push({ action: choice.action, probabilities: Array.from(choice.probabilities) });
  }
  const out = document.createElement('pre');
  out.id = 'golden-result';
  out.hidden = true;
  out.textContent = JSON.stringify(picks);
  document.body.append(out);
}

async function main() {
  const [manifest, record] = await Promise.all([fetchJson(manifestUrl), fetchJson(recordUrl)]);
  session = await loadPolicy(ort, modelUrl, manifest);
  $('record-text').value = JSON.stringify(record, null, 1);
  if (params.get('golden')) await runGolden(new URL(params.get('golden'), location.href));
  await show(record);
}

$('choose').addEventListener('click', () => {
  let record;
  try {
    record = JSON.parse($('record-text').value);
  } catch (err) {
    fail(err);
    return;
  }
  show(record).catch(fail);
});

main().catch(fail);
