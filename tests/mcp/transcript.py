"""Prints the transcript in docs/mcp.md: the tool calls an assistant makes for "why did this
job fail?" and "why is it slower than the last run?" on committed logs, and what the real
server answers (some fields of each answer only, named above it).

    target/mcp-venv/bin/python tests/mcp/transcript.py target/release/sparkdiag .
"""

import asyncio
import json
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = str(Path(sys.argv[1]).resolve())
REPO = Path(sys.argv[2]).resolve()


def pick(value, keys):
    return {k: value[k] for k in keys if k in value}


async def show(session, name, arguments, keep):
    result = await session.call_tool(name, arguments)
    text = result.content[0].text
    answer = json.loads(text)
    shown = keep(answer)
    print("```text")
    print(f"→ {name} {json.dumps(arguments)}")
    print(f"← {len(text.encode())} bytes; these fields: {', '.join(shown)}")
    print(json.dumps(shown, indent=2, ensure_ascii=False))
    print("```")
    print()
    return answer


def first_lines(text, n=2):
    return "\n".join(text.splitlines()[:n]) + (" …" if len(text.splitlines()) > n else "")


async def main():
    params = StdioServerParameters(command=BIN, args=["mcp", "--root", str(REPO / "testdata")], cwd=str(REPO))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print("### Why did this job fail?\n")
            listed = await show(
                session, "list_applications", {"path": "logs/failed"},
                lambda a: {"applications": [pick(x, ["path", "app_id", "name", "status", "outcome", "duration_ms", "top_finding"]) for x in a["applications"]]},
            )
            path = listed["applications"][0]["path"].replace(str(REPO / "testdata") + "/", "")

            def post(a):
                jobs = [dict(j, failure=first_lines(j["failure"], 1)) for j in a["failed_jobs"]]
                groups = [dict(pick(g, ["reason", "exception_class", "count", "stage_ids"])) for g in a["task_failures"]["groups"]]
                return {"verdict": a["verdict"], "failed_jobs": jobs, "task_failures": groups}

            await show(session, "failure_postmortem", {"path": path}, post)
            await show(
                session, "get_finding", {"path": path, "rank": 1},
                lambda a: dict(
                    pick(a, ["rule", "severity", "code_sites", "recommendation"]),
                    evidence=pick(a["evidence"], ["failed_task_attempts", "attempts_with_the_same_cause", "failed_the_application", "job_duration_ms"]),
                ),
            )
            print("### Why is it slower than the last run?\n")
            before = "logs/diff/partitions-aqe/local-1796117664950.zstd"
            after = "logs/diff/partitions-default/local-1796117629068.zstd"
            await show(
                session, "compare_runs", {"before": before, "after": after},
                lambda a: {"headline": a["headline"], "metrics": [pick(m, ["metric", "before", "after"]) for m in a["metrics"][:3]]},
            )
            await show(
                session, "analyze_application", {"path": after, "top": 3},
                lambda a: {"findings": [pick(f, ["rank", "rule", "title", "impact_ms", "code_sites", "recommendation"]) for f in a["findings"]]},
            )


asyncio.run(main())
