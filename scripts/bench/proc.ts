// CPU time of a process or thread from its /proc stat file (Linux), for the bench scripts.

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
