// The page's start: config.json beside index.html says which back end answers its api/v1 requests.
// `hearts serve` answers {"backend": "http"}: the game server, by fetch(). The static build
// (`hearts export --web`, export/web.py) writes {"backend": "local", "models": ...}: the browser's own
// (clients/js/src/local_api.js, copied to static/js/), its opponents the exported policies, run in
// plain JavaScript (plain_runtime.js: no 14 MB of WebAssembly to download). The page (app.js and the
// modules it imports) is the same either way.
import { startPage } from './app.js';
import { t } from './i18n.js';

const configUrl = new URL('../config.json', import.meta.url);

async function backendOf(config) {
  if (config.backend === 'http') return { fetch: (path, init) => fetch(path, init) };
  if (config.backend === 'local') {
    // Installable, and playable offline once loaded: the build's service worker keeps what it fetched.
    navigator.serviceWorker?.register(new URL('../sw.js', import.meta.url)).catch(() => {});
    const [{ plainRuntime }, { localBackend }] = await Promise.all([import('./js/plain_runtime.js'), import('./js/local_api.js')]);
    return localBackend(plainRuntime, { models: new URL(config.models, configUrl) });
  }
  throw new Error(`config.json names no back end this page knows (http or local): ${JSON.stringify(config.backend)}`);
}

try {
  const response = await fetch(configUrl);
  if (!response.ok) throw new Error(`cannot fetch ${configUrl}: HTTP ${response.status}`);
  await startPage(await backendOf(await response.json()));
} catch (err) {
  const note = document.createElement('p');
  note.setAttribute('role', 'alert');
  note.textContent = t('error.start', { why: err.message ?? err });
  document.body.prepend(note);
  throw err;
}
