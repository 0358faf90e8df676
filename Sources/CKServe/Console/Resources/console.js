'use strict';
// ck console: one page over ck serve's Web Services (/console/ws/…) and the console API
// (/console/api/…). Everything a record holds is put on the page as text (textContent), never
// as HTML. Docs/console.md describes each view and the ck command behind it.

const PAGE_SIZE = 50;
const state = { as: sessionStorage.getItem('ck-as') || '', overview: null, schemas: new Map(), pages: new Map(), drawings: 0 };

// MARK: DOM

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat(Infinity)) {
    if (k == null || k === false) continue;
    e.append(k instanceof Node ? k : String(k));
  }
  return e;
}
const main = () => document.getElementById('main');
function show(...nodes) {
  main().replaceChildren(...nodes.flat(Infinity).filter(n => n != null && n !== false));
}
function errorBox(err, extra) {
  return h('div', { class: 'error', role: 'alert' },
    h('strong', {}, err.code || ('HTTP ' + (err.status || ''))), ' ', err.message || String(err), extra || null);
}
function note(text) { return h('p', { class: 'note', role: 'status' }, text); }

// MARK: JSON with INT64s whole

// CloudKit's INT64 goes to 2^63, a JavaScript number is exact to 2^53: an integer beyond it is
// read as a BigInt from its source text and written back as that text, never rounded.
function parseJSON(text) {
  return JSON.parse(text, (k, v, ctx) =>
    typeof v === 'number' && !Number.isSafeInteger(v) && ctx && /^-?\d+$/.test(ctx.source) ? BigInt(ctx.source) : v);
}
function toJSON(v, indent) {
  // Without JSON.rawJSON (Chromium 114, Firefox 135) the digits go as a string, which the
  // server refuses as an INT64 rather than store a rounded number.
  return JSON.stringify(v, (k, x) => typeof x !== 'bigint' ? x : JSON.rawJSON ? JSON.rawJSON(x.toString()) : x.toString(), indent);
}

// MARK: calls

class CallError extends Error {
  constructor(status, body, headers) {
    super((body && body.reason) || ('the server answered ' + status));
    this.status = status; this.body = body; this.code = body && body.serverErrorCode; this.headers = headers;
  }
}
// The key: in the fragment of the URL ck printed (#key=…), which no request carries; kept in
// this origin's storage (per port, unlike a cookie) and sent with each call.
const KEY = 'ck-console-key';
// A key that this server refuses does not replace one it takes: a link of another site with a
// made-up key cannot sign this browser out.
async function takeKeyFromURL() {
  const m = /^#key=([0-9a-f]{64})$/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, '', location.pathname + '#/');
  const previous = localStorage.getItem(KEY);
  localStorage.setItem(KEY, m[1]);
  if (!previous || previous === m[1]) return;
  try { await consoleAPI('overview'); } catch (err) { if (err.status === 403) localStorage.setItem(KEY, previous); }
}
// A promise's outcome as a value ({v} or {err}): calls that may fail without failing the page.
function settle(p) { return p.then(v => ({ v }), err => ({ err })); }

async function call(url, method, body) {
  const headers = { 'X-CK-Console': localStorage.getItem(KEY) || '' };
  const init = { method: method || 'GET', credentials: 'omit', headers, cache: 'no-store' };
  if (body !== undefined) { headers['Content-Type'] = 'application/json'; init.body = toJSON(body); init.method = 'POST'; }
  const r = await fetch(url, init);
  let parsed = null;
  try { parsed = parseJSON(await r.text()); } catch (e) { parsed = null; }
  if (!r.ok) throw new CallError(r.status, parsed, r.headers);
  return parsed;
}
const consoleAPI = (path, body) => call('/console/api/' + path, body === undefined ? 'GET' : 'POST', body);
// `at`: the zone as it was (ck's --at); `filters`: ck's --filter texts, read by the server as
// the CLI reads them, dates without an offset in this browser's time zone.
function ws(db, endpoint, body, at, filters) {
  // encodeURIComponent, as CloudKit JS writes its query: the server reads '+' as a plus.
  const p = [];
  const add = (k, v) => p.push(k + '=' + encodeURIComponent(v));
  if (state.as) add('as', state.as);
  if (at) add('at', at);
  for (const f of filters || []) add('filter', f);
  if (filters && filters.length) add('tz', Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  const q = p.length ? '?' + p.join('&') : '';
  // Each segment as one: a name from the address bar cannot climb into another path.
  if ([db.c, db.e, db.s, endpoint].some(x => x === '.' || x === '..')) throw new CallError(400, { serverErrorCode: 'BAD_REQUEST', reason: 'a name of . or .. names no database' });
  const path = [db.c, db.e, db.s].map(encodeURIComponent).join('/');
  return call('/console/ws/database/1/' + path + '/' + endpoint + q, body === undefined ? 'GET' : 'POST', body);
}
function zoneHistory(db, z, call, body) {
  return consoleAPI('history/' + call, Object.assign({ container: db.c, environment: db.e, database: db.s, as: state.as, zoneName: z.zone }, body || {}));
}
async function schemaOf(db) {
  const key = db.c + '/' + db.e + '/' + state.as;
  if (!state.schemas.has(key)) {
    const q = 'container=' + encodeURIComponent(db.c) + '&environment=' + db.e + (state.as ? '&as=' + encodeURIComponent(state.as) : '');
    state.schemas.set(key, await consoleAPI('schema?' + q));
  }
  return state.schemas.get(key);
}

// MARK: routes: #/, #/db/C/E/S, #/zone/C/E/S/Z, #/record/C/E/S/Z/NAME, #/new/C/E/S/Z

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const i = raw.indexOf('?');
  const path = i < 0 ? raw : raw.slice(0, i);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { parts, q: new URLSearchParams(i < 0 ? '' : raw.slice(i + 1)) };
}
function link(parts, q) {
  let s = '#/' + parts.map(encodeURIComponent).join('/');
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q || {})) if (v != null && v !== '') p.set(k, v);
  const t = p.toString();
  return t ? s + '?' + t : s;
}
function zoneID(z) { return z.owner ? { zoneName: z.zone, ownerRecordName: z.owner } : { zoneName: z.zone }; }
function dbParts(db) { return [db.c, db.e, db.s]; }

function crumbs(items) {
  const nav = document.getElementById('crumbs');
  nav.replaceChildren(...items.map((it, i) => i === items.length - 1
    ? h('span', { 'aria-current': 'page' }, it[0])
    : h('a', { href: it[1] }, it[0])));
  document.title = items.map(i => i[0]).reverse().join(' · ') + ' — ck console';
}
function dbCrumbs(db, zone) {
  const items = [['ck', '#/'], [db.c + ' · ' + db.e + ' · ' + db.s, link(['db', ...dbParts(db)])]];
  if (zone) items.push([zone.zone, link(['zone', ...dbParts(db), zone.zone], { owner: zone.owner })]);
  return items;
}

function stopFollowing() {
  if (state.timer) { clearInterval(state.timer); state.timer = null; }
}

// Each drawing of the page is numbered: while one is under way `main` is aria-busy, and once
// the newest is drawn it says which address it shows (data-route) — for assistive technology,
// and for tests, which must not read a page an address change is about to replace.
async function render() {
  const drawing = ++state.drawings;
  const route = location.hash;
  main().setAttribute('aria-busy', 'true');
  try {
    await draw();
  } finally {
    if (drawing === state.drawings) {
      main().setAttribute('aria-busy', 'false');
      main().dataset.route = route;
    }
  }
}

async function draw() {
  stopFollowing();
  let route;
  try { route = parseHash(); } catch (err) {
    crumbs([['ck', '#/'], ['not found']]);
    return show(errorBox({ code: 'NOT_FOUND', message: 'this address is not one of the console\'s (' + err.message + ')' }));
  }
  const { parts, q } = route;
  const [view, c, e, s, zone, name] = parts;
  const db = { c, e, s };
  const dbView = ['db', 'zone', 'record', 'new', 'history', 'change', 'blame', 'diff'].includes(view);
  if (dbView && (!['development', 'production'].includes(e) || !['public', 'private', 'shared'].includes(s))) {
    crumbs([['ck', '#/'], ['not found']]);
    return show(errorBox({ code: 'NOT_FOUND', message: 'a database is development or production, then public, private or shared: ' + location.hash }));
  }
  const z = { zone, owner: q.get('owner') || '' };
  if (!localStorage.getItem(KEY)) return renderKeyless();
  try {
    if (!state.overview) await loadOverview();
    switch (view) {
      case undefined: return renderOverview();
      case 'db': return await renderDatabase(db);
      case 'zone': return await renderZone(db, z, q);
      case 'record': return await renderRecord(db, z, name, q);
      case 'new': return await renderEditor(db, z, null, q.get('type') || '');
      case 'live': return await renderLive(parts[1] || '');
      case 'faults': return await renderFaults();
      case 'notifications': return await renderNotifications(c, e);
      case 'people': return await renderPeople(c, e);
      case 'schema': return await renderSchema(c);
      case 'history': return await renderHistory(db, z, q);
      case 'change': return await renderChange(db, z, name);
      case 'blame': return await renderBlame(db, z, name, q.get('at') || '');
      case 'diff': return await renderDiff(db, z, q.get('from') || '', q.get('to') || '');
      default: crumbs([['ck', '#/'], ['not found']]); return show(errorBox({ code: 'NOT_FOUND', message: 'no such view: ' + location.hash }));
    }
  } catch (err) {
    if (!state.overview) crumbs([['ck', '#/'], ['refused']]);
    show(errorBox(err));
  }
}

function renderKeyless() {
  crumbs([['ck', '#/'], ['needs its key']]);
  show(h('h1', {}, 'This console needs its key'),
    h('p', { role: 'alert' }, 'Open the URL that ck serve or ck console printed: it ends in #key= and a key made when the server started. The key stays in this browser for this server\'s address; a page without it is refused.'));
}

// MARK: who the console acts as

async function loadOverview() {
  state.overview = await consoleAPI('overview');
  const select = document.getElementById('actor');
  const d = state.overview.device;
  const options = [h('option', { value: '' }, 'This device' + (d.appleID ? ' (' + d.appleID + ', ' + d.status + ')' : ' (' + d.status + ')'))];
  for (const u of state.overview.users) options.push(h('option', { value: u.appleID }, u.appleID + (u.name ? ' — ' + u.name : '')));
  select.replaceChildren(...options);
  select.value = state.as;
  if (select.value !== state.as) { state.as = ''; select.value = ''; }
}
function switchActor(ev) {
  state.as = ev.target.value;
  sessionStorage.setItem('ck-as', state.as);
  state.pages.clear();
  render();
}

// MARK: navigator

function renderOverview() {
  crumbs([['ck', '#/']]);
  const o = state.overview;
  if (!o.containers.length) {
    return show(h('h1', {}, 'No containers yet'), note('A container appears here once something is saved in it: ck record save, ck zone create, or a request to ck serve.'));
  }
  const list = h('ul', { class: 'containers' }, o.containers.map(c => h('li', {},
    h('h2', {}, c.containerIdentifier, c.containerIdentifier === o.defaultContainer ? h('span', { class: 'badge' }, 'default') : null),
    h('a', { class: 'schema-link', href: link(['schema', c.containerIdentifier]) }, 'Schema'),
    h('ul', { class: 'environments' }, c.environments.map(e => h('li', {}, h('span', { class: 'env' }, e), ' ',
      ['public', 'private', 'shared'].map(s => h('a', { class: 'db', href: link(['db', c.containerIdentifier, e, s]) }, s))))))));
  show(h('h1', {}, 'Containers'), list);
}

async function renderDatabase(db) {
  crumbs(dbCrumbs(db));
  // The counts are the console's own call (Web Services has none); a zone without one shows a
  // dash: its records are not all the caller's to read, or it keeps no count yet.
  const [answer, counted] = await Promise.all([ws(db, 'zones/list'),
    settle(consoleAPI('counts', { container: db.c, environment: db.e, database: db.s, as: state.as }))]);
  const zones = answer.zones || [];
  const counts = new Map(((counted.v && counted.v.zones) || []).map(z => [z.zoneID.zoneName + '\u0000' + z.zoneID.ownerRecordName, z.recordCount]));
  const rows = zones.map(z => {
    const zid = z.zoneID || {};
    const owner = db.s === 'shared' ? (zid.ownerRecordName || '') : '';
    const count = counts.get(zid.zoneName + '\u0000' + zid.ownerRecordName);
    return h('tr', {},
      h('td', {}, h('a', { href: link(['zone', ...dbParts(db), zid.zoneName], { owner }) }, zid.zoneName)),
      h('td', { class: 'count' }, typeof count === 'number' ? count.toLocaleString('en-US')
        : h('span', { title: 'Not shown: not every record of this zone is yours to read, or the zone keeps no count yet' }, '—')),
      h('td', {}, zid.ownerRecordName || ''),
      h('td', {}, z.syncToken ? 'has changes feed' : ''));
  });
  show(h('h1', {}, 'Zones of the ' + db.s + ' database'),
    h('p', { class: 'command' }, h('code', {}, ckCommand(db, null, ['zone', 'list']))),
    rows.length ? h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Zone'), h('th', { scope: 'col', class: 'count' }, 'Records'),
      h('th', { scope: 'col' }, 'Owner'), h('th', { scope: 'col' }, ''))), h('tbody', {}, rows))
      : note('No zones to show in this database for this user.'));
}

// MARK: records table

function shellWord(s) { return /^[A-Za-z0-9_\-./:@%+,=]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'"; }
function ckCommand(db, zone, words) {
  const g = ['ck', '--container', db.c];
  if (db.e !== 'development') g.push('--env', db.e);
  if (db.s !== 'private') g.push('--db', db.s);
  if (zone && zone.zone !== '_defaultZone') g.push('--zone', zone.zone);
  if (state.as) g.push('--as', state.as);
  return g.concat(words).map(shellWord).join(' ');
}
function userFields(type) { return (type ? type.fields : []).filter(f => !f.name.startsWith('___')); }

async function renderZone(db, z, q) {
  crumbs(dbCrumbs(db, z));
  const schema = await schemaOf(db);
  const types = (schema.recordTypes || []).filter(t => !(t.name === 'Users' && db.s !== 'public'));
  const typeName = q.get('type') || (types[0] && types[0].name) || '';
  const type = types.find(t => t.name === typeName);
  const sort = q.get('sort') || '';
  const at = q.get('at') || '';
  const filterText = q.get('filter') || '';
  const filters = filterText.split('\n').map(f => f.trim()).filter(Boolean);
  const pageKey = [db.c, db.e, db.s, z.zone, z.owner, typeName, sort, state.as, at, filterText].join('\u0000');
  const markers = state.pages.get(pageKey) || [null];
  const page = Math.min(Math.max(0, parseInt(q.get('page') || '0', 10) || 0), markers.length - 1);
  const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Record types' }, types.map(t =>
    h('a', { role: 'tab', 'aria-selected': t.name === typeName ? 'true' : 'false', href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: t.name, at }) }, t.name)));
  const newLink = at ? null : h('a', { class: 'button', href: link(['new', ...dbParts(db), z.zone], { owner: z.owner, type: typeName }) }, 'New record');
  const atInput = h('input', { id: 'view-at', type: 'text', placeholder: 'tag, ' + z.zone + '@SEQ, 2h ago…', value: at });
  const tools = h('div', { class: 'toolbar' }, newLink,
    h('a', { class: 'button', href: link(['history', ...dbParts(db), z.zone], { owner: z.owner }) }, 'History'),
    h('form', { class: 'inline', onsubmit: ev => { ev.preventDefault(); location.hash = link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName, at: atInput.value.trim() }); } },
      h('label', { for: 'view-at' }, 'View at'), atInput, h('button', { type: 'submit' }, 'Go')),
    at ? h('a', { class: 'button', href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName }) }, 'Back to now') : null,
    at ? h('button', { type: 'button', class: 'danger', onclick: ev => planWrite(db, z, 'restore', { ref: at }, 'Restore ' + z.zone + ' to ' + at, ['restore', at], ev.target) }, 'Restore the zone to this point…') : null);
  const pastBanner = at ? h('p', { class: 'past', role: 'status' }, 'Read-only: the zone as it was at ' + at + '.') : null;
  if (!typeName) return show(h('h1', {}, 'Zone ' + z.zone), note('The schema of ' + db.e + ' has no record types yet.'), tools);

  const fields = userFields(type);
  const [sortField, sortDir] = sort.split(':');
  const query = { recordType: typeName };
  if (sortField) query.sortBy = [{ fieldName: sortField, ascending: sortDir !== 'desc' }];
  const body = { zoneID: zoneID(z), resultsLimit: PAGE_SIZE, query };
  if (markers[page]) body.continuationMarker = markers[page];
  const words = ['record', 'query', '--type', typeName];
  for (const f of filters) words.push('--filter', f);
  if (sortField) words.push('--sort', sortField + (sortDir === 'desc' ? ':desc' : ''));
  words.push('--limit', String(PAGE_SIZE));
  if (at) words.push('--at', at);
  const command = h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, words) + (page ? ' --continue MARKER' : '')));
  const heading = h('h1', {}, typeName, h('span', { class: 'sub' }, ' in ' + z.zone));
  // ck's --filter, one per line, ANDed as CloudKit ANDs a query's filters.
  const filterBox = h('textarea', { id: 'filters', rows: Math.max(1, filters.length), spellcheck: 'false', placeholder: 'priority >= 3', 'aria-describedby': 'filters-help' });
  filterBox.value = filters.join('\n');
  const filterForm = h('form', { class: 'filters', onsubmit: ev => {
    ev.preventDefault();
    location.hash = link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName, sort, at, filter: filterBox.value.split('\n').map(f => f.trim()).filter(Boolean).join('\n') });
  } },
    h('label', { for: 'filters' }, 'Filter'), filterBox,
    h('button', { type: 'submit' }, 'Apply'),
    filters.length ? h('a', { class: 'button', href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName, sort, at }) }, 'Clear') : null,
    h('span', { id: 'filters-help', class: 'sub' }, 'One per line, as ck record query --filter: priority >= 3, title BEGINS_WITH Get, place NEAR 37.33,-122.03 5km'));
  filterBox.addEventListener('keydown', ev => { if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); filterForm.requestSubmit(); } });

  let answer;
  try {
    answer = await ws(db, 'records/query', body, at, filters);
  } catch (err) {
    return show(heading, pastBanner, tabs, filterForm, command, errorBox(err, indexFix(err, db)), tools);
  }
  const records = answer.records || [];
  if (answer.continuationMarker) { markers[page + 1] = answer.continuationMarker; markers.length = page + 2; } else markers.length = page + 1;
  state.pages.set(pageKey, markers);

  const sortLink = (name, label) => {
    const next = sortField === name ? (sortDir === 'desc' ? '' : name + ':desc') : name;
    const dir = sortField === name ? (sortDir === 'desc' ? 'descending' : 'ascending') : 'none';
    return h('th', { scope: 'col', 'aria-sort': dir }, h('a', { href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName, sort: next, at, filter: filterText }), title: 'Sort by ' + label }, label, dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : ''));
  };
  const head = h('tr', {}, h('th', { scope: 'col' }, 'recordName'), fields.map(f => f.sortable ? sortLink(f.name, f.name) : h('th', { scope: 'col', title: f.name + ' is not SORTABLE' }, f.name)), sortLink('___modTime', 'modified'));
  const rows = records.map(r => h('tr', {},
    h('td', {}, r.serverErrorCode ? r.recordName + ' (' + r.serverErrorCode + ')' : h('a', { href: link(['record', ...dbParts(db), z.zone, r.recordName], { owner: z.owner, at }) }, r.recordName)),
    fields.map(f => h('td', {}, brief(r.fields && r.fields[f.name]))),
    h('td', {}, r.modified ? when(r.modified.timestamp) : '')));
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' },
    page > 0 ? h('a', { class: 'button', href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName, sort, at, filter: filterText, page: page - 1 }) }, '← Previous') : null,
    h('span', {}, 'Page ' + (page + 1) + ' · ' + records.length + ' record' + (records.length === 1 ? '' : 's')),
    answer.continuationMarker ? h('a', { class: 'button', rel: 'next', href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName, sort, at, filter: filterText, page: page + 1 }) }, 'Next →') : null);
  if (!at) follow(db, z);
  show(heading, pastBanner, tabs, filterForm, command, tools,
    records.length ? h('div', { class: 'scroll' }, h('table', { class: 'records' }, h('thead', {}, head), h('tbody', {}, rows))) : note('No ' + typeName + ' records ' + (filters.length ? 'match.' : 'in this zone.')),
    pager);
}

// A query CloudKit refuses for want of an index: the index named, and a button that adds it to
// the development schema (what ticking the box in Apple's console does).
function indexFix(err, db) {
  const need = err.headers && err.headers.get('X-CK-Index-Needed');
  if (!need) return null;
  const [recordType, fieldName, index] = need.split(' ');
  if (db.e !== 'development') return h('p', {}, 'Add the ' + index + ' index in development, then deploy the schema.');
  return h('p', {}, h('button', { type: 'button', onclick: async ev => {
    ev.target.disabled = true;
    try {
      await consoleAPI('schema/index', { container: db.c, environment: db.e, recordType, fieldName, index });
      state.schemas.clear();
      render();
    } catch (e2) { ev.target.after(errorBox(e2)); }
  } }, 'Add ' + index + ' index on ' + recordType + '.' + fieldName), ' (same as ', h('code', {}, ckCommand(db, null, ['schema', 'index', 'add', recordType, fieldName, index])), ')');
}

// MARK: values

function when(ms) { return typeof ms === 'number' ? new Date(ms).toISOString().replace('.000Z', 'Z') : String(ms); }
function brief(field) {
  if (!field) return '';
  const v = field.value, t = field.type || '';
  if (v == null) return '—';
  if (t.endsWith('_LIST') || Array.isArray(v)) return '[' + (Array.isArray(v) ? v.length : '?') + ' items]';
  switch (t) {
    case 'TIMESTAMP': return when(v);
    case 'REFERENCE': return '→ ' + v.recordName;
    case 'ASSET': return 'asset, ' + size(v.size);
    case 'LOCATION': return v.latitude + ', ' + v.longitude;
    case 'BYTES': return (v.length * 3 / 4 | 0) + ' bytes';
    default: { const s = typeof v === 'object' ? toJSON(v) : String(v); return s.length > 80 ? s.slice(0, 79) + '…' : s; }
  }
}
function size(n) { return n == null ? '? bytes' : n < 1024 ? n + ' bytes' : n < 1048576 ? (n / 1024).toFixed(1) + ' KB' : (n / 1048576).toFixed(1) + ' MB'; }
function valueView(db, z, field) {
  const v = field.value, t = field.type || '';
  if (v == null) return h('span', { class: 'null' }, 'null');
  if (t.endsWith('_LIST') && Array.isArray(v)) {
    const item = t.slice(0, -5);
    return h('ol', { class: 'list' }, v.map(x => h('li', {}, valueView(db, z, { type: item, value: x }))));
  }
  switch (t) {
    case 'TIMESTAMP': return h('time', { datetime: new Date(v).toISOString() }, when(v));
    case 'REFERENCE': return h('span', {}, h('a', { href: link(['record', ...dbParts(db), (v.zoneID && v.zoneID.zoneName) || z.zone, v.recordName], { owner: z.owner }) }, v.recordName), v.action ? h('span', { class: 'sub' }, ' (' + v.action + ')') : null);
    case 'ASSET': return assetView(v);
    case 'LOCATION': return h('span', {}, v.latitude + ', ' + v.longitude);
    default: return h('span', { class: 'value' }, typeof v === 'object' ? toJSON(v) : String(v));
  }
}
// An asset's URL names the server as ck serve was started (127.0.0.1); a console opened as
// localhost loads it from its own origin, which its policy allows.
function sameServer(u) {
  try {
    const x = new URL(u);
    if (x.port === location.port && ['127.0.0.1', 'localhost', '[::1]'].includes(x.hostname)) return location.origin + x.pathname + x.search;
  } catch (e) { /* not a URL: left as it is */ }
  return u;
}
function assetView(v) {
  const facts = h('span', { class: 'sub' }, size(v.size) + (v.fileChecksum ? ' · checksum ' + v.fileChecksum : ''));
  // Only the server's own http(s) URLs become links and images, whatever a value holds.
  if (!v.downloadURL || !/^https?:\/\//.test(v.downloadURL)) return h('span', {}, 'asset ', facts);
  const url = sameServer(v.downloadURL);
  const download = h('a', { href: url, download: '' }, 'Download');
  const img = h('img', { src: url, alt: 'asset preview', class: 'asset', loading: 'lazy' });
  img.addEventListener('error', () => img.remove());
  return h('div', { class: 'asset' }, img, h('div', {}, download, ' ', facts));
}

// MARK: a record

async function lookup(db, z, name, at) {
  const answer = await ws(db, 'records/lookup', { zoneID: zoneID(z), records: [{ recordName: name }] }, at);
  return (answer.records || [])[0];
}

async function renderRecord(db, z, name, q) {
  crumbs(dbCrumbs(db, z).concat([[name]]));
  const at = q.get('at') || '';
  const r = await lookup(db, z, name, at);
  if (!r || r.serverErrorCode) return show(h('h1', {}, name), errorBox({ code: r && r.serverErrorCode, message: (r && r.reason) || 'not found' }));
  show(recordView(db, z, r, q.get('saved') ? note('Saved: change tag ' + r.recordChangeTag + '.') : null, at));
  if (!at) follow(db, z);
}

function recordView(db, z, r, status, at) {
  const fields = Object.keys(r.fields || {}).sort();
  const system = [['recordType', r.recordType], ['recordChangeTag', r.recordChangeTag],
    ['created', r.created && (when(r.created.timestamp) + ' by ' + (r.created.userRecordName || '?') + (r.created.deviceID ? ' on ' + r.created.deviceID : ''))],
    ['modified', r.modified && (when(r.modified.timestamp) + ' by ' + (r.modified.userRecordName || '?') + (r.modified.deviceID ? ' on ' + r.modified.deviceID : ''))]];
  const del = h('button', { type: 'button', class: 'danger', onclick: () => confirmDelete(db, z, r) }, 'Delete');
  return [
    h('h1', {}, r.recordName, h('span', { class: 'sub' }, ' ' + r.recordType)),
    status,
    at ? h('p', { class: 'past', role: 'status' }, 'Read-only: the record as it was at ' + at + '.') : null,
    h('div', { class: 'toolbar' }, at ? null : h('button', { type: 'button', onclick: () => renderEditor(db, z, r, r.recordType) }, 'Edit'), at ? null : del,
      h('a', { class: 'button', href: link(['blame', ...dbParts(db), z.zone, r.recordName], { owner: z.owner, at }) }, 'Blame'),
      h('a', { class: 'button', href: link(['history', ...dbParts(db), z.zone], { owner: z.owner, record: r.recordName }) }, 'History')),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, ['record', 'get', r.recordName].concat(at ? ['--at', at] : [])))),
    h('h2', {}, 'Fields'),
    fields.length ? h('table', { class: 'fields' }, h('tbody', {}, fields.map(n => h('tr', {},
      h('th', { scope: 'row' }, n), h('td', { class: 'type' }, r.fields[n].type || ''), h('td', {}, valueView(db, z, r.fields[n])))))) : note('No fields.'),
    h('h2', {}, 'System fields'),
    h('table', { class: 'fields' }, h('tbody', {},
      system.filter(x => x[1]).map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v))),
      r.parent ? h('tr', {}, h('th', { scope: 'row' }, 'parent'), h('td', {}, h('a', { href: link(['record', ...dbParts(db), z.zone, r.parent.recordName], { owner: z.owner }) }, r.parent.recordName))) : null,
      r.share ? h('tr', {}, h('th', { scope: 'row' }, 'share'), h('td', {}, h('a', { href: link(['record', ...dbParts(db), z.zone, r.share.recordName], { owner: z.owner }) }, r.share.recordName))) : null)),
  ];
}

function confirmDelete(db, z, r) {
  const dialog = h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': 'Delete ' + r.recordName },
    h('p', {}, 'Delete ' + r.recordName + ' (change tag ' + r.recordChangeTag + ')?'),
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      try {
        const answer = await ws(db, 'records/modify', { zoneID: zoneID(z), operations: [{ operationType: 'delete', record: { recordName: r.recordName, recordChangeTag: r.recordChangeTag } }] });
        const out = (answer.records || [])[0] || {};
        if (out.serverErrorCode === 'CONFLICT') return showConflict(db, z, r, null, out);
        if (out.serverErrorCode) throw new CallError(200, out);
        location.hash = link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: r.recordType });
      } catch (err) { dialog.append(errorBox(err)); }
    } }, 'Delete'),
    h('button', { type: 'button', onclick: () => dialog.remove() }, 'Cancel'));
  main().querySelector('.toolbar').after(dialog);
  dialog.querySelector('button').focus();
}

// MARK: editing

const TYPES = ['STRING', 'INT64', 'DOUBLE', 'TIMESTAMP', 'REFERENCE', 'LOCATION', 'BYTES', 'ASSET', 'STRING_LIST', 'INT64_LIST', 'DOUBLE_LIST', 'TIMESTAMP_LIST', 'REFERENCE_LIST'];
let fieldSerial = 0;

function textOf(type, value) {
  if (value == null) return '';
  switch (type) {
    case 'STRING': case 'INT64': case 'DOUBLE': return String(value);
    case 'TIMESTAMP': return new Date(value).toISOString();
    case 'REFERENCE': return value.recordName;
    default: return toJSON(value);
  }
}
function valueOf(name, type, text, before) {
  const bad = why => { throw new Error('field ' + name + ': ' + why); };
  switch (type) {
    case 'STRING': return text;
    case 'INT64': {
      const t = text.trim();
      if (!/^-?\d+$/.test(t)) bad('an INT64 is a whole number, not "' + text + '"');
      const n = BigInt(t);
      if (n < -(2n ** 63n) || n >= 2n ** 63n) bad('an INT64 is from -2^63 to 2^63-1, not ' + t);
      return Number.isSafeInteger(Number(n)) ? Number(n) : n;
    }
    case 'DOUBLE': { const d = Number(text.trim()); if (text.trim() === '' || !isFinite(d)) bad('a DOUBLE is a number, not "' + text + '"'); return d; }
    case 'TIMESTAMP': { const t = Date.parse(text.trim()); if (isNaN(t)) bad('a TIMESTAMP is a date such as 2026-01-31T12:00:00Z, not "' + text + '"'); return t; }
    case 'REFERENCE': if (!text.trim()) bad('a REFERENCE names a record'); return { recordName: text.trim(), action: (before && before.action) || 'NONE' };
    default: try { return parseJSON(text); } catch (e) { return bad('a ' + type + ' is written as JSON here: ' + e.message); }
  }
}
function fieldRow(name, type, value, fixed) {
  const id = 'field-' + (++fieldSerial);
  const big = !['STRING', 'INT64', 'DOUBLE', 'TIMESTAMP', 'REFERENCE'].includes(type);
  const input = big ? h('textarea', { id, rows: 3, 'data-field': name, 'data-type': type }) : h('input', { id, type: 'text', 'data-field': name, 'data-type': type, inputmode: type === 'INT64' ? 'numeric' : type === 'DOUBLE' ? 'decimal' : null });
  input.value = textOf(type, value);
  input._before = value;
  input._text = input.value;
  const remove = h('button', { type: 'button', class: 'small', 'aria-label': 'Remove field ' + name, onclick: () => row.remove() }, 'Remove');
  const row = h('div', { class: 'field-row' }, h('label', { for: id }, name, h('span', { class: 'type' }, ' ' + type)), input, fixed ? null : remove);
  return row;
}

async function renderEditor(db, z, record, typeName) {
  stopFollowing();
  crumbs(dbCrumbs(db, z).concat([[record ? 'Edit ' + record.recordName : 'New record']]));
  const schema = await schemaOf(db);
  const type = (schema.recordTypes || []).find(t => t.name === typeName);
  const rows = h('div', { class: 'field-rows' });
  const seen = new Set();
  if (record) for (const n of Object.keys(record.fields || {}).sort()) { seen.add(n); rows.append(fieldRow(n, record.fields[n].type || 'STRING', record.fields[n].value)); }
  for (const f of userFields(type)) if (!seen.has(f.name)) rows.append(fieldRow(f.name, f.type.replace(/^LIST<(.*)>$/, '$1_LIST'), null));
  const addName = h('input', { id: 'add-name', type: 'text', placeholder: 'fieldName' });
  const addType = h('select', { id: 'add-type' }, TYPES.map(t => h('option', { value: t }, t)));
  const typeInput = h('input', { id: 'record-type', type: 'text', value: typeName || '', required: true });
  const nameInput = h('input', { id: 'record-name', type: 'text', placeholder: 'made for you when empty' });
  const status = h('div', { class: 'status' });
  const form = h('form', { class: 'editor', onsubmit: async ev => {
    ev.preventDefault();
    status.replaceChildren();
    let fields;
    try { fields = collect(rows, record); } catch (err) { return status.append(errorBox({ code: 'BAD_REQUEST', message: err.message })); }
    if (record && !Object.keys(fields).length) return status.append(note('Nothing changed: nothing to save.'));
    const rec = record
      ? { recordName: record.recordName, recordType: record.recordType, recordChangeTag: record.recordChangeTag, fields }
      : { recordName: nameInput.value.trim() || crypto.randomUUID().toUpperCase(), recordType: typeInput.value.trim(), fields };
    await save(db, z, record, rec, record ? 'update' : 'create', status);
  } },
    record ? null : h('div', { class: 'field-row' }, h('label', { for: 'record-type' }, 'recordType'), typeInput),
    record ? h('p', {}, 'Editing ', h('strong', {}, record.recordName), ' at change tag ', h('code', { id: 'editing-tag' }, record.recordChangeTag), '. A save sends the fields you changed (an update); if the record changed meanwhile, CloudKit answers CONFLICT.')
      : h('div', { class: 'field-row' }, h('label', { for: 'record-name' }, 'recordName'), nameInput),
    rows,
    h('fieldset', { class: 'add' }, h('legend', {}, 'Add a field'),
      h('label', { for: 'add-name' }, 'Name'), addName, h('label', { for: 'add-type' }, 'Type'), addType,
      h('button', { type: 'button', onclick: () => {
        const n = addName.value.trim();
        if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(n)) { status.replaceChildren(errorBox({ code: 'BAD_REQUEST', message: 'a field name starts with a letter, then letters, digits and _' })); return; }
        rows.append(fieldRow(n, addType.value, null));
        addName.value = '';
        rows.lastChild.querySelector('input, textarea').focus();
      } }, 'Add field')),
    h('div', { class: 'toolbar' }, h('button', { type: 'submit', class: 'primary' }, record ? 'Save' : 'Create'),
      h('a', { class: 'button', href: record ? link(['record', ...dbParts(db), z.zone, record.recordName], { owner: z.owner }) : link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: typeName }) }, 'Cancel')),
    status);
  show(h('h1', {}, record ? 'Edit ' + record.recordName : 'New record'), form);
  const first = form.querySelector('input, textarea');
  if (first) first.focus();
}

// What a save sends: for a record, only what was changed — a field's new value, or null for a
// field removed or emptied — so a value the page cannot show exactly is never written back;
// for a new record, every field given a value.
function collect(rows, record) {
  const fields = {};
  const kept = new Set();
  for (const input of rows.querySelectorAll('[data-field]')) {
    const name = input.dataset.field, type = input.dataset.type;
    kept.add(name);
    const had = record && input._before != null;
    if (had && input.value === input._text) continue;
    if (input.value === '' && (!had || type !== 'STRING')) {
      if (had) fields[name] = { value: null };
      continue;
    }
    fields[name] = { value: valueOf(name, type, input.value, input._before), type };
  }
  for (const name of Object.keys((record && record.fields) || {})) if (!kept.has(name)) fields[name] = { value: null };
  return fields;
}

async function save(db, z, before, rec, operationType, status) {
  try {
    const answer = await ws(db, 'records/modify', { zoneID: zoneID(z), operations: [{ operationType, record: rec }] });
    const out = (answer.records || [])[0] || {};
    if (out.serverErrorCode === 'CONFLICT') return showConflict(db, z, before, rec, out);
    if (out.serverErrorCode) throw new CallError(200, out);
    location.hash = link(['record', ...dbParts(db), z.zone, out.recordName], { owner: z.owner, saved: out.recordChangeTag });
  } catch (err) {
    status.replaceChildren(errorBox(err));
  }
}

// CloudKit's CONFLICT: the record changed since it was read. Both versions side by side, and
// the choice CloudKit leaves to the app: keep mine (saved again over the server's tag) or the
// server's.
async function showConflict(db, z, before, mine, out) {
  stopFollowing();
  const server = await lookup(db, z, (mine || before).recordName);
  const names = [...new Set([...Object.keys((mine && mine.fields) || {}), ...Object.keys((server && server.fields) || {})])].sort();
  // Mine holds what the edit changed; a field it did not touch keeps the server's value.
  const yours = n => !mine || !(n in mine.fields) ? h('span', { class: 'null' }, 'unchanged') : mine.fields[n].value == null ? h('span', { class: 'null' }, 'removed') : brief(mine.fields[n]);
  const cell = (f) => f ? brief(f) : '—';
  const same = (a, b) => !a || toJSON(a.value) === toJSON(b && b.value);
  const gone = !server || server.serverErrorCode;
  const table = h('table', { class: 'conflict' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Yours'), h('th', { scope: 'col' }, gone ? 'Server: deleted' : "Server's (tag " + server.recordChangeTag + ')'))),
    h('tbody', {}, names.map(n => h('tr', { class: same(mine && mine.fields[n], server && server.fields && server.fields[n]) ? '' : 'differs' },
      h('th', { scope: 'row' }, n), h('td', {}, yours(n)), h('td', {}, cell(server && server.fields && server.fields[n]))))));
  const status = h('div', { class: 'status' });
  const keepMine = mine && !gone ? h('button', { type: 'button', class: 'primary', onclick: () => save(db, z, server, Object.assign({}, mine, { recordChangeTag: server.recordChangeTag }), 'update', status) }, 'Keep mine') : null;
  const keepServer = h('a', { class: 'button', href: gone ? link(['zone', ...dbParts(db), z.zone], { owner: z.owner }) : link(['record', ...dbParts(db), z.zone, server.recordName], { owner: z.owner, t: Date.now() }) }, "Keep the server's");
  show(h('h1', {}, 'Conflict on ' + (mine || before).recordName),
    h('div', { class: 'error', role: 'alert' }, h('strong', {}, 'CONFLICT'), ' ', out.reason || 'the record changed on the server since you read it'),
    table, h('div', { class: 'toolbar' }, keepMine, keepServer), status);
}

// MARK: following the store

// A read view follows its zone: the newest change is looked at every 2 s (one history entry,
// whatever the zone's size), and the view is drawn again when it moved — after a write from
// the CLI, an app or another tab alike.
async function follow(db, z) {
  const head = async () => ((await zoneHistory(db, z, 'log', { limit: 1 })).changes || [{ seq: 0 }])[0] || { seq: 0 };
  let seen;
  const route = location.hash;
  try { seen = (await head()).seq; } catch (e) { return; }
  if (location.hash !== route || state.timer) return;
  state.timer = setInterval(async () => {
    try {
      const now = (await head()).seq;
      if (now !== seen && location.hash === route && !main().querySelector('form.editor, [role=alertdialog]')) { seen = now; render(); }
    } catch (e) { /* the zone may be gone: the next render says so */ }
  }, 2000);
}

// MARK: history

function who(c) { return (c.userRecordName || '?') + (c.deviceID ? ' on ' + c.deviceID : ''); }

async function renderHistory(db, z, q) {
  const record = q.get('record') || '';
  const until = q.get('until') || '';
  crumbs(dbCrumbs(db, z).concat([[record ? 'History of ' + record : 'History']]));
  const answer = await zoneHistory(db, z, 'log', { recordName: record || null, until: until || null, limit: PAGE_SIZE });
  const changes = answer.changes || [];
  const words = ['log'].concat(record ? [record] : []).concat(until ? ['--until', until] : []).concat(['--limit', String(PAGE_SIZE), '--patch']);
  const rows = changes.map(c => h('tr', {},
    h('td', {}, h('a', { href: link(['change', ...dbParts(db), z.zone, String(c.seq)], { owner: z.owner }), title: 'Show change ' + c.seq }, z.zone + '@' + c.seq)),
    h('td', {}, when(c.timestamp)),
    h('td', {}, who(c)),
    h('td', {}, c.operation),
    h('td', {}, h('a', { href: link(['record', ...dbParts(db), z.zone, c.recordName], { owner: z.owner }) }, c.recordName)),
    h('td', {}, Object.keys(c.fields || {}).sort().join(', '))));
  const last = changes[changes.length - 1];
  const compareFrom = h('input', { id: 'diff-from', type: 'text', placeholder: z.zone + '@1, a tag, 2h ago' });
  const compareTo = h('input', { id: 'diff-to', type: 'text', placeholder: 'HEAD' });
  if (!until) follow(db, z);
  show(h('h1', {}, record ? 'History of ' + record : 'History of ' + z.zone),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, words))),
    h('form', { class: 'inline toolbar', onsubmit: ev => { ev.preventDefault(); location.hash = link(['diff', ...dbParts(db), z.zone], { owner: z.owner, from: compareFrom.value.trim(), to: compareTo.value.trim() }); } },
      h('label', { for: 'diff-from' }, 'Compare'), compareFrom, h('label', { for: 'diff-to' }, 'with'), compareTo, h('button', { type: 'submit' }, 'Diff')),
    changes.length ? h('div', { class: 'scroll' }, h('table', { class: 'log' },
      h('thead', {}, h('tr', {}, ['Change', 'When', 'Who', 'Operation', 'Record', 'Fields'].map(t => h('th', { scope: 'col' }, t)))), h('tbody', {}, rows)))
      : note('No changes.'),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      until ? h('a', { class: 'button', href: link(['history', ...dbParts(db), z.zone], { owner: z.owner, record }) }, '← Newest') : null,
      last && last.seq > 1 && changes.length === PAGE_SIZE ? h('a', { class: 'button', href: link(['history', ...dbParts(db), z.zone], { owner: z.owner, record, until: z.zone + '@' + (last.seq - 1) }) }, 'Older →') : null));
}

// Restore and revert, as the CLI gives them: the plan first (--dry-run: what each record
// becomes, nothing written), then the writes on confirmation — of that plan: the confirmation
// names the point the preview resolved and the zone's head it saw, and the server refuses it
// (CONFLICT) if the zone moved on. The writes go through records/modify with each record's
// change tag, so a record changed meanwhile is a CONFLICT too.
async function planWrite(db, z, call, args, title, words, button) {
  stopFollowing();
  const box = h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': title });
  button.closest('.toolbar').after(box);
  try {
    const plan = await zoneHistory(db, z, call, Object.assign({ dryRun: true }, args));
    const changes = plan.changes || [];
    box.replaceChildren(...[h('p', {}, title + ': ' + (changes.length ? changes.length + ' record' + (changes.length === 1 ? '' : 's') + ' would change.' : 'nothing would change.')),
      changes.map(c => h('section', { class: 'diff-record' }, h('h2', {}, h('span', { class: 'change-status ' + c.status }, c.status), ' ', c.recordName),
        fieldDiff(db, z, c.fields || {}, c.status !== 'added', c.status !== 'deleted'))),
      h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, words.concat(['--dry-run'])))),
      changes.length ? h('button', { type: 'button', class: 'danger', onclick: async () => {
        try {
          const out = await zoneHistory(db, z, call, Object.assign({}, args, { dryRun: false, ref: plan.ref, ifHead: plan.head }));
          // Each record's write is its own result: one refused (changed in the instant since
          // the check, or not this user's to write) is shown, not passed over.
          const refused = (out.changes || []).filter(c => c.error);
          if (refused.length) {
            box.append(h('div', { class: 'error', role: 'alert' }, h('strong', {}, refused[0].error.serverErrorCode || 'ERROR'), ' ',
              refused.length + ' of ' + (out.changes || []).length + ' records not written: ',
              refused.map(c => c.recordName + ' (' + (c.error.reason || c.error.serverErrorCode) + ')').join('; ')));
            return;
          }
          location.hash = link(['history', ...dbParts(db), z.zone], { owner: z.owner });
        } catch (err) { box.append(errorBox(err)); }
      } }, call === 'revert' ? 'Revert' : 'Restore') : null,
      h('button', { type: 'button', onclick: () => { box.remove(); render(); } }, 'Cancel')].flat().filter(Boolean));
    const first = box.querySelector('button');
    if (first) first.focus();
  } catch (err) { box.replaceChildren(errorBox(err), h('button', { type: 'button', onclick: () => box.remove() }, 'Close')); }
}

// One change: the record before and after, each field side by side.
async function renderChange(db, z, seq) {
  crumbs(dbCrumbs(db, z).concat([['History', link(['history', ...dbParts(db), z.zone], { owner: z.owner })], [z.zone + '@' + seq]]));
  const ref = z.zone + '@' + seq;
  const answer = await zoneHistory(db, z, 'show', { ref });
  const c = answer.change;
  show(h('h1', {}, 'Change ' + ref, h('span', { class: 'sub' }, ' ' + c.operation + ' ' + c.recordName)),
    h('p', {}, when(c.timestamp) + ' by ' + who(c) + (c.recordChangeTag ? ' · change tag ' + c.recordChangeTag : '')),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, ['show', ref]))),
    h('div', { class: 'toolbar' },
      h('a', { class: 'button', href: link(['zone', ...dbParts(db), z.zone], { owner: z.owner, type: c.recordType || '', at: ref }) }, 'View the zone at this change'),
      c.operation !== 'delete' ? h('a', { class: 'button', href: link(['blame', ...dbParts(db), z.zone, c.recordName], { owner: z.owner, at: ref }) }, 'Blame at this change') : null,
      h('button', { type: 'button', class: 'danger', onclick: ev => planWrite(db, z, 'revert', { ref }, 'Revert change ' + ref, ['revert', ref], ev.target) }, 'Revert this change…')),
    fieldDiff(db, z, answer.fields || {}, answer.before, answer.after));
}

function fieldDiff(db, z, fields, before, after) {
  const names = Object.keys(fields).sort();
  if (!names.length) return note(before && !after ? 'The record was deleted.' : 'No field changed.');
  return h('table', { class: 'diff' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'))),
    h('tbody', {}, names.map(n => h('tr', {},
      h('th', { scope: 'row' }, n),
      h('td', { class: 'old' }, fields[n].old ? valueView(db, z, fields[n].old) : h('span', { class: 'null' }, 'absent')),
      h('td', { class: 'new' }, fields[n].new ? valueView(db, z, fields[n].new) : h('span', { class: 'null' }, 'absent'))))));
}

async function renderDiff(db, z, from, to) {
  crumbs(dbCrumbs(db, z).concat([['History', link(['history', ...dbParts(db), z.zone], { owner: z.owner })], ['Diff']]));
  if (!from) return show(h('h1', {}, 'Diff'), errorBox({ code: 'BAD_REQUEST', message: 'name the point to compare from: ' + z.zone + '@SEQ, a tag or a time' }));
  const answer = await zoneHistory(db, z, 'diff', { from, to: to || null });
  const changes = answer.changes || [];
  show(h('h1', {}, 'From ' + from + ' to ' + (to || 'now')),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, ['diff', from].concat(to ? [to] : [])))),
    changes.length ? changes.map(c => h('section', { class: 'diff-record' },
      h('h2', {}, h('span', { class: 'change-status ' + c.status }, c.status), ' ', c.status === 'deleted' ? c.recordName : h('a', { href: link(['record', ...dbParts(db), z.zone, c.recordName], { owner: z.owner }) }, c.recordName), h('span', { class: 'sub' }, ' ' + (c.recordType || ''))),
      fieldDiff(db, z, c.fields || {}, c.status !== 'added', c.status !== 'deleted'))) : note('Nothing changed between these points.'));
}

// Which change last set each field of a record.
async function renderBlame(db, z, name, at) {
  crumbs(dbCrumbs(db, z).concat([[name, link(['record', ...dbParts(db), z.zone, name], { owner: z.owner, at })], ['Blame']]));
  const answer = await zoneHistory(db, z, 'blame', { recordName: name, at: at || null });
  show(h('h1', {}, 'Blame ' + name, h('span', { class: 'sub' }, ' ' + answer.recordType + (at ? ' at ' + at : ''))),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, ckCommand(db, z, ['blame', name].concat(at ? ['--at', at] : [])))),
    h('table', { class: 'blame' },
      h('thead', {}, h('tr', {}, ['Field', 'Value', 'Set by change', 'When', 'Who'].map(t => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, (answer.fields || []).map(f => h('tr', {},
        h('th', { scope: 'row' }, f.field),
        h('td', {}, valueView(db, z, { type: f.type, value: f.value })),
        h('td', {}, h('a', { href: link(['change', ...dbParts(db), z.zone, String(f.seq)], { owner: z.owner }) }, z.zone + '@' + f.seq), ' (tag ' + f.recordChangeTag + ')'),
        h('td', {}, when(f.timestamp)),
        h('td', {}, who(f)))))));
}

// MARK: live requests

// The server's recent requests, newest first, followed as they come (a poll a second while this
// view is open). A row opens to its bodies, secrets masked by the server.
async function renderLive(open) {
  crumbs([['ck', '#/'], ['Live requests']]);
  const tbody = h('tbody', {});
  const detail = h('div', { class: 'detail' });
  let last = 0;
  const row = e => {
    const tr = h('tr', { class: 'row', tabindex: '0', 'data-id': e.id, onclick: () => openRequest(e.id), onkeydown: ev => { if (ev.key === 'Enter') openRequest(e.id); } },
      h('td', {}, new Date(e.time).toISOString().slice(11, 23)),
      h('td', {}, e.method),
      h('td', { title: e.path }, shortPath(e.path)),
      h('td', {}, e.caller),
      h('td', { class: e.status >= 400 ? 'bad' : '' }, String(e.status) + (e.serverErrorCode ? ' ' + e.serverErrorCode : '')),
      h('td', {}, e.milliseconds.toFixed(1) + ' ms'));
    return tr;
  };
  async function openRequest(id) {
    try {
      const e = await consoleAPI('requests/' + encodeURIComponent(String(parseInt(id, 10))));
      detail.replaceChildren(h('h2', {}, e.method + ' ' + e.path + ' → ' + e.status + (e.serverErrorCode ? ' ' + e.serverErrorCode : '')),
        h('h3', {}, 'Request'), h('pre', { class: 'body' }, pretty(e.requestBody) || '(no body)'),
        h('h3', {}, 'Response'), h('pre', { class: 'body' }, pretty(e.responseBody) || '(no body)'));
    } catch (err) { detail.replaceChildren(errorBox(err)); }
  }
  async function poll() {
    const answer = await consoleAPI('requests?after=' + last);
    const fresh = answer.requests || [];
    if (fresh.length) {
      last = fresh[0].id;
      tbody.prepend(...fresh.map(row));
      while (tbody.children.length > 500) tbody.lastChild.remove();
    }
  }
  await poll();
  show(h('h1', {}, 'Live requests'),
    note('Requests to this server — apps, scripts, the console\'s own Web Services calls — newest first, as they come. The server keeps the last 500; tokens are never shown.'),
    detail,
    h('div', { class: 'scroll' }, h('table', { class: 'requests' },
      h('thead', {}, h('tr', {}, ['Time', 'Method', 'Path', 'Caller', 'Status', 'Took'].map(t => h('th', { scope: 'col' }, t)))), tbody)));
  if (open) openRequest(open);
  state.timer = setInterval(() => poll().catch(() => {}), 1000);
}
// /database/1/C/E/private/records/modify → "C · E · private · records/modify"
function shortPath(path) {
  const m = /^(?:\/console\/ws)?\/database\/1\/([^/]+)\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
  return m ? m[1] + ' · ' + m[2] + ' · ' + m[3] + ' · ' + m[4] : path;
}
function pretty(text) {
  if (!text) return '';
  try { return toJSON(parseJSON(text), 2); } catch (e) { return text; }
}

// MARK: notifications

// The notifications this console receives as its own device ('console') of the chosen user, as
// they fire: a change from the CLI, an app or another device that matches one of the user's
// subscriptions (a device never hears of its own changes, as in CloudKit).
async function renderNotifications(c, e) {
  const o = state.overview;
  const containers = o.containers.map(x => x.containerIdentifier);
  c = c || o.defaultContainer || containers[0];
  e = e || 'development';
  crumbs([['ck', '#/'], ['Notifications']]);
  if (!c) return show(h('h1', {}, 'Notifications'), note('No containers yet.'));
  const list = h('ol', { class: 'notifications', 'aria-live': 'polite' });
  const picker = h('select', { id: 'notes-container', onchange: ev => { location.hash = link(['notifications', ev.target.value, e]); } },
    containers.map(x => h('option', { value: x, selected: x === c }, x)));
  const envs = h('select', { id: 'notes-env', onchange: ev => { location.hash = link(['notifications', c, ev.target.value]); } },
    ['development', 'production'].map(x => h('option', { value: x, selected: x === e }, x)));
  const item = n => h('li', {},
    h('div', {}, h('strong', {}, n.notificationType || 'notification'), ' ', n.subscriptionID ? 'from subscription ' + n.subscriptionID : '',
      n.queryNotificationReason ? ' · ' + n.queryNotificationReason : ''),
    h('div', { class: 'sub' }, [n.databaseScope, n.zoneID && n.zoneID.zoneName, n.recordName].filter(Boolean).join(' · ')),
    h('details', {}, h('summary', {}, 'JSON'), h('pre', { class: 'body' }, toJSON(n, 2))));
  const take = async () => {
    const answer = await consoleAPI('notifications', { container: c, environment: e, database: 'private', as: state.as });
    const fresh = answer.notifications || [];
    if (fresh.length) list.prepend(...fresh.reverse().map(item));
    const empty = main().querySelector('.waiting');
    if (empty) empty.hidden = list.children.length > 0;
  };
  show(h('h1', {}, 'Notifications'),
    h('div', { class: 'toolbar' }, h('label', { for: 'notes-container' }, 'Container'), picker, h('label', { for: 'notes-env' }, 'Environment'), envs),
    note('As the device "console" of ' + (state.as || 'this device\'s account') + ': each change that matches one of the user\'s subscriptions (ck subscribe), from the CLI, apps or other devices, arrives here as it fires. Newest first.'),
    h('p', { class: 'waiting note' }, 'Waiting for notifications…'),
    list,
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, 'ck --container ' + shellWord(c) + (state.as ? ' --as ' + shellWord(state.as) : '') + ' --device console notifications --follow --mark-read')));
  await take();
  state.timer = setInterval(() => take().catch(() => {}), 1000);
}

// MARK: users and sharing

// The data directory's users and who can discover them; the acting user's shares (with their
// participants and permissions) and subscriptions, per database.
async function renderPeople(c, e) {
  const o = state.overview;
  const containers = o.containers.map(x => x.containerIdentifier);
  c = c || o.defaultContainer || containers[0];
  e = e || 'development';
  crumbs([['ck', '#/'], ['Users & sharing']]);
  if (!c) return show(h('h1', {}, 'Users & sharing'), note('No containers yet.'));
  const priv = { c, e, s: 'private' }, pub = { c, e, s: 'public' };
  const [discover, zones, subsPrivate, subsPublic] = await Promise.all([settle(ws(pub, 'users/discover')), settle(ws(priv, 'zones/list')),
    settle(ws(priv, 'subscriptions/list')), settle(ws(pub, 'subscriptions/list'))]);
  const discoverable = new Set(((discover.v && discover.v.users) || []).map(u => u.userRecordName));
  const shareLists = zones.v ? await Promise.all((zones.v.zones || []).map(z => settle(consoleAPI('shares', { container: c, environment: e, database: 'private', as: state.as, zoneName: z.zoneID.zoneName })).then(r => [z.zoneID.zoneName, r]))) : [];
  const shares = [];
  for (const [zone, r] of shareLists) for (const s of (r.v && r.v.records) || []) shares.push([zone, s]);
  const person = p => { const u = p.userIdentity || {}; return (u.lookupInfo && (u.lookupInfo.emailAddress || u.lookupInfo.phoneNumber)) || u.userRecordName || '?'; };
  const picker = h('select', { id: 'people-container', onchange: ev => { location.hash = link(['people', ev.target.value, e]); } }, containers.map(x => h('option', { value: x, selected: x === c }, x)));
  const subsTable = (label, r) => r.err ? [h('h3', {}, label), errorBox(r.err)] : [h('h3', {}, label), (r.v.subscriptions || []).length
    ? h('table', { class: 'subscriptions' }, h('thead', {}, h('tr', {}, ['ID', 'Type', 'Zone or record type', 'Fires on'].map(t => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, r.v.subscriptions.map(s => h('tr', {}, h('td', {}, s.subscriptionID), h('td', {}, s.subscriptionType),
        h('td', {}, (s.zoneID && s.zoneID.zoneName) || (s.query && s.query.recordType) || ''), h('td', {}, (s.firesOn || []).join(', '))))))
    : note('None.')];
  show(h('h1', {}, 'Users & sharing'),
    h('div', { class: 'toolbar' }, h('label', { for: 'people-container' }, 'Container'), picker),
    h('h2', {}, 'Users of this data directory'),
    h('table', { class: 'users' }, h('thead', {}, h('tr', {}, ['Apple ID', 'Name', 'User record name', 'Discoverable', ''].map(t => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, o.users.map(u => h('tr', {}, h('td', {}, u.appleID), h('td', {}, u.name || ''), h('td', {}, h('code', {}, u.userRecordName)),
        h('td', {}, discover.err ? '?' : discoverable.has(u.userRecordName) ? 'yes' : 'no'),
        h('td', {}, u.appleID === o.device.appleID ? h('span', { class: 'badge' }, 'this device') : null))))),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, 'ck user discover --email E')),
    h('h2', {}, 'Shares of ' + (state.as || o.device.appleID || 'this device\'s account')),
    zones.err ? errorBox(zones.err) : shares.length ? shares.map(([zone, s]) => h('section', { class: 'share' },
      h('h3', {}, h('a', { href: link(['record', c, e, 'private', zone, s.recordName]) }, s.recordName), h('span', { class: 'sub' }, ' in ' + zone + ' · public permission ' + (s.publicPermission || 'NONE'))),
      h('table', {}, h('thead', {}, h('tr', {}, ['Participant', 'Role', 'Permission', 'Status'].map(t => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, (s.participants || []).map(p => h('tr', {}, h('td', {}, person(p)), h('td', {}, p.type), h('td', {}, p.permission), h('td', {}, p.acceptanceStatus))))))) : note('No shares.'),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, 'ck --zone Z share list')),
    h('h2', {}, 'Subscriptions'), subsTable('Private database', subsPrivate), subsTable('Public database', subsPublic),
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, 'ck subscription list')));
}

// MARK: faults

const FAULT_OPS = ['records/modify', 'records/lookup', 'records/query', 'zones/modify', 'zones/list', 'zones/lookup', 'changes/zone', 'changes/database',
  'subscriptions/modify', 'subscriptions/list', 'users/caller', 'assets/upload', 'account/status', 'notifications/deliver'];
const FAULT_CODES = ['THROTTLED', 'ZONE_BUSY', 'SERVICE_UNAVAILABLE', 'TRY_AGAIN_LATER', 'NETWORK_FAILURE', 'QUOTA_EXCEEDED', 'INTERNAL_ERROR', 'LIMIT_EXCEEDED',
  'CHANGE_TOKEN_EXPIRED', 'AUTHENTICATION_REQUIRED', 'AUTHENTICATION_FAILED', 'ACCESS_DENIED', 'BAD_REQUEST', 'ZONE_NOT_FOUND', 'NOT_FOUND', 'CONFLICT', 'EXISTS'];

async function renderFaults() {
  crumbs([['ck', '#/'], ['Faults']]);
  const answer = await consoleAPI('faults');
  const faults = answer.faults || [];
  const status = h('div', { class: 'status' });
  const field = (id, label, input) => [h('label', { for: id }, label), input];
  const op = h('input', { id: 'fault-op', type: 'text', list: 'fault-ops', required: true, placeholder: 'records/modify' });
  const code = h('select', { id: 'fault-error' }, FAULT_CODES.map(c => h('option', { value: c }, c)));
  const times = h('input', { id: 'fault-times', type: 'text', inputmode: 'numeric', placeholder: 'every time until cleared' });
  const retry = h('input', { id: 'fault-retry', type: 'text', inputmode: 'numeric', placeholder: 'THROTTLED, ZONE_BUSY, …' });
  const zone = h('input', { id: 'fault-zone', type: 'text', placeholder: 'any zone' });
  const record = h('input', { id: 'fault-record', type: 'text', placeholder: 'any record' });
  const num = (input, name) => {
    const t = input.value.trim();
    if (!t) return undefined;
    if (!/^\d+$/.test(t)) throw new Error(name + ' is a whole number, not "' + t + '"');
    return Number(t);
  };
  const form = h('form', { class: 'fault', onsubmit: async ev => {
    ev.preventDefault();
    try {
      const fault = { op: op.value.trim(), error: code.value };
      const n = num(times, 'times'), r = num(retry, 'retryAfter');
      if (n !== undefined) fault.times = n;
      if (r !== undefined) fault.retryAfter = r;
      if (zone.value.trim()) fault.zone = zone.value.trim();
      if (record.value.trim()) fault.record = record.value.trim();
      await consoleAPI('faults', fault);
      render();
    } catch (err) { status.replaceChildren(errorBox(err)); }
  } },
    field('fault-op', 'Operation', op), h('datalist', { id: 'fault-ops' }, FAULT_OPS.map(o => h('option', { value: o }))),
    field('fault-error', 'Fails with', code), field('fault-times', 'Times', times), field('fault-retry', 'Retry after (s)', retry),
    field('fault-zone', 'Zone', zone), field('fault-record', 'Record', record),
    h('span', {}), h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Arm')));
  const clear = async id => {
    try { await consoleAPI('faults/clear', id ? { id } : { all: true }); render(); } catch (err) { status.replaceChildren(errorBox(err)); }
  };
  show(h('h1', {}, 'Faults'),
    note('An armed fault makes the next matching operations fail as CloudKit fails them — from apps, scripts, the CLI and this console alike. Watch them fire in Live requests.'),
    faults.length ? h('table', { class: 'faults' },
      h('thead', {}, h('tr', {}, ['ID', 'Operation', 'Fails with', 'Times left', 'Scope', ''].map(t => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, faults.map(f => h('tr', {},
        h('td', {}, f.id), h('td', {}, f.op), h('td', {}, (f.error || 'drop') + (f.retryAfter ? ' (retry after ' + f.retryAfter + ' s)' : '')),
        h('td', {}, f.times == null ? 'until cleared' : String(f.times)),
        h('td', {}, ['zone', 'record', 'user', 'device'].filter(k => f[k]).map(k => k + ' ' + f[k]).join(', ') || 'everything'),
        h('td', {}, h('button', { type: 'button', class: 'small', onclick: () => clear(f.id) }, 'Clear ' + f.id))))))
      : note('No faults armed.'),
    faults.length ? h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: () => clear(null) }, 'Clear all')) : null,
    h('h2', {}, 'Arm a fault'), form, status,
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, 'ck fault add --op OP --error CODE [--times N] [--retry-after S] [--zone Z] [--record R]')));
}

// MARK: schema

// A line diff (longest common subsequence): what a deploy adds ('+'), what production has that
// development lacks ('-'), the rest (' ').
function lineDiff(a, b) {
  const n = a.length, m = b.length;
  const L = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([' ', a[i]]); i++; j++; } else if (L[i + 1][j] >= L[i][j + 1]) out.push(['-', a[i++]]); else out.push(['+', b[j++]]);
  }
  while (i < n) out.push(['-', a[i++]]);
  while (j < m) out.push(['+', b[j++]]);
  return out;
}

function allows(f) {
  const q = [], name = f.name === '___recordID' ? 'recordName' : f.name;
  if (f.queryable) q.push("--filter '" + name + " == …'");
  if (f.sortable) q.push('--sort ' + name);
  if (f.searchable) q.push("--filter '" + name + " CONTAINS_ANY_TOKENS …'");
  return q.join(', ');
}

async function renderSchema(container) {
  crumbs([['ck', '#/'], ['Schema of ' + container]]);
  const q = e => 'container=' + encodeURIComponent(container) + '&environment=' + e;
  const [dev, prod, types] = await Promise.all([consoleAPI('schema/text?' + q('development')), consoleAPI('schema/text?' + q('production')), consoleAPI('schema?' + q('development'))]);
  const diff = lineDiff(prod.schema.split('\n'), dev.schema.split('\n'));
  const pending = diff.some(([k]) => k !== ' ');
  const status = h('div', { class: 'status' });
  const deployBox = h('div', {});
  // The development schema the preview showed, by fingerprint: the deploy names it.
  let previewed = null;
  async function preview() {
    try {
      const p = await consoleAPI('schema/deploy', { container, dryRun: true });
      previewed = p.development;
      const adds = (p.recordTypesAdded || []).map(t => 'record type ' + t).concat((p.fieldsAdded || []).map(f => 'field ' + f));
      deployBox.replaceChildren(h('div', { class: 'confirm', role: 'alertdialog', 'aria-label': 'Deploy to production' },
        h('p', {}, 'Deploy the development schema to production? ' + (adds.length ? 'It adds ' + adds.join(', ') + ', and every index and GRANT development has.' : 'It adds no type or field; indexes, GRANTs and roles become development\'s.') + ' Production is additive: this cannot be taken back.'),
        h('button', { type: 'button', class: 'primary', onclick: deploy }, 'Deploy to production'),
        h('button', { type: 'button', onclick: () => deployBox.replaceChildren() }, 'Cancel')));
      deployBox.querySelector('button').focus();
    } catch (err) { status.replaceChildren(errorBox(err)); }
  }
  async function deploy() {
    try {
      await consoleAPI('schema/deploy', { container, dryRun: false, ifDevelopment: previewed });
      state.schemas.clear();
      await renderSchema(container);
      main().prepend(note('Deployed: production now has the development schema.'));
    } catch (err) { status.replaceChildren(errorBox(err)); }
  }
  show(h('h1', {}, 'Schema of ' + container),
    h('h2', {}, 'Record types (development)'),
    (types.recordTypes || []).map(t => h('section', { class: 'record-type' },
      h('h3', {}, t.name),
      h('table', { class: 'schema-fields' },
        h('thead', {}, h('tr', {}, ['Field', 'Type', 'Indexes', 'Queries they allow'].map(x => h('th', { scope: 'col' }, x)))),
        h('tbody', {}, t.fields.filter(f => !f.name.startsWith('___') || f.queryable || f.sortable).map(f => h('tr', {},
          h('th', { scope: 'row' }, f.name), h('td', { class: 'type' }, f.type),
          h('td', {}, ['queryable', 'sortable', 'searchable'].filter(k => f[k]).map(k => h('span', { class: 'badge' }, k.toUpperCase()))),
          h('td', {}, h('code', {}, allows(f))))))))),
    h('h2', {}, 'Development → production'),
    pending ? h('pre', { class: 'schema-diff', 'aria-label': 'What a deploy changes' }, diff.map(([k, line]) => h('span', { class: k === '+' ? 'add' : k === '-' ? 'del' : '' }, k + ' ' + line + '\n')))
      : note('Production has the development schema: nothing to deploy.'),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'danger', disabled: !pending, onclick: preview }, 'Deploy to production…')),
    deployBox, status,
    h('p', { class: 'command' }, h('span', { class: 'label' }, 'Same as '), h('code', {}, 'ck --container ' + shellWord(container) + ' schema deploy [--dry-run]')),
    h('details', {}, h('summary', {}, 'Development .ckdb'), h('pre', { class: 'body' }, dev.schema)),
    h('details', {}, h('summary', {}, 'Production .ckdb'), h('pre', { class: 'body' }, prod.schema)));
}

// MARK: start

document.getElementById('actor').addEventListener('change', switchActor);
window.addEventListener('hashchange', async () => { await takeKeyFromURL(); render(); });
takeKeyFromURL().then(render);
