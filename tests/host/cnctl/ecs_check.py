#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ecs_check.py FIELDS VALUES DOCS: every field of every document in DOCS
(`cnctl proc --ecs` output, one JSON document a line) checked against the
published Elastic Common Schema: its name must be a field of FIELDS
(ecs_fields.csv, rows of ECS's generated/csv/fields.csv) and its value of
that field's type (an array where ECS normalizes to one, never elsewhere);
event.kind, event.category and event.type must take values ECS allows
(VALUES, ecs_event_values.csv), event.type one its category expects. cnctl's
own keys live under "cnctl", which no ECS field set uses, and are not ECS
fields: they are left out. Prints one line per problem and exits 1, or
prints how many documents and fields were checked and exits 0."""
import csv
import datetime
import json
import re
import sys

RFC3339_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")
CUSTOM = "cnctl"


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def flatten(doc, prefix=""):
    """(dotted name, value) of every leaf; an object is a field set."""
    for key, value in doc.items():
        name = prefix + key
        if isinstance(value, dict):
            yield from flatten(value, name + ".")
        else:
            yield name, value


def type_ok(ecs_type, value):
    if ecs_type == "date":
        if not isinstance(value, str) or not RFC3339_UTC.fullmatch(value):
            return False
        datetime.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
        return True
    if ecs_type in ("keyword", "wildcard", "match_only_text", "text", "constant_keyword"):
        return isinstance(value, str)
    if ecs_type == "long":
        return isinstance(value, int) and not isinstance(value, bool)
    if ecs_type == "boolean":
        return isinstance(value, bool)
    return False


def main():
    fields = {r["Field"]: r for r in rows(sys.argv[1])}
    allowed = {}
    expected_types = {}
    for r in rows(sys.argv[2]):
        allowed.setdefault(r["field"], set()).add(r["value"])
        if r["field"] == "event.category":
            expected_types[r["value"]] = set(r["expected_event_types"].split())
    assert not any(f.split(".")[0] == CUSTOM for f in fields), "cnctl is an ECS field set"
    problems = []
    ndocs = nfields = 0
    with open(sys.argv[3], "rb") as f:
        for no, raw in enumerate(f, 1):
            doc = json.loads(raw)
            ndocs += 1
            flat = dict(flatten(doc))
            for name in ("@timestamp", "ecs.version", "event.kind", "event.action"):
                if name not in flat:
                    problems.append("line %d: no %s" % (no, name))
            for name, value in flat.items():
                if name.split(".")[0] == CUSTOM:
                    continue
                nfields += 1
                spec = fields.get(name)
                if spec is None:
                    problems.append("line %d: %s is no ECS field" % (no, name))
                    continue
                is_array = spec["Normalization"] == "array"
                values = value if isinstance(value, list) else [value]
                if isinstance(value, list) != is_array:
                    problems.append("line %d: %s is %s an array (ECS: %s)" %
                                    (no, name, "" if isinstance(value, list) else "not",
                                     spec["Normalization"] or "a single value"))
                for v in values:
                    if not type_ok(spec["Type"], v):
                        problems.append("line %d: %s = %r is no %s" % (no, name, v, spec["Type"]))
                if name in allowed:
                    for v in values:
                        if v not in allowed[name]:
                            problems.append("line %d: %s = %r is not allowed" % (no, name, v))
            listed = {k: v if isinstance(v, list) else [v] for k, v in flat.items()}
            for category in listed.get("event.category", []):
                for t in listed.get("event.type", []):
                    if t not in expected_types.get(category, ()):
                        problems.append("line %d: event.type %r is not expected for "
                                        "category %r" % (no, t, category))
    for p in problems:
        print(p)
    if problems or not ndocs:
        print("FAIL: %d problems in %d documents" % (len(problems), ndocs))
        return 1
    print("ok: %d documents, %d ECS fields valid" % (ndocs, nfields))
    return 0


if __name__ == "__main__":
    sys.exit(main())
