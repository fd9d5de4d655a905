// api.js: the console's only way to the server, the public HTTP API
// (docs/server.md). The bearer token lives in sessionStorage, so it is
// gone when the tab closes and is never written to a cookie or the URL.

const TOKEN_KEY = 'omnigraph.console.token';

// ApiError is a non-2xx answer: status and the ErrorOutput body.
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.error) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

export class Api {
  constructor(base = '') {
    this.base = base;
    this.graph = '';
  }

  get token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
  set token(t) {
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
  }

  // request sends one request; query is an object of query parameters
  // (arrays repeat the key), body is JSON-encoded.
  async request(method, path, { query, body } = {}) {
    let url = this.base + path;
    if (query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null || v === '') continue;
        for (const x of Array.isArray(v) ? v : [v]) q.append(k, String(x));
      }
      const s = q.toString();
      if (s) url += '?' + s;
    }
    const headers = { Accept: 'application/json' };
    if (this.token) headers.Authorization = 'Bearer ' + this.token;
    const init = { method, headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(url, init);
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = { error: text }; }
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }

  g(path) { return `/graphs/${encodeURIComponent(this.graph)}${path}`; }

  health() { return this.request('GET', '/healthz'); }
  graphs() { return this.request('GET', '/graphs'); }
  branches() { return this.request('GET', this.g('/branches')); }
  schema() { return this.request('GET', this.g('/schema')); }
  snapshot(branch) { return this.request('GET', this.g('/snapshot'), { query: { branch } }); }
  storedQueries() { return this.request('GET', this.g('/queries')); }
  query(body) { return this.request('POST', this.g('/query'), { body }); }
  mutate(body) { return this.request('POST', this.g('/mutate'), { body }); }
  invoke(name, body) { return this.request('POST', this.g('/queries/' + encodeURIComponent(name)), { body }); }
  commits(branch) { return this.request('GET', this.g('/commits'), { query: { branch } }); }
  commitChanges(id, pageToken) { return this.request('GET', this.g(`/commits/${encodeURIComponent(id)}/changes`), { query: { limit: 200, page_token: pageToken } }); }
  // from and to are branch names (POST /diff also takes {snapshot: REV}).
  diff(from, to) { return this.request('POST', this.g('/diff'), { body: { from: { branch: from }, to: { branch: to } } }); }
  mergePreview(source, target) { return this.request('GET', this.g('/branches/merge/preview'), { query: { source, target } }); }
  merge(source, target) { return this.request('POST', this.g('/branches/merge'), { body: { source, target } }); }
}
