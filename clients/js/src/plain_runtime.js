// A runtime in plain JavaScript for the exported policies that are multilayer perceptrons (every
// network the project ships: PolicyNet without a card scorer), for a page that should not download
// onnxruntime-web's 14 MB of WebAssembly. It reads the .onnx file itself (the protobuf fields of the
// graph's nodes and weights), checks that the graph is the exporter's (export/model.py: Gemm layers
// with ReLU between them, the illegal cards' logits masked, softmax and argmax, no card for a row
// with no legal card) and computes what onnxruntime computes, in float32 layer by layer.
//
// It has the shape of the part of onnxruntime that hearts.js uses, so it goes where `ort` goes:
//
//   import { plainRuntime } from './plain_runtime.js';
//   const session = await loadPolicy(plainRuntime, modelUrl, manifest);   // hearts.js, unchanged
//   const { action, card, probabilities } = await chooseCard(session, record);
//
// The golden vectors prove it equal to Python's onnxruntime (clients/js/test/plain_runtime.test.js:
// the same card for every golden record, probabilities within 1e-5).

/** The operators of the exporter's graph; any other means a network this runtime does not read. */
const GRAPH_OPS = new Set(['Gemm', 'Relu', 'Shape', 'Expand', 'Where', 'Cast', 'Greater', 'Unsqueeze', 'ReduceSum',
  'Softmax', 'ArgMax', 'Constant']);
const FLOAT = 1; // TensorProto.DataType.FLOAT
const NO_ACTION = -1;
const MASKED_LOGIT = -1e9; // agents/policy.py MASKED_LOGIT

/** A model this runtime cannot read: one line naming what it found. */
export class PlainRuntimeError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PlainRuntimeError';
  }
}

// ---- the protobuf wire format (what ONNX files are) -------------------------------------------

function varint(bytes, at) {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (at >= bytes.length) throw new PlainRuntimeError('the model file ends inside a number: it is cut short');
    const byte = bytes[at++];
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, at];
    scale *= 128;
  }
}

/** The fields of a message in bytes[start, end): {field, wire, value} or {field, wire, start, end}. */
function fields(bytes, start = 0, end = bytes.length) {
  const out = [];
  let at = start;
  while (at < end) {
    let key;
    [key, at] = varint(bytes, at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) {
      let value;
      [value, at] = varint(bytes, at);
      out.push({ field, wire, value });
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      out.push({ field, wire, start: at, end: at + size });
      at += size;
    } else if (wire === 2) {
      let size;
      [size, at] = varint(bytes, at);
      out.push({ field, wire, start: at, end: at + size });
      at += size;
    } else {
      throw new PlainRuntimeError(`the model file is not an ONNX file this runtime reads (protobuf wire type ${wire})`);
    }
    if (at > end) throw new PlainRuntimeError('the model file is cut short');
  }
  return out;
}

const text = (bytes, f) => new TextDecoder().decode(bytes.subarray(f.start, f.end));

function attribute(bytes, f) {
  const a = { name: '', f: null, i: null };
  for (const g of fields(bytes, f.start, f.end)) {
    if (g.field === 1) a.name = text(bytes, g);
    else if (g.field === 2) a.f = new DataView(bytes.buffer, bytes.byteOffset + g.start, 4).getFloat32(0, true);
    else if (g.field === 3) a.i = g.value;
  }
  return a;
}

function node(bytes, f) {
  const n = { op: '', inputs: [], outputs: [], attributes: {} };
  for (const g of fields(bytes, f.start, f.end)) {
    if (g.field === 1) n.inputs.push(text(bytes, g));
    else if (g.field === 2) n.outputs.push(text(bytes, g));
    else if (g.field === 4) n.op = text(bytes, g);
    else if (g.field === 5) {
      const a = attribute(bytes, g);
      n.attributes[a.name] = a;
    }
  }
  return n;
}

function tensor(bytes, f) {
  const t = { name: '', dims: [], type: 0, data: null };
  const floats = [];
  for (const g of fields(bytes, f.start, f.end)) {
    if (g.field === 1) {
      if (g.wire === 0) t.dims.push(g.value);
      else for (let at = g.start; at < g.end;) { let d; [d, at] = varint(bytes, at); t.dims.push(d); }
    } else if (g.field === 2) t.type = g.value;
    else if (g.field === 8) t.name = text(bytes, g);
    else if (g.field === 9) t.raw = bytes.subarray(g.start, g.end);
    else if (g.field === 4 && g.wire === 2) floats.push(bytes.subarray(g.start, g.end));
  }
  if (t.type === FLOAT) {
    const size = t.dims.reduce((a, b) => a * b, 1);
    const source = t.raw ?? (floats.length ? floats[0] : new Uint8Array(0));
    if (source.length !== size * 4) throw new PlainRuntimeError(`weights ${t.name}: ${source.length} bytes for ${size} floats`);
    const view = new DataView(source.buffer, source.byteOffset, source.length);
    t.data = new Float32Array(size);
    for (let i = 0; i < size; i++) t.data[i] = view.getFloat32(i * 4, true);
  }
  return t;
}

/** The graph of an ONNX model: its nodes, its weights by name, its inputs' and outputs' names. */
export function readGraph(bytes) {
  const model = fields(bytes).find((f) => f.field === 7 && f.wire === 2);
  if (!model) throw new PlainRuntimeError('the model file holds no graph: it is not an ONNX model');
  const graph = { nodes: [], weights: new Map(), inputs: [], outputs: [] };
  for (const f of fields(bytes, model.start, model.end)) {
    if (f.field === 1 && f.wire === 2) graph.nodes.push(node(bytes, f));
    else if (f.field === 5 && f.wire === 2) {
      const t = tensor(bytes, f);
      graph.weights.set(t.name, t);
    } else if ((f.field === 11 || f.field === 12) && f.wire === 2) {
      const name = fields(bytes, f.start, f.end).find((g) => g.field === 1);
      (f.field === 11 ? graph.inputs : graph.outputs).push(name ? text(bytes, name) : '');
    }
  }
  return graph;
}

// ---- the perceptron in the graph -----------------------------------------------------------------

/** The layers of the exporter's graph, from the observation to the 52 logits: [{weight, bias, rows, cols, relu}]. */
export function perceptron(graph) {
  const odd = graph.nodes.find((n) => !GRAPH_OPS.has(n.op));
  if (odd) throw new PlainRuntimeError(`this runtime reads plain perceptrons; the model uses the operator ${odd.op}`);
  if (!graph.inputs.includes('observation') || !graph.inputs.includes('action_mask')
      || !graph.outputs.includes('action') || !graph.outputs.includes('probabilities')) {
    throw new PlainRuntimeError('the model is not an exported policy (inputs observation and action_mask, outputs action and probabilities)');
  }
  const layers = [];
  let current = 'observation';
  for (;;) {
    const gemm = graph.nodes.find((n) => n.op === 'Gemm' && n.inputs[0] === current);
    if (!gemm) break;
    const weight = graph.weights.get(gemm.inputs[1]);
    const given = gemm.inputs[2] ? graph.weights.get(gemm.inputs[2]) : null; // (a layer may have no bias)
    const at = gemm.attributes;
    const transB = at.transB?.i ?? 0;
    if (!weight?.data || weight.dims.length !== 2 || (gemm.inputs[2] && !given?.data) || (at.transA?.i ?? 0) !== 0
        || (at.alpha?.f ?? 1) !== 1 || (at.beta?.f ?? 1) !== 1) {
      throw new PlainRuntimeError('a layer of the model is not weight · x + bias');
    }
    const [rows, cols] = transB ? weight.dims : [weight.dims[1], weight.dims[0]];
    const bias = given ? given.data : new Float32Array(rows);
    if (bias.length !== rows) throw new PlainRuntimeError('a layer\'s bias does not match its weights');
    // weights stored as [rows][cols] (out by in): transposed here when the file has them in by out
    let w = weight.data;
    if (!transB) {
      w = new Float32Array(rows * cols);
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) w[r * cols + c] = weight.data[c * rows + r];
    }
    const relu = graph.nodes.find((n) => n.op === 'Relu' && n.inputs[0] === gemm.outputs[0]);
    layers.push({ weight: w, bias, rows, cols, relu: !!relu });
    current = relu ? relu.outputs[0] : gemm.outputs[0];
  }
  if (!layers.length || layers[layers.length - 1].rows !== 52 || layers[layers.length - 1].relu
      || layers.slice(0, -1).some((l) => !l.relu) || layers.some((l, i) => i && l.cols !== layers[i - 1].rows)) {
    throw new PlainRuntimeError('the model is not a chain of layers from the observation to 52 logits');
  }
  return layers;
}

/** One row: the 52 masked logits' softmax and its argmax, as export/model.py's ExportedPolicy. */
function decide(layers, observation, mask, probabilities) {
  let x = observation;
  for (const { weight, bias, rows, cols, relu } of layers) {
    const y = new Float32Array(rows);
    for (let r = 0; r < rows; r++) {
      let sum = bias[r];
      const base = r * cols;
      for (let c = 0; c < cols; c++) sum += weight[base + c] * x[c];
      y[r] = relu && sum < 0 ? 0 : sum;
    }
    x = y;
  }
  let best = NO_ACTION;
  let top = -Infinity;
  for (let a = 0; a < 52; a++) {
    if (!mask[a]) x[a] = MASKED_LOGIT;
    if (x[a] > top) {
      top = x[a];
      best = a;
    }
  }
  if (!mask.some(Boolean)) {
    probabilities.fill(0);
    return NO_ACTION;
  }
  let total = 0;
  for (let a = 0; a < 52; a++) total += (probabilities[a] = Math.exp(x[a] - top));
  for (let a = 0; a < 52; a++) probabilities[a] /= total;
  return best;
}

/** A tensor, as onnxruntime's (the part hearts.js uses). */
export class Tensor {
  constructor(type, data, dims) {
    this.type = type;
    this.data = data;
    this.dims = dims;
  }
}

class Session {
  constructor(layers) {
    this.layers = layers;
    this.inputMetadata = [{ name: 'observation', shape: ['batch', layers[0].cols] }];
  }

  async run({ observation, action_mask: actionMask }) {
    const width = this.layers[0].cols;
    const n = observation.dims[0];
    const actions = new Int32Array(n);
    const probabilities = new Float32Array(n * 52);
    for (let i = 0; i < n; i++) {
      actions[i] = decide(this.layers, observation.data.subarray(i * width, (i + 1) * width),
        actionMask.data.subarray(i * 52, (i + 1) * 52), probabilities.subarray(i * 52, (i + 1) * 52));
    }
    return { action: new Tensor('int32', actions, [n]), probabilities: new Tensor('float32', probabilities, [n, 52]) };
  }
}

/** The runtime: onnxruntime's InferenceSession.create and Tensor, for the exported perceptrons. */
export const plainRuntime = Object.freeze({
  InferenceSession: {
    async create(bytes) {
      return new Session(perceptron(readGraph(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))));
    },
  },
  Tensor,
  env: { wasm: {} },
});
