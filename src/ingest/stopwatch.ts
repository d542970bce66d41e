// Where the time of a job goes: milliseconds per named stage, for its log line (docs/benchmarks.md).

export interface Stopwatch {
  /** adds the time since the previous lap (or the start) to this stage */
  lap(stage: string): void;
  readonly timings: Record<string, number>;
}

export function stopwatch(): Stopwatch {
  const timings: Record<string, number> = {};
  let last = performance.now();
  return {
    timings,
    lap(stage) {
      const now = performance.now();
      timings[stage] = Math.round((timings[stage] ?? 0) + now - last);
      last = now;
    },
  };
}
