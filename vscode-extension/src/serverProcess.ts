// The language server's process, which the extension starts and ends itself. No `vscode` import.
//
// vscode-languageclient's stop sends shutdown and exit and returns without waiting for the process; its kill two
// seconds later runs a shell script that this bundled extension does not ship. A busy server (a gate run in
// flight, whose shutdown pygls then fails to answer) outlived a restart by 45 s, beside the new one. Here, stop
// waits for the process to exit and ends it when it does not.

import { spawn, type ChildProcess, type SpawnOptions } from "child_process";

/** Starts `command args` with pipes for stdio; resolves once the process runs, rejects when it cannot start. */
export function spawnServer(command: string, args: string[], options: SpawnOptions, log: (line: string) => void): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["pipe", "pipe", "pipe"] });
    let running = false;
    child.once("spawn", () => {
      running = true;
      resolve(child);
    });
    child.on("error", (error) => (running ? log(`the server process: ${error.message}`) : reject(error)));
  });
}

export type Ending = "exited" | "terminated" | "killed";

export interface EndOptions {
  /** how long the process may take to exit by itself (it was sent shutdown and exit) */
  graceMs: number;
  /** how long after SIGTERM before SIGKILL */
  termMs: number;
}

/** Waits `graceMs` for `child` to exit; then sends SIGTERM, and SIGKILL `termMs` later. Says how it ended. */
export async function endServerProcess(child: ChildProcess, options: EndOptions = { graceMs: 2000, termMs: 1000 }): Promise<Ending> {
  if (await exited(child, options.graceMs)) {
    return "exited";
  }
  child.kill("SIGTERM");
  if (await exited(child, options.termMs)) {
    return "terminated";
  }
  child.kill("SIGKILL");
  await exited(child, 10_000);
  return "killed";
}

/** Resolves true once `child` has exited, or false after `ms`. */
export function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      child.off("exit", onExit);
      resolve(false);
    }, ms);
    child.once("exit", onExit);
  });
}
