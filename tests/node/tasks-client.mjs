// Drive preflight-mcp with the official Tasks requester (@modelcontextprotocol/ext-tasks) over the
// TypeScript SDK's client (@modelcontextprotocol/client) on stdio, and print what happened as one
// JSON object on stdout.
//
//   node tasks-client.mjs <scenario> <preflight-mcp> <project> [suite]
//
// scenarios:
//   run      call preflight_run as a task, settle it, then make the same call plainly
//   cancel   call preflight_run as a task, cancel it once it runs, settle it
//   restart  start a task, kill the server (SIGKILL) while it runs, ask a new server about it
//   shutdown call preflight_run as a task, close the client (its stdin) once the task runs,
//            then ask a new server about the task and the run
//   list     on a server started without --project: a task in each of two projects (<project>
//            and [suite], a second project path), then tasks/list
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

const [scenario, command, project, suite = "orders"] = process.argv.slice(2);
const CALL = { requestTimeoutMs: 120_000 };
const AS_TASK = { ...CALL, task: { preference: "prefer" } };

async function connect(args = ["--project", project]) {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name: "tasks-client", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const session = createTaskSessionFromClient(client, { endpointId: `preflight:${project}` });
  return { client, transport, session };
}

function view(task) {
  return task === undefined
    ? null
    : { taskId: task.taskId, status: task.status, statusMessage: task.statusMessage ?? null,
        ttl: task.retentionMs, pollInterval: task.suggestedPollIntervalMs ?? null };
}

async function untilRunning(execution, seen) {
  for await (const event of execution.updates()) {
    if (event.type === "task") {
      seen.push(view(event.task));
      if (event.task.status === "working" && /suites/.test(event.task.statusMessage ?? "")) return;
    } else {
      throw new Error(`the task ended before it ran: ${JSON.stringify(event.outcome.status)}`);
    }
  }
}

async function main() {
  const report = { scenario, protocolVersion: null, capabilities: null };
  const first = await connect(scenario === "list" ? [] : undefined);
  report.protocolVersion = first.client.getNegotiatedProtocolVersion?.() ?? null;
  report.capabilities = first.session.capabilities;
  if (scenario === "run") {
    const execution = await first.session.callTool("preflight_run", { filter: suite }, AS_TASK);
    report.kind = execution.kind;
    report.taskId = execution.handle?.taskId ?? null;
    const seen = [];
    const settled = await execution.settle({ onEvent: (e) => { if (e.type === "task") seen.push(view(e.task)); } });
    report.seen = seen;
    report.outcome = settled.outcome.status;
    report.last = view(settled.lastTask);
    report.result = settled.outcome.status === "completed" ? settled.outcome.result : null;
    report.plain = await first.client.callTool({ name: "preflight_run", arguments: { filter: suite } }, { timeout: 120_000 });
  } else if (scenario === "cancel") {
    const execution = await first.session.callTool("preflight_run", { filter: suite }, AS_TASK);
    report.kind = execution.kind;
    report.taskId = execution.handle?.taskId ?? null;
    const seen = [];
    await untilRunning(execution, seen);
    await execution.cancel();
    const settled = await execution.settle();
    report.seen = seen;
    report.outcome = settled.outcome.status;
    report.snapshot = view(await first.session.task(report.taskId, CALL).snapshot());
  } else if (scenario === "restart") {
    const done = await first.session.callTool("preflight_run", { filter: "quick" }, AS_TASK);
    const finished = await done.settle();
    report.finishedId = done.handle?.taskId ?? null;
    report.finishedResult = finished.outcome.status === "completed" ? finished.outcome.result : null;
    const execution = await first.session.callTool("preflight_run", { filter: suite }, AS_TASK);
    report.kind = execution.kind;
    report.taskId = execution.handle?.taskId ?? null;
    await untilRunning(execution, []);
    report.killedPid = first.transport.pid;
    process.kill(first.transport.pid, "SIGKILL");
    await execution.detach().catch(() => {});
    const second = await connect();
    report.secondPid = second.transport.pid;
    const again = await second.session.task(report.finishedId, CALL).result();
    report.finishedAgain = again.status === "completed" ? again.result : again.status;
    const controller = second.session.task(report.taskId, CALL);
    report.afterRestart = view(await controller.snapshot());
    const outcome = await controller.result();
    report.outcome = outcome.status;
    report.error = outcome.status === "failed" ? String(outcome.error?.message ?? outcome.error) : null;
    report.listed = (await second.session.listTasks()).tasks.map(view);
    await second.session.close();
    await second.client.close();
    console.log(JSON.stringify(report));
    process.exit(0);
  } else if (scenario === "shutdown") {
    const execution = await first.session.callTool("preflight_run", { filter: suite }, AS_TASK);
    report.taskId = execution.handle?.taskId ?? null;
    await untilRunning(execution, []);
    report.closedPid = first.transport.pid;
    await execution.detach().catch(() => {});
    const closing = Date.now();
    // The SDK ends the server's stdin, then sends SIGTERM 2 s later and SIGKILL 2 s after that.
    await first.client.close();
    report.closeMs = Date.now() - closing;
    const second = await connect();
    const controller = second.session.task(report.taskId, CALL);
    report.afterShutdown = view(await controller.snapshot());
    const outcome = await controller.result();
    report.outcome = outcome.status;
    report.error = outcome.status === "failed" ? String(outcome.error?.message ?? outcome.error) : null;
    const read = await second.client.callTool({ name: "preflight_get_run", arguments: { runId: report.taskId } });
    report.run = read.structuredContent?.data ?? null;
    await second.session.close();
    await second.client.close();
    console.log(JSON.stringify(report));
    process.exit(0);
  } else if (scenario === "list") {
    report.taskIds = [];
    for (const projectPath of [project, suite]) {
      const execution = await first.session.callTool("preflight_run", { projectPath }, AS_TASK);
      report.taskIds.push(execution.handle?.taskId ?? null);
      report.outcome = (await execution.settle()).outcome.status;
    }
    report.listed = (await first.session.listTasks()).tasks.map(view);
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  await first.session.close();
  await first.client.close();
  console.log(JSON.stringify(report));
}

main().catch((error) => {
  console.error(error?.stack ?? String(error));
  process.exit(1);
});
