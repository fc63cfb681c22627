// The 14-day chart's scale and date labels: pure, unit-tested in test/console/console.test.ts.

/**
 * The top of a chart's scale for values up to `max`: 2, 4, 6, 8 or 10 times a power of ten, at
 * least 2, so that the top and its half (the middle line) are whole numbers read at a glance.
 */
export function scaleTop(max: number): number {
  for (let power = 1; ; power *= 10) {
    for (const step of [2, 4, 6, 8, 10]) if (step * power >= max) return step * power;
  }
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Labels for consecutive days ("YYYY-MM-DD", UTC): the day of the month, with the month's name
 * on the first day and wherever a new month starts.
 */
export function dayLabels(days: readonly string[]): { day: string; month?: string }[] {
  return days.map((iso, i) => {
    const month = iso.slice(5, 7);
    const day = String(Number(iso.slice(8, 10)));
    return i === 0 || days[i - 1].slice(5, 7) !== month ? { day, month: MONTHS[Number(month) - 1] } : { day };
  });
}
