"""Write tests/golden/locust/<run>.json from the Locust fixtures with a deliberately simple,
independent reader: only the csv and json modules of the standard library, no perfkit import.

Run once, review the output by eye against the files, commit both:

    .venv/bin/python tests/golden/make_golden_locust.py

Rules it encodes (the spec of issue 2, written out plainly):
- the --json totals win over _stats.csv (which lags by the last second);
- percentiles of the JSON buckets follow Locust: expand the rounded response times into a sorted
  list and take element int(n * fraction) (the last one for 100%);
- throughput = requests / (latest last_request_timestamp - earliest start_time), unless the CSV
  Aggregated row has the same request and failure counts as the JSON, in which case the CSV's
  printed Requests/s is used.
"""

import csv
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "locust"
OUT = HERE / "locust"
RUNS = {"clean_u20": "clean", "failures_u30": "failures", "processes2_u40": "procs"}
FRACTIONS = {"50": 0.50, "66": 0.66, "75": 0.75, "80": 0.80, "90": 0.90, "95": 0.95,
             "98": 0.98, "99": 0.99, "99.9": 0.999, "99.99": 0.9999, "100": 1.0}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def last_json_array(path):
    text = path.read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    docs, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        doc, pos = decoder.raw_decode(text, pos)
        docs.append(doc)
    return [d for d in docs if d][-1], len(docs)


def percentiles(buckets, n):
    values = []
    for key in sorted(buckets, key=float):
        values.extend([float(key)] * buckets[key])
    return {q: values[min(int(n * f), len(values) - 1)] for q, f in FRACTIONS.items()}


def json_rows(entries):
    total = {"name": "Aggregated", "method": None, "num_requests": 0, "num_none_requests": 0,
             "num_failures": 0, "total_response_time": 0.0, "total_content_length": 0,
             "response_times": {}, "min_response_time": None, "max_response_time": 0.0}
    for e in entries:
        for k in ("num_requests", "num_none_requests", "num_failures", "total_response_time",
                  "total_content_length"):
            total[k] += e.get(k, 0)
        for k, v in e["response_times"].items():
            total["response_times"][k] = total["response_times"].get(k, 0) + v
        mins = [m for m in (total["min_response_time"], e["min_response_time"]) if m is not None]
        total["min_response_time"] = min(mins) if mins else None
        total["max_response_time"] = max(total["max_response_time"], e["max_response_time"])
    start = min(e["start_time"] for e in entries)
    last = max(e["last_request_timestamp"] for e in entries)
    rows = {}
    for e in entries + [total]:
        key = "Aggregated" if e is total else f"{e['method']} {e['name']}"
        timed = e["num_requests"] - e.get("num_none_requests", 0)
        rows[key] = {
            "requests": e["num_requests"],
            "failures": e["num_failures"],
            "latency_mean_ms": e["total_response_time"] / timed,
            "latency_min_ms": e["min_response_time"],
            "latency_max_ms": e["max_response_time"],
            "histogram_count": sum(e["response_times"].values()),
            "percentiles_ms": percentiles(e["response_times"], timed),
            "json_throughput_rps": e["num_requests"] / (last - start),
            "json_duration_s": last - start,
        }
    return rows


def stats_rows(path):
    rows = {}
    for r in read_csv(path):
        key = "Aggregated" if r["Type"] == "" and r["Name"] == "Aggregated" else \
            f"{r['Type']} {r['Name']}"
        rows[key] = {
            "requests": int(r["Request Count"]),
            "failures": int(r["Failure Count"]),
            "latency_mean_ms": float(r["Average Response Time"]),
            "latency_min_ms": float(r["Min Response Time"]),
            "latency_max_ms": float(r["Max Response Time"]),
            "throughput_rps": float(r["Requests/s"]),
            "transfer_bytes_per_s": float(r["Average Content Size"]) * float(r["Requests/s"]),
            "percentiles_ms": {k[:-1]: float(v) for k, v in r.items() if k.endswith("%")},
        }
    return rows


def history_summary(path):
    rows = read_csv(path)
    per_name = {}
    for r in rows:
        key = "Aggregated" if r["Type"] == "" and r["Name"] == "Aggregated" else \
            f"{r['Type']} {r['Name']}"
        per_name.setdefault(key, []).append(r)
    return {
        "rows": len(rows),
        "full_history": any(r["Name"] != "Aggregated" for r in rows),
        "rows_per_name": {k: len(v) for k, v in per_name.items()},
        "first_timestamp_s": int(rows[0]["Timestamp"]),
        "last_aggregated": {
            "timestamp_s": int(per_name["Aggregated"][-1]["Timestamp"]),
            "user_count": int(per_name["Aggregated"][-1]["User Count"]),
            "total_requests": int(per_name["Aggregated"][-1]["Total Request Count"]),
            "total_failures": int(per_name["Aggregated"][-1]["Total Failure Count"]),
        },
        "na_rows": sum(1 for r in rows if "N/A" in r.values()),
    }


#: the wild fixtures (issue 10: every request failing), written by ``perfkit run`` with
#: ``--csv locust`` and the --json output in stdout.txt
WILD = HERE.parent / "fixtures" / "wild" / "locust"
WILD_OUT = HERE / "wild" / "locust"


def make(run_dir, prefix, root=FIXTURES, stdout="run.stdout"):
    d = root / run_dir
    entries, n_docs = last_json_array(d / stdout)
    from_json = json_rows(entries)
    from_csv = stats_rows(d / f"{prefix}_stats.csv")
    csv_final = (from_csv["Aggregated"]["requests"], from_csv["Aggregated"]["failures"]) == (
        from_json["Aggregated"]["requests"], from_json["Aggregated"]["failures"])
    expected = {}
    for key, row in from_json.items():
        exp = {k: v for k, v in row.items() if not k.startswith("json_")}
        if csv_final:
            exp["throughput_rps"] = from_csv[key]["throughput_rps"]
        else:
            exp["throughput_rps"] = row["json_throughput_rps"]
            exp["duration_s"] = row["json_duration_s"]
        exp["csv_requests"] = from_csv.get(key, {}).get("requests")
        expected[key] = exp
    failures = [{"method": r["Method"], "name": r["Name"], "error": r["Error"],
                 "occurrences": int(r["Occurrences"])}
                for r in read_csv(d / f"{prefix}_failures.csv")]
    exceptions = [{"count": int(r["Count"]), "message": r["Message"], "nodes": r["Nodes"],
                   "traceback_lines": r["Traceback"].count("\n")}
                  for r in read_csv(d / f"{prefix}_exceptions.csv")]
    return {
        "json_documents": n_docs,
        "csv_final": csv_final,
        "runs": expected,
        "stats_csv": from_csv,
        "history": history_summary(d / f"{prefix}_stats_history.csv"),
        "failures": failures,
        "exceptions": exceptions,
    }


def main():
    OUT.mkdir(exist_ok=True)
    for run_dir, prefix in RUNS.items():
        golden = make(run_dir, prefix)
        path = OUT / f"{run_dir}.json"
        path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print("wrote", path)
    WILD_OUT.mkdir(parents=True, exist_ok=True)
    for run_dir in sorted(p.name for p in WILD.iterdir() if p.is_dir()):
        golden = make(run_dir, "locust", WILD, "stdout.txt")
        path = WILD_OUT / f"{run_dir}.json"
        path.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print("wrote", path)


if __name__ == "__main__":
    main()
