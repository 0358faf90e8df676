// Apple's CloudKit JS, unchanged, against ck serve: each step a CloudKit JS call, its result
// checked, one JSON line per step on stdout. Run by EndToEndTests/CloudKitJSTests when node
// and a scratch copy of cloudkit.js exist (never committed: Apple's licence forbids it).
//
//   node harness.js CLOUDKIT_JS SERVER_URL CONTAINER API_TOKEN WEB_AUTH_TOKEN
//
// CloudKit JS has no base-URL option: services.fetch rewrites Apple's origin to ck serve and
// passes ck serve's own URLs (uploads, long-polls) through (cloudkit-js.md §1).
"use strict";
const [cloudkitPath, server, containerID, apiToken, session] = process.argv.slice(2);
globalThis.document = { querySelector: () => null }; // setUpAuth's button code in Node (cloudkit-js.md §3)
const CloudKit = require(cloudkitPath);

const results = [];
function step(name, ok, detail) {
  results.push({ step: name, ok: !!ok, detail });
  process.stdout.write(JSON.stringify({ step: name, ok: !!ok, detail }) + "\n");
}

let token = session;
const rotated = [];
CloudKit.configure({
  services: {
    fetch: (url, options) => {
      const target = url.replace(/^https:\/\/[a-z.]*apple-cloudkit\.com/, server);
      if (!target.startsWith(server)) return Promise.reject(new Error("refused: " + url));
      const { Promise: _p, exposeImplementation: _e, ...rest } = options || {};
      return fetch(target, rest);
    },
    authTokenStore: {
      getToken: () => token,
      putToken: (_c, t) => { if (t && t !== token) rotated.push(t); token = t; },
    },
    logger: { log() {}, info() {}, warn() {}, error() {} },
  },
  containers: [{ containerIdentifier: containerID, environment: "development", apiTokenAuth: { apiToken, persist: true } }],
});

async function main() {
  const container = CloudKit.getDefaultContainer();
  const me = await container.setUpAuth();
  step("setUpAuth", me && me.userRecordName, me && me.userRecordName);

  const db = container.privateCloudDatabase;
  const zone = await db.saveRecordZones([{ zoneName: "CkjsZone" }]);
  step("saveRecordZones", !zone.hasErrors && zone.zones.length === 1, zone.zones.map((z) => z.zoneID.zoneName));
  const zoneID = { zoneName: "CkjsZone" };

  const saved = await db.saveRecords([1, 2, 3].map((n) => ({ recordType: "CkjsItem", recordName: "item-" + n, fields: { title: { value: "item " + n }, n: { value: n } } })), { zoneID });
  step("saveRecords", !saved.hasErrors && saved.records.length === 3, saved.records.map((r) => r.recordName));

  const fetched = await db.fetchRecords(["item-1", "missing"], { zoneID });
  step("fetchRecords", fetched.records.length === 1 && fetched.errors.length === 1 && fetched.errors[0].ckErrorCode === "NOT_FOUND",
       { records: fetched.records.map((r) => r.recordName), errors: fetched.errors.map((e) => e.ckErrorCode) });

  const page = await db.performQuery({ recordType: "CkjsItem", sortBy: [{ fieldName: "n", ascending: false }] }, { zoneID, resultsLimit: 2 });
  const next = page.moreComing ? await db.performQuery(page) : null;
  step("performQuery", page.records.length === 2 && page.records[0].fields.n.value === 3 && next && next.records.length === 1,
       { first: page.records.map((r) => r.recordName), next: next && next.records.map((r) => r.recordName) });

  // A query of a record type the schema does not have: CloudKit refuses it, in development too.
  const unknown = await db.performQuery({ recordType: "CkjsNoSuchType" }, { zoneID }).then(() => null, (e) => e);
  step("unknown record type", unknown && unknown.ckErrorCode === "BAD_REQUEST" && /Did not find record type: CkjsNoSuchType/.test(unknown.reason),
       unknown && { ckErrorCode: unknown.ckErrorCode, reason: unknown.reason });

  const item1 = fetched.records[0];
  const updated = await db.saveRecords([{ recordName: "item-1", recordChangeTag: item1.recordChangeTag, fields: { title: { value: "updated" } } }], { zoneID });
  step("update with tag", !updated.hasErrors && updated.records[0].fields.title.value === "updated", updated.records[0] && updated.records[0].recordChangeTag);
  const stale = await db.saveRecords([{ recordName: "item-1", recordChangeTag: item1.recordChangeTag, fields: { title: { value: "stale" } } }], { zoneID });
  step("stale tag is CONFLICT", stale.hasErrors && stale.errors[0].ckErrorCode === "CONFLICT", stale.errors.map((e) => e.ckErrorCode));

  const changes = await db.fetchRecordZoneChanges([{ zoneID }]);
  const z = changes.zones && changes.zones[0];
  step("fetchRecordZoneChanges", z && z.records.length === 3 && z.syncToken && z.moreComing === false, z && z.records.map((r) => r.recordName));

  const deleted = await db.deleteRecords(["item-3"], { zoneID });
  step("deleteRecords", !deleted.hasErrors, deleted.records.map((r) => r.recordName));
  const after = await db.fetchRecordZoneChanges([{ zoneID, syncToken: z.syncToken }]);
  const za = after.zones[0];
  step("changes since the token", za.records.length === 1 && za.records[0].recordName === "item-3" && za.records[0].deleted === true, za.records);

  // zoneWide: every zone of the database in one query (CloudKit JS drops the zoneID).
  const inDefault = await db.saveRecords([{ recordType: "CkjsItem", recordName: "item-default", fields: { n: { value: 0 } } }]);
  const wide = await db.performQuery({ recordType: "CkjsItem", sortBy: [{ fieldName: "n", ascending: false }] }, { zoneWide: true });
  const wideNames = wide.records.map((r) => r.recordName + "@" + (r.zoneID && r.zoneID.zoneName));
  step("performQuery zoneWide", !inDefault.hasErrors && wideNames.join() === "item-2@CkjsZone,item-1@CkjsZone,item-default@_defaultZone", wideNames);
  // Options CloudKit JS sends inside each operation, and numbersAsStrings on a lookup.
  const four = await db.saveRecords([{ recordType: "CkjsItem", recordName: "item-4", fields: { title: { value: "four" }, n: { value: 4 } } }],
                                    { zoneID, desiredKeys: ["n"], numbersAsStrings: true });
  const f4 = four.records[0];
  step("saveRecords desiredKeys numbersAsStrings", !four.hasErrors && Object.keys(f4.fields).join() === "n" && f4.fields.n.value === "4", f4 && f4.fields);
  // An option CloudKit JS passes on in the lookup body as it is.
  const masked = await db.fetchRecords(["item-1"], { zoneID, assetPrivacyMaskType: "NONE" });
  step("fetchRecords assetPrivacyMaskType", !masked.hasErrors && masked.records.length === 1, masked.records.map((r) => r.recordName));
  const asStrings = await db.fetchRecords(["item-1"], { zoneID, numbersAsStrings: true });
  step("fetchRecords numbersAsStrings", !asStrings.hasErrors && asStrings.records[0].fields.n.value === "1", asStrings.records[0] && asStrings.records[0].fields);

  const dbChanges = await db.fetchDatabaseChanges();
  step("fetchDatabaseChanges", Array.isArray(dbChanges.zones) && dbChanges.syncToken, dbChanges.zones.map((x) => x.zoneID.zoneName));

  const asset = await db.saveRecords([{ recordType: "CkjsDoc", recordName: "doc-1", fields: { file: { value: Buffer.from("hello from CloudKit JS") } } }], { zoneID });
  const file = asset.records[0] && asset.records[0].fields.file.value;
  let bytes = null;
  if (file && file.downloadURL) bytes = await (await fetch(file.downloadURL)).text();
  step("asset upload and download", !asset.hasErrors && bytes === "hello from CloudKit JS", { downloadURL: file && file.downloadURL, bytes });

  const pub = await container.publicCloudDatabase.performQuery({ recordType: "CkjsItem" });
  step("public performQuery", Array.isArray(pub.records), pub.records.length);

  const zones = await db.fetchAllRecordZones();
  step("fetchAllRecordZones", zones.zones.some((x) => x.zoneID.zoneName === "CkjsZone"), zones.zones.map((x) => x.zoneID.zoneName));

  const sub = await db.saveSubscriptions([{ subscriptionType: "zone", subscriptionID: "ckjs-zone", zoneID }]);
  step("saveSubscriptions", !sub.hasErrors && sub.subscriptions.length === 1, sub.subscriptions.map((s) => s.subscriptionID));

  // Notifications: register, listen, then a write from elsewhere (the test writes with the CLI
  // when it reads this line).
  await container.registerForNotifications();
  const note = new Promise((resolve) => container.addNotificationListener((n) => resolve(n)));
  step("registerForNotifications", container.isRegisteredForNotifications, null);
  const got = await Promise.race([note, new Promise((r) => setTimeout(() => r(null), 20000))]);
  step("notification", got && (got.subscriptionID === "ckjs-zone" || (got.ck && got.ck.fet)), got && (got.notificationType || got));

  step("done", results.every((r) => r.ok), { rotated: rotated.length });
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

main().catch((e) => {
  step("error", false, { message: String(e && (e.reason || e.message || e)), code: e && e.ckErrorCode, serverErrorCode: e && e.serverErrorCode });
  process.exit(1);
});
