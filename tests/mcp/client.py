"""The official Python MCP SDK (`pip install mcp`) against `sparkdiag mcp` over stdio.

Starts the server as an assistant would, calls every tool on real committed logs and checks
each answer against the command line's own JSON (`sparkdiag analyze/diff/plan/rules --format
json`). Run by tests/mcp.rs:

    python client.py SPARKDIAG_BINARY REPO_ROOT

Prints one line per check group and exits 1 on the first wrong answer.
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
import mcp.types as types

BIN = str(Path(sys.argv[1]).resolve())
REPO = Path(sys.argv[2]).resolve()
TESTDATA = REPO / "testdata"
FAILED = "logs/failed/local-1796049483373"
BEFORE = "logs/diff/loop-serial/local-1796117427923.zstd"
AFTER = "logs/diff/loop-threadpool/local-1796117371922.zstd"
PLAN = "plans/antipattern-many-exchanges.txt"
FETCH_FAILED = "logs/trust/fetch-failed"
CAP = 64 * 1024
checks = 0


def cli_json(*args):
    out = subprocess.run([BIN, *args], capture_output=True, check=False, cwd=TESTDATA)
    assert out.returncode in (0, 1), f"sparkdiag {args}: {out.stderr.decode()}"
    return json.loads(out.stdout)


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


async def call(session, name, **arguments):
    result = await session.call_tool(name, arguments)
    text = result.content[0].text
    check(len(text.encode()) <= CAP, f"{name}: {len(text)} bytes, over the cap")
    check(not result.is_error, f"{name} {arguments}: error {text}")
    return json.loads(text)


async def refused(session, name, **arguments):
    result = await session.call_tool(name, arguments)
    check(result.is_error, f"{name} {arguments} was not refused: {result.content[0].text[:200]}")
    return result.content[0].text


def same_findings(rows, findings, what):
    for row, f in zip(rows, findings):
        for key in ("rule", "severity", "title", "impact_ms", "recommendation", "scope"):
            check(row[key] == f[key], f"{what}: rank {row['rank']} {key}: {row[key]!r} != {f[key]!r}")


async def every_tool(session):
    init_tools = await session.list_tools()
    names = {t.name for t in init_tools.tools}
    expected = {
        "list_applications", "analyze_application", "get_finding", "get_stage", "get_job",
        "get_executor", "failure_postmortem", "compare_runs", "analyze_plan", "what_if", "list_rules",
    }
    check(names == expected, f"tools: {sorted(names)}")
    for t in init_tools.tools:
        check(len(t.description) > 80 and t.input_schema["type"] == "object", f"{t.name}: schema")
        check(t.annotations.read_only_hint is True, f"{t.name}: not marked read-only")
    print(f"tools/list: {len(names)} tools, each described, read-only")

    failed = cli_json("analyze", FAILED, "--format", "json")

    listed = await call(session, "list_applications", path="logs/failed")
    check(listed["applications_total"] == 1, f"list: {listed}")
    app = listed["applications"][0]
    check(app["app_id"] == failed["application"]["id"], "list: id")
    check(app["status"] == failed["application"]["status"], "list: status")
    check(app["duration_ms"] == failed["application"]["duration_ms"], "list: duration")
    check(app["findings"] == len(failed["findings"]), "list: findings")
    check(app["top_finding"]["rule"] == failed["findings"][0]["rule"], "list: top finding")
    paged = await call(session, "list_applications", path="logs/diff", limit=3)
    check(paged["returned"] == 3 and paged["next_offset"] == 3, f"paging: {paged['next_offset']}")
    rest = await call(session, "list_applications", path="logs/diff", offset=3, limit=50)
    check(rest["next_offset"] is None and 3 + rest["returned"] == paged["applications_total"], "last page")
    ids = [a["app_id"] for a in paged["applications"] + rest["applications"]]
    check(len(set(ids)) == len(ids) == paged["applications_total"], f"pages overlap: {ids}")
    print(f"list_applications: {paged['applications_total']} applications in 2 pages, as analyze says")

    analysed = await call(session, "analyze_application", path=FAILED, top=50)
    check(analysed["application"] == failed["application"], "analyze: application header")
    check(analysed["summary"] == failed["summary"], "analyze: summary")
    check(analysed["findings_total"] == len(failed["findings"]), "analyze: findings count")
    same_findings(analysed["findings"], failed["findings"], "analyze")
    check(analysed["what_if"]["headline"] == failed["what_if"]["headline"], "analyze: what-if")
    check(analysed["ledger"] == failed["ledger"], "analyze: the evidence ledger")
    check(analysed["source"]["config"] == failed["source"]["config"], "analyze: the settings used")
    top1 = await call(session, "analyze_application", path=FAILED, top=1)
    check(len(top1["findings"]) == 1 and (len(failed["findings"]) == 1 or top1["omitted"]), "top=1")
    print(f"analyze_application: header, summary, {len(failed['findings'])} findings equal analyze --format json")

    finding = await call(session, "get_finding", path=FAILED, rank=1)
    f0 = failed["findings"][0]
    check(finding["evidence"] == f0["evidence"], "finding: evidence")
    check(finding["recommendation"] == f0["recommendation"], "finding: fix")
    rule = cli_json("rules", f0["rule"], "--format", "json")["rules"][0]
    check(finding["rule_doc"]["doc"] == rule["doc"], "finding: rule doc")
    by_rule = await call(session, "get_finding", path=FAILED, rule=f0["rule"])
    check(by_rule["rank"] == 1, "finding by rule")
    check(any(":" in s for s in finding["code_sites"]), f"code sites: {finding['code_sites']}")
    print(f"get_finding: {f0['rule']} with evidence, fix and doc; code sites {finding['code_sites'][:2]}")

    failed_job = next(j for j in failed["jobs"] if j["status"] == "failed")
    stage_id = failed_job["stage_ids"][0]
    stage = await call(session, "get_stage", path=FAILED, stage_id=stage_id)
    want = [s for s in failed["stages"] if s["stage_id"] == stage_id][-1]
    check(stage["stage"] == want, "stage: as analyze")
    check(sum(e["tasks"] for e in stage["executors"]) == want["completed_tasks"] + want["failed_tasks"] + want["killed_tasks"], "stage: executors' tasks")
    check(stage["task_failures"]["total"] >= want["failed_tasks"], "stage: task failures")
    job = await call(session, "get_job", path=FAILED, job_id=failed_job["job_id"])
    check(job["job"]["job_id"] == failed_job["job_id"] and job["job"]["status"] == "failed", "job")
    check(job["job"]["stage_ids"] == failed_job["stage_ids"], "job: stages")
    print(f"get_stage {stage_id}, get_job {failed_job['job_id']}: as analyze, with executors and failures")

    fetch = cli_json("analyze", FETCH_FAILED, "--format", "json")
    lost = next(e for e in fetch["executors"] if e["removal"] == "lost")
    executor = await call(session, "get_executor", path=FETCH_FAILED, executor_id=lost["executor_id"])
    check(executor["executor"] == lost, "executor: as analyze")
    check(executor["executor"]["exit_code_means"], "executor: what its exit code means")
    check(executor["task_failures"]["total"] >= lost["failed_tasks"], "executor: task failures")
    naming = [i + 1 for i, f in enumerate(fetch["findings"]) if lost["executor_id"] in f["scope"]["executor_ids"]]
    check([f["rank"] for f in executor["findings"]] == naming[:20], "executor: the findings naming it")
    print(f"get_executor {lost['executor_id']}: {lost['removal']}, exit {lost['exit_code']}: {executor['executor']['exit_code_means'][:60]}")

    post = await call(session, "failure_postmortem", path=FAILED)
    check([j["job_id"] for j in post["failed_jobs"]] == [j["job_id"] for j in failed["jobs"] if j["status"] == "failed"], "postmortem: failed jobs")
    check(post["application"]["status"] == failed["application"]["status"], "postmortem: status")
    check(f"job {failed_job['job_id']}" in post["verdict"].lower(), f"postmortem verdict: {post['verdict']}")
    print(f"failure_postmortem: {post['verdict'][:120]}")

    diff = cli_json("diff", BEFORE, AFTER, "--format", "json")
    compared = await call(session, "compare_runs", before=BEFORE, after=AFTER)
    check(compared["headline"] == diff["headline"], "compare: headline")
    check(compared["metrics"] == diff["metrics"], "compare: metrics")
    check(compared["correctness"] == diff["correctness"], "compare: correctness")
    print(f"compare_runs: headline and metrics equal sparkdiag diff: {diff['headline'][0][:100]}")

    plan = cli_json("plan", PLAN, "--format", "json")
    text = (TESTDATA / PLAN).read_text()
    for answer in (await call(session, "analyze_plan", text=text), await call(session, "analyze_plan", path=PLAN)):
        check(len(answer["plans"]) == len(plan["plans"]), "plan: plans")
        check([[f["rule"] for f in p["findings"]] for p in answer["plans"]] == [[f["rule"] for f in p["findings"]] for p in plan["plans"]], "plan: findings")
    print(f"analyze_plan: {len(plan['plans'])} plans, findings as sparkdiag plan")

    before = cli_json("analyze", BEFORE, "--format", "json")
    today = before["what_if"]["cores_today"]
    for s in before["what_if"]["scenarios"]:
        # A finding's fix replayed, or every fix together, is not a core count.
        if s["cut_skew"] or s["remove_driver_gaps"] or s.get("change") or s.get("every_fix"):
            continue
        w = await call(session, "what_if", path=BEFORE, cores=s["cores"])
        check(w["predicted_ms"] == s["predicted_ms"], f"what-if {s['cores']}: {w['predicted_ms']} != {s['predicted_ms']}")
    both = next(s for s in before["what_if"]["scenarios"] if s["cut_skew"] and s["remove_driver_gaps"])
    w = await call(session, "what_if", path=BEFORE, cores=today, cut_skew=True, remove_driver_gaps=True)
    check(w["predicted_ms"] == both["predicted_ms"], "what-if: both")
    print(f"what_if: every core count of the report's scenarios predicted alike ({today} cores today)")

    rules = cli_json("rules", "--format", "json")["rules"]
    listed_rules = await call(session, "list_rules")
    check([r["code"] for r in listed_rules["rules"]] == [r["code"] for r in rules], "rules")
    skew = await call(session, "list_rules", category="skew")
    check(skew["rules"] and all(r["category"] == "skew" for r in skew["rules"]), "rules by category")
    print(f"list_rules: {len(rules)} rules as sparkdiag rules --format json")

    prompts = await session.list_prompts()
    check({p.name for p in prompts.prompts} == {"why-did-it-fail", "why-is-it-slower"}, "prompts")
    got = await session.get_prompt("why-did-it-fail", {"path": FAILED})
    check("failure_postmortem" in got.messages[0].content.text, "prompt text")
    got = await session.get_prompt("why-is-it-slower", {"before": BEFORE, "after": AFTER})
    check("compare_runs" in got.messages[0].content.text, "prompt text")
    resources = await session.list_resources()
    check(len(resources.resources) == len(rules), "resources")
    doc = await session.read_resource(f"sparkdiag://rules/{rules[0]['code']}")
    check(rules[0]["doc"] in doc.contents[0].text, "resource: the rule's doc")
    print(f"prompts: 2; resources: {len(resources.resources)} rule docs")

    for bad in ("/etc/passwd", "../Cargo.toml", "logs/../../README.md"):
        message = await refused(session, "analyze_application", path=bad)
        check("outside the folders" in message, f"{bad}: {message}")
    message = await refused(session, "analyze_application", path="logs/no-such-log")
    check("cannot open" in message, message)
    print("refused: /etc/passwd, ../, and a missing log, with clear errors")


async def client_roots():
    """No --root: the client's roots are what may be read."""
    diff_root = (TESTDATA / "logs" / "diff").resolve()

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=diff_root.as_uri(), name="diff logs")])

    params = StdioServerParameters(command=BIN, args=["mcp"], cwd=str(REPO))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            await session.initialize()
            ok = await call(session, "analyze_application", path=str(REPO / "testdata" / BEFORE))
            check(ok["application"]["id"] is not None, "client root readable")
            message = await refused(session, "analyze_application", path=str(TESTDATA / FAILED))
            check("outside the folders" in message, message)
    print("client roots: a log under the client's root is read, one outside refused")


async def main():
    params = StdioServerParameters(command=BIN, args=["mcp", "--root", str(TESTDATA)], cwd=str(REPO))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "sparkdiag", "server name")
            print(f"initialize: protocol {init.protocol_version}, server {init.server_info.name} {init.server_info.version}")
            await every_tool(session)
    await client_roots()
    print(f"ok: {checks} checks")


asyncio.run(main())
