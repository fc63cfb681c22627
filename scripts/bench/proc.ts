// CPU time and memory of processes and threads from /proc (Linux), for the bench scripts.
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: /proc reports CPU time in these ticks a second. */
export const TICKS_PER_SECOND = 100;

/**
 * The name and CPU ticks (utime + stime) in a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat
 * text. The name sits in parentheses and may hold spaces, so fields are counted after its last ")".
 */
export function parseStat(stat: string): { name: string; ticks: number } {
  const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { name, ticks: Number(fields[11]) + Number(fields[12]) };
}

/**
 * CPU ticks of every PostgreSQL server process on this machine (the postmaster, its sessions, the
 * WAL writer, ...), keyed by "pid what it is": a session's title without its client and state.
 */
export function postgresTicks(): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("postgres")) continue;
      // "postgres: 15/main: postgres warden 127.0.0.1(5432) idle" → "postgres: 15/main: postgres warden session"
      const what = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim().replace(/ \S+\(\d+\).*$/, " session");
      out.set(`${pid} ${what}`, parseStat(readFileSync(`/proc/${pid}/stat`, "utf8")).ticks);
    } catch {} // a process that ended between the listing and the read
  }
  return out;
}

/** CPU seconds used so far by a process (user + system); 0 once it has ended. */
export function cpuSeconds(pid: number): number {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8")).ticks / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds of every PostgreSQL server process on this machine (0 when there is none). */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const ticks of postgresTicks().values()) total += ticks;
  return total / TICKS_PER_SECOND;
}

/** A process's resident memory in MB (VmRSS). */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

/** Busy CPU seconds of the whole machine so far (all cores; idle and iowait left out), from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = ticks;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/** One thread's scheduler counters (/proc/<pid>/task/<tid>/schedstat): on a CPU, waiting on a run queue (ns), timeslices run. */
export interface ThreadSched {
  name: string;
  run_ns: number;
  wait_ns: number;
  slices: number;
}

/**
 * The scheduler counters of every thread of a process, keyed by tid. A thread that waits on a run
 * queue was ready to run and had no core: on a machine whose cores are all taken, that wait is
 * added to whatever the thread was about to answer.
 */
export function threadSched(pid: number): Map<number, ThreadSched> {
  const out = new Map<number, ThreadSched>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // the process has ended
  }
  for (const tid of tids) {
    try {
      const [run, wait, slices] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ").map(Number);
      out.set(Number(tid), { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim(), run_ns: run, wait_ns: wait, slices });
    } catch {} // a thread that ended between the listing and the read
  }
  return out;
}
