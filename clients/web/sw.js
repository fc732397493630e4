// The static build's service worker: the game plays with the network cut once it has been loaded.
// At install it stores the files the build lists in offline.json (the page, its scripts, config.json,
// models.json); every other file of this site it fetches (an opponent's model, the first time a game
// seats it) is stored as it passes, so that model plays offline from then on. Answers come from the
// network when it is there (a new build is picked up), else from the store.
const LIST = new URL('offline.json', self.registration.scope);

async function storeName() {
  const list = await (await caches.match(LIST) || await fetch(LIST)).clone().json();
  return `hearts-lab-${list.version}`;
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const response = await fetch(LIST, { cache: 'no-store' });
    const list = await response.clone().json();
    const store = await caches.open(`hearts-lab-${list.version}`);
    await store.addAll(list.files.map((file) => new URL(file, self.registration.scope)));
    await store.put(LIST, response);
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    const keep = await storeName();
    for (const name of await caches.keys()) if (name.startsWith('hearts-lab-') && name !== keep) await caches.delete(name);
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const store = await caches.open(await storeName());
    try {
      const response = await fetch(request);
      if (response.ok) await store.put(request, response.clone());
      return response;
    } catch (err) {
      const stored = await store.match(request, { ignoreSearch: true });
      if (stored) return stored;
      throw err;
    }
  })());
});
