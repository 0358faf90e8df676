#!/usr/bin/env python3
"""Regenerates the bad-input corpus (the files are committed; CI does not need Python).

payloads/*.json  documents fed on stdin to every command that reads JSON
names.json       record/zone/subscription/device names every naming command must refuse
tokens.json      change tokens every token-taking command must refuse
flags.json       unknown flags every command must refuse
"""
import json, os, base64

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "payloads")
os.makedirs(out, exist_ok=True)
for f in os.listdir(out):
    os.remove(os.path.join(out, f))

cases = {}
def add(name, data):
    cases[name] = data if isinstance(data, bytes) else data.encode()

# Malformed JSON.
for i, s in enumerate(['', ' ', '{', '}', '[', '{"a":', '{"a" 1}', "{'a': 1}", '{"a": 1,}', '[1, 2,]', '{"a": 01}',
                       '{"a": .5}', '{"a": 1e}', '{"a": -}', '{"a": tru}', '{"a": nul}', '{"a": NaN}', '{"a": Infinity}',
                       '{"a": "unterminated}', '{"a": "\\x41"}', '{"a": "\\u12"}', '{"a": "tab\there"}', '{"a":1}{"b":2}',
                       '{"a":1} trailing', '/* comment */ {}', '{"a": [1, 2}', '{"a": {"b": 1]}', '\ufeff{"a": 1}']):
    add(f"malformed-{i:02d}", s)
# Invalid UTF-8 and control bytes.
add("utf8-lone-continuation", b'{"recordName": "\x80", "recordType": "T"}')
add("utf8-truncated", b'{"recordName": "\xe2\x82", "recordType": "T"}')
add("utf8-overlong", b'{"recordName": "\xc0\xaf", "recordType": "T"}')
add("utf8-surrogate", b'{"recordName": "\xed\xa0\x80", "recordType": "T"}')
add("nul-byte-raw", b'{"recordName": "a\x00b", "recordType": "T"}')
# Deep nesting.
add("deep-arrays", "[" * 300 + "]" * 300)
add("deep-objects", '{"a":' * 300 + "1" + "}" * 300)
add("deep-fields", json.dumps({"recordName": "x", "recordType": "T", "fields": {"f": {"value": json.loads("[" * 200 + "]" * 200)}}}))
# Wrong top-level types.
for i, v in enumerate([1, -1.5, "string", True, None, [1, 2], [[]]]):
    add(f"toplevel-{i}", json.dumps(v))
# Wrong types and shapes inside records.
rec = lambda **kw: json.dumps({**{"recordName": "x", "recordType": "T"}, **kw})
add("record-name-number", json.dumps({"recordName": 5, "recordType": "T", "operations": 1, "query": 1}))
add("record-type-object", json.dumps({"recordName": "x", "recordType": {}, "operations": "x", "query": []}))
add("fields-array", json.dumps({"recordName": "x", "recordType": "T", "fields": [], "operations": {}}))
add("field-int-string", rec(fields={"n": {"type": "INT64", "value": "abc"}}))
add("field-int-fraction", rec(fields={"n": {"type": "INT64", "value": 1.5}}))
add("field-int-overflow", rec(fields={"n": {"type": "INT64", "value": 99999999999999999999999}}))
add("field-double-string", rec(fields={"n": {"type": "DOUBLE", "value": "x"}}))
add("field-timestamp-string", rec(fields={"n": {"type": "TIMESTAMP", "value": "yesterday"}}))
add("field-string-list-object", rec(fields={"n": {"type": "STRING_LIST", "value": {"a": 1}}}))
add("field-int-list-mixed", rec(fields={"n": {"type": "INT64_LIST", "value": [1, "2"]}}))
add("field-location-partial", rec(fields={"n": {"type": "LOCATION", "value": {"latitude": 1}}}))
add("field-location-range", rec(fields={"n": {"type": "LOCATION", "value": {"latitude": 91, "longitude": 0}}}))
add("field-reference-number", rec(fields={"n": {"type": "REFERENCE", "value": 5}}))
add("field-reference-action", rec(fields={"n": {"type": "REFERENCE", "value": {"recordName": "y", "action": "EXPLODE"}}}))
add("field-bytes-not-base64", rec(fields={"n": {"type": "BYTES", "value": "%%%"}}))
add("field-unknown-type", rec(fields={"n": {"type": "BLOB", "value": 1}}))
add("field-no-value", rec(fields={"n": {"type": "STRING"}}))
add("field-underscore", rec(fields={"_secret": {"value": 1}}))
add("field-dotdot", rec(fields={"../x": {"value": 1}}))
add("field-slash", rec(fields={"a/b": {"value": 1}}))
add("field-nul", rec(fields={"a\u0000b": {"value": 1}}))
add("field-long", rec(fields={"f" * 300: {"value": 1}}))
add("field-digit-first", rec(fields={"1abc": {"value": 1}}))
add("field-empty-name", rec(fields={"": {"value": 1}}))
add("asset-unknown-checksum", rec(fields={"a": {"type": "ASSETID", "value": {"fileChecksum": "AAAA"}}}))
# Bad names inside records. `/`, `\\` and dots are ordinary in record names (as in CloudKit);
# in zone names they are refused.
for i, n in enumerate(["a\u0000b", "r" * 300, "r" * 256, "", "line\nbreak", "tab\tname", "x\u007f"]):
    add(f"record-name-bad-{i}", json.dumps({"recordName": n, "recordType": "T", "fields": {}}))
for i, n in enumerate(["../x", "a/b", "..", ".", "a\\b", "/"]):
    add(f"zone-name-bad-{i}", json.dumps({"recordName": "x", "recordType": "T", "zoneID": {"zoneName": n}}))
add("record-type-underscore", json.dumps({"recordName": "x", "recordType": "_T"}))
add("record-type-long", json.dumps({"recordName": "x", "recordType": "T" * 300}))
add("record-type-slash", json.dumps({"recordName": "x", "recordType": "a/b"}))
add("zone-name-bad", json.dumps({"recordName": "x", "recordType": "T", "zoneID": {"zoneName": "../../etc"}}))
add("unknown-record-key", json.dumps({"recordName": "x", "recordType": "T", "surprise": 1}))
# Oversized values.
# (A record over 1 MB is built by the test itself, to keep the repository small.)
add("huge-field-count", rec(fields={f"f{i}": {"value": i} for i in range(300)}))
add("huge-number", '{"recordName": "x", "recordType": "T", "fields": {"n": {"value": 1' + "0" * 400 + '}}}')
add("huge-exponent", '{"recordName": "x", "recordType": "T", "fields": {"n": {"value": 1e400}}}')

for name, data in sorted(cases.items()):
    with open(os.path.join(out, name + ".json"), "wb") as f:
        f.write(data)

names = ["../x", "a/b", "..", ".", "/", "/etc/passwd", "../../../../tmp/ck-escape", "r" * 256, "r" * 300, "", "a\\b",
         "line\nbreak", "tab\tname", "x\u007f", "x\u0000y"]
with open(os.path.join(here, "names.json"), "w") as f:
    json.dump(names, f, indent=1)

payload = base64.urlsafe_b64encode(b'{"e":0,"k":"zone","q":1,"s":"x"}').decode().rstrip("=")
tokens = ["", "x", "ck1.", "ck1..", "ck1.e30.", "ck1.e30.AAAAAAAAAAAAAAAAAAAAAA", "ck1." + payload + ".AAAAAAAAAAAAAAAAAAAAAA",
          "ck1." + payload, "ck2." + payload + ".AAAAAAAAAAAAAAAAAAAAAA", "ck1.!!!.???", "ck1." + "A" * 5000 + ".B",
          "null", "{}", "../../secret", "ck1.eyJ9.AAAAAAAAAAAAAAAAAAAAAA"]
with open(os.path.join(here, "tokens.json"), "w") as f:
    json.dump(tokens, f, indent=1)

# --zone-name is an alias of --zone (cktool), so the near miss is --zone-named.
flags = ["--bogus", "--zone-named=x", "-x", "--fields-jsonx", "--FORCE", "--since-token", "---", "--=", "--dry", "--as-json"]
with open(os.path.join(here, "flags.json"), "w") as f:
    json.dump(flags, f, indent=1)
print(len(cases), "payloads,", len(names), "names,", len(tokens), "tokens,", len(flags), "flags")
